"""Helpers for the orchestrator's tests (no tests here): root check, a fake repository.

The fake repository has the real scenarios and a stub emulator that stands in for
emulator/target/release/linkemu: it removes the NFQUEUE hooks (so packets pass
unimpaired), writes the `start` line and waits for SIGTERM; `--validate` (which
testbed/scenario.py asks before anything runs) accepts every scenario. With
STUB_EMULATOR_DIE_AFTER_S set it exits with status 3 after that many seconds (a crashing emulator).
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")

STUB_EMULATOR = r"""#!/bin/bash
log=""
while [[ $# -gt 0 ]]; do
  case $1 in --log) log=$2; shift 2 ;; --validate) exit 0 ;; *) shift ;; esac
done
iptables -w -t mangle -F FORWARD
start='{"t_ns": 0, "src": "emulator", "event": "start", "scenario": "stub", "seed": 0}'
echo "$start" >>"$log"
trap 'exit 0' TERM INT
if [[ -n "${STUB_EMULATOR_DIE_AFTER_S:-}" ]]; then sleep "$STUB_EMULATOR_DIE_AFTER_S"; exit 3; fi
while true; do sleep 0.1; done
"""


def make_fake_repo(root: Path) -> Path:
    repo = root / "repo"
    binary = repo / "emulator" / "target" / "release" / "linkemu"
    binary.parent.mkdir(parents=True)
    binary.write_text(STUB_EMULATOR)
    binary.chmod(0o755)
    (repo / "netem-scenarios").symlink_to(REPO / "netem-scenarios")
    return repo


def namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def stop_gently(proc: subprocess.Popen) -> None:
    """After a failed assertion: SIGINT first, so the orchestrator under test still tears
    down (and stops its trial processes); SIGKILL only if it does not exit in time."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(90)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
