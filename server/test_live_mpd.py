from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from server.content import SEGMENT_S
from server.live_mpd import (
    DEFAULT_LATENCY_S,
    MIN_LATENCY_SEGMENTS,
    LiveMpdError,
    dynamic_mpd,
    latency_below_floor,
    write_live_mpd,
)

STATIC = """<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011"
	profiles="urn:mpeg:dash:profile:isoff-live:2011"
	type="static"
	mediaPresentationDuration="PT12.0S"
	minBufferTime="PT4.0S">
	<Period id="0" start="PT0.0S">
		<SegmentTemplate timescale="1000000" duration="2000000" media="c-$Number$.m4s">
		</SegmentTemplate>
	</Period>
</MPD>
"""


def test_dynamic_mpd_sets_live_attributes_and_keeps_the_rest() -> None:
    out = dynamic_mpd(STATIC, 1_700_000_000.25, 3.0)
    head = re.search(r"<MPD\b[^>]*>", out).group(0)
    assert 'type="dynamic"' in head and 'type="static"' not in out
    assert 'availabilityStartTime="2023-11-14T22:13:20.250Z"' in head
    assert 'suggestedPresentationDelay="PT3.000S"' in head
    assert 'timeShiftBufferDepth="PT12.0S"' in head
    assert out[out.index("<Period") :] == STATIC[STATIC.index("<Period") :]


@pytest.mark.parametrize(
    ("text", "latency", "needle"),
    [
        (STATIC, 0.0, "latency 0.0 s"),
        (STATIC.replace('type="static"', 'type="dynamic"'), 3.0, "already live"),
        ("<xml/>", 3.0, "no <MPD"),
        (STATIC.replace("SegmentTemplate", "SegmentBase"), 3.0, "SegmentTemplate"),
    ],
)
def test_dynamic_mpd_rejects_bad_input(text: str, latency: float, needle: str) -> None:
    with pytest.raises(LiveMpdError, match=re.escape(needle)):
        dynamic_mpd(text, 0.0, latency)


def test_write_live_mpd_names_the_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(LiveMpdError, match="manifest.mpd: cannot read"):
        write_live_mpd(tmp_path, tmp_path / "live.mpd", 0.0, 3.0)
    (tmp_path / "manifest.mpd").write_text(STATIC)
    assert "dynamic" in write_live_mpd(tmp_path, tmp_path / "live.mpd", 0.0, 3.0).read_text()


# The manifest server/content.py has FFmpeg 5.1 write (one representation kept; the long
# elements' attributes wrapped onto lines: the root element, which matters, is unchanged).
FFMPEG_STATIC = """<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
	xmlns="urn:mpeg:dash:schema:mpd:2011"
	xmlns:xlink="http://www.w3.org/1999/xlink"
	xsi:schemaLocation="urn:mpeg:DASH:schema:MPD:2011 http://standards.iso.org/ittf/PubliclyAvailableStandards/MPEG-DASH_schema_files/DASH-MPD.xsd"
	profiles="urn:mpeg:dash:profile:isoff-live:2011"
	type="static"
	mediaPresentationDuration="PT20.0S"
	maxSegmentDuration="PT2.0S"
	minBufferTime="PT4.0S">
	<ProgramInformation>
	</ProgramInformation>
	<ServiceDescription id="0">
	</ServiceDescription>
	<Period id="0" start="PT0.0S">
		<AdaptationSet id="0" contentType="video" startWithSAP="1" segmentAlignment="true"
			bitstreamSwitching="true" frameRate="30/1" maxWidth="1280" maxHeight="720" par="16:9">
			<Representation id="0" mimeType="video/mp4" codecs="avc1.64001f" bandwidth="5240000"
				width="1280" height="720" sar="1:1">
				<SegmentTemplate timescale="1000000" duration="2000000"
					initialization="init-$RepresentationID$.m4s"
					media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="1">
				</SegmentTemplate>
			</Representation>
			</AdaptationSet>
	</Period>
</MPD>
"""


def test_the_live_mpd_has_no_schema_location() -> None:
    assert "xsi:schemaLocation" in FFMPEG_STATIC
    out = dynamic_mpd(FFMPEG_STATIC, 1_700_000_000.0, 3.0)
    assert "xsi:schemaLocation" not in out and 'xmlns:xsi="' in out


@pytest.mark.skipif(shutil.which("gst-launch-1.0") is None, reason="needs GStreamer")
def test_gstreamer_typefinds_the_live_mpd_as_dash(tmp_path: Path) -> None:
    """Push mode (queue before typefind), as playbin fetches it over HTTP: with the live
    attributes and xsi:schemaLocation, GStreamer 1.22 says application/xml."""
    live = tmp_path / "live.mpd"
    live.write_text(dynamic_mpd(FFMPEG_STATIC, 1_700_000_000.0, 3.0))
    done = subprocess.run(
        ["gst-launch-1.0", "-v", "filesrc", f"location={live}", "!", "queue", "!", "typefind",
         "!", "fakesink"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    caps = re.findall(r"typefindelement0\.GstPad:src: caps = (\S+)", done.stdout)
    assert caps == ["application/dash+xml"], done.stdout[-2000:] + done.stderr[-2000:]


def test_the_default_target_respects_the_segment_duration_floor() -> None:
    # The rule (module docstring, docs/PLAYER.md "Live mode"): at least two segment durations,
    # so the player has one whole segment duration to fetch each segment after it is published.
    assert MIN_LATENCY_SEGMENTS >= 2
    assert DEFAULT_LATENCY_S >= MIN_LATENCY_SEGMENTS * SEGMENT_S
    assert latency_below_floor(DEFAULT_LATENCY_S) is None
    # The floor follows the content's segment duration, not a fixed number of seconds.
    assert latency_below_floor(DEFAULT_LATENCY_S, segment_s=SEGMENT_S * 2) is not None
    assert latency_below_floor(MIN_LATENCY_SEGMENTS * 1.0, segment_s=1.0) is None


@pytest.mark.parametrize(("latency_s", "margin"), [(3.0, "1 s"), (1.0, "0 s"), (3.9, "1.9 s")])
def test_a_target_below_the_floor_is_named_with_its_margin(latency_s: float, margin: str) -> None:
    warning = latency_below_floor(latency_s, segment_s=2.0)
    assert warning is not None
    assert f"{latency_s:g} s is below 2 segment durations (4 s with 2 s segments)" in warning
    assert f"leaves {margin} between a segment's publication and its play-out" in warning
