"""Stopping a child process that is not a supervised trial process (testbed/supervisor.py
supervises those): nginx of a trial, a player session's processes."""

from __future__ import annotations

import signal
import subprocess

TERMINATE_GRACE_S = 5.0  # SIGTERM, then SIGKILL after this long


def stop_popen(
    popen: subprocess.Popen, sig: int = signal.SIGTERM, grace_s: float = TERMINATE_GRACE_S
) -> int:
    """Stop a child that is not a supervised Process: `sig`, then SIGKILL if it has not
    exited after grace_s. Returns its exit status."""
    if popen.poll() is None:
        popen.send_signal(sig)
        try:
            popen.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()
    return popen.returncode
