"""Let a trial's namespaces use a TCP CC the host does not allow, and put the host back.

Inside a network namespace other than the host's, `net.ipv4.tcp_congestion_control` can only
be set to a CC on the host's `net.ipv4.tcp_allowed_congestion_control` list (the kernel
returns EPERM otherwise; here the list is `reno bbr`, so `cubic` fails). The list is global,
so a trial that needs `cubic` adds it for its duration:

* `allow(cc, holder)` adds the CC if missing and records in a state file
  (/run/mptcp-testbed/kernel-cc-allowed.json) which names it added and which process holds
  them. Trials running side by side share the record (a lock file serialises them).
* `release(holder)` drops the holder; the last one removes exactly the names the testbed
  added (names someone else added meanwhile stay).
* `sweep()` drops holders whose process is dead and restores when none is left, so a crashed
  run is repaired by the next one (`python -m kernel_config.host_cc --sweep`).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common.files import write_json_atomically

STATE_DIR = Path("/run/mptcp-testbed")
STATE_NAME = "kernel-cc-allowed.json"
ALLOWED_SYSCTL = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class HostAllowedCC:
    """The host's allowed-CC list plus the state file; paths injectable for tests."""

    def __init__(self, sysctl: Path = ALLOWED_SYSCTL, state_dir: Path = STATE_DIR) -> None:
        self.sysctl = sysctl
        self.state_dir = state_dir
        self.state_path = state_dir / STATE_NAME

    def current(self) -> list[str]:
        return self.sysctl.read_text().split()

    def _write(self, names: list[str]) -> None:
        self.sysctl.write_text(" ".join(names) + "\n")

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with (self.state_dir / (STATE_NAME + ".lock")).open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state: dict[str, Any] = {"added": [], "holders": []}
            if self.state_path.exists():
                try:
                    state = json.loads(self.state_path.read_text())
                except json.JSONDecodeError as error:
                    raise SystemExit(
                        f"{self.state_path}: not valid JSON ({error}); the host's allowed CCs are"
                        f" {self.current()}; remove the file after checking them"
                    ) from error
            yield state
            if state["holders"] or state["added"]:
                write_json_atomically(self.state_path, state)
            elif self.state_path.exists():
                self.state_path.unlink()

    def allow(self, cc: str, holder_pid: int, trial_id: str) -> bool:
        """Make `cc` allowed for this holder. Returns True if the host list was changed now."""
        with self._locked() as state:
            allowed = self.current()
            changed = False
            if cc not in allowed:
                self._write(allowed + [cc])
                if self.current().count(cc) != 1:
                    raise RuntimeError(f"{self.sysctl}: could not add {cc}; it lists {allowed}")
                if cc not in state["added"]:
                    state["added"].append(cc)
                state.setdefault("original", " ".join(allowed))
                changed = True
            if cc in state["added"] and not any(
                h["pid"] == holder_pid and h["trial"] == trial_id for h in state["holders"]
            ):
                state["holders"].append({"pid": holder_pid, "trial": trial_id, "cc": cc})
            return changed

    def _restore_if_unheld(self, state: dict[str, Any]) -> list[str]:
        if state["holders"] or not state["added"]:
            return []
        removed = [name for name in state["added"] if name in self.current()]
        self._write([name for name in self.current() if name not in state["added"]])
        state["added"] = []
        state.pop("original", None)
        return removed

    def release(self, holder_pid: int, trial_id: str) -> list[str]:
        """Drop this holder (and dead ones); returns the names removed from the host list."""
        with self._locked() as state:
            state["holders"] = [
                h
                for h in state["holders"]
                if not (h["pid"] == holder_pid and h["trial"] == trial_id) and _pid_alive(h["pid"])
            ]
            return self._restore_if_unheld(state)

    def sweep(self) -> list[str]:
        """Drop holders whose process is dead; restore when none is left."""
        with self._locked() as state:
            state["holders"] = [h for h in state["holders"] if _pid_alive(h["pid"])]
            return self._restore_if_unheld(state)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kernel_config.host_cc", description=__doc__)
    parser.add_argument("--sweep", action="store_true", help="restore after crashed trials")
    args = parser.parse_args(argv)
    host = HostAllowedCC()
    if args.sweep:
        removed = host.sweep()
        print(f"removed from allowed CCs: {' '.join(removed) or 'nothing'}")
    print(f"allowed CCs now: {' '.join(host.current())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
