"""The player of a trial (CONTRACTS.md §7): runs one session in the client namespace, blocks
until it ends or times out, and checks what it logged.

* `dashjs`: `node player/headless.mjs` (headless Chromium + dash.js), the page served by the
  trial's nginx at the endpoint.
* `gstreamer`: `/usr/bin/python3 player/gst_player.py` (Debian's python, which has `gi`).

Both write `<trial>/player.jsonl` (docs/schemas/player.v1.schema.json). A player that exits
without its `end` line, or whose `end` says `error`, fails the trial with the player's own
last error message. A session that dropped frames with a healthy buffer (`decode_overload`) or
waited with a full buffer (`decode_stall`) is marked invalid: the machine was too slow to
decode in real time, so its stalls and drops say nothing about the network. A `control`
scenario must show 0 stalls and 0 dropped frames, else it is marked invalid too: a stall on an
unimpaired path can only come from the machine, and would be counted against the network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from metrics.player_summary import summarize
from testbed import registry
from testbed.registry import PlayerLaunch

PLAYER_LOG = "player.jsonl"
# A session lasts the video plus start-up plus stalls; the player stops itself after
# video + margin (stalls included), and the testbed waits a little longer for it to close.
TIMEOUT_MARGIN_MIN_S = 30
EXIT_GRACE_S = 30
CONTROL_SCENARIO = "control"


class PlayerFailed(Exception):
    """The player crashed or reported an error; the message says which and where to look."""


def session_timeout_s(video_duration_s: float) -> int:
    """Video duration + margin: as long again as the video (room for stalls), at least 30 s."""
    return int(video_duration_s + max(TIMEOUT_MARGIN_MIN_S, video_duration_s))


def video_duration_s(content_dir: Path, fallback_s: float) -> float:
    ladder = Path(content_dir) / "ladder.json"
    try:
        return float(json.loads(ladder.read_text())["params"]["duration_s"])
    except (OSError, KeyError, ValueError):
        return float(fallback_s)


def player_argv(
    player: str,
    repo: Path,
    host: str,
    port: int,
    content_dir: Path,
    out: Path,
    t0_ns: int,
    timeout_s: int,
) -> list[str]:
    """The player's command line, from its registry entry (testbed/registry.py)."""
    launch = PlayerLaunch(Path(repo), host, port, Path(content_dir), Path(out), t0_ns, timeout_s)
    return registry.player(player).argv(launch)


def read_log(path: Path) -> list[dict]:
    """The player's lines; a malformed line is an error naming file and line (never skipped),
    except a truncated last line, which a crash can leave (reported by the end-line check)."""
    lines: list[dict] = []
    if not path.exists():
        return lines
    raw = path.read_text().split("\n")
    for number, text in enumerate(raw, start=1):
        if not text:
            continue
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError as e:
            if number == len(raw):  # the last line, without its newline: cut off by a crash
                break
            raise PlayerFailed(f"{path}:{number}: malformed JSON line ({e})") from None
    return lines


def check_session(
    ctx: Any, lines: list[dict], log: Path, stderr_path: Path, code: int | None
) -> dict:
    """Fails on a crash or error; marks the trial invalid on decode overload or a bad control.
    Returns the session summary (metrics/player_summary.py, the one definition)."""
    errors = [ln.get("message", "") for ln in lines if ln.get("event") == "error"]
    if not lines or lines[-1].get("event") != "end":
        raise PlayerFailed(
            f"player crashed (exit status {code}): {log} has no end line; "
            f"last error: {errors[-1] if errors else 'none logged'}; see {stderr_path}"
        )
    summary = summarize(lines)
    if summary["end_reason"] == "error" or code not in (0, None):
        raise PlayerFailed(
            f"player failed (exit status {code}, reason {summary['end_reason']}): "
            f"{errors[-1] if errors else 'no error line'}; see {log} and {stderr_path}"
        )
    overload = summary["decode_overload_frames"]
    decode_stalls = summary["decode_stalls"]
    if overload or decode_stalls:
        ctx.mark_invalid(
            f"decode overload: {overload} frames dropped and {decode_stalls} waits with a healthy "
            "buffer (the machine could not decode in real time; not the network)"
        )
    if ctx.scenario.get("name") == CONTROL_SCENARIO and (
        summary["stalls"] or summary["dropped_frames"]
    ):
        ctx.mark_invalid(
            f"control session not clean: {summary['stalls']} stalls, "
            f"{summary['dropped_frames']} dropped frames (expected 0 and 0)"
        )
    if summary["end_reason"] == "timeout":
        ctx.mark_invalid("player session timed out before the video ended")
    return summary


def run_player(ctx: Any, endpoint: Any, content_dir: Path) -> None:
    """Plays one session in the client namespace; blocks until it ends or times out."""
    player = ctx.spec.player
    out = Path(ctx.dir) / PLAYER_LOG
    timeout_s = session_timeout_s(video_duration_s(content_dir, ctx.spec.video_duration_s))
    argv = player_argv(
        player, Path(ctx.repo), endpoint.host, endpoint.port, content_dir, out, ctx.t0_ns, timeout_s
    )
    name = f"player-{player}"
    proc = ctx.spawn("client", name, argv)
    code = proc.wait(timeout_s + EXIT_GRACE_S)
    if code is None:
        proc.terminate()
        raise PlayerFailed(
            f"{name} did not exit {EXIT_GRACE_S} s after its own {timeout_s} s timeout; "
            f"stopped it (see {proc.stderr_path})"
        )
    check_session(ctx, read_log(out), out, Path(proc.stderr_path), code)
