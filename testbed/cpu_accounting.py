"""Where the CPU went during a trial: `<trial>/cpu.jsonl`, one line every 250 ms.

Every line (`event: cpu_sample`, trial clock `t_ns`) holds, for the interval since the
previous line:

* `interval_s`: its length (s);
* `cpu_busy`: {cpu: busy fraction} of every CPU of the machine from /proc/stat (user, nice,
  system, irq, softirq, steal: everything but idle and iowait), whoever ran there;
* `player_set_busy`: the mean busy fraction of the player's CPUs (all CPUs when unpinned);
* `player_runq_wait_ms`: how long the player's threads waited runnable for a CPU, summed over
  threads (/proc/<pid>/task/<tid>/schedstat, field 2), i.e. time the decoder wanted to run
  and could not;
* `loadavg`: /proc/loadavg's 1, 5 and 15 min averages;
* `groups_cpu_s`: {player, testbed}: the CPU sets' cumulative CPU time from the cgroup's own
  accounting (v1 `cpuacct.usage`, v2 `cpu.stat` usage_usec), which includes processes that
  already exited; absent when the trial is unpinned or pinned by affinity.

Every fourth line (once a second) also has `components_cpu_s`: cumulative user+system CPU
time (s) per component, from /proc/<pid>/stat of every process the trial started: a
supervised process's name (emulator, mpproxy-client, nginx, player-dashjs, ...) covers its
children; the player's are split by role (`player-dashjs/renderer`, `/gpu`, `/network`,
`/browser`, `/node`), and the trial's own process and its short-lived helpers are
`orchestrator`. A process that exited keeps the time it had at its last sample.

The last line, `cpu_totals`, repeats the cumulative figures at the end of the trial. The
sampler's own cost is in `orchestrator` (about 1-2 % of a core on this machine).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from testbed.cpusets import TrialCpuSets, descendants, parent_map

CPU_LOG = "cpu.jsonl"
FAST_PERIOD_S = 0.25  # per-CPU busy and run-queue wait: as often as the player samples
COMPONENT_EVERY = 4  # per-process /proc walk every 4th line = once a second
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
SRC = "cpu"


def read_proc_stat() -> dict[int, tuple[int, int]]:
    """{cpu: (busy ticks, total ticks)} from /proc/stat's cpuN lines."""
    cpus: dict[int, tuple[int, int]] = {}
    with open("/proc/stat", encoding="ascii") as stat:
        for line in stat:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            name, *fields = line.split()
            values = [int(v) for v in fields[:8]]
            idle = values[3] + values[4]  # idle + iowait
            total = sum(values)
            cpus[int(name[3:])] = (total - idle, total)
    return cpus


def read_loadavg() -> list[float]:
    with open("/proc/loadavg", encoding="ascii") as f:
        return [float(x) for x in f.read().split()[:3]]


def proc_cpu_ticks(pid: int) -> tuple[int, int] | None:
    """(utime + stime ticks, start time ticks) of a process, None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = stat[stat.rfind(")") + 2 :].split()
    return int(rest[11]) + int(rest[12]), int(rest[19])


def run_delay_ns(pids: list[int]) -> dict[tuple[int, int], int]:
    """{(pid, tid): cumulative run-queue wait ns} of every thread of the given processes."""
    waits: dict[tuple[int, int], int] = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                fields = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
                waits[(pid, int(tid))] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    return waits


def chromium_role(pid: int) -> str:
    """browser / renderer / gpu / network / utility / node / other, from the command line."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    exe = os.path.basename(argv[0].decode(errors="replace")) if argv else ""
    args = b" ".join(argv)
    if b"--type=renderer" in args:
        return "renderer"
    if b"--type=gpu-process" in args:
        return "gpu"
    if b"network.mojom.NetworkService" in args:
        return "network"
    if b"--type=" in args:
        return "utility"
    if exe.startswith("chrom") or exe == "headless_shell":
        return "browser"
    if exe == "node":
        return "node"
    if "python" in exe:
        return "gstreamer"
    return exe or "other"


class CpuSampler:
    """A thread that writes cpu.jsonl until stop(); see the module docstring."""

    def __init__(
        self,
        trial_dir: Path,
        t0_ns: int,
        sets: TrialCpuSets,
        processes: Callable[[], list[Any]],
        period_s: float = FAST_PERIOD_S,
    ) -> None:
        self.path = Path(trial_dir) / CPU_LOG
        self.t0_ns = t0_ns
        self.sets = sets
        self.processes = processes  # the supervised processes (name, pid) at any moment
        self.period_s = period_s
        self.player_cpus = list(sets.cpus.player) if sets.pinned and sets.cpus else None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cpu-sampler", daemon=True)
        self._last_stat: dict[int, tuple[int, int]] | None = None
        self._last_wait: dict[tuple[int, int], int] = {}
        self._last_t: float | None = None
        self._proc_ticks: dict[tuple[int, int], tuple[str, int]] = {}  # (pid, start) -> last
        self._roles: dict[tuple[int, int], str] = {}
        self._player_pids: list[int] = []
        self._ticks = 0

    def start(self) -> CpuSampler:
        self._write(
            {
                "event": "cpu_start",
                "cpus": sorted(read_proc_stat()),
                "player_cpus": self.player_cpus,
                "pinned": self.sets.pinned,
                "mechanism": self.sets.mechanism,
                "period_s": self.period_s,
                "clk_tck": CLK_TCK,
            }
        )
        self._sample(components=True, event=None)  # the baseline (not written)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sampling and write cpu_totals (idempotent)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=5)
        try:
            self._sample(components=True, event="cpu_totals")
        except Exception as exc:  # accounting must never fail a trial
            self._write({"event": "cpu_error", "message": f"{type(exc).__name__}: {exc}"})

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            self._ticks += 1
            try:
                self._sample(components=self._ticks % COMPONENT_EVERY == 0, event="cpu_sample")
            except Exception as exc:
                self._write({"event": "cpu_error", "message": f"{type(exc).__name__}: {exc}"})

    def _write(self, line: dict[str, Any]) -> None:
        line = {"t_ns": time.monotonic_ns() - self.t0_ns, "src": SRC, **line}
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def _player_root(self) -> int | None:
        for proc in self.processes():
            if str(getattr(proc, "name", "")).startswith("player-") and proc.pid:
                return int(proc.pid)
        return None

    def _sample(self, *, components: bool, event: str | None) -> None:
        now = time.monotonic()
        stat = read_proc_stat()
        line: dict[str, Any] = {"event": event}
        if components:
            line["components_cpu_s"] = self._components()
        if self._last_stat is not None and self._last_t is not None:
            busy = {}
            for cpu, (b, t) in stat.items():
                b0, t0 = self._last_stat.get(cpu, (b, t))
                busy[str(cpu)] = round((b - b0) / (t - t0), 4) if t > t0 else None
            line["interval_s"] = round(now - self._last_t, 4)
            line["cpu_busy"] = busy
            mine = [busy.get(str(c)) for c in (self.player_cpus or stat)]
            known = [v for v in mine if v is not None]
            line["player_set_busy"] = round(sum(known) / len(known), 4) if known else None
        waits = run_delay_ns(self._player_pids)
        if self._last_t is not None:
            delta = sum(w - self._last_wait.get(key, 0) for key, w in waits.items())
            line["player_runq_wait_ms"] = round(max(delta, 0) / 1e6, 3)
        self._last_wait = waits
        self._last_stat, self._last_t = stat, now
        line["loadavg"] = read_loadavg()
        groups = {n: self.sets.usage_ns(n) for n in ("player", "testbed")}
        if any(v is not None for v in groups.values()):
            line["groups_cpu_s"] = {
                n: round(v / 1e9, 4) for n, v in groups.items() if v is not None
            }
        if event is not None:
            self._write(line)

    def _components(self) -> dict[str, float]:
        """Cumulative CPU seconds per component (see the module docstring)."""
        parents = parent_map()
        me = os.getpid()
        named = {int(p.pid): str(p.name) for p in self.processes() if getattr(p, "pid", None)}
        player_root = self._player_root()
        if player_root is not None:
            self.sets.adopt_player_tree(player_root)
            self._player_pids = descendants(player_root, include_root=True, parents=parents)
        for pid in descendants(me, include_root=True, parents=parents):
            ticks = proc_cpu_ticks(pid)
            if ticks is None:
                continue
            key = (pid, ticks[1])
            if key not in self._roles:
                self._roles[key] = self._component(pid, parents, named, me)
            self._proc_ticks[key] = (self._roles[key], ticks[0])
        totals: dict[str, float] = {}
        for name, used in self._proc_ticks.values():
            totals[name] = totals.get(name, 0.0) + used / CLK_TCK
        return {k: round(v, 3) for k, v in sorted(totals.items())}

    def _component(self, pid: int, parents: dict[int, int], named: dict[int, str], me: int) -> str:
        walk = pid
        while walk and walk != me:
            if walk in named:
                name = named[walk]
                return f"{name}/{chromium_role(pid)}" if name.startswith("player-") else name
            walk = parents.get(walk, 0)
        return "orchestrator"
