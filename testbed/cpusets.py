"""CPU isolation per trial: the player on its own CPU(s), the testbed's processes on others.

Why: a player that drops frames because linkemu, mpproxy or nginx took its CPU measures the
testbed, not the network (docs/PLAYER.md, "Dropped frames: where they come from"). Each trial
gets two CPU sets:

* `player`  : Chromium (every process of it) or GStreamer, and puppeteer's node;
* `testbed` : the trial's own process (the orchestrator) and everything it starts (linkemu,
  mpproxy, nginx, probes), which inherit it.

Mechanisms, first that works:

1. cgroup v1 (`/sys/fs/cgroup/cpuset` and `/sys/fs/cgroup/cpuacct`, as Debian 12 with
   `systemd.unified_cgroup_hierarchy=0` or a container with v1 mounts): one `cpuset` group per
   set, with `cpuset.cpus`; `cpuacct` groups of the same names count CPU time. The `cpu`
   controller holds only the player's group (its weight, `PLAYER_WEIGHT_FACTOR`): with RT
   group scheduling a child group has no real-time budget, and linkemu's `chrt -f` would
   fail in a testbed group there.
2. cgroup v2 (`/sys/fs/cgroup` is `cgroup2` and offers `cpuset`): `+cpuset` in the parents'
   `cgroup.subtree_control`; `cpu.stat` (`usage_usec`) counts CPU time in every v2 group.
3. CPU affinity (`sched_setaffinity`, what `taskset` does): where no writable cpuset
   controller exists (unprivileged, or a v2 tree without `cpuset`). No group CPU accounting
   then; the sampler (testbed/cpu_accounting.py) sums /proc per process instead.

With fewer CPUs than sets (1 CPU), or `--jobs N` with fewer than 2 N CPUs, the trial runs
unpinned and trial.json says why (`cpu_isolation.reason`). Other programs on the machine
are never moved: foreign load still lands on every CPU, which is why the sampler records
each CPU's busy time and the load average beside the trial's own components.

`plan_cpu_sets(cpu_count, jobs)` is the one place that decides who gets which CPUs; the
matrix gives every running trial a slot (`TESTBED_CPU_SLOT`, `TESTBED_JOBS`).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_ROOT = Path(os.environ.get("TESTBED_CGROUP_ROOT", "/sys/fs/cgroup"))
GROUP_PREFIX = "mptcp-testbed"  # /sys/fs/cgroup/<controller>/mptcp-testbed/trial-<pid>/<set>
SETS = ("player", "testbed")
SLOT_ENV = "TESTBED_CPU_SLOT"  # 0-based slot of this trial among those running side by side
JOBS_ENV = "TESTBED_JOBS"  # how many trials run side by side (matrix --jobs)
DISABLE_ENV = "TESTBED_NO_CPU_ISOLATION"  # "1": run unpinned on purpose (recorded as such)
TRIAL_GROUP = re.compile(r"trial-(\d+)")
# The player's CPU weight relative to a default task or group (v1 cpu.shares 1024, v2
# cpu.weight 100). Other programs on the machine are not moved, so on the player's CPU they
# compete with it; 16 x the default weight lets the player take what decoding needs while
# up to 16 busy foreign tasks share that CPU, and costs them nothing while it idles.
PLAYER_WEIGHT_FACTOR = 16
# Real-time budget (µs per 1 s period) of all trials' testbed groups together, under RT group
# scheduling: linkemu (chrt -f) needs a small fraction; the root group's default is 950000.
RT_BUDGET_US = 500_000


class CpuPlanError(ValueError):
    """The CPUs cannot be split as asked; the message says what would be possible."""


@dataclass(frozen=True)
class TrialCpus:
    """The CPUs of one trial: the player's and the testbed's (disjoint, both non-empty)."""

    player: tuple[int, ...]
    testbed: tuple[int, ...]


def plan_cpu_sets(cpus: list[int] | int, jobs: int = 1) -> list[TrialCpus]:
    """Split the CPUs into `jobs` trials, each with its own player and testbed CPUs.

    Every trial needs at least one CPU for its player and one for its testbed processes, so
    `jobs` trials need 2 x jobs CPUs; fewer raises CpuPlanError. CPUs are dealt in blocks:
    trial i gets block i of size floor(n / jobs); in a block the testbed takes the first
    floor(size / 2) CPUs and the player the rest, ceil(size / 2) (decoding is the real-time
    work; CPU 0 is where the kernel's housekeeping and most interrupts land). Left-over
    CPUs (n not a multiple of jobs) stay unused, so every trial gets the same share.

    >>> plan_cpu_sets(2, 1)
    [TrialCpus(player=(1,), testbed=(0,))]
    >>> plan_cpu_sets(8, 2)[1]
    TrialCpus(player=(6, 7), testbed=(4, 5))
    """
    available = list(range(cpus)) if isinstance(cpus, int) else sorted(set(cpus))
    if jobs < 1:
        raise CpuPlanError(f"jobs = {jobs}: must be at least 1")
    if len(available) < 2 * jobs:
        most = len(available) // 2
        raise CpuPlanError(
            f"{len(available)} CPU(s) cannot isolate {jobs} trial(s): each needs one CPU for its "
            f"player and one for the testbed's processes, so {2 * jobs} are needed"
            + (f"; at most --jobs {most} here" if most else "")
        )
    size = len(available) // jobs
    plans = []
    for slot in range(jobs):
        block = available[slot * size : (slot + 1) * size]
        half = len(block) // 2
        plans.append(TrialCpus(player=tuple(block[half:]), testbed=tuple(block[:half])))
    return plans


CPU_COUNT_ENV = "TESTBED_CPUS"  # pretend the machine has this many CPUs (what-if, tests)


def cpu_count() -> int:
    """CPUs trials may use: this process's affinity, or TESTBED_CPUS when set."""
    fake = os.environ.get(CPU_COUNT_ENV)
    if fake:
        if not fake.isdigit() or int(fake) < 1:
            raise CpuPlanError(f"{CPU_COUNT_ENV}={fake!r}: must be a whole number of CPUs, >= 1")
        return int(fake)
    return len(online_cpus())


def choose_jobs(requested: int | None, streaming: bool, cpus: int) -> tuple[int, str]:
    """How many trials may run side by side on `cpus` CPUs; `requested` None = `--jobs auto`.

    A streaming trial needs two CPUs to itself (its player's and its testbed processes'),
    so at most floor(cpus / 2) run at once; a control transfer (no player) needs one. An N
    above that raises CpuPlanError saying why (1 is always allowed: on a 1-CPU machine the
    trial runs unpinned and trial.json says so). Returns (jobs, why it is the most).
    """
    need = 2 if streaming else 1
    most = max(1, cpus // need)
    what = "streaming trial" if streaming else "control transfer (no player)"
    why = (
        f"{cpus} CPU(s) and each {what} needs {need} to itself"
        + (" (one for its player, one for the testbed's processes)" if streaming else "")
        + f", so at most {most} at a time"
    )
    if requested is None:
        return most, why
    if requested > most:
        raise CpuPlanError(f"--jobs {requested} cannot keep trials isolated: {why}")
    return requested, why


def format_cpus(cpus: tuple[int, ...] | list[int]) -> str:
    """The kernel's list syntax (`cpuset.cpus`, taskset -c): 0-2,5."""
    parts: list[str] = []
    ordered = sorted(cpus)
    start = previous = None
    for cpu in [*ordered, None]:
        if start is not None and (cpu is None or cpu != previous + 1):  # type: ignore[operator]
            parts.append(str(start) if start == previous else f"{start}-{previous}")
            start = None
        if cpu is not None and start is None:
            start = cpu
        previous = cpu
    return ",".join(parts)


def parse_cpus(text: str) -> list[int]:
    """`0-2,5` -> [0, 1, 2, 5] (cpuset.cpus, /sys/devices/system/cpu/online)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


# ---------------------------------------------------------------- which mechanism


@dataclass(frozen=True)
class Mechanism:
    """How this machine can pin: kind is cgroup-v1, cgroup-v2, affinity or none."""

    kind: str
    cpuset_root: Path | None = None  # the cpuset hierarchy (v1) or the v2 root
    cpuacct_root: Path | None = None  # v1 cpuacct hierarchy (None: no group accounting)
    cpu_root: Path | None = None  # v1 cpu hierarchy, for the player's weight (None: none)
    why_not_cgroups: str = ""  # when kind is affinity/none: why no cgroup was usable


def _writable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def detect(root: Path = CGROUP_ROOT) -> Mechanism:
    """The best mechanism available here, and why the better ones are not."""
    v1_cpuset = root / "cpuset"
    if (v1_cpuset / "cpuset.cpus").is_file():
        if _writable(v1_cpuset):
            v1_acct = root / "cpuacct"
            acct = v1_acct if (v1_acct / "cpuacct.usage").is_file() and _writable(v1_acct) else None
            v1_cpu = root / "cpu"
            cpu = v1_cpu if (v1_cpu / "cpu.shares").is_file() and _writable(v1_cpu) else None
            return Mechanism("cgroup-v1", v1_cpuset, acct, cpu)
        why = f"{v1_cpuset} is not writable (run as root)"
    elif (root / "cgroup.controllers").is_file():
        controllers = (root / "cgroup.controllers").read_text().split()
        if "cpuset" not in controllers:
            why = f"{root}/cgroup.controllers offers no cpuset ({' '.join(controllers)})"
        elif not _writable(root):
            why = f"{root} is not writable (run as root)"
        else:
            return Mechanism("cgroup-v2", root, None)
    else:
        why = f"neither {v1_cpuset}/cpuset.cpus (cgroup v1) nor {root}/cgroup.controllers (v2)"
    if hasattr(os, "sched_setaffinity"):
        return Mechanism("affinity", why_not_cgroups=why)
    return Mechanism("none", why_not_cgroups=why + "; no sched_setaffinity either")


def online_cpus() -> list[int]:
    """The CPUs this process may use (its affinity), which a container may restrict."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


# ---------------------------------------------------------------- one trial's sets


@dataclass
class TrialCpuSets:
    """The two CPU sets of one trial; `describe()` is what trial.json records.

    Use: `sets = TrialCpuSets.create()`, `sets.enter_testbed()` in the trial process before it
    starts anything, `sets.place_player(pid)` right after the player is spawned (and
    `sets.adopt_player_tree(pid)` now and then: the sampler does), `sets.close()` at the end.
    """

    pinned: bool
    mechanism: str
    reason: str  # why unpinned, or how pinned
    cpus: TrialCpus | None = None
    groups: dict[str, dict[str, Path]] = field(default_factory=dict)  # set -> controller -> dir
    player_weight: str | None = None  # e.g. "cpu.shares 16384 (16 x default)"
    testbed_weight: str | None = None
    online: list[int] = field(default_factory=online_cpus)  # at creation, before pinning
    _created: list[Path] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        *,
        slot: int | None = None,
        jobs: int | None = None,
        mechanism: Mechanism | None = None,
        cpus: list[int] | None = None,
    ) -> TrialCpuSets:
        """Plan and make this trial's sets; never raises for a machine that cannot pin (the
        result is then unpinned, with the reason)."""
        if os.environ.get(DISABLE_ENV) == "1":
            return cls(False, "none", f"unpinned, because {DISABLE_ENV}=1 asked for it")
        slot = int(os.environ.get(SLOT_ENV, "0")) if slot is None else slot
        jobs = int(os.environ.get(JOBS_ENV, "1")) if jobs is None else jobs
        available = online_cpus() if cpus is None else cpus
        try:
            plan = plan_cpu_sets(available, jobs)[slot]
        except CpuPlanError as exc:
            return cls(False, "none", f"unpinned, because {exc}")
        mech = mechanism or detect()
        sets = cls(True, mech.kind, "", plan)
        try:
            if mech.kind == "cgroup-v1":
                sets._make_v1(mech)
            elif mech.kind == "cgroup-v2":
                sets._make_v2(mech)
            elif mech.kind == "affinity":
                sets.reason = (
                    "pinned with CPU affinity (sched_setaffinity), no group accounting, because "
                    + mech.why_not_cgroups
                )
            else:
                return cls(False, "none", "unpinned, because " + mech.why_not_cgroups)
        except OSError as exc:
            sets.close()
            return cls(False, "none", f"unpinned, because making the cgroups failed: {exc}")
        if not sets.reason:
            sets.reason = f"pinned with {mech.kind} cpusets"
        return sets

    # -- making the groups

    def _trial_dir(self, root: Path) -> Path:
        return root / GROUP_PREFIX / f"trial-{os.getpid()}"

    def _mkdir(self, path: Path) -> None:
        if not path.is_dir():
            path.mkdir()
            self._created.append(path)

    def _make_v1(self, mech: Mechanism) -> None:
        assert mech.cpuset_root is not None and self.cpus is not None
        sweep_stale(mech.cpuset_root)
        if mech.cpuacct_root:
            sweep_stale(mech.cpuacct_root)
        mems = (mech.cpuset_root / "cpuset.mems").read_text().strip()
        top = mech.cpuset_root / GROUP_PREFIX
        trial = self._trial_dir(mech.cpuset_root)
        for level in (top, trial):
            self._mkdir(level)
            # A new v1 cpuset is empty; it must have CPUs and memory nodes before tasks.
            parent = level.parent
            _write(level / "cpuset.cpus", (parent / "cpuset.cpus").read_text().strip())
            _write(level / "cpuset.mems", mems)
        for name in SETS:
            group = trial / name
            self._mkdir(group)
            _write(group / "cpuset.cpus", format_cpus(getattr(self.cpus, name)))
            _write(group / "cpuset.mems", mems)
            self.groups[name] = {"cpuset": group}
        if mech.cpuacct_root:
            acct_trial = self._trial_dir(mech.cpuacct_root)
            for level in (mech.cpuacct_root / GROUP_PREFIX, acct_trial):
                self._mkdir(level)
            for name in SETS:
                self._mkdir(acct_trial / name)
                self.groups[name]["cpuacct"] = acct_trial / name
        if mech.cpu_root:
            sweep_stale(mech.cpu_root)
            shares = str(1024 * PLAYER_WEIGHT_FACTOR)
            cpu_trial = self._trial_dir(mech.cpu_root)
            # Every level needs the weight: a group competes with its siblings as one entity.
            for level in (mech.cpu_root / GROUP_PREFIX, cpu_trial, cpu_trial / "player"):
                self._mkdir(level)
                _write(level / "cpu.shares", shares)
            self.groups["player"]["cpu"] = cpu_trial / "player"
            self.player_weight = f"cpu.shares {shares} ({PLAYER_WEIGHT_FACTOR} x default)"
            self._weight_v1_testbed(mech.cpu_root, cpu_trial, shares)

    def _weight_v1_testbed(self, cpu_root: Path, cpu_trial: Path, shares: str) -> None:
        """The testbed's group in the cpu hierarchy too, with the same weight, so that mpproxy
        and the orchestrator are not slowed by foreign load either. With RT group scheduling
        (`cpu.rt_runtime_us` present) the group needs a real-time budget for linkemu's
        `chrt -f`: the trials share `RT_BUDGET_US` of every second. Where that cannot be set,
        the testbed stays in the root group (and its autogroup), as said in trial.json."""
        group = cpu_trial / "testbed"
        try:
            self._mkdir(group)
            _write(group / "cpu.shares", shares)
            if (group / "cpu.rt_runtime_us").is_file():
                jobs = max(1, int(os.environ.get(JOBS_ENV, "1")))
                top = cpu_root / GROUP_PREFIX
                if int((top / "cpu.rt_runtime_us").read_text()) < RT_BUDGET_US:
                    _write(top / "cpu.rt_runtime_us", str(RT_BUDGET_US))
                per_trial = str(RT_BUDGET_US // jobs)
                _write(cpu_trial / "cpu.rt_runtime_us", per_trial)
                _write(group / "cpu.rt_runtime_us", per_trial)
            self.groups["testbed"]["cpu"] = group
            self.testbed_weight = f"cpu.shares {shares} ({PLAYER_WEIGHT_FACTOR} x default)"
        except OSError as exc:
            self.testbed_weight = f"none ({exc})"

    def _make_v2(self, mech: Mechanism) -> None:
        assert mech.cpuset_root is not None and self.cpus is not None
        sweep_stale(mech.cpuset_root)
        top = mech.cpuset_root / GROUP_PREFIX
        trial = self._trial_dir(mech.cpuset_root)
        _enable_v2_cpuset(mech.cpuset_root)
        for level in (top, trial):
            self._mkdir(level)
            _enable_v2_cpuset(level)
        for name in SETS:
            group = trial / name
            self._mkdir(group)
            _write(group / "cpuset.cpus", format_cpus(getattr(self.cpus, name)))
            self.groups[name] = {"cpuset": group}
        try:  # the weight needs the cpu controller, which a v2 tree may not delegate
            weight = str(100 * PLAYER_WEIGHT_FACTOR)
            for level in (mech.cpuset_root, top, trial):
                control = level / "cgroup.subtree_control"
                if "cpu" not in control.read_text().split():
                    _write(control, "+cpu")
            for level in (top, trial, trial / "player"):
                _write(level / "cpu.weight", weight)
            self.player_weight = f"cpu.weight {weight} ({PLAYER_WEIGHT_FACTOR} x default)"
        except OSError:
            self.player_weight = None

    # -- placing processes

    def _move(self, name: str, pid: int) -> None:
        if not self.pinned or self.cpus is None:
            return
        if self.groups:
            for group in self.groups[name].values():
                _write(group / "cgroup.procs", str(pid))
        else:
            cpus = set(getattr(self.cpus, name))
            for tid in _threads(pid):
                try:
                    os.sched_setaffinity(tid, cpus)
                except (ProcessLookupError, PermissionError):
                    pass

    def enter_testbed(self) -> None:
        """Move the calling process (the trial) into the testbed set; its children inherit."""
        self._move("testbed", os.getpid())

    def place_player(self, pid: int) -> None:
        """Move a just-started player process into the player set (its later children follow)."""
        try:
            self._move("player", pid)
        except (ProcessLookupError, OSError):
            pass  # it already exited; its own log says why

    def adopt_player_tree(self, root_pid: int) -> int:
        """Move every descendant of root_pid not yet in the player set there; returns how many
        were moved (a child forked in the instant between spawn and place_player)."""
        if not self.pinned:
            return 0
        moved = 0
        inside = set(self.pids("player")) if self.groups else set()
        for pid in descendants(root_pid, include_root=True):
            if self.groups and pid in inside:
                continue
            if not self.groups and _affinity(pid) == set(getattr(self.cpus, "player", ())):
                continue
            self.place_player(pid)
            moved += 1
        return moved

    def pids(self, name: str) -> list[int]:
        """Processes in a set (cgroups only; [] otherwise)."""
        group = self.groups.get(name, {}).get("cpuset")
        if group is None:
            return []
        try:
            return [int(x) for x in (group / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def usage_ns(self, name: str) -> int | None:
        """CPU time of everything that ever ran in a set (ns), from the group's accounting;
        None without group accounting (affinity, unpinned)."""
        groups = self.groups.get(name, {})
        try:
            if "cpuacct" in groups:
                return int((groups["cpuacct"] / "cpuacct.usage").read_text())
            if self.mechanism == "cgroup-v2" and "cpuset" in groups:
                for line in (groups["cpuset"] / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) * 1000
        except (OSError, ValueError):
            return None
        return None

    def describe(self) -> dict:
        """trial.json's `cpu_isolation`."""
        return {
            "pinned": self.pinned,
            "mechanism": self.mechanism,
            "reason": self.reason,
            "player_cpus": format_cpus(self.cpus.player) if self.pinned and self.cpus else None,
            "testbed_cpus": format_cpus(self.cpus.testbed) if self.pinned and self.cpus else None,
            "groups": {
                name: {ctl: str(path) for ctl, path in ctls.items()}
                for name, ctls in self.groups.items()
            },
            "player_weight": self.player_weight,
            "testbed_weight": self.testbed_weight,
            "online_cpus": format_cpus(self.online),
        }

    def close(self) -> None:
        """Leave the testbed set and remove the groups (their processes have ended by now).
        A group that is still busy is left for the next trial's sweep."""
        if self.groups:
            for ctls in self.groups.values():
                for group in ctls.values():
                    try:
                        _write(_hierarchy_root(group) / "cgroup.procs", str(os.getpid()))
                    except OSError:
                        pass
        for path in reversed(self._created):
            _rmdir_with_retry(path)
        self._created.clear()


# ---------------------------------------------------------------- helpers


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="ascii") as out:
        out.write(text)


def _enable_v2_cpuset(group: Path) -> None:
    control = group / "cgroup.subtree_control"
    if "cpuset" not in control.read_text().split():
        _write(control, "+cpuset")


def _hierarchy_root(group: Path) -> Path:
    parts = group.parts
    index = parts.index(GROUP_PREFIX)
    return Path(*parts[:index])


def _rmdir_with_retry(path: Path, attempts: int = 20) -> None:
    for _ in range(attempts):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)  # the last exiting task may still be leaving the group


def sweep_stale(hierarchy: Path) -> list[Path]:
    """Remove trial groups whose trial process is gone (a trial killed with SIGKILL leaves
    them); only empty groups can go, so this never touches a live process."""
    top = hierarchy / GROUP_PREFIX
    removed: list[Path] = []
    if not top.is_dir():
        return removed
    for trial in top.iterdir():
        match = TRIAL_GROUP.fullmatch(trial.name)
        if not match or Path(f"/proc/{match.group(1)}").exists():
            continue
        for child in [c for c in trial.iterdir() if c.is_dir()]:
            _rmdir_with_retry(child, attempts=1)
        _rmdir_with_retry(trial, attempts=1)
        if not trial.exists():
            removed.append(trial)
    return removed


def _threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return [pid]


def _affinity(pid: int) -> set[int]:
    try:
        return set(os.sched_getaffinity(pid))
    except OSError:
        return set()


def parent_map() -> dict[int, int]:
    """pid -> ppid of every process (from /proc/<pid>/stat)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2 :].split()
        parents[int(entry)] = int(rest[1])
    return parents


def descendants(
    root_pid: int, *, include_root: bool = False, parents: dict | None = None
) -> list[int]:
    parents = parent_map() if parents is None else parents
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        if pid != root_pid or include_root:
            if pid in parents:
                found.append(pid)
        todo.extend(children.get(pid, []))
    return found
