"""testbed.upswitches: up-switches classified from player.jsonl events."""

from __future__ import annotations

import json
from pathlib import Path

from testbed.upswitches import main, rule_replaces, summarise, up_switches

REPS = [{"rep_id": "lo", "bitrate_bps": 800_000}, {"rep_id": "hi", "bitrate_bps": 5_240_000}]


def _write(
    tmp: Path, requests: list[tuple[str, int, float]], playhead: list[tuple[float, float]]
) -> Path:
    """requests: (rep_id, segment index, request time s); playhead: (time s, media time s)."""
    events: list[dict] = [{"t_ns": 0, "event": "representations", "reps": REPS}]
    events += [{"t_ns": int(t * 1e9), "event": "sample", "media_time_s": m} for t, m in playhead]
    events += [
        {
            "t_ns": int(t * 1e9) + 1,
            "event": "segment",
            "media_type": "video",
            "rep_id": r,
            "segment_index": i,
            "request_t_ns": int(t * 1e9),
        }
        for r, i, t in requests
    ]
    events.sort(key=lambda e: e["t_ns"])
    trial = tmp / "run" / "trials" / "t1"
    trial.mkdir(parents=True)
    path = trial / "player.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_replacement_from_the_playheads_segment_and_a_next(tmp_path: Path) -> None:
    # Start-up segment and its re-request (not counted), two more at the low bitrate, then
    # an up-switch at playhead 4.6 s (segment 2) with segments 0..3 requested (3.4 s
    # buffered): segment 2 again, a replacement from the playhead's segment.
    path = _write(
        tmp_path,
        [
            ("lo", 0, 1.0),
            ("lo", 0, 1.2),
            ("lo", 1, 1.5),
            ("lo", 2, 2.0),
            ("lo", 3, 3.0),
            ("hi", 2, 5.6),
            ("lo", 4, 6.0),
            ("hi", 5, 7.8),
        ],
        [(1.0, 0.0), (5.5, 4.6), (7.7, 5.8)],
    )
    found = up_switches(path, 2.0)
    assert [(s.replaced, s.relative_index) for s in found] == [(True, 0), (False, 3)]
    assert abs(found[0].buffer_s - 3.4) < 1e-9
    # The second one: playhead 5.8 s, segments up to 4 requested: 4.2 s buffered.
    assert abs(found[1].buffer_s - 4.2) < 1e-9
    figures = summarise(found, 2.0)
    assert figures["by_kind"] == {"next": 1, "replaced_from_+0": 1}
    # The rule says replace at 3.4 s (agrees) and at 4.2 s (the trial went on: disagrees).
    assert figures["rule_agrees"] == 1


def test_rule_band() -> None:
    assert rule_replaces(1.5, 2.0)
    assert not rule_replaces(2.0, 2.0)
    assert not rule_replaces(2.49, 2.0)
    assert rule_replaces(2.5, 2.0)
    assert not rule_replaces(0.0, 2.0)


def test_a_folder_without_trials_is_refused(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no trials/*/player.jsonl" in capsys.readouterr().err
