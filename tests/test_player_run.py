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


def end(reason: str = "ended") -> dict:
    return {"t_ns": 99, "src": "player-dashjs", "event": "end", "reason": reason}


def stall(ms: float) -> dict:
    return {"t_ns": 50, "src": "player-dashjs", "event": "stall", "start_t_ns": 10,
            "end_t_ns": 10 + int(ms * 1e6), "duration_ms": ms, "media_time_s": 1.0,
            "open": False}  # fmt: skip


def sample(dropped: int) -> dict:
    return {"t_ns": 40, "src": "player-dashjs", "event": "sample", "media_time_s": 2.0,
            "buffer_s": 5.0, "dropped_frames": dropped, "total_frames": 60, "rep_id": "1",
            "bitrate_bps": 800000, "width": 640, "height": 360, "playing": True}  # fmt: skip


START = {"t_ns": 1, "src": "player-dashjs", "event": "start"}


def check(ctx: FakeCtx, lines: list[dict], code: int | None = 0) -> dict:
    return players.check_session(ctx, lines, Path("p.jsonl"), Path("p.stderr"), code)


def test_clean_session_passes() -> None:
    ctx = FakeCtx()
    assert check(ctx, [START, sample(0), end()])["end_reason"] == "ended"
    assert ctx.invalid == []


def test_crash_without_end_line_fails_with_last_error() -> None:
    lines = [START, {"event": "error", "message": "Chromium disconnected"}]
    with pytest.raises(players.PlayerFailed, match="no end line.*Chromium disconnected"):
        check(FakeCtx(), lines, code=-9)


def test_error_reason_or_nonzero_exit_fails() -> None:
    with pytest.raises(players.PlayerFailed, match="reason error"):
        check(FakeCtx(), [START, end("error")], code=1)
    with pytest.raises(players.PlayerFailed, match="exit status 3"):
        check(FakeCtx(), [START, end()], code=3)


def test_decode_overload_marks_invalid_not_network() -> None:
    ctx = FakeCtx()
    overload = {"t_ns": 30, "src": "player-dashjs", "event": "decode_overload",
                "dropped_frames": 12, "buffer_s": 6.0}  # fmt: skip
    check(ctx, [START, overload, sample(12), end()])
    assert len(ctx.invalid) == 1 and "decode overload" in ctx.invalid[0]


def test_control_with_stalls_or_drops_is_invalid() -> None:
    ctx = FakeCtx(scenario={"name": "control"})
    check(ctx, [START, stall(900.0), end()])
    assert any("control session not clean" in r for r in ctx.invalid)
    ctx = FakeCtx(scenario={"name": "A1"})
    # Outside control, stalls are results, not invalidity.
    check(ctx, [START, stall(1.0), stall(2.0), stall(3.0), end()])
    assert ctx.invalid == []


def test_timeout_marks_invalid() -> None:
    ctx = FakeCtx()
    check(ctx, [START, end("timeout")])
    assert any("timed out" in r for r in ctx.invalid)


def test_read_log_reports_malformed_line_and_tolerates_cut_last_line(tmp_path: Path) -> None:
    log = tmp_path / "player.jsonl"
    log.write_text(json.dumps(START) + "\n{not json\n" + json.dumps(end()) + "\n")
    with pytest.raises(players.PlayerFailed, match=r"player.jsonl:2: malformed JSON"):
        players.read_log(log)
    log.write_text(json.dumps(START) + '\n{"t_ns": 5, "src"')
    assert players.read_log(log) == [START]  # then check_session reports the missing end line


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
    with pytest.raises(ValueError, match="unknown player 'vlc'; valid: dashjs, gstreamer"):
        players.player_argv("vlc", Path("/r"), "h", 1, content, tmp_path / "p", 5, 60)
