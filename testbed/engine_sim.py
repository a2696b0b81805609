"""`run_trials.sh --engine sim`: the same matrix in virtual time (docs/SIMULATOR.md).

Every trial runs `mpsim` (transport/src/bin/mpsim.rs): the user-space transport's own code
over the emulator's link model (linkemu's `Link`), with the DASH player model playing the
same encoded ladder the emulated trials stream. Each trial writes the same folder as an
emulated one (trial.json, scenario.json, player.jsonl, result.json, logs/), plus `sim.json`
(mpsim's output: per-path bytes, retransmissions, wall time), so metrics reads it unchanged.
Trials run side by side, one process per core (`--jobs`, default every core).

Only the user-space transport is simulated: the kernel's MPTCP and TCP have no sans-IO core.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from testbed.env import git_commit
from testbed.spec import TrialSpec
from testbed.trial import write_json_atomically

# TESTBED_MPSIM: another mpsim build (e.g. a second target dir while this one is in use).
MPSIM_BINARY = Path(os.environ.get("TESTBED_MPSIM", "transport/target/release/mpsim"))
CONTENT_CACHE = Path("cache/content")
ENGINE = "sim"


def unsupported(specs: list[TrialSpec]) -> list[str]:
    """Reasons the simulator cannot run some of these trials (empty if it can run all)."""
    bad = sorted({s.transport for s in specs if s.transport != "user"})
    if bad:
        return [
            f"--engine sim simulates the user-space transport only; --transport "
            f"{','.join(bad)} needs --engine emulate"
        ]
    return []


@functools.lru_cache(maxsize=256)
def _resolved(scenario: str, repo: Path, seed: int) -> dict:
    """Resolved once per scenario and seed (every CC x scheduler cell shares it)."""
    from testbed.scenario import load_resolved

    return load_resolved(scenario, repo, seed)


def _trial_argv(spec: TrialSpec, trial_dir: Path, repo: Path, mpd: Path) -> list[str]:
    return [
        str(repo / MPSIM_BINARY),
        "--scenario",
        str(trial_dir / "scenario.json"),
        "--seed",
        str(spec.seed),
        "--cc",
        spec.cc,
        "--sched",
        spec.sched,
        "--player-mpd",
        str(mpd),
        "--video-duration",
        str(spec.video_duration_s),
        "--player-out",
        str(trial_dir / "player.jsonl"),
        "--transport-log-dir",
        str(trial_dir),
    ]


def _prepare(
    spec: TrialSpec, trial_dir: Path, run_dir: Path, repo: Path, mpd: Path, commit: str | None
) -> list[str]:
    (trial_dir / "logs").mkdir(parents=True, exist_ok=True)
    write_json_atomically(trial_dir / "scenario.json", _resolved(spec.scenario, repo, spec.seed))
    write_json_atomically(
        trial_dir / "trial.json",
        {
            "schema": 1,
            "trial_id": spec.trial_id(),
            "run": run_dir.name,
            "spec": spec.to_dict(),
            "engine": ENGINE,
            "env": {"engine": ENGINE, "git_commit": commit, "cpus": os.cpu_count()},
            # Virtual time: every log line's t_ns counts from the simulation's start.
            "clock": {"t0_monotonic_ns": 0, "t0_unix_ns": time.time_ns(), "virtual": True},
        },
    )
    return _trial_argv(spec, trial_dir, repo, mpd)


def _write_transport_logs(trial_dir: Path, spec: TrialSpec, sim: dict) -> None:
    """emulator.jsonl (`start`, `link_totals`) in the emulated trials' format
    (docs/CONTRACTS.md 5.1), from mpsim's link counters. mpsim itself writes
    transport-*.jsonl (`--transport-log-dir`)."""
    if not sim:
        return
    t_ns = int(float(sim.get("virtual_s") or 0) * 1e9)
    lines = [{"t_ns": 0, "src": "emulator", "event": "start", "scenario": spec.scenario,
              "seed": spec.seed, "backend": "sim"}]  # fmt: skip
    for path, dirs in (sim.get("links") or {}).items():
        for direction, counters in dirs.items():
            lines.append({"t_ns": t_ns, "src": "emulator", "event": "link_totals", "path": path,
                          "dir": direction, **counters})  # fmt: skip
    (trial_dir / "emulator.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def _finish(spec: TrialSpec, trial_dir: Path, proc: subprocess.Popen, wall_s: float) -> dict:
    out, err = proc.communicate()
    (trial_dir / "logs" / "mpsim.stdout").write_text(out)
    (trial_dir / "logs" / "mpsim.stderr").write_text(err)
    reason = None
    sim: dict = {}
    try:
        sim = json.loads(out)
        write_json_atomically(trial_dir / "sim.json", sim)
    except ValueError:
        reason = f"mpsim exit {proc.returncode}: {err.strip()[-300:]}"
    _write_transport_logs(trial_dir, spec, sim)
    paths = (sim.get("server_paths") or {}).values()
    summary = sim.get("player_summary") or {}
    if reason is None and not summary.get("ended"):
        # `stuck`: mpsim's watchdog (no progress, or a connection closed), with the state
        # of both connections in `error`.
        detail = f": {summary['error']}" if summary.get("error") else ""
        reason = f"player did not reach the end ({summary.get('reason')}{detail})"
    result = {
        "schema": 1,
        "trial_id": spec.trial_id(),
        "status": "ok" if reason is None else "failed",
        "reason": reason,
        "valid": reason is None,
        "invalid_reasons": [] if reason is None else [reason],
        "wall_duration_s": round(wall_s, 3),
        "engine": ENGINE,
        "virtual_duration_s": sim.get("virtual_s"),
        "subflows_with_data": sum(1 for p in paths if p.get("data_bytes_sent", 0) > 0),
    }
    write_json_atomically(trial_dir / "result.json", result)
    return result


def run_sim_matrix(specs: list[TrialSpec], run_dir: Path, repo: Path, *, jobs: int, argv) -> int:
    """Run every spec without a result in virtual time; 0 all ok, 1 some failed, 2 unusable."""
    from server.content import prepare
    from testbed import matrix

    problems = unsupported(specs)
    binary = repo / MPSIM_BINARY
    if not binary.is_file():
        problems.append(f"{binary} is missing: run ./scripts/setup.sh")
    if problems:
        print("run_trials.sh: " + "\n  ".join(problems), file=sys.stderr)
        return 2
    run_dir.mkdir(parents=True, exist_ok=True)
    matrix.write_run_manifest(run_dir, specs, repo, argv)
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["engine"] = ENGINE
    write_json_atomically(run_dir / "run.json", manifest)

    mpds: dict[float, Path] = {}
    for d in sorted({s.video_duration_s for s in specs}):
        mpds[d] = Path(prepare(int(d), cache=repo / CONTENT_CACHE)) / "manifest.mpd"

    commit = git_commit(repo)  # once: one git call per trial would cost more than the trial
    progress = matrix.Progress(total=len(specs))
    pending: list[tuple[TrialSpec, Path]] = []
    for spec in specs:
        trial_dir = run_dir / "trials" / spec.trial_id()
        result = matrix._read_result(trial_dir)
        if result is None:
            pending.append((spec, trial_dir))
        elif result.get("status") == "ok":
            progress.done += 1
        else:
            progress.failed += 1
    print(
        f"run {run_dir} (simulated, virtual time): {len(specs)} trials, "
        f"{len(specs) - len(pending)} already finished, {len(pending)} to run, {jobs} at a time",
        flush=True,
    )
    started = time.monotonic()
    running: list[tuple[TrialSpec, Path, subprocess.Popen, float]] = []
    while pending or running:
        while pending and len(running) < jobs:
            spec, trial_dir = pending.pop(0)
            argv_trial = _prepare(
                spec, trial_dir, run_dir, repo, mpds[spec.video_duration_s], commit
            )
            proc = subprocess.Popen(
                argv_trial, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            running.append((spec, trial_dir, proc, time.monotonic()))
        progress.show(len(running), jobs)
        time.sleep(0.05)
        for item in [r for r in running if r[2].poll() is not None]:
            running.remove(item)
            spec, trial_dir, proc, t = item
            wall = time.monotonic() - t
            result = _finish(spec, trial_dir, proc, wall)
            progress.durations_s.append(wall)
            if result["status"] == "ok":
                progress.done += 1
            else:
                progress.failed += 1
                print(f"\nfailed {spec.trial_id()}: {result['reason']}", file=sys.stderr)
    progress.show(0, jobs, final=True)
    elapsed = time.monotonic() - started
    virtual = sum(s.video_duration_s for s in specs)
    print(
        f"simulated {len(specs)} trials in {elapsed:.1f} s wall "
        f"({virtual:.0f} s of video; load average {os.getloadavg()[0]:.2f})",
        flush=True,
    )
    matrix.build_report(run_dir)
    return 0 if progress.failed == 0 else 1
