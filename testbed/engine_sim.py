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

import concurrent.futures
import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from testbed.env import git_commit
from testbed.spec import TrialSpec
from testbed.transports import SCHED_TRACE_ENV, user
from testbed.trial import write_json_atomically

# TESTBED_MPSIM: another mpsim build (e.g. a second target dir while this one is in use).
MPSIM_ENV = "TESTBED_MPSIM"
MPSIM_BINARY = Path(os.environ.get(MPSIM_ENV, "transport/target/release/mpsim"))
CONTENT_CACHE = Path("cache/content")
ENGINE = "sim"
# A trial's reason when mpsim's player did not play the video to its end; "(timeout)" follows
# when the virtual-time limit ended it, "(stuck: ...)" when its watchdog did.
PLAYER_UNFINISHED = "player did not reach the end"
# Set by `run_trials.sh --sim-stats-interval-ms`: the interval of mpsim's sender log, in ms
# of virtual time (its default is 1000; the emulated transport logs every 100 ms). It changes
# the log alone: a trial's results are the same at any interval.
SIM_STATS_INTERVAL_ENV = "TESTBED_SIM_STATS_INTERVAL_MS"
# The emulated trial's start-up on the scenario's clock (which starts with the emulator):
# Chromium opens the player page (`start` event) at PAGE_START_S and dash.js sends its first
# segment request at FIRST_REQUEST_S, once the page, dash.js and the MPD are loaded. Medians
# of 41 emulated dash.js trials made on this machine before the cross-validation run (the
# runs of `./run_trials.sh` with the default matrix, B1 x 6 coupled CCs and 20 control
# sessions; IQR of the first request 2.16 to 2.45 s), measured from emulator.jsonl's `start`
# to player.jsonl's `start` and first `segment` request. docs/SIMULATOR.md, "Player model".
PAGE_START_S = 1.2
FIRST_REQUEST_S = 2.3
# The page's requests, as seconds before the first segment request, on the connection that
# then carries the video (0) and on the page's two other connections (1, 2): Chromium opens
# three connections for the page, and in the most common pattern (53 of 99 emulated trials)
# the one dash.js goes on to fetch segments over has carried player.mjs, lib/stall.mjs and
# the MPD, another index.html and player.css, the third dash.all.min.js and
# lib/overload.mjs (the other patterns: dash.all.min.js on the video's connection, 40;
# index.html on it, 6). Medians of those 53 trials' nginx log times, from xv-full-emulate
# and s002-a2. docs/SIMULATOR.md, "Known causes of the remaining disagreement": these
# requests decide on which subflow BBR's start-up ends early, and the page's own
# connections lose and retransmit packets in their start-ups as emulated.
DASHJS = Path("player/node_modules/dashjs/dist/modern/umd/dash.all.min.js")  # server/nginx.py
PAGE_REQUESTS_BEFORE_FIRST_S = (
    # (file served, None = the MPD; seconds before the first segment request; connection)
    (Path("player/web/index.html"), 1.051, 1),
    (Path("player/web/player.css"), 0.924, 1),
    (DASHJS, 0.917, 2),
    (Path("player/web/player.mjs"), 0.868, 0),
    (Path("player/web/lib/overload.mjs"), 0.274, 2),
    (Path("player/web/lib/stall.mjs"), 0.260, 0),
    (None, 0.132, 0),
)


def _page_request_argv(repo: Path, mpd: Path) -> list[str]:
    """--player-page-request AT_S:BODY_BYTES:CONN for each of PAGE_REQUESTS_BEFORE_FIRST_S,
    the body being the file nginx serves (its size today)."""
    argv: list[str] = []
    for file, before_s, conn in PAGE_REQUESTS_BEFORE_FIRST_S:
        body = (repo / file if file else mpd).stat().st_size
        argv += ["--player-page-request", f"{FIRST_REQUEST_S - before_s:.3f}:{body}:{conn}"]
    return argv


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
        *spec.option_argv(),
        "--player-mpd",
        str(mpd),
        "--video-duration",
        str(spec.video_duration_s),
        "--player-page-start-s",
        str(PAGE_START_S),
        "--player-first-request-s",
        str(FIRST_REQUEST_S),
        # The page is Chromium's (dash.js); a GStreamer player loads no page.
        *(_page_request_argv(repo, mpd) if spec.player == "dashjs" else []),
        "--player-out",
        str(trial_dir / "player.jsonl"),
        "--transport-log-dir",
        str(trial_dir),
        # `run_trials.sh --sim-stats-interval-ms`: a closer transport log (logging only).
        *(
            ["--stats-interval-ms", os.environ[SIM_STATS_INTERVAL_ENV]]
            if os.environ.get(SIM_STATS_INTERVAL_ENV)
            else []
        ),
        # `run_trials.sh --sched-trace`: the sender's decisions, named as an emulated trial's.
        *(
            ["--sched-trace", str(trial_dir / "sched-trace-server.jsonl")]
            if os.environ.get(SCHED_TRACE_ENV) == "1"
            else []
        ),
    ]


def _prepare(
    spec: TrialSpec, trial_dir: Path, run_dir: Path, repo: Path, mpd: Path, commit: str | None
) -> list[str]:
    (trial_dir / "logs").mkdir(parents=True, exist_ok=True)
    # Not synced to disk (durable=False): a simulated trial lost to a power cut is re-run in
    # a fraction of a second, while a sync per file costs more than the trial here.
    scenario = _resolved(spec.scenario, repo, spec.seed)
    write_json_atomically(trial_dir / "scenario.json", scenario, durable=False)
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
        durable=False,
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


def _finish(
    spec: TrialSpec,
    trial_dir: Path,
    path_names: list[str],
    proc: subprocess.CompletedProcess,
    wall_s: float,
) -> dict:
    out, err = proc.stdout, proc.stderr
    (trial_dir / "logs" / "mpsim.stdout").write_text(out)
    (trial_dir / "logs" / "mpsim.stderr").write_text(err)
    reason = None
    sim: dict = {}
    try:
        sim = json.loads(out)
        write_json_atomically(trial_dir / "sim.json", sim, durable=False)
    except ValueError:
        reason = f"mpsim exit {proc.returncode}: {err.strip()[-300:]}"
    _write_transport_logs(trial_dir, spec, sim)
    summary = sim.get("player_summary") or {}
    if reason is None and not summary.get("ended"):
        # `stuck`: mpsim's watchdog (no progress, or a connection closed), with the state
        # of both connections in `error`.
        detail = f": {summary['error']}" if summary.get("error") else ""
        reason = f"{PLAYER_UNFINISHED} ({summary.get('reason')}{detail})"
    invalid = [] if reason is None else [reason]
    # The `user` transport's subflow rule, on the transport-*.jsonl mpsim wrote
    # (docs/ORCHESTRATOR.md, "Validity"); none without mpsim's output (it did not run through).
    subflows_with_data: int | None = None
    paths_unused: list[str] | None = None
    if sim:
        try:
            rule_reasons, subflows_with_data, paths_unused = user.verdict(trial_dir, path_names)
            invalid += rule_reasons
        except ValueError as exc:
            invalid.append(f"user: {exc}")
    result = {
        "schema": 1,
        "trial_id": spec.trial_id(),
        "status": "ok" if reason is None else "failed",
        "reason": reason,
        "valid": not invalid,
        "invalid_reasons": invalid,
        "wall_duration_s": round(wall_s, 3),
        "engine": ENGINE,
        "virtual_duration_s": sim.get("virtual_s"),
        "subflows_with_data": subflows_with_data,
        "paths_unused": paths_unused,
    }
    write_json_atomically(trial_dir / "result.json", result, durable=False)
    return result


INTERRUPTED = "interrupted"  # a trial whose mpsim a signal killed: unfinished, redone on resume


def _run_trial(
    spec: TrialSpec, trial_dir: Path, run_dir: Path, repo: Path, mpd: Path, commit: str | None
) -> dict:
    """One trial, start to result.json (runs in a worker thread; mpsim does the work)."""
    argv = _prepare(spec, trial_dir, run_dir, repo, mpd, commit)
    path_names = list(_resolved(spec.scenario, repo, spec.seed)["paths"])
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=repo, capture_output=True, text=True, check=False)
    if proc.returncode < 0:
        # mpsim was killed by a signal (the run was stopped): not a result of the trial. It
        # keeps no result.json, so a resumed run redoes it and no archive takes it.
        return {"status": INTERRUPTED, "reason": f"mpsim killed by signal {-proc.returncode}"}
    return _finish(spec, trial_dir, path_names, proc, time.monotonic() - started)


def run_sim_matrix(
    specs: list[TrialSpec], run_dir: Path, repo: Path, *, jobs: int, argv, report: bool = True
) -> int:
    """Run every spec without a result in virtual time; 0 all ok, 1 some failed, 2 unusable.
    report=False leaves the report to the caller (--reps auto builds it after its last round)."""
    from server.content import LADDERS, prepare
    from testbed import matrix
    from testbed.topology import Interrupted, install_signal_handlers

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

    mpds: dict[tuple[int, str], Path] = {}
    for d, ladder in sorted({(int(s.video_duration_s), s.ladder) for s in specs}):
        content = prepare(d, cache=repo / CONTENT_CACHE, ladder=LADDERS[ladder])
        mpds[(d, ladder)] = Path(content) / "manifest.mpd"

    commit = git_commit(repo)  # once: one git call per trial would cost more than the trial
    progress = matrix.Progress(total=len(specs))
    pending = matrix.unfinished_trials(specs, run_dir, progress)
    print(
        f"run {run_dir} (simulated, virtual time): {len(specs)} trials, "
        f"{len(specs) - len(pending)} already finished, {len(pending)} to run, {jobs} at a time",
        flush=True,
    )
    started = time.monotonic()
    # One thread per job, each running one mpsim at a time: a finished trial's slot is
    # refilled at once (no polling delay), and the threads only wait on their process.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    install_signal_handlers()  # SIGTERM too, so that a stopped study still archives
    try:
        running = {
            pool.submit(
                _run_trial,
                spec,
                trial_dir,
                run_dir,
                repo,
                mpds[(int(spec.video_duration_s), spec.ladder)],
                commit,
            ): spec
            for spec, trial_dir in pending
        }
        while running:
            progress.show(min(jobs, len(running)), jobs)
            done, _ = concurrent.futures.wait(
                running, timeout=0.5, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in done:
                spec = running.pop(future)
                result = future.result()
                if result["status"] == INTERRUPTED:
                    continue
                progress.durations_s.append(float(result["wall_duration_s"]))
                if result["status"] == "ok":
                    progress.done += 1
                else:
                    progress.failed += 1
                    print(f"\nfailed {spec.trial_id()}: {result['reason']}", file=sys.stderr)
    except (KeyboardInterrupt, Interrupted):
        # Ctrl-C, or SIGTERM (a study stopped in the background, where SIGINT is ignored):
        # let the running trials finish (a fraction of a second each), start no more.
        pool.shutdown(wait=True, cancel_futures=True)
        print("\nstopped; finished trials are kept. Re-run the same command to resume.")
        return 130
    pool.shutdown()
    progress.show(0, jobs, final=True)
    elapsed = time.monotonic() - started
    virtual = sum(s.video_duration_s for s in specs)
    print(
        f"simulated {len(specs)} trials in {elapsed:.1f} s wall "
        f"({virtual:.0f} s of video; load average {os.getloadavg()[0]:.2f})",
        flush=True,
    )
    if report:
        matrix.build_report(run_dir)
    return 0 if progress.failed == 0 else 1
