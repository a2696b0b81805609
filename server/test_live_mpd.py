from __future__ import annotations

import re
from pathlib import Path

import pytest

from server.live_mpd import LiveMpdError, dynamic_mpd, write_live_mpd

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
