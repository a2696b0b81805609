"""Fault injection: kill each long-lived component at a random moment of a short trial.

Real processes in real namespaces (root). Two matrices (`run_trials.sh`, one per player) give
each component (the emulator, either mpproxy, nginx, GStreamer, the node runner, Chromium,
a cross-traffic flow) a trial of its own, repetition r<i> for fault i, plus one last trial
without a fault; the component is sent SIGKILL a random 0.2-1.5 s after it started; then

- that trial ends within FAILED_WITHIN_S of the kill with status `failed` and a reason that
  names the component and the signal (docs/ORCHESTRATOR.md, "Faults");
- the next trial of the matrix runs; the last one finishes `ok`; summary.csv has them all;
- nothing is left: no namespace (by name, nor a process holding one of the trial's network
  namespaces), no process of the run, no cgroup, no host iptables rule, no temporary file,
  no topology state file.

The processes of the run keep their temporary files in a folder of the test's own (TMPDIR)
and their topology state files in another (TESTBED_STATE_DIR), so that leftovers are told
apart from those of other runs on the machine. The moment is drawn from TESTBED_FAULT_SEED
(default: random; printed on failure) so that a failing draw can be repeated.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from markers import LINKEMU, MPPROXY, needs_built, needs_root

REPO = Path(__file__).resolve().parent.parent
CLIP_S = 4
FAILED_WITHIN_S = 15.0  # kill -> result.json: the watchdog's period, the player's exit, teardown
KILL_DELAY_S = (0.2, 1.5)
NETNS_RUN = Path("/var/run/netns")
CROSS_SCENARIO = """name = "fault-cross"
description = "control rates, one TCP cross flow down on wifi"
duration_s = 30.0
[paths.wifi]
rate = { bps = 20_000_000 }
delay_ms = 5.0
[paths.lte]
rate = { bps = 15_000_000 }
delay_ms = 10.0
[[cross_traffic]]
kind = "tcp_bulk"
path = "wifi"
direction = "down"
count = 1
cc = "cubic"
"""

pytestmark = [
    pytest.mark.netns,
    needs_root,
    needs_built(MPPROXY, LINKEMU),
    pytest.mark.timeout(300),
]


@dataclass(frozen=True)
class Fault:
    component: str  # what the reason must name
    process: str  # the supervised process name (testbed.jsonl), or a child of it (below)
    child_comm: str | None = None  # kill this child of `process` instead (Chromium)


# One matrix per player: one start-up and one report for all its faults.
GROUPS = {
    "gstreamer": ("gstreamer", "cross", [
        Fault("emulator", "emulator"),
        Fault("mpproxy-client", "mpproxy-client"),
        Fault("mpproxy-server", "mpproxy-server"),
        Fault("nginx", "nginx"),
        Fault("player-gstreamer", "player-gstreamer"),
        Fault("cross-wifi.0-send", "cross-wifi.0-send"),
    ]),
    "dashjs": ("dashjs", "control", [
        Fault("player-dashjs", "player-dashjs"),
        Fault("Chromium", "player-dashjs", child_comm="chromium"),
    ]),
}  # fmt: skip


# --- what the machine holds, before and after ---------------------------------------------


def _lines(argv: list[str]) -> set[str]:
    done = subprocess.run(argv, capture_output=True, text=True)
    return set(done.stdout.splitlines())


def host_iptables() -> set[str]:
    """The host's own rules (a trial's live in its router namespace)."""
    rules = set()
    for table in ("filter", "mangle", "nat", "raw"):
        rules |= {f"{table}: {x}" for x in _lines(["iptables", "-w", "-t", table, "-S"])}
    return rules


def leftovers(run_dir: Path, tmp_dir: Path, state_dir: Path) -> list[str]:
    """What the run's trials left: their namespaces and cgroups (named in trial.json), files
    in the run's TMPDIR and its topology state folder."""
    from testbed.topology import list_namespaces

    found = []
    existing = set(list_namespaces())
    for trial_json in run_dir.glob("trials/*/trial.json"):
        trial = json.loads(trial_json.read_text())
        found += [f"namespace {ns}" for ns in (trial.get("namespaces") or {}).values()
                  if ns in existing]  # fmt: skip
        groups = (trial.get("cpu_isolation") or {}).get("groups") or {}
        for controllers in groups.values():
            for path in controllers.values():
                for group in (Path(path), Path(path).parent):
                    if group.exists() and group.name != "mptcp-testbed":
                        found.append(f"cgroup {group}")
    found += [f"temporary file {p}" for p in tmp_dir.iterdir()]
    found += [f"state file {p}" for p in state_dir.glob("*.json")]
    return sorted(set(found))


def processes_in_netns(inodes: set[int]) -> list[str]:
    """Processes still holding one of these network namespaces (by inode)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if os.stat(proc / "ns" / "net").st_ino in inodes:
                found.append(f"{proc.name} {(proc / 'cmdline').read_bytes()[:120]!r}")
        except OSError:
            continue
    return found


def processes_mentioning(text: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if text in cmdline:
                found.append(f"{proc.name} {cmdline[:160]!r}")
    return found


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


# --- the killer -------------------------------------------------------------------------------


@dataclass
class Kill:
    fault: Fault
    delay_s: float
    at: float | None = None  # time.time() of the kill
    trial: Path | None = None


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _started_pid(trial_dir: Path, name: str) -> int | None:
    log = trial_dir / "testbed.jsonl"
    if not log.is_file():
        return None
    for raw in log.read_text(errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if line.get("event") == "process_start" and line.get("name") == name:
            return int(line["pid"])
    return None


class Killer(threading.Thread):
    """Kill i goes to the trial of repetition i: once its process has started, after a
    random delay, SIGKILL (to a child of it for Chromium)."""

    def __init__(self, run_dir: Path, kills: list[Kill]) -> None:
        super().__init__(daemon=True)
        self.run_dir, self.kills = run_dir, kills
        self.netns_inodes: set[int] = set()
        self.stop = threading.Event()

    def _wait(self, find):  # noqa: ANN001, ANN202
        while not self.stop.is_set():
            found = find()
            if found is not None:
                return found
            time.sleep(0.05)
        return None

    def _trial_dir(self, rep: int) -> Path | None:
        trials = self.run_dir / "trials"
        return next(iter(trials.glob(f"*__r{rep}__*")), None) if trials.is_dir() else None

    def run(self) -> None:
        for rep, kill in enumerate(self.kills):
            trial_dir = self._wait(lambda rep=rep: self._trial_dir(rep))
            if trial_dir is None:
                return
            pid = self._wait(lambda d=trial_dir, k=kill: _started_pid(d, k.fault.process))
            if pid is None:
                return
            try:
                trial = json.loads((trial_dir / "trial.json").read_text())
                for ns in (trial.get("namespaces") or {}).values():
                    self.netns_inodes.add(os.stat(NETNS_RUN / ns).st_ino)
            except (OSError, ValueError):
                pass
            target = pid
            if kill.fault.child_comm is not None:
                # The delay counts from the session's start (the player's `start` line, once
                # Chromium and its page are up), not from the browser's launch.
                self._wait(lambda d=trial_dir: True if '"start"' in _text(d / "player.jsonl")
                           else None)  # fmt: skip
                target = self._wait(lambda p=pid, c=kill.fault.child_comm: next(
                    (x for x in children(p) if comm(x) == c), None))  # fmt: skip
            if self.stop.wait(kill.delay_s):
                return
            try:
                os.kill(target, signal.SIGKILL)
            except (ProcessLookupError, TypeError):
                continue
            kill.at, kill.trial = time.time(), trial_dir


@pytest.mark.parametrize("group", list(GROUPS))
def test_a_killed_component_fails_its_trial_and_leaves_nothing(
    tmp_path: Path, request: pytest.FixtureRequest, group: str
) -> None:
    player, scenario, faults = GROUPS[group]
    if player == "dashjs" and shutil.which("chromium") is None:
        pytest.skip("needs Debian's chromium")
    if player == "gstreamer" and shutil.which("gst-inspect-1.0") is None:
        pytest.skip("needs GStreamer (not installed)")
    seed = int(os.environ.get("TESTBED_FAULT_SEED", random.randrange(1 << 30)))
    draw = random.Random(seed)
    kills = [Kill(fault, draw.uniform(*KILL_DELAY_S)) for fault in faults]
    if scenario == "cross":
        (tmp_path / "cross.toml").write_text(CROSS_SCENARIO)
        scenario = str(tmp_path / "cross.toml")
    run_dir, state_dir = tmp_path / "run", tmp_path / "state"
    # Short: Chromium puts a Unix socket (at most 107 bytes of path) in TMPDIR.
    tmp_dir = Path(tempfile.mkdtemp(prefix="tbf-"))
    request.addfinalizer(lambda: shutil.rmtree(tmp_dir, ignore_errors=True))
    rules_before = host_iptables()
    killer = Killer(run_dir, kills)
    killer.start()
    done = subprocess.run(
        [str(REPO / "run_trials.sh"), "--scenario", scenario, "--transport", "user",
         "--player", player, "--cc", "cubic", "--sched", "lrf", "--jobs", "1",
         "--reps", str(len(kills) + 1), "--video-duration", str(CLIP_S), "--out", str(run_dir)],
        capture_output=True, text=True, timeout=280,
        env={**os.environ, "TMPDIR": str(tmp_dir), "TESTBED_STATE_DIR": str(state_dir)},
    )  # fmt: skip
    killer.stop.set()
    killer.join(5)
    context = (f"seed {seed} (TESTBED_FAULT_SEED); delays "
               f"{[round(k.delay_s, 2) for k in kills]}\n{done.stdout[-4000:]}\n"
               f"{done.stderr[-2000:]}")  # fmt: skip
    assert done.returncode == 1, context  # 1: some trial failed (docs/ORCHESTRATOR.md)
    problems = []
    for kill in kills:
        if kill.at is None or kill.trial is None:
            problems.append(f"{kill.fault.component}: never killed (not seen, or had ended)")
            continue
        result_file = kill.trial / "result.json"
        result = json.loads(result_file.read_text())
        reason = result.get("reason") or ""
        name = kill.fault.component.lower()
        if result["status"] != "failed" or name not in reason.lower() or "SIGKILL" not in reason:
            problems.append(f"{kill.fault.component}: {result['status']}: {reason}")
        took_s = result_file.stat().st_mtime - kill.at
        if took_s > FAILED_WITHIN_S:
            problems.append(f"{kill.fault.component}: result {took_s:.1f} s after the kill")
    assert not problems, "\n".join(problems) + "\n" + context
    rows = list(csv.DictReader((run_dir / "summary.csv").open()))
    statuses = {r["trial_id"].split("__r")[1].split("__")[0]: r["status"] for r in rows}
    assert statuses == {str(i): "failed" for i in range(len(kills))} | {str(len(kills)): "ok"}, (
        statuses, context)  # fmt: skip
    assert not leftovers(run_dir, tmp_dir, state_dir), leftovers(run_dir, tmp_dir, state_dir)
    assert not host_iptables() - rules_before, sorted(host_iptables() - rules_before)
    assert not processes_in_netns(killer.netns_inodes), processes_in_netns(killer.netns_inodes)
    assert not processes_mentioning(str(run_dir)), processes_mentioning(str(run_dir))


# --- the relays of --interactive ----------------------------------------------------------

INTERACTIVE_PORT = 18188  # neither the default 8088 nor tests/test_interactive.py's 18088


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.parametrize("relay", ["relay-client", "relay-host"])
def test_a_killed_relay_ends_the_interactive_session(
    tmp_path: Path, request: pytest.FixtureRequest, relay: str
) -> None:
    """The client namespace's relay (supervised) and the host's (a child of the runner):
    either killed, the session ends at once, failed, naming it; nothing is left."""
    seed = int(os.environ.get("TESTBED_FAULT_SEED", random.randrange(1 << 30)))
    delay_s = random.Random(seed).uniform(*KILL_DELAY_S)
    run_dir, state_dir = tmp_path / "run", tmp_path / "state"
    tmp_dir = Path(tempfile.mkdtemp(prefix="tbf-"))
    request.addfinalizer(lambda: shutil.rmtree(tmp_dir, ignore_errors=True))
    proc = subprocess.Popen(
        [str(REPO / "run_trials.sh"), "--interactive", "--scenario", "control", "--cc", "cubic",
         "--sched", "lrf", "--video-duration", str(CLIP_S), "--out", str(run_dir),
         "--interactive-port", str(INTERACTIVE_PORT)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, "TMPDIR": str(tmp_dir), "TESTBED_STATE_DIR": str(state_dir)},
    )  # fmt: skip
    try:
        seen = []
        assert proc.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen.append(line)
            if line.startswith("interactive: open ") or (not line and proc.poll() is not None):
                break
        assert any(x.startswith("interactive: open ") for x in seen), "".join(seen)[-3000:]
        trial = next((run_dir / "trials").iterdir())
        if relay == "relay-client":
            target = _started_pid(trial, "relay-client")
        else:
            target = next(p for p in descendants(proc.pid) if "--listen-tcp" in cmdline(p))
        assert target is not None
        time.sleep(delay_s)
        os.kill(target, signal.SIGKILL)
        killed_at = time.time()
        out, _ = proc.communicate(timeout=FAILED_WITHIN_S + 30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.communicate(timeout=60)
    context = f"seed {seed}, kill after {delay_s:.2f} s\n{''.join(seen)[-2000:]}{out[-2000:]}"
    assert proc.returncode == 1, context
    result_file = trial / "result.json"
    result = json.loads(result_file.read_text())
    assert result["status"] == "failed", (result, context)
    assert relay in result["reason"] and "SIGKILL" in result["reason"], (result, context)
    assert result_file.stat().st_mtime - killed_at < FAILED_WITHIN_S, context
    assert not leftovers(run_dir, tmp_dir, state_dir), leftovers(run_dir, tmp_dir, state_dir)
    assert not processes_mentioning(str(run_dir)), processes_mentioning(str(run_dir))
