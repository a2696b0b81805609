"""Scheduler timeline (metrics/timeline.py): placements per path and kind, waits, the
receiver's out-of-order queue of the matching connection, from hand-made trial files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics import timeline


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _decision(t_ms: int, conn: int, decision: str, **fields: object) -> dict:
    row = {"t_ns": t_ms * 1_000_000, "src": "mpproxy-server", "event": "sched_decision",
           "conn": conn, "kind": "fresh", "decision": decision, "path": None, "copies": [],
           "wait_reason": None, "dsn": 0, "bytes": 0, "paths": [], "state": {}}  # fmt: skip
    row.update(fields)
    return row


@pytest.fixture
def trial(tmp_path: Path) -> Path:
    _write(
        tmp_path / timeline.SCHED_TRACE_FILE,
        [
            _decision(10, 1, "send", path="wifi", dsn=0, bytes=1000),
            _decision(11, 1, "send", path="wifi", dsn=1000, bytes=1000, copies=["lte"]),
            _decision(12, 1, "wait", wait_reason="pre_assigned", dsn=2000),
            _decision(13, 1, "send", path="lte", dsn=500, bytes=500, kind="reinjection"),
            _decision(14, 2, "send", path="lte", dsn=0, bytes=100),  # a smaller connection
            _decision(15, 1, "none", dsn=2000),
        ],
    )
    _write(
        tmp_path / timeline.SENDER_STATS_FILE,
        [{"t_ns": 1, "src": "mpproxy-server", "event": "conn_open", "conn": 1, "conn_id": "aa"},
         {"t_ns": 1, "src": "mpproxy-server", "event": "conn_open", "conn": 2, "conn_id": "bb"}],
    )  # fmt: skip
    _write(
        tmp_path / timeline.RECEIVER_STATS_FILE,
        [{"t_ns": 100_000_000, "src": "mpproxy-client", "event": "conn", "conn": 7,
          "conn_id": "aa", "ofo_queue_bytes": 3000},
         {"t_ns": 100_000_000, "src": "mpproxy-client", "event": "conn", "conn": 8,
          "conn_id": "bb", "ofo_queue_bytes": 9000},
         {"t_ns": 200_000_000, "src": "mpproxy-client", "event": "conn", "conn": 7,
          "conn_id": "aa", "ofo_queue_bytes": 0}],
    )  # fmt: skip
    return tmp_path


def test_the_busiest_connection_with_copies_reinjections_waits_and_its_ofo(trial: Path) -> None:
    t = timeline.read_timeline(trial)
    assert t is not None
    assert t.conn_id == "aa"
    assert t.decisions == 5
    kinds = sorted(zip(t.placements["path"], t.placements["kind"], strict=True))
    assert kinds == [("lte", "copy"), ("lte", "reinjection"), ("wifi", "fresh"), ("wifi", "fresh")]
    copy = t.placements[t.placements["kind"] == "copy"].iloc[0]
    assert (copy["dsn_mb"], copy["end_mb"]) == (0.001, 0.002)
    assert list(t.waits["reason"]) == ["pre_assigned"]
    assert list(t.waits["t_s"]) == [0.012]
    assert list(t.ofo["ofo_kb"]) == [3.0, 0.0]
    figure = timeline.timeline_figure(t, "test")
    assert len(figure.axes) == 4  # lte, wifi, waits, out-of-order queue


def test_no_trace_no_timeline_and_a_broken_line_is_named(tmp_path: Path) -> None:
    assert timeline.read_timeline(tmp_path) is None
    assert timeline.pick_trial([tmp_path]) is None
    trace = tmp_path / timeline.SCHED_TRACE_FILE
    trace.write_text('{"t_ns": 1}\n{broken\n{"t_ns": 2}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"sched-trace-server.jsonl:2"):
        timeline.read_timeline(tmp_path)
    assert timeline.pick_trial([tmp_path]) == tmp_path
