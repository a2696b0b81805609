"""player/stall.py (the GStreamer player's stall machine) on the vectors the dash.js page's
machine (player/web/lib/stall.mjs) is tested with in node: one definition of a stall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from player import stall

REPO = Path(__file__).resolve().parent.parent
VECTORS = json.loads((REPO / "player" / "test" / "stall-vectors.json").read_text())

NS_PER_MS = 1_000_000


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: c["name"])
def test_shared_vector(case: dict) -> None:
    tracker = stall.StallTracker()
    for call, t_ms, *rest in case["steps"]:
        expected = rest[-1]
        t_ns = int(t_ms * NS_PER_MS)
        if call == "waiting":
            assert tracker.waiting(t_ns, rest[0]) is expected, (call, t_ms)
            continue
        got = getattr(tracker, call)(t_ns)
        mapped = got and {
            "start": got["start_t_ns"] / NS_PER_MS,
            "end": got["end_t_ns"] / NS_PER_MS,
            "duration_ms": got["duration_ms"],
            "media_time_s": got["media_time_s"],
            "open": got["open"],
        }
        assert mapped == expected, (call, t_ms)
    assert tracker.count == case["count"]
