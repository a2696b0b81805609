"""Transports `tcp-wifi` and `tcp-lte`: plain TCP over one path, the single-path baselines.

nginx (no mptcpize) listens on the server address of the chosen path (CONTRACTS §3:
10.1.2.2:8080 for wifi, 10.2.2.2:8080 for lte) and the player connects there. For tcp-lte a
client host route sends traffic to 10.2.2.2 out of `lte` from 10.2.1.2; the router's
`iif c-lte` rule keeps it on the LTE path. The CC is set in both namespaces (the host's
allowed list is extended for the trial when needed). kernel-subflows.jsonl is sampled as for
`kernel`; finish() marks the trial invalid if data went over any other path or over MPTCP.
"""

from __future__ import annotations

from kernel_config import preflight as kernel_preflight
from kernel_config import trial_session
from testbed.spec import TrialSpec
from testbed.transports import Endpoint


def names(repo: object, caps: dict) -> tuple[list[str], list[str]]:
    return list(caps["tcp_cc"]["available"]), []  # no scheduler (registry default None)


def preflight(spec: TrialSpec, caps: dict) -> list[str]:
    reasons = kernel_preflight.reasons(spec.transport, spec.cc, spec.sched, caps)
    if spec.player is None:
        reasons.append(
            f"transport {spec.transport} carries video; player must be dashjs or gstreamer"
        )
    return reasons


def start(ctx) -> Endpoint:  # ctx: testbed.trial.TrialContext
    host, port = trial_session.start(ctx)
    return Endpoint(host, port)


def finish(ctx) -> None:
    trial_session.finish(ctx)
