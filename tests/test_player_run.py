"""testbed.players: argv, timeout, crash/error detection and validity marking (no processes)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from testbed import players


@dataclass
class FakeCtx:
    scenario: dict = field(default_factory=lambda: {"name": "A1"})
    invalid: list[str] = field(default_factory=list)

    def mark_invalid(self, reason: str) -> None:
        self.invalid.append(reason)


def summary(reason: str = "ended", **_counts: object) -> dict:
    """The player's last line: only why it ended (the counts come from the events, through
    metrics/player_summary.py; the keyword arguments name what the events above it show)."""
    return {"t_ns": 9 * 10**9, "src": "player-dashjs", "event": "end", "reason": reason}


def stall(ms: float) -> dict:
    return {"t_ns": 5 * 10**9, "src": "player-dashjs", "event": "stall", "start_t_ns": 10,
            "end_t_ns": 10 + int(ms * 1e6), "duration_ms": ms, "media_time_s": 1.0,
            "open": False}  # fmt: skip


START = {"t_ns": 1, "src": "player-dashjs", "event": "start"}


def check(ctx: FakeCtx, lines: list[dict], code: int | None = 0) -> dict:
    return players.check_session(ctx, lines, Path("p.jsonl"), Path("p.stderr"), code)


def test_clean_session_passes() -> None:
    ctx = FakeCtx()
    assert check(ctx, [START, summary()])["end_reason"] == "ended"
    assert ctx.invalid == []


def test_crash_without_summary_fails_with_last_error() -> None:
    lines = [START, {"event": "error", "message": "Chromium disconnected"}]
    with pytest.raises(players.PlayerFailed, match="no end line.*Chromium disconnected"):
        check(FakeCtx(), lines, code=-9)


def test_error_reason_or_nonzero_exit_fails() -> None:
    with pytest.raises(players.PlayerFailed, match="reason error"):
        check(FakeCtx(), [START, summary("error")], code=1)
    with pytest.raises(players.PlayerFailed, match="exit status 3"):
        check(FakeCtx(), [START, summary()], code=3)


S = 1_000_000_000
DROPS = [
    {"t_ns": 4 * S, "event": "sample", "dropped_frames": 0, "buffer_s": 9.0},
    {"t_ns": int(4.25 * S), "event": "sample", "dropped_frames": 12, "buffer_s": 9.0},
]


def cpu_line(busy: float) -> dict:
    return {"t_ns": int(4.25 * S), "event": "cpu_sample", "interval_s": 0.25,
            "player_set_busy": busy, "player_runq_wait_ms": 1.0,
            "loadavg": [9.0, 5, 3]}  # fmt: skip


def test_drops_with_cpu_saturation_mark_invalid_with_the_evidence() -> None:
    ctx = FakeCtx()
    lines = [START, *DROPS, summary(decode_overload_frames=12, dropped_frames=12)]
    players.check_session(ctx, lines, Path("p"), Path("e"), 0, [cpu_line(0.995)])
    assert len(ctx.invalid) == 1
    assert "decoder-side drops: 12 frames" in ctx.invalid[0]
    assert "player CPUs 100% busy" in ctx.invalid[0] and "load 9.0" in ctx.invalid[0]


def test_drops_with_healthy_buffer_but_no_cpu_evidence_stay_valid() -> None:
    # The player's own decode_overload flag is no evidence by itself (metrics/drops.py).
    ctx = FakeCtx()
    lines = [START, *DROPS, summary(decode_overload_frames=12, dropped_frames=12)]
    players.check_session(ctx, lines, Path("p"), Path("e"), 0, [cpu_line(0.4)])
    assert ctx.invalid == []


def test_decode_stall_invalid_only_with_cpu_evidence() -> None:
    wait = {"t_ns": 5 * S, "event": "decode_stall", "start_t_ns": 4 * S,
            "end_t_ns": int(4.5 * S), "duration_ms": 500, "buffer_s": 9.0}  # fmt: skip
    ctx = FakeCtx()
    players.check_session(ctx, [START, wait, summary(decode_stalls=1)], Path("p"), Path("e"), 0,
                          [cpu_line(0.99)])  # fmt: skip
    assert len(ctx.invalid) == 1
    assert ctx.invalid[0].startswith("decode stalls: 500.0 ms in 1 wait(s)")
    short = {**wait, "end_t_ns": int(4.02 * S), "duration_ms": 20}  # within the tolerance
    ctx = FakeCtx()
    players.check_session(ctx, [START, short, summary(decode_stalls=1)], Path("p"), Path("e"), 0,
                          [cpu_line(0.99)])  # fmt: skip
    assert ctx.invalid == []
    ctx = FakeCtx()
    players.check_session(ctx, [START, wait, summary(decode_stalls=1)], Path("p"), Path("e"), 0,
                          [cpu_line(0.3)])  # fmt: skip
    assert ctx.invalid == []


def test_control_with_stalls_is_invalid() -> None:
    ctx = FakeCtx(scenario={"name": "control"})
    check(ctx, [START, stall(900.0), summary()])
    assert any("control session not clean" in r for r in ctx.invalid)
    ctx = FakeCtx(scenario={"name": "A1"})
    check(
        ctx, [START, stall(1.0), stall(2.0), stall(3.0), summary()]
    )  # stalls are results elsewhere, not invalidity
    assert ctx.invalid == []


def test_read_cpu_log_skips_a_line_being_written(tmp_path: Path) -> None:
    log = tmp_path / "cpu.jsonl"
    log.write_text(json.dumps(cpu_line(0.5)) + '\n{"t_ns": 7, "ev')
    assert players.read_cpu_log(log) == [cpu_line(0.5)]
    assert players.read_cpu_log(tmp_path / "missing.jsonl") == []


def test_timeout_marks_invalid() -> None:
    ctx = FakeCtx()
    check(ctx, [START, summary("timeout")])
    assert ctx.invalid == ["player session timed out before the video ended"]


def test_a_starved_player_that_timed_out_carries_the_cpu_evidence() -> None:
    # Starved from the start: not one frame shown or dropped, so no drop episode to blame;
    # the timeout's reason must carry the saturation itself.
    ctx = FakeCtx()
    cpu = [
        cpu_line(0.99),
        {**cpu_line(0.3), "t_ns": int(4.5 * S)},
        {**cpu_line(1.0), "t_ns": 12 * S},
    ]
    players.check_session(ctx, [START, summary("timeout")], Path("p"), Path("e"), 0, cpu)
    assert len(ctx.invalid) == 1, ctx.invalid
    reason = ctx.invalid[0]
    assert reason.startswith("player session timed out before the video ended; the player's CPUs")
    # The third sample ends after the session's last line (t=9 s): outside the window.
    assert "saturated in 1 of 2 CPU samples (50%)" in reason
    assert "t=4.25s player CPUs 99% busy" in reason and "load 9.0" in reason


def test_a_crashed_starved_player_fails_with_the_cpu_evidence() -> None:
    with pytest.raises(players.PlayerFailed, match="no end line.*saturated in 1 of 1 CPU"):
        players.check_session(FakeCtx(), [START, *DROPS], Path("p"), Path("e"), -9,
                              [cpu_line(1.0)])  # fmt: skip


def test_read_log_reports_malformed_line_and_tolerates_cut_last_line(tmp_path: Path) -> None:
    log = tmp_path / "player.jsonl"
    log.write_text(json.dumps(START) + "\n{not json\n" + json.dumps(summary()) + "\n")
    with pytest.raises(players.PlayerFailed, match=r"player.jsonl:2: malformed JSON"):
        players.read_log(log)
    log.write_text(json.dumps(START) + '\n{"t_ns": 5, "src"')
    assert players.read_log(log) == [START]  # then check_session reports the missing summary


def test_timeout_is_duration_plus_margin() -> None:
    assert players.session_timeout_s(12) == 12 + 30
    assert players.session_timeout_s(180) == 360


def test_argv_per_player(tmp_path: Path) -> None:
    content = tmp_path / "abc123"
    argv = players.player_argv("dashjs", Path("/r"), "10.1.2.2", 8080, content,
                               tmp_path / "p.jsonl", 5, 60)  # fmt: skip
    assert argv[:2] == ["node", "/r/player/headless.mjs"]
    assert "http://10.1.2.2:8080/player/index.html?mpd=/content/abc123/manifest.mpd" in argv
    argv = players.player_argv("gstreamer", Path("/r"), "127.0.0.1", 8080, content,
                               tmp_path / "p.jsonl", 5, 60)  # fmt: skip
    assert argv[:2] == ["/usr/bin/python3", "/r/player/gst_player.py"]
    assert "http://127.0.0.1:8080/content/abc123/manifest.mpd" in argv
    argv = players.player_argv("gstreamer", Path("/r"), "127.0.0.1", 8080, content,
                               tmp_path / "p.jsonl", 5, 60, live_latency_s=2.5)  # fmt: skip
    assert "http://127.0.0.1:8080/content/abc123/live.mpd" in argv
    assert argv[-2:] == ["--live-latency-s", "2.5"]
    with pytest.raises(ValueError, match="unknown player 'vlc'; valid: dashjs, gstreamer"):
        players.player_argv("vlc", Path("/r"), "h", 1, content, tmp_path / "p", 5, 60)
