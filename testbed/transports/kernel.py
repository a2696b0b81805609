"""Transport `kernel`: nginx and the player over the kernel's own MPTCP (CONTRACTS §7).

The kernel decides what can be asked for: CCs from net.ipv4.tcp_available_congestion_control,
schedulers from net.mptcp.available_schedulers (kernel_config.probe). The trial's kernel
session (set-up, statistics, verification, in that order) is kernel_session.py, built from
kernel-config/'s pieces; docs/KERNEL.md explains.

nginx listens on 10.1.2.2:8080 under `mptcpize run`; the player connects to that address
from the client namespace and is itself started under `mptcpize run` (start() makes every
later client-side ctx.spawn do so). Two subflows form: wifi (10.1.1.2, initial) and lte
(10.2.1.2, a `subflow` endpoint). finish() writes kernel-mptcp.json and marks the trial
invalid on a fallback to TCP or when only one path carried data.
"""

from __future__ import annotations

from kernel_config import preflight as kernel_preflight
from testbed.spec import TrialSpec
from testbed.transports import Endpoint, kernel_session


def names(repo: object, caps: dict) -> tuple[list[str], list[str]]:
    """CC and scheduler names this kernel offers (what --cc all / --sched all expand to)."""
    return list(caps["tcp_cc"]["available"]), list(caps["mptcp"]["available_schedulers"])


def preflight(spec: TrialSpec, caps: dict) -> list[str]:
    """What keeps this kernel from running the spec (the player is checked by the spec)."""
    return kernel_preflight.reasons(spec.transport, spec.cc, spec.sched, caps)


def start(ctx) -> Endpoint:  # ctx: testbed.trial.TrialContext
    host, port = kernel_session.start(ctx)
    return Endpoint(host, port)


def finish(ctx) -> None:
    kernel_session.finish(ctx)
