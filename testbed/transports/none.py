"""Transport `none`: no media; the control transfer of testbed/probe.py runs instead.

start() launches the probe server in the server namespace (TCP sink/source and UDP echo on
PROBE_PORT of both server addresses); the trial then runs `probe.run_control(ctx)`.
"""

from __future__ import annotations

import sys

from testbed.probe import PROBE_PORT
from testbed.spec import NOT_APPLICABLE, TrialSpec
from testbed.transports import Endpoint


def preflight(spec: TrialSpec, caps: dict) -> list[str]:
    reasons = []
    if spec.cc != NOT_APPLICABLE or spec.sched != NOT_APPLICABLE:
        reasons.append(
            f"transport none has no CC or scheduler (got cc={spec.cc}, sched={spec.sched}); "
            f"use '{NOT_APPLICABLE}'"
        )
    if spec.player != "none":
        reasons.append(f"transport none carries no video; player must be none, not {spec.player}")
    return reasons


def start(ctx) -> Endpoint:  # ctx: testbed.trial.TrialContext
    ctx.spawn(
        "server",
        "probe-server",
        [sys.executable, "-m", "testbed.probe", "server", "--port", str(PROBE_PORT)],
    )
    return Endpoint("10.1.2.2", PROBE_PORT)


def finish(ctx) -> None:
    return None
