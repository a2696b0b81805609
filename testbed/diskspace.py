"""The run folder's filesystem running out of space: stop, keep what finished, resume later.

A full disk fails whatever writes next (a log line, result.json, summary.csv), so the matrix
keeps a reserve: a file of RESERVE_BYTES in the run folder (`.space-reserve`), made when the
run starts. When the filesystem is found full (a trial ended with ENOSPC, or less than
MIN_FREE_BYTES is left before a trial starts), the matrix frees the reserve, which leaves
room to record the failed trial and to rewrite summary.csv, starts no further trial, and
exits with OUT_OF_SPACE_STATUS. A trial that failed for want of space is marked
`out_of_space` in its result.json and is redone by the next run of the same command (the
resume), like a trial that never finished; it says nothing about the network.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

RESERVE_NAME = ".space-reserve"
RESERVE_BYTES = 1 << 20  # result.json, the report's summary.csv of a few hundred trials
MIN_FREE_BYTES = 8 << 20  # below this a trial (logs of a few MB) is not started
OUT_OF_SPACE_STATUS = 3  # run_trials.sh's exit status (docs/ORCHESTRATOR.md)
ENOSPC_TEXT = os.strerror(errno.ENOSPC)  # "No space left on device"


def free_bytes(run_dir: Path) -> int:
    return shutil.disk_usage(run_dir).free


def reserve(run_dir: Path) -> bool:
    """Make the reserve file (again); False when there is no room for it."""
    path = Path(run_dir) / RESERVE_NAME
    try:
        with open(path, "wb") as out:
            out.truncate(0)
            # Real blocks (not a sparse file): the point is to hold space.
            out.write(b"\0" * RESERVE_BYTES)
            out.flush()
            os.fsync(out.fileno())
        return True
    except OSError:
        path.unlink(missing_ok=True)
        return False


def release(run_dir: Path) -> None:
    (Path(run_dir) / RESERVE_NAME).unlink(missing_ok=True)


def is_full(run_dir: Path, evidence: str = "") -> bool:
    """Whether the run folder's filesystem is (nearly) full: less than MIN_FREE_BYTES free,
    or `evidence` (a failed trial's reason or stderr) says ENOSPC."""
    return ENOSPC_TEXT in evidence or free_bytes(run_dir) < MIN_FREE_BYTES


def describe(run_dir: Path) -> str:
    usage = shutil.disk_usage(run_dir)
    return (
        f"the run folder's filesystem is full ({run_dir}: {usage.free / 1e6:.1f} MB free of "
        f"{usage.total / 1e6:.1f} MB)"
    )
