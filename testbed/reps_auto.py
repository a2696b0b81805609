"""`run_trials.sh --reps auto`: repetition rounds until the run's comparisons are decided.

Round k runs every cell with repetitions 0..R_k-1 (seed N + r, the same seeds in every cell,
so cells stay paired), through the engine's ordinary runner: the trials of earlier rounds
have results and are skipped, so an interrupted run resumes with the same command. After
each round metrics/reps_auto.py says what is decided and how many repetitions the rest would
need; the loop stops when everything is settled, at --max-reps, or when the next round would
not fit in --time-budget. Only the last round builds the report.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from testbed.spec import TrialSpec

DEFAULT_MAX_REPS = 30


def run(
    args: argparse.Namespace,
    specs_for_reps: Callable[[int], list[TrialSpec]],
    run_dir_for: Callable[[list[TrialSpec]], Path],
    run_round: Callable[[list[TrialSpec], Path, bool], int],
) -> int:
    """The round loop. `specs_for_reps(R)` gives the matrix with R repetitions per cell;
    `run_round(specs, run_dir, build_report)` runs the unfinished ones (the engine's runner,
    returning its status)."""
    from metrics.report import summary_of
    from metrics.reps_auto import FIRST_ROUND_REPS, assess, next_reps

    max_reps = args.max_reps
    budget_s = args.time_budget
    started = time.monotonic()
    reps, previous = min(FIRST_ROUND_REPS, max_reps), 0
    run_dir = run_dir_for(specs_for_reps(reps))
    while True:
        specs = specs_for_reps(reps)
        round_started = time.monotonic()
        status = run_round(specs, run_dir, False)
        if status not in (0, 1):
            return status
        assessment = assess(summary_of(run_dir))
        print(f"--reps auto, round with {reps} repetition(s) per cell:", flush=True)
        for line in assessment.lines():
            print(f"  {line}", flush=True)
        following = next_reps(assessment, reps, max_reps)
        if following is None:
            why = (
                "every comparison settled"
                if assessment.all_settled
                else f"--max-reps {max_reps} reached"
            )
            break
        round_s = time.monotonic() - round_started
        per_rep_s = round_s / max(1, reps - previous)
        spent_s = time.monotonic() - started
        if budget_s is not None and spent_s + per_rep_s * (following - reps) > budget_s:
            why = f"--time-budget {budget_s:g} s would be exceeded by the next round"
            break
        previous, reps = reps, following
    print(f"--reps auto stopped after {reps} repetition(s) per cell: {why}.", flush=True)
    if not assessment.all_settled:
        needed = assessment.reps_needed
        estimate = f"about {int(needed)}" if needed == needed else "no estimate"
        print(
            f"  {assessment.unsettled} comparison(s) not settled; repetitions per cell that "
            f"would decide the slowest at its observed effect: {estimate}.",
            flush=True,
        )
    from testbed import matrix

    report_status = matrix.build_report(run_dir)
    return status if report_status == 0 else max(status, 1)


def check_options(args: argparse.Namespace) -> str | None:
    """Why the --reps auto options cannot run (None when they can)."""
    if args.reps != "auto":
        if args.max_reps is not None or args.time_budget is not None:
            return "--max-reps and --time-budget go with --reps auto"
        return None
    if args.executor != "local":
        return "--reps auto runs rounds locally; with --executor slurm give --reps N"
    # --reproduce is refused before this (testbed/cli.py): it never reaches the matrix runner.
    if args.cross_validate or args.interactive:
        return "--reps auto goes with a matrix run (not --cross-validate, --interactive)"
    if args.max_reps is None:
        args.max_reps = DEFAULT_MAX_REPS
    return None


def main(args: argparse.Namespace, argv: list[str] | None, repo: Path, caps: dict) -> int:
    """`_main`'s branch for --reps auto; exit 2 on options that cannot run."""
    import os

    from testbed import matrix
    from testbed.cpusets import CpuPlanError
    from testbed.plan import UsageError, local_jobs

    problem = check_options(args)
    if problem:
        print(f"run_trials.sh: {problem}", file=sys.stderr)
        return 2

    def specs_for_reps(reps: int) -> list[TrialSpec]:
        from testbed.plan import default_specs

        return default_specs(argparse.Namespace(**{**vars(args), "reps": reps}), repo, caps)

    try:
        first = specs_for_reps(1)
        if args.engine != "sim":
            args.jobs = local_jobs(args.jobs, first)
    except (UsageError, CpuPlanError) as exc:
        print(f"run_trials.sh: {exc}", file=sys.stderr)
        return 2
    if args.engine != "sim" and not args.dry_run and os.geteuid() != 0:
        print("run_trials.sh: needs root (network namespaces, iptables, chrt)", file=sys.stderr)
        return 2

    def run_dir_for(specs: list[TrialSpec]) -> Path:
        return matrix.run_dir_for(args.out, specs, repo)

    def run_round(specs: list[TrialSpec], run_dir: Path, report: bool) -> int:
        if args.engine == "sim":
            from testbed import engine_sim
            from testbed.cpusets import cpu_count

            words = argv if argv is not None else sys.argv[1:]
            jobs_given = any(w == "--jobs" or w.startswith("--jobs=") for w in words)
            jobs = args.jobs if jobs_given and args.jobs else cpu_count()
            return engine_sim.run_sim_matrix(
                specs, run_dir, repo, jobs=jobs, argv=argv, report=report
            )
        return matrix.run_matrix(
            specs,
            run_dir,
            repo,
            jobs=args.jobs or 1,
            timeout_s=args.timeout,
            argv=argv,
            report=report,
        )

    if args.dry_run:
        from metrics.reps_auto import FIRST_ROUND_REPS

        specs = specs_for_reps(args.max_reps)
        print(
            f"--reps auto: rounds of {FIRST_ROUND_REPS} to {args.max_reps} repetitions of "
            f"{len(first)} cell(s), {len(specs)} trials at most"
        )
        return 0
    return run(args, specs_for_reps, run_dir_for, run_round)
