"""One run per folder: the lock `results/<run>/.lock` and who holds it.

The matrix holds an exclusive `flock` on the file for its whole run and writes its PID and
command line into it, so that a second `run_trials.sh` into the same folder is refused with
the first one's PID and command, and `--report` on a folder whose run is still going can say
that the report is partial. The kernel drops the lock when the holder exits, however it
exits (even SIGKILL), so a stale file never blocks a resume; its text then names a process
that is gone and is overwritten by the next holder.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
from pathlib import Path
from typing import IO

LOCK_NAME = ".lock"


class RunBusy(Exception):
    """Another process holds the run folder; the message names it."""


def _holder_text(lock: IO[str]) -> str:
    lock.seek(0)
    text = lock.read().strip()
    return text or "a process that has not written its PID yet"


def acquire(run_dir: Path, argv: list[str] | None = None) -> IO[str]:
    """The run folder's lock, held until the returned file is closed (or the process ends);
    RunBusy naming the holder's PID and command when another process has it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = open(run_dir / LOCK_NAME, "a+")  # noqa: SIM115 (held for the whole run); a+: keep the text
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder_text(lock)
        lock.close()
        raise RunBusy(
            f"another run_trials.sh is using {run_dir}: {holder}. Wait for it, stop it "
            f"(Ctrl-C, or kill that PID), or give another --out"
        ) from None
    command = shlex.join(["run_trials.sh", *(sys.argv[1:] if argv is None else argv)])
    try:
        lock.seek(0)
        lock.truncate()
        lock.write(f"PID {os.getpid()}, command: {command}\n")
        lock.flush()
    except OSError:
        pass  # a full disk: the lock holds all the same, only the text is missing
    return lock


def holder(run_dir: Path) -> str | None:
    """Who runs this folder now ('PID N, command: ...'), or None when no run holds it."""
    path = run_dir / LOCK_NAME
    if not path.is_file():
        return None
    with open(path) as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder_text(lock)
        fcntl.flock(lock, fcntl.LOCK_UN)
    return None
