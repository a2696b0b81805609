# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""`./run_trials.sh --reproduce SEED`: re-run a seed paper's experiments, claim by claim.

A thin layer over the simulator and the plan layer (testbed/plan.py). Each claim runs `mpsim` (one JSON
object per transfer), a `cargo test` binary of `transport/tests/` (whose assertions encode
the claim; with `REPRO_OUT` set, its figures arrive as JSON lines, `mptransport::report`),
or, for seed 002, the matrix itself (`--engine sim`, then its summary.csv). It writes
`docs/reproductions/<seed>.md` and a copy into `results/reproduce-<seed>-<UTC stamp>/`.
Verdicts are computed from the measured figures by the rule printed beside each claim;
nothing is tuned to match a paper.

Options of the matrix runner that still apply: `--reps N` (repetitions, i.e. seeds, of every
simulated point or matrix cell), `--engine sim|emulate` (sim: the simulated experiments and
the page; emulate: the emulated cross-checks and seed 002's emulated cells, in real time),
`--dry-run` (print what would run), `--jobs`, `--executor slurm` (emulated seed-002 cells),
`--video-duration` (seed 002's clip: the simulated matrix's, or with `--engine emulate` the
emulated subset's), and `--from RUN[,RUN]` (build the page from existing run folders instead
of running them; `--reproduce seed002 --engine emulate --from RUN[,RUN]` selects the emulated
subset's cells from runs that may hold more, names the runs they came from and lists the
missing cells). Combinations that mean nothing exit 2 naming them. After writing pages it
regenerates README's table of verdicts from docs/reproductions/ (`readme_table`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType

from testbed import rust_build
from testbed.reproduce import fingerprint, seed000, seed001, seed002, seed003, seed004
from testbed.reproduce.base import (
    SEED002_EMULATED_VIDEO_S,
    SEED002_VIDEO_S,
    Options,
    ReproduceUsageError,
    Runner,
    cpu_s,
    run_engine,
    shown,
)
from testbed.reproduce.crosscheck import (
    CROSSCHECKS,
    NO_CROSSCHECK,
    crosscheck_plan,
    crosscheck_section,
    run_crosscheck,
)
from testbed.reproduce.readme import update_readme
from testbed.reproduce.seed002_matrix import run_matrix, seed002_matrix

# The registry: one module per paper, each with DEFAULT_REPS (repetitions, i.e. seeds, per
# simulated point when --reps is not given), build(Runner) -> Page and, if its experiments
# are transport tests with a fixed seed, FIXED_SEED = True. Adding a paper = its module and
# one line here.
PAPERS: dict[str, ModuleType] = {
    "seed000": seed000,
    "seed001": seed001,
    "seed002": seed002,
    "seed003": seed003,
    "seed004": seed004,
}
SEEDS = tuple(PAPERS)


def fixed_seed(seed: str) -> bool:
    """Whether every experiment of the paper fixes its seed (so --reps cannot apply)."""
    return bool(getattr(PAPERS[seed], "FIXED_SEED", False))


def reps_of(seed: str, opts: Options) -> int:
    """Repetitions of the paper's simulated points and cross-check transfers."""
    return 1 if fixed_seed(seed) else opts.reps_or(PAPERS[seed].DEFAULT_REPS)


def inputs_of(seed: str) -> tuple[str, ...]:
    """The files the paper's simulated part depends on (its fingerprint, fingerprint.py)."""
    return fingerprint.page_inputs(seed, getattr(PAPERS[seed], "FINGERPRINT_INPUTS", ()))


# Options of run_trials.sh that --reproduce fixes itself (the seed defines the matrix) or that
# select another mode: giving them with --reproduce exits 2.
_REFUSED = {
    "--scenario": "the seed fixes its scenarios",
    "--transport": "the seed fixes its transport",
    "--cc": "the seed fixes its congestion controls",
    "--sched": "the seed fixes its schedulers",
    "--player": "the seed fixes its player",
    "--interactive": "--interactive plays one cell by hand",
    "--trial-id": "--trial-id runs one trial of an existing run",
    "--report": "--report rebuilds a run's report; use --from RUN to build a page from a run",
    "--cross-validate": "the emulated cross-checks of --reproduce are --engine emulate",
    "--list": "--list only lists",
    "--sched-trace": "the reproduction pages do not read scheduler traces",
    "--video-mode": "seed 002 is reproduced in VOD mode only (the simulator's player has no live mode)",
}


def options_from_args(args: argparse.Namespace, argv: list[str] | None) -> Options:
    """The --reproduce options from run_trials.sh's arguments; ReproduceUsageError names the
    combination that makes no sense."""
    words = argv if argv is not None else sys.argv[1:]
    given = {w.split("=", 1)[0] for w in words if w.startswith("--")}
    which = args.reproduce
    for option, why in _REFUSED.items():
        if option in given:
            raise ReproduceUsageError(f"--reproduce {which} with {option}: {why}; leave it out")
    seeds = list(SEEDS) if which == "all" else [which]
    # run_trials.sh's own default engine is emulate; a reproduction's is the simulator.
    engine = args.engine if "--engine" in given else "sim"
    reps = args.reps if "--reps" in given else None
    from_runs = tuple(Path(p) for p in (args.reproduce_from or []))
    if from_runs and which == "all":
        raise ReproduceUsageError("--reproduce all with --from: a run folder belongs to one seed")
    if from_runs and (reps is not None or args.dry_run or engine == "sim" and "--engine" in given):
        raise ReproduceUsageError(
            "--from with --reps, --dry-run or --engine sim: a run folder already fixes them; "
            "--from only builds the page (--engine emulate --from: its emulated part from them)"
        )
    # A folder of run folders (e.g. studies/seed002) stands for the runs in it.
    from_runs = tuple(
        child
        for run in from_runs
        for child in (
            [run]
            if run_engine(run) != "unknown" or not run.is_dir()
            else sorted(p for p in run.iterdir() if run_engine(p) != "unknown") or [run]
        )
    )
    # The same folder given twice (or spelt two ways) counts once.
    unique: dict[Path, Path] = {}
    for run in from_runs:
        unique.setdefault(run.resolve(), run)
    from_runs = tuple(unique.values())
    for run in from_runs:
        if not run.is_dir():
            raise ReproduceUsageError(f"--from {run}: no such run folder")
        kind = run_engine(run)
        if kind == "unknown":
            raise ReproduceUsageError(
                f"--from {run}: neither a matrix run (run.json) nor a cross-check run "
                "(crosscheck.jsonl)"
            )
        if which != "seed002" and kind != "crosscheck":
            raise ReproduceUsageError(
                f"--from {run}: a {kind} matrix run; only seed002's page reads matrix runs, "
                f"{which}'s reads a cross-check run (crosscheck.jsonl)"
            )
    if reps is not None and all(fixed_seed(s) for s in seeds):
        raise ReproduceUsageError(
            f"--reproduce {which} with --reps: its experiments are transport tests with a fixed "
            "seed (the simulator is deterministic), so there is nothing to repeat"
        )
    if "--video-duration" in given and "seed002" not in seeds:
        raise ReproduceUsageError(
            f"--reproduce {which} with --video-duration: only seed002 plays video"
        )
    if args.executor == "slurm" and (engine != "emulate" or seeds != ["seed002"]):
        raise ReproduceUsageError(
            "--reproduce with --executor slurm: only seed002's emulated cells are matrix "
            "trials (--reproduce seed002 --engine emulate --executor slurm)"
        )
    if engine == "emulate" and not args.dry_run and not from_runs and os.geteuid() != 0:
        raise ReproduceUsageError(
            f"--reproduce {which} --engine emulate: needs root (network namespaces); "
            "--dry-run shows the plan without it"
        )
    if args.dry_run and engine == "sim" and which != "seed002":
        raise ReproduceUsageError(
            f"--reproduce {which} --dry-run: only seed002's simulated part is a matrix with a "
            "plan to print; --dry-run goes with --engine emulate (the cross-checks) or seed002"
        )
    return Options(
        engine=engine,
        reps=reps,
        dry_run=args.dry_run,
        from_runs=from_runs,
        # --video-duration sets the clip of the part that runs (or, with --engine emulate
        # --from, the clip whose emulated trials are selected).
        video_duration_s=args.video_duration
        if "--video-duration" in given and engine == "sim"
        else SEED002_VIDEO_S,
        emulated_video_s=args.video_duration
        if "--video-duration" in given and engine == "emulate"
        else SEED002_EMULATED_VIDEO_S,
        jobs=args.jobs if "--jobs" in given else None,
        executor=args.executor,
        slurm_opts=tuple(args.slurm_opt or ()),
    )


def _command(seed: str, opts: Options) -> str:
    words = ["./run_trials.sh", "--reproduce", seed]
    if opts.engine == "emulate" and opts.from_runs:
        words += ["--engine", "emulate"]
    if opts.reps is not None:
        words += ["--reps", str(opts.reps)]
    if seed == "seed002" and opts.video_duration_s != SEED002_VIDEO_S:
        words += ["--video-duration", str(opts.video_duration_s)]
    if seed == "seed002" and opts.emulated_video_s != SEED002_EMULATED_VIDEO_S:
        words += ["--video-duration", str(opts.emulated_video_s)]
    if opts.from_runs:
        words += ["--from", ",".join(str(p) for p in opts.from_runs)]
    return " ".join(words)


def _emulate(seeds: list[str], opts: Options, repo: Path, stamp: str) -> int:
    """`--engine emulate`: the emulated parts (cross-checks; seed 002's emulated cells) into
    their own run folders; the pages are rebuilt from them with --from."""
    status = 0
    for seed in seeds:
        run_dir = repo / "results" / f"reproduce-{seed}-emulate-{stamp}"
        if seed == "seed002":
            print(f"{seed}: emulated cells", flush=True)
            code = run_matrix(seed002_matrix(opts, run_dir, emulated=True), repo)
            status = max(status, code)
        elif seed in NO_CROSSCHECK:
            print(f"{seed}: no emulated cross-check: {NO_CROSSCHECK[seed]}")
            continue
        else:
            reps = reps_of(seed, opts)
            plan = crosscheck_plan(seed, reps, shown(run_dir, repo))
            print(f"{seed}: {len(plan)} emulated bulk transfers into {run_dir}:")
            for line in plan:
                print(f"  {line}")
            if not opts.dry_run:
                run_dir.mkdir(parents=True, exist_ok=True)
                run_crosscheck(seed, reps, run_dir, repo)
        if not opts.dry_run:
            print(f"then: ./run_trials.sh --reproduce {seed} "
                  + ("--engine emulate " if seed == "seed002" else "") + f"--from {run_dir}")  # fmt: skip
    return status


def reproduce(which: str, repo: Path, opts: Options | None = None) -> int:
    opts = opts or Options()
    seeds = list(SEEDS) if which == "all" else [which]
    if any(s not in SEEDS for s in seeds):
        print(
            f"run_trials.sh: --reproduce '{which}': valid are {', '.join(SEEDS)}, all",
            file=sys.stderr,
        )
        return 2
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    if opts.engine == "emulate" and not opts.from_runs:
        return _emulate(seeds, opts, repo, stamp)
    if opts.dry_run:  # seed002 only (options_from_args): the simulated matrix's plan
        return run_matrix(
            seed002_matrix(
                opts, repo / "results" / f"reproduce-seed002-{stamp}" / "sim", emulated=False
            ),
            repo,
        )
    # Pages that run the simulator build it first, as every run does (testbed/rust_build.py);
    # seed 002's page read from archived runs runs nothing.
    needs_build = not (seeds == ["seed002"] and opts.runs_of_engine("sim"))
    if needs_build and (problem := rust_build.ensure_built(repo)) is not None:
        print(f"run_trials.sh --reproduce: {problem}", file=sys.stderr)
        return 1
    timings = []
    for seed in seeds:
        run_dir = repo / "results" / f"reproduce-{seed}-{stamp}"
        run_dir.mkdir(parents=True, exist_ok=True)
        print(f"reproducing {seed} into {run_dir}", flush=True)
        if opts.reps is not None and fixed_seed(seed):
            print(f"  {seed}: --reps does not apply (its tests fix their seed)", file=sys.stderr)
        runner = Runner(repo, opts, run_dir)
        t0, c0 = time.monotonic(), cpu_s()
        page = PAPERS[seed].build(runner)
        if not page.emulated and seed in CROSSCHECKS:
            page.emulated = crosscheck_section(seed, runner, reps_of(seed, opts))
        page.commands = runner.commands
        wall, cpu = time.monotonic() - t0, cpu_s() - c0
        docs = repo / "docs" / "reproductions"
        docs.mkdir(parents=True, exist_ok=True)
        inputs = inputs_of(seed)
        page.fingerprint = fingerprint.record(repo, docs, seed, inputs)
        text = page.markdown(wall, _command(seed, opts), cpu)
        (docs / f"{seed}.md").write_text(text)
        (run_dir / f"{seed}.md").write_text(text)
        (run_dir / "timing.json").write_text(
            json.dumps({"seed": seed, "wall_s": wall, "cpu_s": cpu})
        )
        timings.append((seed, wall, cpu))
        for c in page.claims:
            print(f"  {c.verdict:>15}: {c.name}")
    for seed, wall, cpu in timings:
        print(f"{seed}: wall {wall:.0f} s, CPU {cpu:.0f} s -> docs/reproductions/{seed}.md")
    if update_readme(repo):
        print("README.md: table of verdicts regenerated from docs/reproductions/")
    return 0


def main(args: argparse.Namespace, argv: list[str] | None, repo: Path) -> int:
    """run_trials.sh's entry for --reproduce: options checked (exit 2 naming a combination
    that means nothing), then `reproduce`."""
    try:
        opts = options_from_args(args, argv)
    except ReproduceUsageError as exc:
        print(f"run_trials.sh: {exc}", file=sys.stderr)
        return 2
    return reproduce(args.reproduce, repo, opts)
