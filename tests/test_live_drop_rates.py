"""player/live_drop_rates.py: each interval's drops go to one group (stall aftermath first)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from player.live_drop_rates import GROUPS, tally

REPO = Path(__file__).resolve().parent.parent


def sample(t_s: float, dropped: int, rate: float, playing: bool = True) -> dict:
    return {"event": "sample", "t_ns": round(t_s * 1e9), "dropped_frames": dropped,
            "playback_rate": rate, "playing": playing}  # fmt: skip


def test_drops_are_grouped_by_stall_aftermath_then_rate() -> None:
    # An interval's rate is the one in force at its start (its first sample's).
    lines = [
        sample(0.0, 0, 1.0),
        sample(0.25, 0, 1.1),  # 0 -> 0.25 at rate 1: steady, nothing dropped
        {"event": "stall", "end_t_ns": round(0.4e9)},
        sample(0.5, 1, 1.1),  # ends 0.1 s after the stall: aftermath, though the rate is 1.1
        sample(0.75, 3, 0.8),  # 0.5 -> 0.75 at 1.1: 2 frames while catching up
        sample(1.0, 3, 1.005),  # 0.75 -> 1.0 at 0.8: slow-down, nothing
        sample(1.25, 4, 1.0),  # 1.0 -> 1.25 at 1.005: steady band, 1 frame
        sample(1.5, 9, 1.0, playing=False),  # not playing: ignored
    ]
    out = tally(lines)
    stall, fast, steady, slow = GROUPS
    assert out[stall] == pytest.approx([0.25, 1])
    assert out[fast] == pytest.approx([0.25, 2])
    assert out[slow] == pytest.approx([0.25, 0])
    assert out[steady] == pytest.approx([0.5, 1])


def test_bad_input_exits_2_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "player.jsonl"
    bad.write_text(json.dumps(sample(0, 0, 1)) + "\n{not json\n")
    done = subprocess.run([sys.executable, str(REPO / "player" / "live_drop_rates.py"), str(bad)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and f"{bad}:2: malformed JSON line" in done.stderr
