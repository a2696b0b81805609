"""Supervised processes of a trial: spawn inside a namespace, log, notice deaths, stop.

Every process runs as `ip netns exec <ns> [chrt -f <prio>] argv...` (`ip netns exec`
execs the program, so the pid we hold is the program's own), in a session of its own
so that a Ctrl-C on the terminal reaches the orchestrator only and teardown decides the
order in which things stop. stdout/stderr go to `<trial>/logs/<name>.stdout|.stderr`;
`process_start` and `process_exit` go to `<trial>/testbed.jsonl` (CONTRACTS §2).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from common.processes import TERMINATE_GRACE_S


def proc_start_ticks(pid: int) -> int | None:
    """Start time of a pid in clock ticks since boot (/proc/<pid>/stat field 22), or None.

    A pid plus its start time names one process for ever, which survives pid reuse.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # comm (field 2) may contain spaces and ')', so split after the last ')'.
    rest = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(rest[19])  # field 22 counted from 1 = index 19 after field 2
    except (IndexError, ValueError):
        return None


def is_same_process(pid: int, start_ticks: int | None) -> bool:
    """True when `pid` is alive and is the very process that had `start_ticks`."""
    if start_ticks is None:
        return False
    now = proc_start_ticks(pid)
    return now is not None and now == start_ticks


class EventLog:
    """`testbed.jsonl`: the orchestrator's own lines, on the trial clock (CONTRACTS §1)."""

    def __init__(self, path: Path, t0_ns: int, src: str = "testbed") -> None:
        self.path = path
        self.t0_ns = t0_ns
        self.src = src
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, event: str, **fields: object) -> None:
        line = {"t_ns": time.monotonic_ns() - self.t0_ns, "src": self.src, "event": event}
        line.update(fields)
        text = json.dumps(line, default=str) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(text)


WATCH_MODES = (None, "exit", "failure")


def exit_how(code: int) -> str:
    """'signal SIGKILL' for a negative Popen return code, else 'status N'."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


class Process:
    """One supervised process. Create with Topology.spawn (or TrialContext.spawn)."""

    def __init__(
        self,
        *,
        name: str,
        role: str,
        namespace: str,
        argv: list[str],
        log_dir: Path,
        events: EventLog,
        t0_ns: int,
        env: dict[str, str] | None = None,
        rt_priority: int | None = None,
        critical: bool = False,
        watch: str | None = None,
    ) -> None:
        if watch not in WATCH_MODES:
            raise ValueError(f"watch={watch!r}: valid are {', '.join(map(repr, WATCH_MODES))}")
        self.name = name
        self.role = role
        self.namespace = namespace
        self.argv = [str(a) for a in argv]
        self.log_dir = log_dir
        self.events = events
        self.t0_ns = t0_ns
        self.extra_env = dict(env or {})
        self.rt_priority = rt_priority
        # A critical process (the emulator) must live as long as the trial: if it
        # exits before teardown the trial fails with that reason.
        self.critical = critical
        # A watched process must live as long as the trial too, without the emulator's
        # place in the teardown order: "exit" = any exit before the testbed stops it fails
        # the trial (a server, a proxy, a relay); "failure" = only an exit with a non-zero
        # status or a signal (a cross-traffic flow, which ends by itself when its time is up).
        self.watch = "exit" if critical else watch
        self.popen: subprocess.Popen | None = None
        self.pid: int | None = None
        self.start_ticks: int | None = None
        self.returncode: int | None = None
        self.stopping = False  # set when the testbed itself asks it to stop
        self.exit_t_ns: int | None = None
        self._lock = threading.Lock()

    @property
    def stdout_path(self) -> Path:
        return self.log_dir / f"{self.name}.stdout"

    @property
    def stderr_path(self) -> Path:
        return self.log_dir / f"{self.name}.stderr"

    def full_argv(self) -> list[str]:
        prefix = ["ip", "netns", "exec", self.namespace]
        if self.rt_priority is not None:
            prefix += ["chrt", "-f", str(int(self.rt_priority))]
        return prefix + self.argv

    def start(self) -> Process:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env["TESTBED_T0_NS"] = str(self.t0_ns)
        env.update(self.extra_env)
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            self.popen = subprocess.Popen(
                self.full_argv(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                start_new_session=True,
            )
        self.pid = self.popen.pid
        self.start_ticks = proc_start_ticks(self.pid)
        self.events.write(
            "process_start",
            name=self.name,
            role=self.role,
            namespace=self.namespace,
            pid=self.pid,
            argv=self.argv,
            rt_priority=self.rt_priority,
        )
        return self

    def poll(self) -> int | None:
        """Exit status if it has exited (recorded once in testbed.jsonl), else None."""
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            if self.popen is None:
                return None
            code = self.popen.poll()
            if code is not None:
                self._record_exit(code)
            return code

    def _record_exit(self, code: int) -> None:
        self.returncode = code
        self.exit_t_ns = time.monotonic_ns() - self.t0_ns
        fields: dict[str, object] = {
            "name": self.name,
            "pid": self.pid,
            "returncode": code,
            "stopped_by_testbed": self.stopping,
        }
        if code < 0:
            fields["signal"] = signal.Signals(-code).name
        self.events.write("process_exit", **fields)

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Wait until it exits or timeout_s passes; returns the exit status or None."""
        if self.popen is None:
            return None
        try:
            self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        return self.poll()

    def running(self) -> bool:
        return self.popen is not None and self.poll() is None

    def died_early(self) -> str | None:
        """Reason text if it exited without the testbed asking it to, else None."""
        code = self.poll()
        if code is None or self.stopping:
            return None
        return (
            f"process '{self.name}' exited early with {exit_how(code)} "
            f"at t={self.exit_t_ns / 1e9:.1f}s "
            f"(see {self.stderr_path})"
        )

    def exit_reason(self) -> str | None:
        """Why the trial must fail because of this process (died_early, as far as its
        `watch` mode counts the exit), else None."""
        if self.watch is None:
            return None
        why = self.died_early()
        if why is None or (self.watch == "failure" and self.returncode == 0):
            return None
        return why

    def _signal(self, sig: int) -> None:
        assert self.popen is not None
        if self.popen.poll() is not None:
            return
        try:
            # The process leads its own session; the group also reaches its children.
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            self.popen.send_signal(sig)

    def terminate(self, grace_s: float = TERMINATE_GRACE_S) -> int | None:
        """SIGTERM, then SIGKILL after grace_s. Returns the exit status."""
        if self.popen is None:
            return None
        self.stopping = self.stopping or self.poll() is None
        if self.poll() is None:
            self._signal(signal.SIGTERM)
            if self.wait(grace_s) is None:
                self._signal(signal.SIGKILL)
                self.wait(5.0)
        return self.poll()


def terminate_all(processes: list[Process], grace_s: float = TERMINATE_GRACE_S) -> None:
    """SIGTERM to all at once, then SIGKILL to those still running after grace_s in total
    (so that n hung processes cost one grace period, not n)."""
    running = [p for p in processes if p.popen is not None and p.poll() is None]
    for proc in running:
        proc.stopping = True
        proc._signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for proc in running:
        proc.wait(max(0.0, deadline - time.monotonic()))
    for proc in running:
        if proc.poll() is None:
            proc._signal(signal.SIGKILL)
            proc.wait(5.0)
