"""The kernel-side life of one trial, shared by the `kernel` and `tcp-*` transports
(testbed/transports/kernel.py, tcp.py); the pieces it orders live in kernel-config/.

start(ctx, mode):
 1. if the CC is not on the host's allowed list, add it for this trial (host_cc, restored
    in finish, at process exit, or by the next sweep after a crash);
 2. set up the namespaces (mptcp_setup): MPTCP sysctls, limits, endpoint, scheduler, CC;
 3. read the MIB counters (/proc/net/netstat) in the client and server namespaces;
 4. start the ss sampler in the server namespace (kernel-subflows.jsonl);
 5. start nginx on the right address (MPTCP through mptcpize for `kernel`);
 6. for `kernel`, make every process the trial starts afterwards in the client namespace
    (the player) run under `mptcpize run`, so Chromium's sockets are MPTCP too.
finish(ctx): stop the sampler, read the counters again, write kernel-mptcp.json with the
verdict (verify.verdict) and mark the trial invalid for every reason it gives.
"""

from __future__ import annotations

import atexit
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.files import write_json_atomically
from kernel_config import mptcp_setup, verify
from kernel_config.host_cc import HostAllowedCC
from server import nginx
from testbed.topology import PATHS

SERVER_PORT = 8080
SAMPLE_INTERVAL_MS = 150
MPTCPIZE = ["mptcpize", "run"]
# CONTRACTS §3: where nginx listens and the player connects, per transport, in the two-path
# plan; a trial uses its own plan (the first path's server address for kernel, the named
# path's for tcp-<path>).
ENDPOINT_HOST = {"kernel": "10.1.2.2", "tcp-wifi": "10.1.2.2", "tcp-lte": "10.2.2.2"}


@dataclass
class SessionState:
    mib_before: dict[str, dict[str, int]] = field(default_factory=dict)
    sampler: Any = None
    host_cc_held: bool = False


_sessions: dict[str, SessionState] = {}


def _runner(ctx: Any) -> mptcp_setup.Runner:
    return lambda role, argv: ctx.topo.run(role, argv)


def read_mib(ctx: Any) -> dict[str, dict[str, int]]:
    run = _runner(ctx)
    return {
        role: verify.parse_netstat(run(role, ["cat", "/proc/net/netstat"]).stdout)
        for role in ("client", "server")
    }


def _plans(ctx: Any) -> dict[str, Any]:
    """The trial's address plan (testbed.topology.PathPlan by path name, file order)."""
    plans = getattr(ctx.topo, "plans", None)
    if plans is None:
        return dict(PATHS)
    return dict(plans)


def _release_host_cc(trial_id: str, pid: int) -> None:
    HostAllowedCC().release(pid, trial_id)


def _wrap_client_spawns(ctx: Any) -> None:
    """Later ctx.spawn(role="client", ...) calls (the player) run under mptcpize."""
    original = ctx.spawn

    def spawn(role: str, name: str, argv: list[str], **kw: Any) -> Any:
        argv = [str(a) for a in argv]
        if role == "client" and argv[: len(MPTCPIZE)] != MPTCPIZE:
            argv = MPTCPIZE + argv
        return original(role, name, argv, **kw)

    ctx.spawn = spawn


def start(ctx: Any) -> tuple[str, int]:
    """Set up and start the server side; returns (host, port) where the player connects."""
    spec = ctx.spec
    transport = spec.transport
    if transport not in ENDPOINT_HOST:
        raise ValueError(f"transport {transport!r}: valid is {', '.join(ENDPOINT_HOST)}")
    state = SessionState()
    _sessions[str(ctx.dir)] = state
    host_cc = HostAllowedCC()
    host_cc.sweep()  # first repair what a crashed trial left (dead holders)
    # Also when another trial added it already: holding it keeps that trial from removing it.
    if spec.cc not in host_cc.current() or host_cc.state_path.exists():
        changed = host_cc.allow(spec.cc, os.getpid(), spec.trial_id())
        state.host_cc_held = True
        atexit.register(_release_host_cc, spec.trial_id(), os.getpid())
        if changed and ctx.events:
            ctx.events.write(
                "host_change",
                what="net.ipv4.tcp_allowed_congestion_control",
                added=spec.cc,
                restored_at="transport finish, process exit, or python -m kernel_config.host_cc"
                " --sweep",
            )
    run = _runner(ctx)
    plans = list(_plans(ctx).values())
    if transport == "kernel":
        # One subflow per path: the first path's address opens the connection (main
        # default route), every other path's client address is a `subflow` endpoint.
        endpoints = [(p.client_addr, p.name) for p in plans[1:]]
        mptcp_setup.setup_mptcp(
            run, mptcp_setup.KernelSettings(cc=spec.cc, sched=spec.sched), endpoints
        )
        host = plans[0].server_addr
    else:
        path = transport.removeprefix("tcp-")
        by_name = {p.name: p for p in plans}
        if path not in by_name:
            raise ValueError(f"transport {transport}: the scenario has no path '{path}' "
                             f"(its paths: {', '.join(by_name)})")  # fmt: skip
        plan = by_name[path]
        host = plan.server_addr
        mptcp_setup.setup_cc(run, spec.cc)
        if plan is not plans[0]:  # the first path is the client's main default route
            mptcp_setup.add_host_route(
                run, plan.server_addr, plan.router_client_side_addr, plan.name, plan.client_addr
            )
    state.mib_before = read_mib(ctx)
    state.sampler = ctx.spawn(
        "server",
        "kernel-ss",
        [
            sys.executable, "-m", "kernel_config.sampler",
            "--out", str(Path(ctx.dir) / "kernel-subflows.jsonl"),
            "--t0-ns", str(ctx.t0_ns),
            "--port", str(SERVER_PORT),
            "--interval-ms", str(SAMPLE_INTERVAL_MS),
            "--paths", ",".join(f"{p.client_addr}={p.name}" for p in plans),
        ],
        watch="failure",
    )  # fmt: skip
    if ctx.content_dir is not None:
        nginx.start(ctx, [f"{host}:{SERVER_PORT}"], ctx.content_dir, mptcp=transport == "kernel")
    if transport == "kernel":
        _wrap_client_spawns(ctx)
    return host, SERVER_PORT


def finish(ctx: Any) -> dict[str, Any]:
    """Collect, verify, write kernel-mptcp.json; marks the trial invalid when it must."""
    state = _sessions.pop(str(ctx.dir), None)
    if state is None:
        raise RuntimeError(f"{ctx.dir}: finish() without start()")
    try:
        if state.sampler is not None:
            state.sampler.terminate()
        mib_after = read_mib(ctx)
        trial_dir = Path(ctx.dir)
        result = verify.verdict(
            ctx.spec.transport,
            {
                role: {"before": state.mib_before[role], "after": mib_after[role]}
                for role in ("client", "server")
            },
            verify.read_jsonl(trial_dir / "kernel-subflows.jsonl"),
            verify.emulator_lines_without_cross_traffic(
                trial_dir, set(getattr(ctx.topo, "cross_flows", {}) or {})
            ),
            paths=tuple(_plans(ctx)),
        )
        result["settings"] = mptcp_setup.describe(_runner(ctx))
        result["spec"] = {"cc": ctx.spec.cc, "sched": ctx.spec.sched}
        write_json_atomically(trial_dir / "kernel-mptcp.json", result)
        ctx.subflows_with_data = result["subflows_with_data"]
        ctx.paths_unused = result["paths_unused"]
        for reason in result["invalid_reasons"]:
            ctx.mark_invalid(reason)
        return result
    finally:
        if state.host_cc_held:
            _release_host_cc(ctx.spec.trial_id(), os.getpid())
