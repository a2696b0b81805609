"""The player of a trial (CONTRACTS.md §7): runs one session in the client namespace, blocks
until it ends or times out, and checks what it logged.

* `dashjs`: `node player/headless.mjs` (headless Chromium + dash.js), the page served by the
  trial's nginx at the endpoint.
* `gstreamer`: `/usr/bin/python3 player/gst_player.py` (Debian's python, which has `gi`).

Both write `<trial>/player.jsonl` (docs/schemas/player.v1.schema.json). A player that exits
without its `end` line, or whose `end` says `error`, fails the trial with the player's own
last error message. The session summary comes from metrics/player_summary.py.

The player runs in the trial's player CPU set (testbed/cpusets.py), and testbed/
cpu_accounting.py records where the CPU went (`cpu.jsonl`). A session is marked invalid when
the machine, not the network, shaped it, and only with evidence (metrics/drops.py): more
decoder-side dropped frames than the tolerance (frames dropped while the player's CPUs were
saturated, or with a GStreamer QoS drop), or a wait with a full buffer (`decode_stall`) while
the player's CPUs were saturated. A `control` scenario must show 0 stalls, else it is marked
invalid too.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from metrics.drops import (
    DECODE_STALL_TOLERANCE_MS,
    attribute_drops,
    cpu_evidence,
    decoder_side_reason,
    saturation_evidence,
)
from metrics.player_summary import summarize
from metrics.read import json_lines
from server.live_mpd import LIVE_MANIFEST, write_live_mpd
from testbed import registry
from testbed.cpu_accounting import CPU_LOG
from testbed.registry import PlayerLaunch
from testbed.supervisor import exit_how

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
    live_latency_s: float | None = None,
) -> list[str]:
    """The player's command line, from its registry entry (testbed/registry.py); with
    `live_latency_s` the live stream (dynamic MPD, server/live_mpd.py) at that target latency."""
    launch = PlayerLaunch(Path(repo), host, port, Path(content_dir), Path(out), t0_ns, timeout_s,
                          live_latency_s)  # fmt: skip
    return registry.player(player).argv(launch)


def read_log(path: Path) -> list[dict]:
    """The player's lines; a malformed line is an error naming file and line (never skipped),
    except a truncated last line, which a crash can leave (reported by the end-line check)."""
    if not path.exists():
        return []
    try:
        return json_lines(path, last_line_may_be_cut=True)
    except ValueError as exc:
        raise PlayerFailed(str(exc)) from None


def read_log_lenient(path: Path) -> list[dict]:
    """The player's lines for an error message: malformed ones skipped, never raises."""
    try:
        return read_log(path)
    except PlayerFailed:
        return []


def read_cpu_log(path: Path) -> list[dict]:
    """cpu.jsonl's lines (testbed/cpu_accounting.py); [] when there is none; a line cut off
    by the running sampler is skipped (the log is still being written)."""
    lines = []
    try:
        text = path.read_text()
    except OSError:
        return lines
    for raw in text.split("\n"):
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            continue
    return lines


def _exit_text(name: str, code: int | None) -> str:
    """How the player process ended: process 'player-dashjs' exit status 1, or killed by
    signal SIGKILL."""
    if code is None:
        return f"process '{name}' still running"
    return f"process '{name}' " + (
        f"killed by {exit_how(code)}" if code < 0 else f"exit {exit_how(code)}"
    )


def _last_stderr_line(stderr_path: Path, max_chars: int = 300) -> str:
    """'; its stderr ends: <line>' (e.g. EMFILE, "Too many open files"), or ''."""
    try:
        lines = [x.strip() for x in Path(stderr_path).read_text(errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [x for x in lines if x]
    return f"; its stderr ends: {lines[-1][:max_chars]}" if lines else ""


def check_session(
    ctx: Any,
    lines: list[dict],
    log: Path,
    stderr_path: Path,
    code: int | None,
    cpu_lines: list[dict] | None = None,
) -> dict:
    """Fails on a crash or error; marks the trial invalid on decoder-side drops or waits
    (with CPU or QoS evidence, metrics/drops.py) or a control session with stalls."""
    errors = [ln.get("message", "") for ln in lines if ln.get("event") == "error"]
    exited = _exit_text(Path(stderr_path).stem, code)
    cpu_lines = cpu_lines or []
    if not lines or lines[-1].get("event") != "end":
        raise PlayerFailed(
            f"player crashed ({exited}): {log} has no end line; "
            f"last error: {errors[-1] if errors else 'none logged'}; see {stderr_path}"
            + _last_stderr_line(stderr_path)
            + _starved(lines, cpu_lines)
        )
    summary = summarize(lines)  # metrics/player_summary.py, the one definition
    if summary["end_reason"] == "error" or code not in (0, None):
        raise PlayerFailed(
            f"player failed ({exited}, reason {summary['end_reason']}): "
            f"{errors[-1] if errors else 'no error line'}; see {log} and {stderr_path}"
        )
    why = decoder_side_reason(attribute_drops(lines, cpu_lines), summary.get("total_frames") or 0)
    if why:
        ctx.mark_invalid(why + " (the machine could not decode in real time; not the network)")
    intervals = [
        (float(ln["t_ns"]) / 1e9 - float(ln["interval_s"]), float(ln["t_ns"]) / 1e9, ln)
        for ln in cpu_lines
        if ln.get("event") == "cpu_sample" and ln.get("interval_s") is not None
    ]
    waits = []  # decode stalls with CPU evidence: (duration ms, line, evidence)
    for wait in (ln for ln in lines if ln.get("event") == "decode_stall"):
        evidence = cpu_evidence(
            intervals, float(wait["start_t_ns"]) / 1e9, float(wait["end_t_ns"]) / 1e9
        )
        if evidence:
            waits.append((float(wait.get("duration_ms") or 0), wait, evidence))
    if sum(w[0] for w in waits) > DECODE_STALL_TOLERANCE_MS:
        longest, wait, evidence = max(waits, key=lambda w: w[0])
        ctx.mark_invalid(
            f"decode stalls: {sum(w[0] for w in waits):.1f} ms in {len(waits)} wait(s) with "
            f"the player's CPUs saturated (tolerance {DECODE_STALL_TOLERANCE_MS} ms); longest "
            f"{longest} ms with {wait.get('buffer_s')} s buffered while {evidence}"
        )
    if ctx.scenario.get("name") == CONTROL_SCENARIO and summary["stalls"]:
        ctx.mark_invalid(
            f"control session not clean: {summary['stalls']} stalls (expected 0); "
            f"{summary['dropped_frames']} dropped frames"
        )
    if summary["end_reason"] == "timeout":
        ctx.mark_invalid(
            "player session timed out before the video ended" + _starved(lines, cpu_lines)
        )
    return summary


def _starved(
    lines: list[dict],
    cpu_lines: list[dict],
    start_s: float | None = None,
    end_s: float | None = None,
) -> str:
    """'; <CPU evidence>' when the player's CPUs were saturated during the session (from its
    first line, or `start_s`, to its last, or `end_s`), else '': a player starved of CPU may
    time out or hang without dropping a frame, and the reason must still say that the machine
    was at fault."""
    times = [float(ln["t_ns"]) / 1e9 for ln in lines if isinstance(ln.get("t_ns"), int | float)]
    first_s = start_s if start_s is not None else (min(times) if times else 0.0)
    stop_s = end_s if end_s is not None else (max(times) if times else math.inf)
    evidence = saturation_evidence(cpu_lines, first_s, stop_s)
    return f"; {evidence}" if evidence else ""


def go_on_air(ctx: Any, content_dir: Path, live_latency_s: float) -> float:
    """Puts the live stream on air now: writes <trial>/nginx/live.mpd with this moment as its
    availabilityStartTime (segment N becomes available N segment durations from now;
    server/live_mpd.py) and logs `live_on_air`. Returns the moment, Unix seconds."""
    on_air_unix_s = time.time()
    write_live_mpd(content_dir, Path(ctx.dir) / "nginx" / LIVE_MANIFEST, on_air_unix_s,
                   live_latency_s)  # fmt: skip
    if ctx.events:
        ctx.events.write("live_on_air", availability_start_unix_s=on_air_unix_s,
                         live_latency_s=live_latency_s)  # fmt: skip
    return on_air_unix_s


def run_player(ctx: Any, endpoint: Any, content_dir: Path) -> None:
    """Plays one session in the client namespace; blocks until it ends or times out."""
    player = ctx.spec.player
    out = Path(ctx.dir) / PLAYER_LOG
    timeout_s = session_timeout_s(video_duration_s(content_dir, ctx.spec.video_duration_s))
    live_latency_s = None
    if getattr(ctx.spec, "video_mode", "vod") == "live":
        # The stream goes on air as the player starts: segment N becomes available N segment
        # durations from now (server/live_mpd.py); nginx serves <trial>/nginx/live.mpd.
        live_latency_s = float(ctx.spec.live_latency_s)
        go_on_air(ctx, content_dir, live_latency_s)
    argv = player_argv(
        player,
        Path(ctx.repo),
        endpoint.host,
        endpoint.port,
        content_dir,
        out,
        ctx.t0_ns,
        timeout_s,
        live_latency_s,
    )
    name = f"player-{player}"
    spawned_t_s = (time.monotonic_ns() - ctx.t0_ns) / 1e9
    proc = ctx.spawn("client", name, argv)
    cpu_sets = getattr(ctx, "cpu_sets", None)
    if cpu_sets is not None and proc.pid:
        cpu_sets.place_player(proc.pid)  # its children (Chromium's processes) follow
    code = proc.wait(timeout_s + EXIT_GRACE_S)
    if code is None:
        proc.terminate()
        hung_t_s = (time.monotonic_ns() - ctx.t0_ns) / 1e9
        raise PlayerFailed(
            f"{name} did not exit {EXIT_GRACE_S} s after its own {timeout_s} s timeout; "
            f"stopped it (see {proc.stderr_path})"
            + _starved(
                read_log_lenient(out), read_cpu_log(Path(ctx.dir) / CPU_LOG), spawned_t_s, hung_t_s
            )
        )
    cpu_lines = read_cpu_log(Path(ctx.dir) / CPU_LOG)
    check_session(ctx, read_log(out), out, Path(proc.stderr_path), code, cpu_lines)
