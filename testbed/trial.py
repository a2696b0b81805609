"""One trial, start to end: trial.json, scenario, topology, emulator, transport, player, result.

Order (docs/ORCHESTRATOR.md): trial.json is written before anything runs; result.json
last, by write-then-rename, so its presence means the trial finished (ok or failed). An
interrupted trial (SIGINT/SIGTERM) tears down and writes *no* result.json, so that a
re-run of the same command redoes it.

While the trial runs, a watchdog thread fails it when a watched process (the emulator, the
transport's processes, nginx, cross-traffic flows, relays: supervisor.Process `watch`)
exits early or the per-trial timeout passes: it records the reason, then kills every
process in the client and server namespaces so that whatever the trial is blocked on
(player, control transfer) returns at once.

Run one trial by hand:
    python -m testbed.trial --spec '{"scenario": "control", ...}' --trial-dir DIR
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from common.files import write_json_atomically
from testbed import transports
from testbed.cpu_accounting import CpuSampler
from testbed.cpusets import TrialCpuSets
from testbed.env import collect_env, kernel_caps
from testbed.registry import TRANSPORTS
from testbed.spec import TrialSpec
from testbed.supervisor import EventLog, Process, terminate_all
from testbed.topology import (
    Interrupted,
    Topology,
    install_signal_handlers,
    kill_namespace_processes,
)

EMULATOR_BINARY = Path("emulator/target/release/linkemu")
EMULATOR_RT_PRIORITY = 50  # chrt -f: release times must not wait behind other tasks
EMULATOR_READY_TIMEOUT_S = 10.0
WATCHDOG_PERIOD_S = 0.2
BASE_TIMEOUT_S = 120  # set-up, control transfer, teardown
CONTENT_CACHE = Path("cache/content")


def default_timeout_s(spec: TrialSpec) -> int:
    """Per-trial timeout when none is given: video length × 3 plus set-up slack."""
    if spec.player is None:
        return BASE_TIMEOUT_S
    return BASE_TIMEOUT_S + 3 * int(spec.video_duration_s)


class TrialFailed(Exception):
    """A reason the trial cannot go on; becomes result.json's `reason`."""


@dataclass
class TrialContext:
    spec: TrialSpec
    dir: Path  # the trial folder
    repo: Path  # repository root
    topo: Topology
    t0_ns: int  # trial clock origin (CLOCK_MONOTONIC ns)
    scenario: dict  # resolved scenario (CONTRACTS §4)
    content_dir: Path | None = None  # DASH content (server.content.prepare), None if no player
    events: EventLog | None = None
    invalid_reasons: list[str] = field(default_factory=list)
    subflows_with_data: int | None = None  # set by transports that know (result.json)
    # Paths whose subflow was established but carried no stream data (a scheduler's choice,
    # not a broken set-up; docs/ORCHESTRATOR.md "Validity"); None = the transport cannot tell.
    paths_unused: list[str] | None = None
    cpu_sets: TrialCpuSets | None = None  # the player's and the testbed's CPUs (cpusets.py)
    emulator: Process | None = None  # the running linkemu (replaced by a scenario restart)

    def spawn(self, role: str, name: str, argv: list[str], **kw: object) -> Process:
        """= topo.spawn: supervised, logged to logs/<name>.*, stopped at teardown."""
        return self.topo.spawn(role, name, argv, **kw)  # type: ignore[arg-type]

    def check_alive(self) -> None:
        """TrialFailed if a watched process exited early: for a session that waits on
        nothing that would notice (the interactive relay's loop)."""
        for proc in self.topo.processes:
            if why := proc.exit_reason():
                raise TrialFailed(why)

    def mark_invalid(self, reason: str) -> None:
        """The trial ran, but its results must not be counted (result.json valid=false)."""
        if reason not in self.invalid_reasons:
            self.invalid_reasons.append(reason)
        if self.events:
            self.events.write("invalid", reason=reason)


class Watchdog:
    """Fails the trial when a watched process dies early or the deadline passes."""

    def __init__(
        self, topo: Topology, events: EventLog, deadline_monotonic: float, timeout_s: float
    ) -> None:
        self.topo = topo
        self.events = events
        self.deadline = deadline_monotonic
        self.timeout_s = timeout_s
        self.reason: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="trial-watchdog", daemon=True)

    def start(self) -> Watchdog:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(WATCHDOG_PERIOD_S):
            reason = None
            for proc in self.topo.processes:
                reason = reason or proc.exit_reason()
            if reason is None and time.monotonic() > self.deadline:
                reason = (
                    f"timeout: the trial ran past its per-trial timeout of {self.timeout_s:g} s "
                    "(--timeout)"
                )
            if reason is not None:
                self.fail(reason)
                return

    def fail(self, reason: str) -> None:
        self.reason = reason
        self.events.write("watchdog", reason=reason)
        for proc in self.topo.processes:
            # What the watchdog kills now is stopped by the testbed: not another failure.
            if not proc.critical and proc.poll() is None:
                proc.stopping = True
        for role in ("client", "server"):
            kill_namespace_processes(self.topo.ns.of(role), grace_s=0.5)

    def check(self) -> None:
        if self.reason is not None:
            raise TrialFailed(self.reason)
        for proc in self.topo.processes:
            if why := proc.exit_reason():
                raise TrialFailed(why)


def _tail(path: Path, max_chars: int = 600) -> str:
    try:
        return path.read_text(errors="replace")[-max_chars:].strip()
    except OSError:
        return ""


def start_emulator(ctx: TrialContext, seed: int, name: str = "emulator") -> Process:
    """linkemu on the resolved scenario, its clock (schedules, traces) starting now; `name`
    other than "emulator" for a restart (testbed/interactive.py), as names are unique."""
    binary = ctx.repo / EMULATOR_BINARY
    argv = [str(binary), "--scenario", str(ctx.dir / "scenario.json"), "--seed", str(seed),
            "--t0-ns", str(ctx.t0_ns), "--log", str(ctx.dir / "emulator.jsonl")]  # fmt: skip
    proc = ctx.spawn("router", name, argv, rt_priority=EMULATOR_RT_PRIORITY, critical=True)
    log = ctx.dir / "emulator.jsonl"
    deadline = time.monotonic() + EMULATOR_READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise TrialFailed(
                f"emulator exited during start-up with status {proc.returncode}: "
                f"{_tail(proc.stderr_path) or '(no stderr)'}"
            )
        if log.is_file() and '"start"' in log.read_text(errors="replace"):
            return proc
        time.sleep(0.05)
    if ctx.events:
        ctx.events.write("warning", message=f"no emulator start line in {log} after "
                         f"{EMULATOR_READY_TIMEOUT_S} s; going on")  # fmt: skip
    return proc


def _trial_json(spec: TrialSpec, trial_dir: Path, repo: Path, clock: dict) -> dict:
    scenario_file = None
    try:
        from testbed.scenario import scenario_file as find_scenario

        found = find_scenario(spec.scenario, repo)
        scenario_file = str(found.relative_to(repo)) if found.is_relative_to(repo) else str(found)
    except Exception:
        scenario_file = None  # reported by load_resolved with a proper message
    return {
        "schema": 1,
        "trial_id": spec.trial_id(),
        "run": trial_dir.parent.parent.name,
        "spec": {
            **spec.to_dict(),
            "scenario_file": scenario_file,
        },
        "env": collect_env(repo),
        "clock": clock,
        "namespaces": None,
    }


@dataclass
class TrialRun:
    """One trial on its way: what every phase of run_trial reads and adds to."""

    spec: TrialSpec
    dir: Path
    repo: Path
    t0_ns: int
    events: EventLog
    timeout_s: float
    trial_json: dict
    started: float  # time.monotonic() at the start, for wall_duration_s
    scenario: dict | None = None
    transport: ModuleType | None = None
    content_dir: Path | None = None
    ctx: TrialContext | None = None
    cpu_sets: TrialCpuSets | None = None  # the player's and the testbed's CPUs (cpusets.py)
    sampler: CpuSampler | None = None  # cpu.jsonl (cpu_accounting.py)
    play: Callable[..., None] | None = None  # replaces the player (testbed/interactive.py)


def run_trial(
    spec: TrialSpec,
    trial_dir: Path,
    repo: Path,
    *,
    timeout_s: float | None = None,
    play: Callable[..., None] | None = None,
) -> dict:
    """Run one trial; returns the result dict (also in result.json). `play(ctx, endpoint,
    content_dir)` replaces the player session (interactive mode, testbed/interactive.py).

    Phases: begin (folder, clock, trial.json) -> prepare (scenario, preflight, content) ->
    topology and run (namespaces, emulator, transport, player or control transfer) ->
    collect (result.json). Raises Interrupted / KeyboardInterrupt after teardown when
    interrupted (no result.json).
    """
    run = _begin(spec, Path(trial_dir), Path(repo).resolve(), timeout_s)
    run.play = play
    status, reason = "failed", None
    try:
        _prepare(run)
        _run_in_topology(run)
        status = "ok"
    except TrialFailed as exc:
        reason = str(exc)
    except (Interrupted, KeyboardInterrupt) as exc:
        run.events.write("interrupted", reason=str(exc) or type(exc).__name__)
        _release_cpus(run)
        raise
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        run.events.write("error", reason=reason, traceback=traceback.format_exc())
    _release_cpus(run)  # idempotent: a failed trial still gets its cpu_totals line
    return _collect(run, status, reason)


def _release_cpus(run: TrialRun) -> None:
    if run.sampler is not None:
        run.sampler.stop()
    if run.cpu_sets is not None:
        run.cpu_sets.close()


def _begin(spec: TrialSpec, trial_dir: Path, repo: Path, timeout_s: float | None) -> TrialRun:
    """The trial folder, the trial clock, trial.json and the `setup` phase line."""
    started = time.monotonic()
    t0_ns = time.monotonic_ns()
    clock = {"t0_monotonic_ns": t0_ns, "t0_unix_ns": time.time_ns()}
    (trial_dir / "logs").mkdir(parents=True, exist_ok=True)
    events = EventLog(trial_dir / "testbed.jsonl", t0_ns)
    timeout = float(timeout_s if timeout_s else default_timeout_s(spec))
    trial_json = _trial_json(spec, trial_dir, repo, clock)
    write_json_atomically(trial_dir / "trial.json", trial_json)
    events.write("phase", phase="setup", trial_id=spec.trial_id(), timeout_s=timeout)
    return TrialRun(spec, trial_dir, repo, t0_ns, events, timeout, trial_json, started)


def _prepare(run: TrialRun) -> None:
    """Everything that can fail before a namespace exists: the scenario, the transport's
    preflight, the emulator binary, the DASH content (cached; minutes the first time)."""
    from testbed.scenario import ScenarioError, load_resolved

    spec = run.spec
    try:
        run.scenario = load_resolved(spec.scenario, run.repo, spec.seed)
    except ScenarioError as exc:
        raise TrialFailed(f"scenario: {exc}") from exc
    write_json_atomically(run.dir / "scenario.json", run.scenario)
    run.transport = transports.get(spec.transport)
    from testbed.fdlimit import ensure_open_files
    from testbed.pathsets import transport_problem

    if why := ensure_open_files():
        raise TrialFailed(why)

    reasons = spec.problems() + run.transport.preflight(spec, kernel_caps())
    if why := transport_problem(spec.transport, list(run.scenario["paths"]), spec.scenario):
        reasons.append(why)
    if reasons:
        raise TrialFailed(f"transport {spec.transport} cannot run: " + "; ".join(reasons))
    if not (run.repo / EMULATOR_BINARY).is_file():
        raise TrialFailed(
            f"emulator binary {EMULATOR_BINARY} not found (it is built by scripts/setup.sh "
            "once emulator/ exists)"
        )
    if spec.player is not None:
        from server.content import LADDERS, prepare

        run.content_dir = prepare(
            int(spec.video_duration_s), cache=run.repo / CONTENT_CACHE, ladder=LADDERS[spec.ladder]
        )
    # After the content (FFmpeg may use every CPU), before anything of the trial starts:
    # everything this process starts from now on inherits the testbed's CPU set.
    run.cpu_sets = TrialCpuSets.create()
    run.cpu_sets.enter_testbed()
    run.trial_json["cpu_isolation"] = run.cpu_sets.describe()
    run.events.write("cpu_isolation", **run.trial_json["cpu_isolation"])


def _run_in_topology(run: TrialRun) -> None:
    """Namespaces, NFQUEUE hooks and the emulator; then the session under the watchdog;
    then every process stopped, the emulator last (its exit status is checked)."""
    from testbed import capture, crosstraffic

    scenario = run.scenario or {}
    with Topology.create(
        run.dir,
        t0_ns=run.t0_ns,
        events=run.events,
        path_names=list(scenario["paths"]),
        cross_flows=crosstraffic.flows_per_path(scenario),
    ) as topo:
        run.trial_json["namespaces"] = topo.ns.__dict__
        run.trial_json["address_plan"] = topo.address_plan()
        write_json_atomically(run.dir / "trial.json", run.trial_json)
        ctx = TrialContext(
            run.spec, run.dir, run.repo, topo, run.t0_ns, scenario, run.content_dir, run.events,
        )  # fmt: skip
        run.ctx = ctx
        ctx.cpu_sets = run.cpu_sets
        run.sampler = CpuSampler(run.dir, run.t0_ns, run.cpu_sets, lambda: list(topo.processes))
        run.sampler.start()
        topo.install_nfqueue_hooks()
        captures = capture.start(ctx)  # --pcap: before the first packet, stopped last
        ctx.emulator = start_emulator(ctx, run.spec.seed)
        crosstraffic.start(ctx)
        # The timeout counts from here: content preparation before it is cached work
        # that may take minutes once (FFmpeg) and must not eat a trial's time.
        deadline = time.monotonic() + run.timeout_s
        watchdog = Watchdog(topo, run.events, deadline, run.timeout_s).start()
        try:
            _run_session(run, ctx, watchdog)
        except Exception:
            watchdog.check()  # the watchdog's reason explains this error better
            raise
        finally:
            watchdog.stop()
        terminate_all([p for p in topo.processes if not p.critical and not capture.is_capture(p)])
        code = ctx.emulator.terminate()  # the latest one, if a restart replaced it
        if code not in (0, None):
            ctx.mark_invalid(f"emulator exited with status {code} when stopped")
        if captures is not None:
            captures.finish()
        run.sampler.stop()


def _run_session(run: TrialRun, ctx: TrialContext, watchdog: Watchdog) -> None:
    """The `running` phase: the transport, then the player (or the control transfer), then
    the transport's own checks."""
    assert run.transport is not None
    run.events.write("phase", phase="running")
    endpoint = run.transport.start(ctx)
    watchdog.check()
    if run.spec.player is not None:
        from testbed.players import run_player

        (run.play or run_player)(ctx, endpoint, run.content_dir)
    elif not TRANSPORTS[run.spec.transport].video:
        from testbed.probe import run_control

        run_control(ctx)
    watchdog.check()
    run.transport.finish(ctx)
    watchdog.check()


def _collect(run: TrialRun, status: str, reason: str | None) -> dict:
    """result.json, written last (its presence means the trial finished)."""
    ctx = run.ctx
    if reason is not None and ctx is not None:
        # A helper that crashed first (nginx, mpproxy) often explains the failure better
        # than the error that ended the trial (the player's).
        crashed = [
            why
            for proc in ctx.topo.processes
            if proc.returncode not in (0, None) and (why := proc.died_early()) and why not in reason
        ]
        if crashed:
            reason += "; also: " + "; ".join(crashed)
    result = {
        "schema": 1,
        "trial_id": run.spec.trial_id(),
        "status": status,
        "reason": reason,
        "valid": status == "ok" and not (ctx and ctx.invalid_reasons),
        "invalid_reasons": list(ctx.invalid_reasons) if ctx else [],
        "wall_duration_s": round(time.monotonic() - run.started, 3),
        "subflows_with_data": ctx.subflows_with_data if ctx else None,
        "paths_unused": ctx.paths_unused if ctx else None,
    }
    if status != "ok" and reason:
        result["invalid_reasons"].append(f"failed: {reason}")
    run.events.write("result", status=status, reason=reason, valid=result["valid"])
    write_json_atomically(run.dir / "result.json", result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m testbed.trial",
        description="Run one trial (the matrix runs each trial this way, in its own process).",
    )
    parser.add_argument("--spec", required=True, help="TrialSpec as JSON (CONTRACTS §7)")
    parser.add_argument("--trial-dir", required=True, type=Path, help="the trial folder")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument(
        "--timeout-s", type=float, default=None, help="per-trial timeout (default: by spec)"
    )
    args = parser.parse_args(argv)
    try:
        spec = TrialSpec.from_dict(json.loads(args.spec))
    except ValueError as exc:
        print(f"--spec: {exc}", file=sys.stderr)
        return 2
    install_signal_handlers()
    try:
        result = run_trial(spec, args.trial_dir, args.repo, timeout_s=args.timeout_s)
    except (Interrupted, KeyboardInterrupt):
        print(f"{spec.trial_id()}: interrupted; torn down, no result written", file=sys.stderr)
        return 130
    if result["status"] != "ok":
        print(f"{spec.trial_id()}: failed: {result['reason']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
