"""What the process tests ask of a PID: is it still running?"""

from __future__ import annotations

from pathlib import Path


def alive(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie (a zombie has ended: it waits only for its
    parent, or its new parent, to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    # comm (field 2) may hold spaces and ')': the state is the field after the last ')'.
    return stat[stat.rfind(")") + 2] != "Z"
