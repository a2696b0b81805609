"""Transport `none`: no media; the control transfer of testbed/probe.py runs instead.

start() launches the probe server in the server namespace (TCP sink/source and UDP echo on
PROBE_PORT of both server addresses); the trial then runs `probe.run_control(ctx)`.
"""

from __future__ import annotations

import sys
import time

from testbed.probe import PROBE_PORT
from testbed.spec import TrialSpec
from testbed.transports import Endpoint

READY_TIMEOUT_S = 10.0


def preflight(spec: TrialSpec, caps: dict) -> list[str]:
    """Nothing beyond what TrialSpec.problems checks (no CC, scheduler or player)."""
    return []


def start(ctx) -> Endpoint:  # ctx: testbed.trial.TrialContext
    proc = ctx.spawn(
        "server",
        "probe-server",
        [sys.executable, "-m", "testbed.probe", "server", "--port", str(PROBE_PORT)],
        watch="exit",
    )
    # The server prints one line once both sockets are bound.
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"probe server exited at start-up; see {proc.stderr_path}")
        if proc.stdout_path.is_file() and "listening" in proc.stdout_path.read_text():
            return Endpoint("10.1.2.2", PROBE_PORT)
        time.sleep(0.02)
    raise RuntimeError(f"probe server not listening after {READY_TIMEOUT_S} s")


def finish(ctx) -> None:
    return None
