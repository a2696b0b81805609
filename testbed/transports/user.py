"""Transport `user`: the testbed's own multipath transport, `mpproxy` (transport/, CONTRACTS §7).

    player ─TCP─► mpproxy client ═ UDP, one subflow per path ═► mpproxy server ─TCP─► nginx
    (client ns, 127.0.0.1:8080)  (every scenario path)         (server ns)    (127.0.0.1:8080)

start() starts nginx on loopback in the server namespace, then `mpproxy server` on every
path's server address (the trial's address plan) and `mpproxy client` on 127.0.0.1:8080
in the client namespace (one subflow per path, bound to the path's client address, so the
router sends it over that path), and returns Endpoint("127.0.0.1", 8080). Both write
transport-{client,server}.jsonl (§5.2).
finish() checks every configured path in the `subflow` lines of both sides
(docs/ORCHESTRATOR.md, "Validity"): a path whose subflow never completed its handshake
(no line with `established: true` and an acknowledged byte) means a broken set-up (routing,
namespace, address plan), so the trial is invalid; a path that was established but carried
no stream data is a scheduler's choice (a sticky scheduler staying on one path), so the
trial stays valid and the path is listed in result.json's `paths_unused`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from metrics.read import json_lines
from testbed.capture import PCAP_ENV
from testbed.spec import TrialSpec
from testbed.transports import MPPROXY_BINARY, SCHED_TRACE_ENV, Endpoint

MPPROXY_PORT = 4433
# The two-path plan's values (wifi, lte); a trial uses its own address plan (ctx.topo.plans).
SERVER_LISTEN = ["10.1.2.2:4433", "10.2.2.2:4433"]
CLIENT_PATHS = ["wifi=10.1.1.2:10.1.2.2:4433", "lte=10.2.1.2:10.2.2.2:4433"]
PATH_NAMES = [p.split("=", 1)[0] for p in CLIENT_PATHS]
LOOPBACK_PORT = 8080


def _plan_paths(ctx) -> tuple[list[str], list[str]]:  # ctx: testbed.trial.TrialContext
    """(server listen addresses, client --path values): one subflow per scenario path."""
    plans = getattr(getattr(ctx, "topo", None), "plans", None)
    if not plans:
        return SERVER_LISTEN, CLIENT_PATHS
    listen = [f"{p.server_addr}:{MPPROXY_PORT}" for p in plans.values()]
    paths = [f"{p.name}={p.client_addr}:{p.server_addr}:{MPPROXY_PORT}" for p in plans.values()]
    return listen, paths


READY_TIMEOUT_S = 10.0
LIST_TIMEOUT_S = 20.0


def list_names(binary: Path) -> dict | None:
    """`mpproxy --list` as a dict {"cc": [...], "sched": [...], "sched_aliases": {...}}."""
    if not binary.is_file():
        return None
    try:
        done = subprocess.run(
            [str(binary), "--list"], capture_output=True, text=True, timeout=LIST_TIMEOUT_S
        )
        data = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    if not isinstance(data, dict) or "cc" not in data or "sched" not in data:
        return None
    return data


def option_problems(
    repo: Path, ccs: list[str], scheds: list[str], cc_opts: tuple[str, ...],
    sched_opts: tuple[str, ...],
) -> list[str]:  # fmt: skip
    """What `mpproxy check` refuses of these options with each CC (--cc-opt) and each
    scheduler (--sched-opt): a bad value or a key the algorithm does not read, as mpproxy
    words it; [] when every one is accepted."""
    binary = Path(repo) / MPPROXY_BINARY
    if not binary.is_file():
        return [f"cannot check --cc-opt/--sched-opt: {MPPROXY_BINARY} is not built "
                "(`cd transport && cargo build --release`; scripts/setup.sh does)"]  # fmt: skip
    checks = [["--cc", cc, *(a for kv in cc_opts for a in ("--cc-opt", kv))]
              for cc in (ccs if cc_opts else [])]  # fmt: skip
    checks += [["--sched", sched, *(a for kv in sched_opts for a in ("--sched-opt", kv))]
               for sched in (scheds if sched_opts else [])]  # fmt: skip
    problems = []
    for argv in checks:
        done = subprocess.run([str(binary), "check", *argv], capture_output=True, text=True,
                              timeout=LIST_TIMEOUT_S)  # fmt: skip
        if done.returncode != 0:
            problems.append(done.stderr.strip().removeprefix("mpproxy: "))
    return problems


def names(repo: Path, caps: dict) -> tuple[list[str], list[str]]:
    """CC and scheduler names mpproxy offers (aliases such as minrtt are not repeated)."""
    data = list_names(Path(repo) / MPPROXY_BINARY)
    if data is None:
        return [], []
    return list(data["cc"]), list(data["sched"])


def preflight(spec: TrialSpec, caps: dict, repo: Path | None = None) -> list[str]:
    repo = Path(repo) if repo else Path(__file__).resolve().parents[2]
    binary = repo / MPPROXY_BINARY
    data = list_names(binary)
    if data is None:
        return [
            f"{MPPROXY_BINARY} is missing or `--list` failed; build it with "
            "`cd transport && cargo build --release` (scripts/setup.sh does)"
        ]
    reasons = []
    if spec.cc not in data["cc"]:
        reasons.append(f"mpproxy has no cc '{spec.cc}'; valid: {', '.join(data['cc'])}")
    scheds = list(data["sched"]) + list(data.get("sched_aliases", {}))
    if spec.sched not in scheds:
        reasons.append(f"mpproxy has no scheduler '{spec.sched}'; valid: {', '.join(scheds)}")
    return reasons


def _wait_started(proc: object, stats: Path, name: str) -> None:
    """mpproxy writes its `start` line once its sockets are bound."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        poll = getattr(proc, "poll", None)
        if poll is not None and poll() is not None:
            raise RuntimeError(f"{name} exited at start-up; see logs/{name}.stderr")
        if stats.is_file() and '"event":"start"' in stats.read_text():
            return
        time.sleep(0.02)
    raise RuntimeError(f"{name} did not start within {READY_TIMEOUT_S} s; see logs/{name}.stderr")


def mpproxy_argv(ctx, role: str) -> list[str]:  # ctx: testbed.trial.TrialContext
    spec = ctx.spec
    binary = str(Path(ctx.repo) / MPPROXY_BINARY)
    common = ["--cc", spec.cc, "--sched", spec.sched, *spec.option_argv(),
              "--t0-ns", str(ctx.t0_ns), "--seed", str(spec.seed)]  # fmt: skip
    if os.environ.get(SCHED_TRACE_ENV) == "1":
        common += ["--sched-trace", str(Path(ctx.dir) / f"sched-trace-{role}.jsonl")]
    if os.environ.get(PCAP_ENV):  # --pcap: what was sent, to check the captures against
        common += ["--packet-log", str(Path(ctx.dir) / f"packets-{role}.jsonl")]
    server_listen, client_paths = _plan_paths(ctx)
    if role == "server":
        return [binary, "server", "--listen", ",".join(server_listen),
                "--forward", f"127.0.0.1:{LOOPBACK_PORT}",
                "--stats", str(Path(ctx.dir) / "transport-server.jsonl"), *common]  # fmt: skip
    paths = [arg for p in client_paths for arg in ("--path", p)]
    return [binary, "client", "--listen", f"127.0.0.1:{LOOPBACK_PORT}", *paths,
            "--stats", str(Path(ctx.dir) / "transport-client.jsonl"), *common]  # fmt: skip


def start(ctx) -> Endpoint:  # ctx: testbed.trial.TrialContext
    if ctx.content_dir is not None:
        from server import nginx

        nginx.start(ctx, [f"127.0.0.1:{LOOPBACK_PORT}"], ctx.content_dir, mptcp=False)
    for role in ("server", "client"):
        name = f"mpproxy-{role}"
        proc = ctx.spawn(role, name, mpproxy_argv(ctx, role), watch="exit")
        _wait_started(proc, Path(ctx.dir) / f"transport-{role}.jsonl", name)
    return Endpoint("127.0.0.1", LOOPBACK_PORT)


def data_bytes_per_path(trial_dir: Path) -> dict[str, int]:
    """Stream bytes each path carried: per (side, connection, path) the last `subflow` line's
    data_bytes_received_total, summed over connections and both sides."""
    return {name: p.data_bytes for name, p in path_evidence(trial_dir).items()}


@dataclass
class PathEvidence:
    """What the `subflow` lines of transport-{client,server}.jsonl say about one path."""

    data_bytes: int = 0  # stream bytes received on it, summed over connections and sides
    established: bool = False  # some subflow on it completed its handshake (see below)


def path_evidence(trial_dir: Path) -> dict[str, PathEvidence]:
    """Per path: the stream bytes it carried and whether a subflow on it was ever established.

    Established = a `subflow` line (either side, any connection) with `established: true`
    and `bytes_acked_total` > 0: the HELLO handshake completed and a datagram sent on the
    path was acknowledged, so the path works both ways and has an RTT sample. A path that
    carried stream data counts as established too."""
    last: dict[tuple[str, int, str], int] = {}
    evidence: dict[str, PathEvidence] = {}
    for side in ("client", "server"):
        path = Path(trial_dir) / f"transport-{side}.jsonl"
        if not path.is_file():
            continue
        for row in json_lines(path):
            if row.get("event") == "subflow":
                name = str(row["path"])
                last[(side, int(row["conn"]), name)] = int(row.get("data_bytes_received_total", 0))
                entry = evidence.setdefault(name, PathEvidence())
                if row.get("established") is True and int(row.get("bytes_acked_total", 0)) > 0:
                    entry.established = True
    for (_side, _conn, name), value in last.items():
        evidence[name].data_bytes += value
    for entry in evidence.values():
        entry.established = entry.established or entry.data_bytes > 0
    return evidence


def verdict(trial_dir: Path, names: list[str]) -> tuple[list[str], int, list[str]]:
    """(invalid reasons, subflows_with_data, paths_unused) of a trial folder whose configured
    paths are `names`; the one rule, used by finish(), by the simulator engine
    (testbed/engine_sim.py, on the logs mpsim writes) and by `python -m
    testbed.transports.revalidate`. A malformed log line raises ValueError (file:line)."""
    evidence = path_evidence(trial_dir)
    seen = {name: evidence.get(name, PathEvidence()) for name in names}
    carried = [name for name, p in seen.items() if p.data_bytes > 0]
    never = [name for name, p in seen.items() if not p.established]
    unused = [name for name, p in seen.items() if p.established and p.data_bytes == 0]
    reasons = []
    if never:
        detail = ", ".join(f"{n}={p.data_bytes} B" for n, p in seen.items())
        reasons.append(
            f"user: {len(never)} of {len(names)} subflows never established"
            f" ({', '.join(never)}: no `subflow` line with established=true and an"
            f" acknowledged byte; stream data {detail})"
        )
    return reasons, len(carried), unused


def configured_paths(ctx) -> list[str]:  # ctx: testbed.trial.TrialContext
    return [p.split("=", 1)[0] for p in _plan_paths(ctx)[1]]


def finish(ctx) -> None:  # ctx: testbed.trial.TrialContext
    try:
        reasons, ctx.subflows_with_data, ctx.paths_unused = verdict(
            Path(ctx.dir), configured_paths(ctx)
        )
    except ValueError as exc:
        ctx.mark_invalid(f"user: {exc}")
        return
    for reason in reasons:
        ctx.mark_invalid(reason)
