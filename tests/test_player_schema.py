"""player/schema.mjs as a command (ajv on docs/schemas/player.v1.schema.json): the reader
reports malformed, truncated and out-of-schema lines by number and field."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "player" / "schema.mjs"

GOOD = [
    {"t_ns": 1, "src": "player-gst", "event": "start", "player": "gstreamer", "url": "u",
     "mpd": "m"},
    {"t_ns": 2, "src": "player-gst", "event": "startup", "startup_delay_ms": 300.5},
    {"t_ns": 3, "src": "player-gst", "event": "sample", "media_time_s": 0.2, "buffer_s": 4.0,
     "dropped_frames": 0, "total_frames": 6, "rep_id": "3", "bitrate_bps": 800000, "width": 640,
     "height": 360, "playing": True},
    {"t_ns": 4, "src": "player-gst", "event": "end", "reason": "ended"},
]  # fmt: skip


def run(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["node", str(SCHEMA), str(path)], capture_output=True, text=True)


def write(path: Path, objs: list[dict], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs) + tail)
    return path


def test_valid_log_passes(tmp_path: Path) -> None:
    proc = run(write(tmp_path / "p.jsonl", GOOD))
    assert proc.returncode == 0, proc.stdout
    assert "ok (4 lines)" in proc.stdout


def test_malformed_line_is_reported_with_its_number(tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    p.write_text(
        json.dumps(GOOD[0]) + "\n" + '{"t_ns": 2, "src": "player-gst",\n'
        + "".join(json.dumps(o) + "\n" for o in GOOD[1:])
    )  # fmt: skip
    proc = run(p)
    assert proc.returncode == 1
    assert f"{p}:2: malformed JSON" in proc.stdout


def test_truncated_log_is_reported(tmp_path: Path) -> None:
    p = write(tmp_path / "p.jsonl", GOOD[:3], tail='{"t_ns": 4, "src": "player-g')
    proc = run(p)
    assert proc.returncode == 1
    assert f"{p}:4: truncated line" in proc.stdout
    assert "no end line" in proc.stdout


def test_wrong_type_is_reported(tmp_path: Path) -> None:
    bad = dict(GOOD[2], dropped_frames=1.5)
    proc = run(write(tmp_path / "p.jsonl", [GOOD[0], GOOD[1], bad, GOOD[3]]))
    assert proc.returncode == 1
    assert "p.jsonl:3: sample.dropped_frames: must be integer" in proc.stdout


def test_missing_file_is_usage_error(tmp_path: Path) -> None:
    assert run(tmp_path / "none.jsonl").returncode == 2
