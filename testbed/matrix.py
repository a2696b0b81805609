"""Run a list of trials into `results/<run>/trials/<trial-id>/`, resumably.

* A trial folder with result.json is finished (ok or failed) and is skipped; a folder
  without it is wiped and redone.
* Each trial runs in its own process (`python -m testbed.trial`), so a crash stays in
  that trial and `--jobs N` simply runs N of them side by side (own namespaces each).
* One failing trial does not stop the matrix. A trial process that ends without
  result.json while the matrix is *not* stopping (killed, crashed) gets a failed
  result.json written here with the reason.
* Ctrl-C / SIGTERM: the running trials get SIGINT, tear down and write no result; the
  matrix exits 130, and the same command resumes.
* At the end `metrics.report.build(run_dir)` (if it imports) writes summary and report.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from common.files import write_json_atomically
from kernel_config.host_cc import HostAllowedCC
from testbed import diskspace, runlock
from testbed.env import git_commit, git_dirty_paths
from testbed.spec import TrialSpec, scenario_label
from testbed.topology import Interrupted, install_signal_handlers, sweep_stale
from testbed.trial import CONTENT_CACHE, default_timeout_s

RESULTS_DIR = Path("results")
STOP_WAIT_S = 60.0  # how long interrupted trials get to tear down before SIGKILL
POLL_S = 0.5
# `touch <run>/STOP`: start no new trial, let the running ones finish, then stop as a Ctrl-C
# would (status 130; the same command resumes). Unlike Ctrl-C, no trial is cut short: an
# emulated trial of seed 002's study is 3 minutes of real time. The runner removes the file.
STOP_FILE = "STOP"


def run_dir_for(out: str | None, specs: list[TrialSpec], repo: Path) -> Path:
    """`--out` as a name (results/<out>) or a path; else a name derived from the specs."""
    if out:
        path = Path(out)
        if path.is_absolute() or len(path.parts) > 1:
            return path
        return repo / RESULTS_DIR / out
    ids = "\n".join(sorted(s.trial_id() for s in specs))
    digest = hashlib.sha256(ids.encode()).hexdigest()[:8]
    scenarios = "-".join(dict.fromkeys(scenario_label(s.scenario) for s in specs))
    transports = "-".join(dict.fromkeys(s.transport for s in specs))
    name = f"{scenarios[:40]}_{transports[:40]}_{digest}"
    return repo / RESULTS_DIR / name


@dataclass
class Progress:
    total: int
    done: int = 0  # finished ok
    failed: int = 0
    started_monotonic: float = field(default_factory=time.monotonic)
    durations_s: list[float] = field(default_factory=list)  # trials run in this session
    is_tty: bool = field(default_factory=lambda: sys.stderr.isatty())
    _last_counts: tuple[int, int, int] = (-1, -1, -1)
    _last_print: float = 0.0

    def line(self, running: int, jobs: int) -> str:
        elapsed = time.monotonic() - self.started_monotonic
        left = self.total - self.done - self.failed
        if self.durations_s:
            mean = sum(self.durations_s) / len(self.durations_s)
            eta = f"{_hms(mean * left / max(1, jobs))}"
        else:
            eta = "?"
        return (
            f"[{self.done + self.failed}/{self.total}] ok {self.done}, failed {self.failed}, "
            f"running {running} | elapsed {_hms(elapsed)}, left ~{eta}"
        )

    def show(self, running: int, jobs: int, final: bool = False) -> None:
        """Redrawn in place on a terminal; elsewhere (logs, CI) on change or every minute."""
        text = self.line(running, jobs)
        if self.is_tty:
            end = "\n" if final else ""
            sys.stderr.write(f"\r\033[K{text}{end}")
        else:
            counts = (self.done, self.failed, running)
            now = time.monotonic()
            if not final and counts == self._last_counts and now - self._last_print < 60:
                return
            self._last_counts, self._last_print = counts, now
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


def _hms(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _read_result(trial_dir: Path) -> dict | None:
    try:
        return json.loads((trial_dir / "result.json").read_text())
    except (OSError, ValueError):
        return None


def dirty_checkout_note(repo: Path) -> str | None:
    """A run's warning when tracked files differ from the checkout's commit: every trial will
    record `<commit>-dirty`, which a study on one commit has to explain."""
    dirty = git_dirty_paths(repo)
    if not dirty:
        return None
    shown = ", ".join(dirty[:3]) + (", ..." if len(dirty) > 3 else "")
    return (
        f"note: {len(dirty)} tracked file(s) differ from the checkout's commit ({shown}), "
        "so every trial records its commit as <commit>-dirty (trial.json "
        "env.git_dirty_paths lists them); commit or restore them for a clean record"
    )


def stop_requested(run_dir: Path) -> bool:
    """Whether `STOP_FILE` is in the run folder; it is removed, so that the resumed run runs."""
    stop = run_dir / STOP_FILE
    if not stop.exists():
        return False
    stop.unlink(missing_ok=True)
    return True


def finished_result(trial_dir: Path) -> dict | None:
    """The trial's result when it finished, ok or not; None while it has none (not run, or
    still running) or when it was stopped for want of space (testbed/diskspace.py), which a
    resumed run redoes. The one test of "finished" for the runner and whatever reads a run."""
    result = _read_result(trial_dir)
    if not isinstance(result, dict) or not result or result.get("out_of_space"):
        return None
    return result


def write_run_manifest(run_dir: Path, specs: list[TrialSpec], repo: Path, argv) -> None:
    manifest = run_dir / "run.json"
    data = {
        "schema": 1,
        "run": run_dir.name,
        "argv": list(argv) if argv is not None else sys.argv[1:],
        "git_commit": git_commit(repo),
        "created_unix_s": time.time(),
        "trials": [s.trial_id() for s in specs],
        "specs": [s.to_dict() for s in specs],
    }
    if manifest.is_file():
        old = json.loads(manifest.read_text())
        data["created_unix_s"] = old.get("created_unix_s", data["created_unix_s"])
        data["resumed_unix_s"] = old.get("resumed_unix_s", []) + [time.time()]
    write_json_atomically(manifest, data)


class _Running:
    def __init__(
        self, spec: TrialSpec, trial_dir: Path, popen: subprocess.Popen, slot: int = 0
    ) -> None:
        self.spec = spec
        self.trial_dir = trial_dir
        self.popen = popen
        self.slot = slot  # which CPU sets it has (testbed/cpusets.py plan_cpu_sets)
        self.started = time.monotonic()


def _start_trial(
    spec: TrialSpec,
    trial_dir: Path,
    repo: Path,
    timeout_s: int | None,
    slot: int = 0,
    jobs: int = 1,
) -> _Running:
    if trial_dir.exists():
        shutil.rmtree(trial_dir)  # unfinished from an earlier run: redo from scratch
    logs = trial_dir / "logs"
    logs.mkdir(parents=True)
    argv = [sys.executable, "-m", "testbed.trial", "--spec", json.dumps(spec.to_dict()),
            "--trial-dir", str(trial_dir), "--repo", str(repo)]  # fmt: skip
    if timeout_s:
        argv += ["--timeout-s", str(timeout_s)]
    # Each running trial takes one slot of the CPU plan (testbed/cpusets.py).
    env = dict(os.environ, TESTBED_CPU_SLOT=str(slot), TESTBED_JOBS=str(jobs))
    with open(logs / "trial.stdout", "wb") as out, open(logs / "trial.stderr", "wb") as err:
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env)
    return _Running(spec, trial_dir, popen, slot)


def _stderr_tail(trial_dir: Path, max_bytes: int = 4000) -> str:
    try:
        data = (trial_dir / "logs" / "trial.stderr").read_bytes()
    except OSError:
        return ""
    return data[-max_bytes:].decode(errors="replace")


def _finish_trial(run: _Running, progress: Progress) -> dict:
    """Account a trial whose process ended; write a failed result if it left none, or if
    it failed for want of space (then marked `out_of_space`: redone on resume)."""
    result = _read_result(run.trial_dir)
    code = run.popen.returncode
    run_dir = run.trial_dir.parent.parent
    out_of_space = False
    if result is None or result.get("status") != "ok":
        evidence = str((result or {}).get("reason") or "") + _stderr_tail(run.trial_dir)
        if diskspace.is_full(run_dir, evidence):
            diskspace.release(run_dir)  # room for this result and the summary
            out_of_space = True
    if result is None or out_of_space:
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"status {code}"
        reason = (
            f"trial process ended with {how} without a result "
            f"(see {run.trial_dir / 'logs' / 'trial.stderr'})"
        )
        if out_of_space:
            reason = f"out of space: {diskspace.describe(run_dir)}; " + (
                str(result.get("reason")) if result else reason
            )
        result = {
            "schema": 1,
            "trial_id": run.spec.trial_id(),
            "status": "failed",
            "reason": reason,
            "valid": False,
            "invalid_reasons": [f"failed: {reason}"],
            "wall_duration_s": round(time.monotonic() - run.started, 3),
            "subflows_with_data": None,
        }
        if out_of_space:
            result["out_of_space"] = True
        write_json_atomically(run.trial_dir / "result.json", result)
        # It could not tear down (e.g. SIGKILL): its state file names what it left.
        for line in sweep_stale():
            print(f"removed {line}", file=sys.stderr)
    progress.durations_s.append(time.monotonic() - run.started)
    if result.get("status") == "ok":
        progress.done += 1
    else:
        progress.failed += 1
    return result


def _report_trial(run: _Running, result: dict) -> None:
    status = result.get("status")
    valid = "valid" if result.get("valid") else "INVALID"
    text = f"{run.spec.trial_id()}: {status} ({valid}) in {result.get('wall_duration_s')} s"
    if result.get("reason"):
        text += f": {result['reason']}"
    elif result.get("invalid_reasons"):
        text += ": " + "; ".join(result["invalid_reasons"])
    lines = [text]
    control = run.trial_dir / "control.jsonl"
    if control.is_file():
        from testbed.probe import format_table

        try:
            rows = [json.loads(line) for line in control.read_text().splitlines() if line.strip()]
            scenario = json.loads((run.trial_dir / "scenario.json").read_text())
            lines.append(format_table(rows, scenario))
        except (OSError, ValueError, KeyError) as exc:  # a damaged log must not stop the run
            lines.append(f"(cannot show {control}: {type(exc).__name__}: {exc})")
    print("\n".join(lines), flush=True)


def _stop_all(running: list[_Running]) -> None:
    for run in running:
        if run.popen.poll() is None:
            run.popen.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_WAIT_S
    for run in running:
        try:
            run.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            run.popen.kill()
            run.popen.wait()
    for line in sweep_stale():  # a trial killed above may have left its namespaces
        print(f"removed {line}", file=sys.stderr)


def prepare_content(specs: list[TrialSpec], repo: Path) -> None:
    """Encodes the DASH ladder of every clip length the pending trials play, before the
    first trial, with one line each: on a fresh machine this is minutes of FFmpeg that would
    otherwise pass in silence inside the first trial (and count against nothing: the
    trial's timeout starts after it). Already-encoded lengths are cached and print nothing."""
    from server import content

    cache = repo / CONTENT_CACHE
    for duration_s, name in sorted(
        {(int(s.video_duration_s), s.ladder) for s in specs if s.player is not None}
    ):
        ladder = content.LADDERS[name]
        if content.is_prepared(duration_s, cache=cache, ladder=ladder):
            continue
        print(
            f"encoding the {duration_s} s DASH ladder {name} with FFmpeg (about "
            f"{content.encode_minutes_estimate(duration_s)} min here, once; cached in "
            f"{CONTENT_CACHE})",
            flush=True,
        )
        started = time.monotonic()
        content.prepare(duration_s, cache=cache, ladder=ladder)
        print(f"encoded in {time.monotonic() - started:.0f} s", flush=True)


def unfinished_trials(
    specs: list[TrialSpec], run_dir: Path, progress: Progress
) -> list[tuple[TrialSpec, Path]]:
    """The specs without a result (with their trial folders); the finished ones are counted
    into `progress` as ok or failed."""
    pending: list[tuple[TrialSpec, Path]] = []
    for spec in specs:
        trial_dir = run_dir / "trials" / spec.trial_id()
        result = finished_result(trial_dir)
        if result is None:
            pending.append((spec, trial_dir))
        elif result.get("status") == "ok":
            progress.done += 1
        else:
            progress.failed += 1
    return pending


def run_matrix(
    specs: list[TrialSpec],
    run_dir: Path,
    repo: Path,
    *,
    jobs: int = 1,
    timeout_s: int | None = None,
    argv=None,
    report: bool = True,
) -> int:
    """Run every spec not yet finished; returns 0 (all ok), 1 (some failed), 130 (stopped),
    3 (stopped: the run folder's filesystem is full, testbed/diskspace.py).
    report=False leaves the report to the caller (--reps auto builds it after its last round)."""
    install_signal_handlers()
    try:
        lock_file = runlock.acquire(run_dir, argv)
    except runlock.RunBusy as exc:
        print(f"run_trials.sh: {exc}", file=sys.stderr)
        return 2
    try:
        return _run_locked(
            specs, run_dir, repo, jobs=jobs, timeout_s=timeout_s, argv=argv, report=report
        )
    finally:
        diskspace.release(run_dir)
        lock_file.close()


def _run_locked(
    specs: list[TrialSpec],
    run_dir: Path,
    repo: Path,
    *,
    jobs: int,
    timeout_s: int | None,
    argv,
    report: bool,
) -> int:
    """run_matrix's body, with the run folder locked."""
    if diskspace.free_bytes(run_dir) < diskspace.MIN_FREE_BYTES or not diskspace.reserve(run_dir):
        print(f"run_trials.sh: {diskspace.describe(run_dir)}; free some space (at least "
              f"{diskspace.MIN_FREE_BYTES >> 20} MB) and run the same command again",
              file=sys.stderr)  # fmt: skip
        return diskspace.OUT_OF_SPACE_STATUS
    for line in sweep_stale():
        print(f"removed stale {line}", file=sys.stderr)
    # A crashed kernel-mode trial may also have left a CC on the host's allowed list.
    for cc in HostAllowedCC().sweep():
        print(f"restored host allowed CCs: removed stale {cc}", file=sys.stderr)
    write_run_manifest(run_dir, specs, repo, argv)
    if note := dirty_checkout_note(repo):
        print(note, file=sys.stderr)

    progress = Progress(total=len(specs))
    pending = unfinished_trials(specs, run_dir, progress)
    skipped = len(specs) - len(pending)
    print(
        f"run {run_dir}: {len(specs)} trials, {skipped} already finished, "
        f"{len(pending)} to run, {jobs} at a time"
        + (f" (to stop after the running trials: touch {run_dir / STOP_FILE})" if pending else ""),
        flush=True,
    )
    if not pending:
        print("nothing to run: every trial has a result; for a fresh run give --out <new name>")
    prepare_content([spec for spec, _ in pending], repo)
    running: list[_Running] = []
    out_of_space = stopped_on_request = False
    try:
        while pending or running:
            if pending and (out_of_space or diskspace.is_full(run_dir)):
                out_of_space = True
                pending.clear()  # they stay unfinished: the resume runs them
            if pending and stop_requested(run_dir):
                stopped_on_request = True
                print(f"stop requested ({run_dir / STOP_FILE}): {len(running)} running trial(s) "
                      f"finish, none of the {len(pending)} left starts; the same command "
                      "resumes", file=sys.stderr, flush=True)  # fmt: skip
                pending.clear()
            while pending and len(running) < jobs:
                spec, trial_dir = pending.pop(0)
                limit = timeout_s or default_timeout_s(spec)
                slot = min(set(range(jobs)) - {r.slot for r in running})
                running.append(_start_trial(spec, trial_dir, repo, limit, slot, jobs))
            progress.show(len(running), jobs)
            time.sleep(POLL_S)
            for run in [r for r in running if r.popen.poll() is not None]:
                running.remove(run)
                result = _finish_trial(run, progress)
                out_of_space = out_of_space or bool(result.get("out_of_space"))
                if progress.is_tty:
                    sys.stderr.write("\r\033[K")
                _report_trial(run, result)
        progress.show(0, jobs, final=True)
    except (Interrupted, KeyboardInterrupt):
        if progress.is_tty:
            sys.stderr.write("\n")
        print("stopping: tearing down the running trials ...", file=sys.stderr, flush=True)
        _stop_all(running)
        print(
            "stopped; finished trials are kept. Re-run the same command to resume.",
            file=sys.stderr,
        )
        return 130
    diskspace.release(run_dir)  # room for summary.csv and the report
    if report or out_of_space:
        build_report(run_dir)
    if stopped_on_request:
        print("stopped on request; finished trials are kept. Re-run the same command to resume.",
              file=sys.stderr)  # fmt: skip
        return 130
    if out_of_space:
        print(f"run_trials.sh: stopped: {diskspace.describe(run_dir)}. summary.csv and the "
              "report hold the trials that finished; free some space and run the same "
              "command again to resume (the trial that ran out of space is redone)",
              file=sys.stderr)  # fmt: skip
        return diskspace.OUT_OF_SPACE_STATUS
    return 0 if progress.failed == 0 else 1


def run_one(run_dir: Path, trial_id: str, repo: Path, timeout_s: int | None = None) -> int:
    """`--out RUN --trial-id ID`: run one trial of an existing run (a Slurm array task).

    The spec comes from the run's run.json, so the task needs no matrix options. A trial
    already finished ok is not run again; the run-wide lock is not taken (the other tasks
    of the array run beside this one), only a lock on this trial. No report is built.
    Returns 0 (ok), 1 (failed), 2 (no such run or trial), 130 (stopped).
    """
    try:
        manifest = json.loads((run_dir / "run.json").read_text())
    except (OSError, ValueError) as exc:
        print(
            f"run_trials.sh --trial-id: {run_dir / 'run.json'} unreadable ({exc}); "
            "--trial-id runs one trial of a run created by run_trials.sh",
            file=sys.stderr,
        )
        return 2
    specs = {TrialSpec.from_dict(s).trial_id(): s for s in manifest.get("specs", [])}
    if trial_id not in specs:
        listed = ", ".join(list(specs)[:3])
        print(
            f"run_trials.sh --trial-id: {trial_id!r} is not a trial of {run_dir} "
            f"(run.json lists {len(specs)}: e.g. {listed})",
            file=sys.stderr,
        )
        return 2
    spec = TrialSpec.from_dict(specs[trial_id])
    trial_dir = run_dir / "trials" / trial_id
    install_signal_handlers()
    locks = run_dir / ".trial-locks"  # not under trials/: every entry there is a trial
    locks.mkdir(parents=True, exist_ok=True)
    lock_file = open(locks / f"{trial_id}.lock", "w")  # noqa: SIM115
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            f"run_trials.sh --trial-id: {trial_id} is being run by another process", file=sys.stderr
        )
        return 2
    try:
        result = _read_result(trial_dir)
        if result is not None and result.get("status") == "ok" and not result.get("resubmit"):
            print(f"{trial_id}: already finished ok; nothing to run")
            return 0
        for line in sweep_stale():
            print(f"removed stale {line}", file=sys.stderr)
        run = _start_trial(spec, trial_dir, repo, timeout_s or default_timeout_s(spec))
        progress = Progress(total=1)
        try:
            run.popen.wait()
        except (Interrupted, KeyboardInterrupt):
            print("stopping: tearing down the trial ...", file=sys.stderr, flush=True)
            _stop_all([run])
            return 130
        result = _finish_trial(run, progress)
        _report_trial(run, result)
        return 0 if result.get("status") == "ok" else 1
    finally:
        lock_file.close()


def build_report(run_dir: Path) -> int:
    try:
        from metrics.report import build
    except ImportError as exc:
        print(f"no report: metrics.report is not available ({exc})", file=sys.stderr)
        return 1
    try:
        report = build(run_dir)
    except Exception as exc:
        print(f"report failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"report: {report}")
    summary = Path(report).parent / "summary.csv"
    if summary.is_file():
        print(f"summary: {summary}")
    return 0


def rebuild_report(run_dir: Path) -> int:
    """`--report <run dir>`: rebuild summary and report only; exit 2 if it is no run."""
    if not (run_dir / "trials").is_dir():
        print(
            f"run_trials.sh --report {run_dir}: not a run folder (no {run_dir / 'trials'}/)",
            file=sys.stderr,
        )
        return 2
    running = runlock.holder(run_dir)
    if running is not None:
        finished = len(list(run_dir.glob("trials/*/result.json")))
        print(f"run_trials.sh --report {run_dir}: the run is still going ({running}); this "
              f"report is partial: {finished} trials have finished so far, the rest are "
              "missing from it. Run --report again when the run has ended.",
              file=sys.stderr)  # fmt: skip
    return build_report(run_dir)
