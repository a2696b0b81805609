"""server.content: the ladder, 2 s closed-GOP segments, cache, bad input (a 12 s clip)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from server import content

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "cache" / "content"
CLIP_S = 12


@pytest.fixture(scope="module")
def clip() -> Path:
    return content.prepare(CLIP_S, cache=CACHE)


def test_ladder_json_records_rungs_with_measured_bitrates(clip: Path) -> None:
    ladder = json.loads((clip / "ladder.json").read_text())
    assert ladder["hash"] == clip.name
    rungs = ladder["rungs"]
    assert [r["bitrate_bps"] for r in rungs] == [5_240_000, 3_000_000, 1_500_000, 800_000]
    for rung in rungs:
        assert rung["segments"] == CLIP_S // content.SEGMENT_S
        # x264 must actually spend the bits: the synthetic video must not compress to nothing.
        assert 0.85 * rung["bitrate_bps"] <= rung["measured_mean_bps"] <= 1.2 * rung["bitrate_bps"]


def test_mpd_has_four_h264_representations_with_2s_segments(clip: Path) -> None:
    mpd = (clip / "manifest.mpd").read_text()
    assert 'type="static"' in mpd
    assert f'mediaPresentationDuration="PT{CLIP_S}.0S"' in mpd
    assert len(re.findall(r"<Representation ", mpd)) == 4
    assert len(re.findall(r'codecs="avc1\.', mpd)) == 4
    assert 'duration="2000000"' in mpd and 'timescale="1000000"' in mpd
    assert 'height="720"' in mpd and 'height="360"' in mpd


def test_every_segment_starts_with_a_keyframe(clip: Path) -> None:
    # Closed GOPs aligned to segments: the first frame of every media segment is an IDR frame.
    for number in (1, 2, CLIP_S // 2):
        init = (clip / "init-0.m4s").read_bytes()
        chunk = (clip / f"chunk-0-{number:05d}.m4s").read_bytes()
        probe = subprocess.run(
            ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
             "frame=key_frame,pict_type", "-read_intervals", "%+#2", "-of", "json", "-"],
            input=init + chunk, capture_output=True, check=True,
        )  # fmt: skip
        frames = json.loads(probe.stdout)["frames"]
        assert frames[0]["key_frame"] == 1 and frames[0]["pict_type"] == "I", number
        assert frames[1]["key_frame"] == 0


def test_prepare_is_cached(clip: Path) -> None:
    mtime = (clip / "ladder.json").stat().st_mtime_ns
    assert content.prepare(CLIP_S, cache=CACHE) == clip
    assert (clip / "ladder.json").stat().st_mtime_ns == mtime


def test_two_encodes_of_the_same_parameters_are_the_same_bytes(tmp_path: Path) -> None:
    # The simulator reads segment sizes, so a page's figures depend on these bytes; the
    # cache key (content_params) must decide them (x264 with frame threads did not).
    def segments(folder: Path) -> dict[str, bytes]:
        clip = content.prepare(4, cache=folder, ladder=content.DEFAULT_LADDER[2:])
        return {p.name: p.read_bytes() for p in sorted(clip.glob("*.m4s"))}

    first, second = segments(tmp_path / "a"), segments(tmp_path / "b")
    assert len(first) == 6 and first == second  # per rung: init + 2 segments


def test_hash_depends_on_parameters() -> None:
    a = content.content_hash(content.content_params(12, None))
    b = content.content_hash(content.content_params(14, None))
    c = content.content_hash(content.content_params(12, None, content.DEFAULT_LADDER[:1]))
    assert len({a, b, c}) == 3


def test_ffmpeg_command_aligns_gops_with_segments() -> None:
    argv = content.ffmpeg_argv(12, None, content.DEFAULT_LADDER, Path("/tmp/x"))
    assert argv[argv.index("-g") + 1] == "60" and argv[argv.index("-keyint_min") + 1] == "60"
    assert argv[argv.index("-sc_threshold") + 1] == "0"
    assert argv[argv.index("-seg_duration") + 1] == "2"


def test_top_only_ladder_encodes_the_default_top_rung_alone() -> None:
    (rung,) = content.LADDERS["720p-top-only"]
    assert rung == content.DEFAULT_LADDER[0] and rung.bitrate_bps == 5_240_000
    argv = content.ffmpeg_argv(12, None, content.LADDERS["720p-top-only"], Path("/tmp/x"))
    assert argv.count("-map") == 1
    assert argv[argv.index("-b:v:0") + 1] == "5240k" and "-b:v:1" not in argv
    default = content.content_hash(content.content_params(12, None))
    top_only = content.content_hash(content.content_params(12, None, content.LADDER_TOP_ONLY))
    assert default != top_only


@pytest.mark.parametrize(
    "args, message",
    [
        (["--duration-s", "1"], "must be an integer number of seconds >= 2"),
        (["--duration-s", "10", "--input", "/nonexistent.mp4"], "no such file"),
    ],
)
def test_bad_input_exits_2_and_names_the_value(
    tmp_path: Path, args: list[str], message: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "server.content", "--cache", str(tmp_path), *args],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 2
    assert message in proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing made
