# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""`./run_trials.sh --reproduce SEED`: re-run a seed paper's experiments, claim by claim.

A thin layer over the simulator and the matrix runner. Each claim runs `mpsim` (one JSON
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
import resource
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported where it is used (the simulated seeds do not need it)
    import pandas as pd

SEEDS = ("seed000", "seed001", "seed002", "seed003", "seed004")
REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_RUN = (
    "reproduced",
    "partly",
    "not reproduced",
    "not yet run",
)
# Repetitions (seeds) per simulated point when --reps is not given.
DEFAULT_REPS = {"seed000": 1, "seed001": 1, "seed002": 3, "seed003": 3, "seed004": 2}
# Seeds whose every experiment is a transport test with its seed fixed in the test: --reps
# cannot apply to them.
FIXED_SEED_ONLY = ("seed000",)
SEED002_VIDEO_S = 180  # the paper's playout time (Table I: 3 min)
# The emulated subset's clip: 60 s, so that its trials fit one session (seed002_subset_text).
SEED002_EMULATED_VIDEO_S = 60
MATRIX_TIMING = "reproduce-timing.json"  # wall and CPU time of a matrix run --reproduce made


class ReproduceUsageError(Exception):
    """An option combination that means nothing for --reproduce. Exit status 2."""


def _scheduling_note() -> str:
    """How this process was scheduled, for the page's timing line: wall time means little when
    the reproduction ran at idle priority beside other work, CPU time still compares."""
    idle = hasattr(os, "SCHED_IDLE") and os.sched_getscheduler(0) == os.SCHED_IDLE
    nice = os.nice(0)
    if idle or nice > 0:
        policy = "SCHED_IDLE" if idle else "normal scheduling"
        return f"it ran at low priority ({policy}, nice {nice}), so the CPU time is the figure to compare"
    return "it ran at normal priority"


@dataclass
class Options:
    engine: str = "sim"
    reps: int | None = None  # None: each seed's default (DEFAULT_REPS)
    dry_run: bool = False
    from_runs: tuple[Path, ...] = ()
    video_duration_s: int = SEED002_VIDEO_S  # the simulated matrix's clip
    emulated_video_s: int = SEED002_EMULATED_VIDEO_S  # the emulated subset's clip
    jobs: int | None = None
    executor: str = "local"
    slurm_opts: tuple[str, ...] = ()

    def reps_for(self, seed: str) -> int:
        return self.reps if self.reps is not None else DEFAULT_REPS[seed]

    def runs_of_engine(self, engine: str) -> list[Path]:
        return [r for r in self.from_runs if run_engine(r) == engine]


def run_engine(run_dir: Path) -> str:
    """`sim` or `emulate` for a matrix run folder (run.json), `crosscheck` for the emulated
    bulk cross-check folder this module writes."""
    if (run_dir / "crosscheck.jsonl").is_file():
        return "crosscheck"
    try:
        manifest = json.loads((run_dir / "run.json").read_text())
    except (OSError, ValueError):
        return "unknown"
    return "sim" if manifest.get("engine") == "sim" else "emulate"


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
    if reps is not None and all(s in FIXED_SEED_ONLY for s in seeds):
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


@dataclass
class Claim:
    name: str
    paper: str
    ours: str
    verdict: str
    why: str = ""


@dataclass
class Page:
    seed: str
    title: str
    setup: str
    open_params: list[tuple[str, str, str]] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    extra: str = ""
    extra_notes: list[str] = field(default_factory=list)
    emulated: str = ""  # the emulated cross-check section (subset, command, status/results)
    reps_note: str = ""

    def markdown(self, wall_s: float, command: str, cpu_s: float | None = None) -> str:
        lines = [f"# Reproduction: {self.title}", "", self.setup.strip(), ""]
        timing = f"Wall time on this machine: {wall_s:.0f} s"
        if cpu_s is not None:
            timing += (
                f" ({wall_s / 60:.1f} min); CPU time (user + sys, this process and its "
                f"children): {cpu_s:.0f} s; {_scheduling_note()}"
            )
        lines += [f"Command: `{command}`  ", timing + ".", ""]
        if self.reps_note:
            lines += [self.reps_note, ""]
        lines += [
            "## Verdicts",
            "",
            "| claim | paper | this testbed | verdict |",
            "|---|---|---|---|",
        ]
        for c in self.claims:
            lines.append(f"| {c.name} | {c.paper} | {c.ours} | **{c.verdict}** |")
        lines += ["", "## Likely reasons for differences", ""]
        lines += [f"* **{c.name}**: {c.why}" for c in self.claims if c.why]
        if self.extra:
            lines += ["", "## Figures", "", self.extra]
            lines += [""] + [f"* {n}" for n in self.extra_notes]
        if self.emulated:
            lines += ["", "## Emulated cross-check", "", self.emulated.strip()]
        if self.open_params:
            lines += [
                "",
                "## Parameters the paper leaves open",
                "",
                "| parameter | value used | why |",
                "|---|---|---|",
            ]
            lines += [f"| {p} | {v} | {w} |" for p, v, w in self.open_params]
        if self.commands:
            lines += ["", "## Underlying commands", ""]
            lines += [f"* `{c}`" for c in self.commands]
        return "\n".join(lines) + "\n"


class Runner:
    def __init__(self, repo: Path, opts: Options, run_dir: Path) -> None:
        self.repo = repo
        self.opts = opts
        self.run_dir = run_dir
        self.transport = repo / "transport"
        self.env = {**os.environ, "CARGO_BUILD_JOBS": os.environ.get("CARGO_BUILD_JOBS", "1")}
        self.commands: list[str] = []
        self._n_tests = 0

    def mpsim(self, *args: str, record: bool = True) -> dict:
        """One mpsim run; `record=False` leaves it out of the page's underlying commands (a
        seed sweep the caller records as one loop instead)."""
        binary = self.transport / "target/release/mpsim"
        cmd = [str(binary), *args]
        if record:
            self.commands.append("transport/target/release/mpsim " + shlex.join(args))
        out = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if out.returncode == 2:
            raise RuntimeError(f"mpsim {shlex.join(args)}: {out.stderr.strip()}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  mpsim {shlex.join(args)} -> {result.get('goodput_bps')}", flush=True)
        return result

    def cargo_test(
        self, test: str, filt: str = "", ignored: bool = False, env: dict[str, str] | None = None
    ) -> tuple[bool, list[dict]]:
        """Runs one test binary (optionally filtered) with REPRO_OUT set; returns whether it
        passed and the figures it emitted (`{"figure": ..., "value": {...}}` lines)."""
        args = ["cargo", "test", "--release", "--locked", "--test", test]
        args += [filt] if filt else []
        args += ["--", "--nocapture", "--test-threads", "1"] + (["--ignored"] if ignored else [])
        shown = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        self.commands.append(f"(cd transport && {shown + ' ' if shown else ''}{shlex.join(args)})")
        print(f"  {self.commands[-1]}", flush=True)
        self._n_tests += 1
        out_file = self.run_dir / f"figures-{self._n_tests:02d}-{test}.jsonl"
        out_file.unlink(missing_ok=True)
        done = subprocess.run(
            args,
            cwd=self.transport,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {}), "REPRO_OUT": str(out_file)},
        )
        (self.run_dir / f"figures-{self._n_tests:02d}-{test}.log").write_text(
            done.stdout + done.stderr
        )
        figures = []
        if out_file.is_file():
            figures = [json.loads(ln) for ln in out_file.read_text().splitlines() if ln.strip()]
        return done.returncode == 0, figures


def values(figures: list[dict], name: str) -> list[dict]:
    return [f["value"] for f in figures if f.get("figure") == name]


def mbps(r: dict) -> float:
    return (r.get("goodput_bps") or 0.0) / 1e6


def median(v: list[float]) -> float:
    return statistics.median(v) if v else float("nan")


def passfail(ok: bool) -> str:
    return "pass" if ok else "FAIL"


# --- emulated bulk cross-checks (seeds 000, 001, 004) -----------------------------------------


@dataclass(frozen=True)
class BulkPoint:
    """One point of a simulated sweep, run as an emulated bulk transfer through mpproxy (the
    transport benchmark's harness, transport/bench/bench.py) and as the same transfer in mpsim.
    Paths: (name, Mbit/s, one-way ms, loss, queue bytes); names are the topology's wifi/lte.

    Both engines read one scenario file (`crosscheck_scenario`): mpsim's `--scenario` seeds
    each link as linkemu does (trial seed, link index), so for the same seed both draw the
    same random losses for the same packets, which `--path` links (seeded from mpsim's own
    generator) do not. `spread_seeds` > 0 also simulates seeds 1..N: the spread over loss
    draws, for a point whose outcome hinges on where a few random losses fall; `note` says
    why on the page."""

    label: str
    paths: tuple[tuple[str, float, float, float, int], ...]
    ccs: tuple[str, ...]
    sched: str
    nbytes: int
    spread_seeds: int = 0
    note: str = ""

    def mpsim_args(self, cc: str, seed: int, scenario: str) -> list[str]:
        """The simulated twin of one transfer; `scenario` is the point's scenario file."""
        return ["--scenario", scenario, "--bytes", str(self.nbytes), "--cc", cc,
                "--sched", self.sched, "--seed", str(seed)]  # fmt: skip

    def bench_links(self) -> tuple[str, str]:
        def link(rate: float, delay: float, loss: float, queue: int) -> str:
            lines = [f"rate = {{ bps = {int(rate * 1e6)} }}", f"delay_ms = {delay}",
                     f"queue = {{ bytes = {queue} }}"]  # fmt: skip
            if loss:
                lines.append(f'loss = {{ model = "bernoulli", p = {loss} }}')
            return "\n".join(lines)

        by_name = {p[0]: link(*p[1:]) for p in self.paths}
        return by_name["wifi"], by_name["lte"]


def bdp(mbit_s: float, one_way_ms: float) -> int:
    return int(mbit_s * 1e6 / 8 * 2 * one_way_ms / 1e3)


CROSSCHECKS: dict[str, tuple[str, list[BulkPoint]]] = {
    "seed000": (
        "the asymmetric-RTT point of the AR&P claims (20 Mbit/s both paths, one-way 25 vs 75 ms, "
        "bbr, 20 MB, lrf and arp): download time on both engines. Table I and Coupled BBR at a "
        "shared bottleneck are not cross-checked: the emulated bulk harness has no cross "
        "traffic, and the matrix's cross-traffic scenarios (`seed000-table1-*.toml`) carry "
        "video, which is application-limited far below 100 Mbit/s",
        [
            BulkPoint(
                "asym-rtt 25/75 ms, lrf",
                (("wifi", 20, 25, 0, bdp(20, 25)), ("lte", 20, 75, 0, bdp(20, 75))),
                ("bbr",),
                "lrf",
                20_000_000,
            ),
            BulkPoint(
                "asym-rtt 25/75 ms, arp",
                (("wifi", 20, 25, 0, bdp(20, 25)), ("lte", 20, 75, 0, bdp(20, 75))),
                ("bbr",),
                "arp",
                20_000_000,
                note="One emulated transfer per scheduler: it compares the two engines on one "
                "run, not AR&P's modes; the simulated verdicts above read 20 seeds of ACK jitter, "
                "where arp's download time depends on whether LTE joins AR's set N (Figures).",
            ),
        ],
    ),
    "seed001": (
        "three points of the 49-point grid (RTT 50 ms reading), the corners and the middle: "
        "1e-5/1e-5, 1e-3/1e-2 and 5e-2/5e-2 loss, mpbbr (`bbr`) and BALIA, 20 MB each, one-BDP "
        "queues: goodput on both engines",
        [
            BulkPoint(
                f"loss {a:g}/{b:g}",
                (("wifi", 100, 25, a, bdp(100, 25)), ("lte", 100, 25, b, bdp(100, 25))),
                ("bbr", "balia"),
                "lrf",
                20_000_000,
            )
            for a, b in ((1e-5, 1e-5), (1e-3, 1e-2), (5e-2, 5e-2))
        ],
    ),
    "seed004": (
        "the high-BDP pair scaled down by 5 so that the emulator and the user-space proxy keep "
        "up on this machine (100 Mbit/s × 100 ms RTT and 20 Mbit/s × 20 ms RTT, 0.01 % loss, "
        "one-BDP queues), LIA, MPCubic and HBDP, 50 MB each: goodput on both engines (the "
        "simulated side is run at the same scaled point, so the comparison is like for like)",
        [
            BulkPoint(
                "scaled high-BDP pair",
                (("wifi", 100, 50, 1e-4, bdp(100, 50)), ("lte", 20, 10, 1e-4, bdp(20, 10))),
                ("lia", "mpcubic", "hbdp"),
                "lrf",
                50_000_000,
                spread_seeds=20,
                note="At this point the outcome hinges on where a few random losses fall: "
                "the 100 ms path's slow start sends several thousand packets before its "
                "one-BDP queue overflows, so at 0.01 % a random loss often falls inside it. "
                "One early in slow start halves the window far below the path's BDP, and a "
                "50 MB transfer ends before the window grows back (LIA adds about one packet "
                "per 100 ms round trip); one near the end of slow start, or none, leaves both "
                "links full from about 1 s on. Across seeds the goodput therefore spreads "
                "wide (the last column), and two seeds compare the engines only when both "
                "draw the same losses (the per-seed pairs).",
            ),
        ],
    ),
}
NO_CROSSCHECK = {
    "seed003": "none: every seed-003 experiment has a single-path Reno flow sharing x12's link "
    "(cross traffic), which the emulated bulk harness does not have, and the matrix's "
    "cross-traffic scenarios carry video, not bulk data. An emulated seed-003 check needs a "
    "bulk mode for the matrix's user transport (not built)",
}


def crosscheck_scenario(repo: Path, seed: str, index: int, directory: Path) -> Path:
    """Writes point `index`'s scenario file into `directory`: the text the bulk harness
    gives linkemu for it (testbed/bulk.py scenario_toml, same name), which the simulated twin
    reads."""
    from testbed import bulk

    p = CROSSCHECKS[seed][1][index]
    path = directory / f"{seed}-xc{index}.toml"
    path.write_text(bulk.scenario_toml(f"{seed}-xc{index}", p.bench_links()))
    return path


def crosscheck_plan(seed: str, reps: int, scenario_dir: Path) -> list[str]:
    """What `--engine emulate` runs, each transfer with its simulated twin (its scenario file
    in `scenario_dir`, written by the run)."""
    _, points = CROSSCHECKS[seed]
    return [
        f"{p.label}: {cc} × {p.sched}, {p.nbytes / 1e6:g} MB, emulator seed {rep + 1}; "
        f"simulated twin: mpsim "
        f"{shlex.join(p.mpsim_args(cc, rep + 1, str(scenario_dir / f'{seed}-xc{i}.toml')))}"
        for i, p in enumerate(points)
        for cc in p.ccs
        for rep in range(reps)
    ]


def run_crosscheck(seed: str, reps: int, run_dir: Path, repo: Path) -> Path:
    """Runs the seed's emulated bulk points (real time, root); one JSON line per transfer in
    RUN/crosscheck.jsonl, each point's scenario file beside it. Every transfer gets a fresh
    emulator, so its links' loss draws start at the seed's first, as in its simulated twin
    (sharing one emulator, a later transfer would continue the earlier one's draws)."""
    from testbed import bulk

    out = run_dir / "crosscheck.jsonl"
    _, points = CROSSCHECKS[seed]
    for i, p in enumerate(points):
        crosscheck_scenario(repo, seed, i, run_dir)
        for rep in range(reps):
            for cc in p.ccs:
                links = p.bench_links()
                with bulk.emulated(f"{seed}-xc{i}", rep + 1, links) as (topo, workdir, t0):
                    row = bulk.run_user(topo, workdir, t0, cc, p.sched, ["wifi", "lte"],
                                         p.nbytes, f"{seed}x{i}{cc}{rep}")  # fmt: skip
                row = {"point": p.label, "rep": rep, "seed": rep + 1, "fresh_emulator": True,
                       **row}  # fmt: skip
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(f"  {p.label} {cc}: {mbps(row):.2f} Mbit/s", flush=True)
    return out


def _same_loss_draws(row: dict, point: BulkPoint) -> bool:
    """Whether an emulated transfer drew its losses from its emulator seed's start, as its
    simulated twin does: rows say so (`fresh_emulator`); runs made before that field shared
    one emulator per point and seed, running the CCs in order, so only the first CC's did."""
    return bool(row.get("fresh_emulator", row.get("cc") == point.ccs[0]))


def _spread(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"{median(values):.1f} (IQR {q[0]:.1f}–{q[2]:.1f}, range {min(values):.1f}–{max(values):.1f})"


def crosscheck_section(seed: str, r: Runner) -> str:
    """The page's emulated cross-check: the subset, its command, and either "not run" or the
    two engines side by side (from --from RUN)."""
    command = f"./run_trials.sh --reproduce {seed} --engine emulate"
    if seed in NO_CROSSCHECK:
        return f"Subset: {NO_CROSSCHECK[seed]}."
    what, points = CROSSCHECKS[seed]
    reps = r.opts.reps_for(seed) if seed != "seed000" else 1
    lines = [
        f"Subset: {what}.",
        "",
        f"Command (real time, root, a quiet machine): `{command}` (`--dry-run` lists the "
        f"transfers; then `./run_trials.sh --reproduce {seed} --from results/<its run>` "
        "rebuilds this page with both engines side by side). The emulated side moves the bytes "
        "through mpproxy over linkemu (transport/bench/bench.py's harness), a fresh emulator per "
        "transfer; the simulated side is mpsim on the same scenario file (`mpsim --scenario`, "
        "written into this page's run folder), bytes and seeds, so its links draw linkemu's "
        "random losses for the same seed, packet for packet (`mpsim --path` links are seeded "
        "from mpsim's own generator and draw others).",
        "",
    ]
    runs = r.opts.runs_of_engine("crosscheck")
    if not runs:
        lines.append(
            f"**Not run in this session** ({len(points)} point(s), {sum(len(p.ccs) for p in points) * reps} "
            "transfers). Run the command above on a quiet machine: with other work competing "
            "for the CPU the user-space proxy falls behind and the emulated figures are not "
            "valid."
        )
        return "\n".join(lines)
    rows = [
        json.loads(ln)
        for run in runs
        for ln in (run / "crosscheck.jsonl").read_text().splitlines()
        if ln.strip()
    ]
    spread = any(p.spread_seeds for p in points)
    table = ["| point | CC | emulated Mbit/s (median) | simulated Mbit/s (median) | sim/emulated "
             "| per seed: emulated / simulated |" + (" simulated, seeds 1–N: median (IQR, range) |" if spread else ""),
             "|---|---|---|---|---|---|" + ("---|" if spread else "")]  # fmt: skip
    ratios, notes, unmatched = [], [], False
    for i, p in enumerate(points):
        scenario = str(_shown(crosscheck_scenario(r.repo, seed, i, r.run_dir), r.repo))
        notes += [p.note] if p.note else []
        seeds = sorted({int(x.get("seed", 1)) for x in rows if x.get("point") == p.label})
        for cc in p.ccs:
            mine = sorted((x for x in rows if x.get("point") == p.label and x.get("cc") == cc),
                          key=lambda x: int(x.get("seed", 1)))  # fmt: skip
            emu = [mbps(x) for x in mine]
            sim = {s: mbps(r.mpsim(*p.mpsim_args(cc, s, scenario))) for s in seeds}
            sim_median = median(list(sim.values()))
            ratio = sim_median / median(emu) if emu and median(emu) > 0 else float("nan")
            ratios.append(ratio)
            pairs = []
            for x in mine:
                same = _same_loss_draws(x, p)
                unmatched |= not same
                s = int(x.get("seed", 1))
                pairs.append(f"{s}: {mbps(x):.1f} / {sim[s]:.1f}{'' if same else '*'}")
            row = (f"| {p.label} | {cc} | {median(emu):.2f} (n={len(emu)}) | {sim_median:.2f} | "
                   f"{ratio:.2f} | {'; '.join(pairs)} |")  # fmt: skip
            if p.spread_seeds:
                sweep = range(1, p.spread_seeds + 1)
                more = {s: mbps(r.mpsim(*p.mpsim_args(cc, s, scenario), record=False))
                        for s in sweep if s not in sim}  # fmt: skip
                every = {**sim, **more}
                r.commands.append(
                    f"for s in $(seq 1 {p.spread_seeds}); do transport/target/release/mpsim "
                    f"{shlex.join(p.mpsim_args(cc, 1, scenario)[:-2])} --seed $s; done"
                )
                row += f" {_spread([every[s] for s in sweep])}, N={p.spread_seeds} |"
            elif spread:
                row += " – |"
            table.append(row)
    agree = sum(1 for x in ratios if 0.85 <= x <= 1.15)
    lines += [f"Run folder(s): {', '.join(str(x) for x in runs)}.", "", *table, ""]
    if unmatched:
        lines += ["\\* this emulated transfer ran after another on the same emulator (runs made "
                  "before the harness started one emulator per transfer), so its loss draws "
                  "are not its twin's.", ""]  # fmt: skip
    lines += [f"Agreement (ours: simulated within ±15 % of emulated): {agree} of {len(ratios)} "
              "cells."]  # fmt: skip
    lines += ["", *notes] if notes else []
    return "\n".join(lines)


# --- seed 000 --------------------------------------------------------------------------------


SEED000_TABLE1 = {  # MPTCP, sf1, sf2, TCP per flow on p1, on p2, utilisation (paper's Table I)
    "bbr": (55.9, 30.7, 25.2, 31.9, 27.5, 0.88),
    "cubic": (35.1, 27.6, 7.5, 27.7, 8.5, 0.54),
    "lia": (20.3, 19.1, 1.2, 21.1, 1.1, 0.32),
    "olia": (19.9, 19.6, 0.3, 21.3, 1.0, 0.32),
    "balia": (20.9, 20.5, 0.6, 20.8, 1.2, 0.33),
}


def mathis_mbps(rtt_s: float, loss: float, mss_bytes: int = 1448) -> float:
    """Reno's throughput bound MSS/RTT · sqrt(3/2)/sqrt(p) (Mathis et al., CCR 1997), Mbit/s."""
    return mss_bytes * 8 / rtt_s * 1.22 / loss**0.5 / 1e6


def table1_verdict(got: float, want: float) -> str:
    err = abs(got - want) / want
    return REPRODUCED if err <= 0.25 else PARTLY if err <= 0.5 else NOT_REPRODUCED


# --- seed 000: AR&P under asymmetric RTT, over seeds -----------------------------------------

# The over-seeds metrics of `arp_over_seeds_on_asymmetric_rtt` (sched_scenarios.rs, its
# `arp_asymmetric_rtt_over_seeds` records), by the label the test gives them.
ARP_TIME, ARP_MAX, ARP_AFTER_2S, ARP_MEAN, ARP_AFTER_STARTUP, ARP_AFTER_3S = (
    "completion (s)",
    "max (kB)",
    "max after 2 s (kB)",
    "mean (kB)",
    "max after start-up (kB)",
    "max after 3 s (kB)",
)
# Per-seed fields of its `arp_asymmetric_rtt_seed` records, by the same label.
ARP_SEED_FIELD = {
    ARP_TIME: "completion_s",
    ARP_MAX: "ofo_max_bytes",
    ARP_AFTER_2S: "ofo_max_after_2s_bytes",
    ARP_MEAN: "ofo_mean_bytes",
    ARP_AFTER_STARTUP: "ofo_max_steady_bytes",
    ARP_AFTER_3S: "ofo_max_after_3s_bytes",
}
# The note under the page's AR&P table.
ARP_FIGURES_NOTE = (
    '"Over seeds" in docs/algorithms/arp.md has the same runs\' absolute figures, the set-up '
    "(fixed before the first run), the sensitivity to the jitter's size (at 0–3 ms the queue "
    "after start-up is no longer much shorter) and one jitter-free run dissected step by step."
)
# "Much shorter" (Fig. 11(b)) read as at most half of minRTT's (ours; the testbed's bar).
ARP_MUCH_SHORTER = 0.5
# AR&P's modes at RTT 50 vs 150 ms, by when the slow path (LTE) entered AR's set N for the
# last time, i.e. from when it carried new data for good (docs/algorithms/arp.md, "Over seeds").
ARP_MODE_EARLY, ARP_MODE_LATE, ARP_MODE_NEVER = (
    "LTE in N from its start-up on",
    "LTE in N for good only after start-up",
    "LTE never in N (copies only)",
)


def arp_mode(seed_record: dict) -> str:
    """The mode of one arp seed: whether LTE's final stretch in N began before the end of
    start-up (every subflow in PROBE_BW plus an SRTT), after it, or never."""
    since = seed_record.get("last_path_in_n_at_end_since_s")
    if since is None:
        return ARP_MODE_NEVER
    return ARP_MODE_EARLY if since <= seed_record["steady_from_s"] else ARP_MODE_LATE


def _seed_ratios(per_seed: list[dict], sched: str, field: str) -> dict[int, float]:
    """Per seed, `sched`'s figure over lrf's with the same seed."""
    lrf = {v["seed"]: v[field] for v in per_seed if v["sched"] == "lrf"}
    return {
        v["seed"]: v[field] / lrf[v["seed"]] if lrf[v["seed"]] else float("nan")
        for v in per_seed
        if v["sched"] == sched and v["seed"] in lrf
    }


def _ratio_text(rec: dict) -> str:
    return f"{rec['ratio_to_lrf_median']:.3f}× [{rec['ratio_to_lrf_min']:.3f}–{rec['ratio_to_lrf_max']:.3f}]"


def _seed_list(seeds: list[int]) -> str:
    return ", ".join(str(s) for s in sorted(seeds))


def arp_asymmetric_rtt_claims(
    over_seeds: list[dict], per_seed: list[dict], ok: bool
) -> tuple[list[Claim], str]:
    """Seed 000's two AR&P claims at RTT 50 vs 150 ms (Fig. 11), from the over-seeds records
    (median and range of the per-seed ratio arp / lrf) and the per-seed records (how many
    seeds show each mode), with the Figures table by mode. The verdicts follow the rules
    printed beside them; `ok` is whether the test's regression bounds held."""
    name_queue = (
        "AR&P vs minRTT under asymmetric RTT: out-of-order queue (Fig. 11, RTT 50 vs 150 ms)"
    )
    name_time = "AR&P vs minRTT under asymmetric RTT: download time (RTT 50 vs 150 ms)"
    paper_queue = (
        "Fig. 11(a): AR&P's average out-of-order queue is shorter than minRTT's and "
        "Round-Robin's once the RTTs differ; Fig. 11(b): 'In the first 2 seconds, all of the "
        "schedulers create long out-of-order queues because of startup ... After 2 seconds, "
        "AR&P scheduler keeps the out-of-order queue much shorter'"
    )
    paper_time = (
        "no download time for Fig. 11's runs; elsewhere 'AR&P further improves the goodput' "
        "over minRTT (Fig. 19(a), random networks)"
    )
    arp = {v["metric"]: v for v in over_seeds if v["sched"] == "arp"}
    rr = {v["metric"]: v for v in over_seeds if v["sched"] == "rr"}
    lrf = {v["metric"]: v for v in over_seeds if v["sched"] == "lrf"}
    arp_seeds = [v for v in per_seed if v["sched"] == "arp"]
    if not all(m in arp for m in ARP_SEED_FIELD) or not arp_seeds:
        failed = f"benchmark failed, no figures over seeds (test {passfail(ok)})"
        return [
            Claim(name_queue, paper_queue, failed, NOT_REPRODUCED),
            Claim(name_time, paper_time, failed, NOT_REPRODUCED),
        ], ""
    n = int(arp[ARP_TIME]["seeds"])
    jitter = arp[ARP_TIME]["ack_jitter_ms"]
    ratio = {m: _seed_ratios(per_seed, "arp", f) for m, f in ARP_SEED_FIELD.items()}
    modes = {s["seed"]: arp_mode(s) for s in arp_seeds}
    by_mode = {
        m: [s for s, k in modes.items() if k == m]
        for m in (ARP_MODE_EARLY, ARP_MODE_LATE, ARP_MODE_NEVER)
    }
    mode_counts = "; ".join(f"{m}: {len(seeds)}" for m, seeds in by_mode.items())
    bounds = f"the test's regression bounds over seeds: {passfail(ok)}"
    setup = f"over seeds 1–{n} (0–{jitter:g} ms ACK jitter), arp / lrf per seed, median [min–max]"

    # Out-of-order queue. Rule (ours): the mean shorter in every seed and the queue after
    # start-up at most half of lrf's in every seed = reproduced; both in the median = partly.
    mean_r, steady_r = ratio[ARP_MEAN], ratio[ARP_AFTER_STARTUP]
    mean_every = all(r < 1.0 for r in mean_r.values())
    steady_hits = [s for s, r in steady_r.items() if r <= ARP_MUCH_SHORTER]
    settled_hits = [s for s, r in ratio[ARP_AFTER_3S].items() if r <= ARP_MUCH_SHORTER]
    steady_median = arp[ARP_AFTER_STARTUP]["ratio_to_lrf_median"]
    if mean_every and len(steady_hits) == len(steady_r):
        verdict_queue = REPRODUCED
    elif arp[ARP_MEAN]["ratio_to_lrf_median"] < 1.0 and steady_median <= ARP_MUCH_SHORTER:
        verdict_queue = PARTLY
    else:
        verdict_queue = NOT_REPRODUCED
    misses = sorted(set(steady_r) - set(steady_hits))
    miss_text = (
        "; ".join(f"seed {s} ({modes.get(s, '?')}, {steady_r[s]:.2f}×)" for s in misses)
        if misses
        else "none"
    )
    ours_queue = "<br>".join(
        [
            setup + ":",
            f"mean (time-weighted) {_ratio_text(arp[ARP_MEAN])}, shorter in {sum(r < 1.0 for r in mean_r.values())} of {n} seeds",
            f"max after start-up {_ratio_text(arp[ARP_AFTER_STARTUP])}, ≤ {ARP_MUCH_SHORTER}× in {len(steady_hits)} of {n} seeds",
            f"max after 3 s {_ratio_text(arp[ARP_AFTER_3S])}, ≤ {ARP_MUCH_SHORTER}× in {len(settled_hits)} of {n} seeds",
            f"max after a fixed 2 s {_ratio_text(arp[ARP_AFTER_2S])}",
            f"overall max {_ratio_text(arp[ARP_MAX])}",
            (
                f"rr / lrf: mean {_ratio_text(rr[ARP_MEAN])}, max {_ratio_text(rr[ARP_MAX])}"
                if ARP_MEAN in rr and ARP_MAX in rr
                else "rr: not in the records"
            ),
            bounds,
        ]
    )
    why_queue = (
        f"rule (ours): the mean shorter than lrf's and the maximum after start-up ≤ {ARP_MUCH_SHORTER}× lrf's "
        "('much shorter') in every seed = reproduced, both in the median over seeds = partly. "
        f"Seeds above {ARP_MUCH_SHORTER}× after start-up: {miss_text}. "
        "'After start-up' (every subflow in BBR's PROBE_BW, plus an SRTT) is the paper's own reason "
        "for the first 2 s; read at a fixed 2 s the claim fails "
        f"({arp[ARP_AFTER_2S]['ratio_to_lrf_median']:.3f}× in the median), because start-up lasts "
        f"until {min(s['steady_from_s'] for s in arp_seeds):.2f}–{max(s['steady_from_s'] for s in arp_seeds):.2f} s here. "
        "The overall maximum falls in start-up for both schedulers, as the paper says of all of them. "
        "The paper shows the queue over RTT2 = 50..250 ms; only 150 ms is run here "
        "(docs/algorithms/arp.md has the other RTTs)"
    )
    # Download time. Rule (ours): no slower than lrf in the median = reproduced; within +5 %
    # (the testbed's bar) = partly.
    time_r = ratio[ARP_TIME]
    time_median = arp[ARP_TIME]["ratio_to_lrf_median"]
    slower = sum(r > 1.0 for r in time_r.values())
    verdict_time = (
        REPRODUCED if time_median <= 1.0 else PARTLY if time_median <= 1.05 else NOT_REPRODUCED
    )

    def span(values: list[float], fmt: str) -> str:
        if not values:
            return "–"
        lo, hi = min(values), max(values)
        return (
            fmt.format(lo)
            if fmt.format(lo) == fmt.format(hi)
            else f"{fmt.format(lo)}–{fmt.format(hi)}"
        )

    mode_time = "; ".join(
        f"{m}: {len(seeds)} seeds, {span([time_r[s] for s in seeds if s in time_r], '{:.3f}')}×"
        for m, seeds in by_mode.items()
        if seeds
    )
    ours_time = "<br>".join(
        [
            setup + ":",
            f"completion {_ratio_text(arp[ARP_TIME])}; arp {arp[ARP_TIME]['median']:.3f} s, lrf {lrf[ARP_TIME]['median']:.3f} s in the median"
            if ARP_TIME in lrf
            else f"completion {_ratio_text(arp[ARP_TIME])}",
            f"arp slower than lrf in {slower} of {n} seeds",
            f"by mode: {mode_time}",
            f"rr / lrf: {_ratio_text(rr[ARP_TIME])}"
            if ARP_TIME in rr
            else "rr: not in the records",
            bounds,
        ]
    )
    # Which mode the median time ratio comes from: the seeds whose ratios bracket it.
    middle = sorted(time_r, key=lambda s: time_r[s])[(len(time_r) - 1) // 2 : len(time_r) // 2 + 1]
    middle_modes = {modes[s] for s in middle if s in modes}
    median_mode = (
        f"The median is a run of the mode '{middle_modes.pop()}'"
        if len(middle_modes) == 1
        else "The median falls between two modes"
    )
    why_time = (
        "rule (ours): arp no slower than lrf in the median over seeds = reproduced, within +5 % "
        "(the testbed's bar) = partly. AR&P is bimodal here: equal rates at RTT 50 vs 150 ms sit "
        "on AR's join threshold, and about 0.3 ms of LTE's minimum RTT (moved by the ACK jitter) "
        "decides whether LTE joins N in its start-up, late, or never; while LTE is out of N it "
        f"carries only copies and the transfer runs at Wi-Fi's rate ({mode_counts}). "
        f"{median_mode}; the paper's testbed, with RTTs a few ms above the configured ones, "
        "would not sit on the threshold (docs/algorithms/arp.md, 'Over seeds' and 'Why LTE joins N')"
    )
    claims = [
        Claim(name_queue, paper_queue, ours_queue, verdict_queue, why_queue),
        Claim(name_time, paper_time, ours_time, verdict_time, why_time),
    ]

    table = [
        f"**AR&P under asymmetric RTT (20 Mbit/s both, RTT 50 vs 150 ms, 20 MB, bbr), seeds 1–{n} "
        f"with 0–{jitter:g} ms ACK jitter, by mode** (ratios arp / lrf with the same seed; ranges over "
        "the mode's seeds)",
        "",
        "| mode | seeds | LTE in N for good from | time | overall max | max after start-up | mean | copies (MB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m, seeds in by_mode.items():
        if not seeds:
            table.append(f"| {m} | 0 | – | – | – | – | – | – |")
            continue
        recs = [s for s in arp_seeds if s["seed"] in seeds]
        since = [
            s["last_path_in_n_at_end_since_s"]
            for s in recs
            if s.get("last_path_in_n_at_end_since_s") is not None
        ]
        cells = [
            span([ratio[k][s] for s in seeds if s in ratio[k]], "{:.3f}") + "×"
            for k in (ARP_TIME, ARP_MAX, ARP_AFTER_STARTUP, ARP_MEAN)
        ]
        table.append(
            f"| {m} | {len(seeds)} ({_seed_list(seeds)}) | "
            + (span(since, "{:.2f}") + " s" if since else "never")
            + " | "
            + " | ".join(cells)
            + f" | {span([s['redundant_bytes'] / 1e6 for s in recs], '{:.1f}')} |"
        )
    return claims, "\n".join(table)


def seed000(r: Runner) -> Page:
    page = Page(
        "seed000",
        "Coupled BBR + AR&P (seed 000)",
        """Coupled BBR (the multipath BBR coupling of seed 000) and the AR&P scheduler, in the
deterministic simulator: Table I with `transport/tests/seed000_table1.rs` (shared-bottleneck
`sim::Net`, 2 single-path background flows per bottleneck), Coupled BBR at a shared
bottleneck with `transport/tests/coupled_bbr_sim.rs`, AR&P under asymmetric RTT and at a
path break with `transport/tests/sched_scenarios.rs`. AR&P under asymmetric RTT runs over
seeds 1–20, each seed a different 0–1 ms random delay on the ACK direction, because one
deterministic run gives one sample of a bimodal outcome; the verdicts read the medians and
ranges over seeds of the per-seed ratio to minRTT (`lrf`), and how many seeds show each mode.
The other experiments are one simulated run each. Seeds are fixed in the tests (the simulator
is deterministic), so `--reps` does not apply. The figures come from the tests' JSON output
(`REPRO_OUT`).""",
    )
    page.open_params = [
        (
            "Table I buffer",
            "drop-tail 0.7 BDP of the 50 ms RTT (≈ 437 kB)",
            "not given; loss-based RTTs of ≈ 85 ms imply ≥ 35 ms of queue",
        ),
        (
            "Table I loss placement",
            "0.01 % on bottleneck 1, 0.1 % on bottleneck 2, data direction",
            "the table's columns (sf1 > sf2, TCP p1 > p2) fit this reading",
        ),
        (
            "Table I background CC",
            "BBR for BBR/Coupled BBR, CUBIC for CUBIC, Reno for LIA/OLIA/BALIA",
            "paper: 'same family'; Reno for the coupled loss-based CCs",
        ),
        (
            "Table I duration",
            "40 s simulated, rates over 10-40 s",
            "wall time; paper's duration not stated",
        ),
        (
            "Table I BBR row",
            "uncoupled per-subflow BBR (`bbr`)",
            "the paper's BBR row is MPTCP with BBR per subflow",
        ),
        (
            "asymmetric-RTT rates / RTTs",
            "20 Mbit/s both, RTT 50 vs 150 ms, 20 MB, bbr",
            "paper: equal rates, value not given; one of Fig. 11's RTT points",
        ),
        (
            "asymmetric-RTT seeds",
            "seeds 1–20, uniform 0–1 ms extra delay on each path's ACK direction (FIFO kept)",
            "paper: runs and jitter not stated; without random loss a jitter-free run is one "
            "sample, and AR&P sits on its join threshold here (docs/algorithms/arp.md, set-up "
            "fixed before the first multi-seed run)",
        ),
        (
            "path break",
            "50 MB, 2 × 20 Mbit/s, path 2 dies at 5 s",
            "paper: 15 s at 40 Mbit/s; shortened",
        ),
    ]
    ok, figs = r.cargo_test("seed000_table1", ignored=True)
    rows = values(figs, "seed000_table1")
    table = [
        "| CC | MPTCP | sf1 | sf2 | TCP/flow p1 | TCP/flow p2 | util |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        got = (
            row["mptcp_mbps"],
            row["sf1_mbps"],
            row["sf2_mbps"],
            row["tcp_per_flow_p1_mbps"],
            row["tcp_per_flow_p2_mbps"],
            row["utilisation"],
        )
        if row["cc"] not in SEED000_TABLE1:
            # Coupled BBR is not in the paper's Table I (its BBR column is MPTCP with plain
            # BBR per subflow); shown for comparison, without a verdict.
            table.append(
                f"| {row['cc']} (not in the paper) | " + " | ".join(f"{g:.2f}" for g in got) + " |"
            )
            page.extra_notes.append(
                f"Coupled BBR in the same setting (no paper figure): {got[0]:.1f} Mbit/s "
                f"({got[1]:.1f} + {got[2]:.1f}) against plain-BBR background flows of "
                f"{got[3]:.1f} / {got[4]:.1f} Mbit/s (its coupling keeps Σβ·BW at the largest "
                "path estimate; why it ends where it does against BBR background flows is not "
                "investigated here)."
            )
            continue
        want = SEED000_TABLE1[row["cc"]]
        table.append(
            f"| {row['cc']} | "
            + " | ".join(
                f"{g:.2f} ({w})" if i == 5 else f"{g:.1f} ({w})"
                for i, (g, w) in enumerate(zip(got, want, strict=True))
            )
            + " |"
        )
        page.claims.append(
            Claim(
                f"Table I, {row['cc']}: MPTCP throughput",
                f"{want[0]} Mbit/s ({want[1]} + {want[2]}), util {want[5]}",
                f"{got[0]:.1f} Mbit/s ({got[1]:.1f} + {got[2]:.1f}), util {got[5]:.2f}",
                table1_verdict(got[0], want[0]),
                "rule (ours): MPTCP goodput within 25 % of the paper = reproduced, within 50 % = partly; the verdict is on the MPTCP total only, compare the subflow, background and utilisation columns in the Figures table"
                + (
                    ""
                    if row.get("background_cc") != "reno"
                    else f". The paper's Reno background flows get ≈ {want[4]} Mbit/s on the 0.1 % bottleneck, far below Reno's Mathis et al. bound for 0.1 % random loss ({mathis_mbps(0.085, 1e-3):.1f}-{mathis_mbps(0.05, 1e-3):.1f} Mbit/s at RTT 85-50 ms); here they get {got[4]:.1f} Mbit/s and the bottlenecks are fuller (utilisation {got[5]:.2f} vs {want[5]}), which suggests more loss or delay in the paper's testbed than it states"
                ),
            )
        )
    if not rows:
        page.claims.append(
            Claim("Table I", "see paper", f"benchmark failed (test {passfail(ok)})", NOT_REPRODUCED)
        )
    page.extra = "**Table I, simulated (paper in brackets), Mbit/s**\n\n" + "\n".join(table)
    ok, figs = r.cargo_test("coupled_bbr_sim")
    shared = {v["cc"]: v for v in values(figs, "coupled_bbr_shared")}
    disjoint = {v["cc"]: v for v in values(figs, "coupled_bbr_disjoint")}
    shown = [
        f"shared 100 Mbit/s, {cc} (2 subflows) vs one BBR flow: {v['multipath_mbps']:.1f} vs {v['bbr_mbps']:.1f} Mbit/s, ratio {v['ratio']:.2f}"
        for cc, v in shared.items()
    ] + [
        f"disjoint 60 + 20 Mbit/s, {cc}: {v['p60_mbps']:.1f} + {v['p20_mbps']:.1f} Mbit/s"
        for cc, v in disjoint.items()
    ]
    page.claims.append(
        Claim(
            "Coupled BBR fair at a shared bottleneck; β·BW split on disjoint paths",
            "a coupled flow takes no more than a single BBR flow at a shared bottleneck",
            "<br>".join(shown)
            + f"<br>assertions (≤ 1.3× a BBR flow; β·BW within 10 %): {passfail(ok)}",
            REPRODUCED if ok else NOT_REPRODUCED,
            "threshold 1.3× is this testbed's tolerance, not the paper's",
        )
    )
    ok, figs = r.cargo_test("sched_scenarios", "arp_over_seeds")
    arp_claims, arp_figures = arp_asymmetric_rtt_claims(
        values(figs, "arp_asymmetric_rtt_over_seeds"), values(figs, "arp_asymmetric_rtt_seed"), ok
    )
    page.claims += arp_claims
    if arp_figures:
        # Table I's notes stay under Table I, before the AR&P table.
        page.extra += "".join(f"\n\n* {n}" for n in page.extra_notes) + "\n\n" + arp_figures
        page.extra_notes = [ARP_FIGURES_NOTE]
    ok, figs = r.cargo_test("sched_scenarios", "every_scheduler_survives")
    breaks = values(figs, "path_break")
    shown = [
        f"{v['cc']} × {v['sched']}: 50 MB in {v['completion_s']:.2f} s, byte-exact {v['byte_exact']}"
        for v in breaks
        if v["sched"] in ("arp", "lrf", "rr") and v.get("completion_s") is not None
    ]
    page.claims.append(
        Claim(
            "Path break: transfer continues on the surviving path",
            "goodput recovers on the remaining path after the break (Fig. 10a)",
            "<br>".join(shown)
            + f"<br>all {len(breaks)} CC × scheduler runs byte-exact: {passfail(ok and all(v['byte_exact'] for v in breaks))}",
            PARTLY if ok else NOT_REPRODUCED,
            "partly: completion after the break is shown, the goodput time series of Fig. 10a is not "
            "compared; the gradual failure of Fig. 10b (AR&P going redundant) is not run",
        )
    )
    return page


# --- seed 001 --------------------------------------------------------------------------------

SEED001_LOSS = (1e-5, 1e-4, 1e-3, 1e-2, 2e-2, 5e-2, 1e-1)


def seed001(r: Runner) -> Page:
    reps = r.opts.reps_for("seed001")
    page = Page(
        "seed001",
        "mpbbr vs BALIA over a loss grid (seed 001)",
        f"""Two disjoint 100 Mbit/s paths with independent random loss, each path's loss taken from
the paper's grid {{1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.05, 0.10}} (7 × 7 = 49 points), mpbbr (our
`bbr`: per-subflow BBR, uncoupled, as seed 001) against BALIA, in `mpsim`, one 30 MB transfer
per point, CC and seed ({reps} seed(s) per point; a cell shows the mean over the seeds). Both
readings of the paper's "50 ms delay" are run: one-way 50 ms (RTT 100 ms) and RTT 50 ms
(one-way 25 ms). Goodput in Mbit/s; rows = loss on path a, columns = loss on path b.""",
    )
    page.open_params = [
        (
            "delay 50 ms",
            "both: one-way 50 ms and one-way 25 ms",
            "paper does not say one-way or RTT",
        ),
        (
            "transfer",
            "30 MB per run (paper: iperf3 60 s)",
            "mpsim is size-based; at 10 % loss BALIA needs minutes of virtual time for more",
        ),
        ("queue", "one BDP (mpsim default)", "paper: netem default, not stated"),
        (
            "loss direction",
            "both directions (mpsim paths are symmetric)",
            "paper: netem on NE1/NE2, direction not stated",
        ),
        (
            "runs",
            f"{reps} seed(s) per point (`--reps`)",
            "paper reports avg/min/max, number of runs not stated",
        ),
    ]
    wins = 0
    n = 0
    ratio_low: list[float] = []
    ratio_high: list[float] = []
    tables = []
    for one_way, label in ((50, "one-way 50 ms"), (25, "RTT 50 ms")):
        head = "| a \\ b | " + " | ".join(f"{p:g}" for p in SEED001_LOSS) + " |"
        rows = [head, "|---" * (len(SEED001_LOSS) + 1) + "|"]
        for pa in SEED001_LOSS:
            cells = []
            for pb in SEED001_LOSS:
                paths = [
                    "--path",
                    f"a:100:{one_way}:{pa}",
                    "--path",
                    f"b:100:{one_way}:{pb}",
                    "--bytes",
                    "30000000",
                ]
                g = {
                    cc: statistics.mean(
                        mbps(r.mpsim(*paths, "--cc", cc, "--sched", "lrf", "--seed", str(s)))
                        for s in range(1, reps + 1)
                    )
                    for cc in ("bbr", "balia")
                }
                n += 1
                wins += g["bbr"] > g["balia"]
                ratio = g["bbr"] / max(g["balia"], 1e-9)
                if max(pa, pb) <= 1e-4:
                    ratio_low.append(ratio)
                elif min(pa, pb) >= 1e-2:
                    ratio_high.append(ratio)
                cells.append(f"{g['bbr']:.1f} / {g['balia']:.1f}")
            rows.append(f"| {pa:g} | " + " | ".join(cells) + " |")
        tables.append(f"**{label}** (mpbbr / BALIA, Mbit/s)\n\n" + "\n".join(rows))
    page.extra = "\n\n".join(tables)

    rule = f"{reps} seed(s) per point, 30 MB transfers (the paper: 60 s iperf3); "
    page.claims += [
        Claim(
            "mpbbr outperforms BALIA in all investigated conditions (Fig. 3a)",
            "mpbbr above BALIA at every grid point",
            f"mpbbr ahead at {wins}/{n} points (both readings)",
            REPRODUCED if wins == n else (PARTLY if wins >= 0.75 * n else NOT_REPRODUCED),
            rule + "rule: reproduced if ahead at every point, partly at ≥ 75 %; where it is not, "
            "both paths have little loss and BALIA fills the pipe as well as BBR",
        ),
        Claim(
            "At the lowest loss on both paths BALIA gets about half of mpbbr",
            "BALIA ≈ 0.5 × mpbbr at 0.001 % / 0.001 %",
            f"BALIA/mpbbr {1 / median(ratio_low):.2f} (median where both paths have ≤ 1e-4 loss)",
            REPRODUCED if 1 / median(ratio_low) <= 0.65 else NOT_REPRODUCED,
            rule + "rule: reproduced if BALIA/mpbbr ≤ 0.65. At near-zero random loss a loss-based "
            "CC with a one-BDP queue fills both paths here; the paper's testbed (netem, kernel 4.1 "
            "BALIA, unknown buffers, TSO/offloads) evidently did not",
        ),
        Claim(
            "BALIA collapses when both paths lose ≥ 1 %, mpbbr stays usable",
            "BALIA far below path capacity; mpbbr 'relatively high and usable'",
            f"median mpbbr/BALIA {median(ratio_high):.1f}× where both paths have ≥ 1 % loss",
            REPRODUCED
            if median(ratio_high) >= 5
            else (PARTLY if median(ratio_high) > 1 else NOT_REPRODUCED),
            rule + "rule: reproduced if mpbbr ≥ 5× BALIA there (ours)",
        ),
    ]
    return page


# --- seed 002 --------------------------------------------------------------------------------

SEED002_CCS = ("bbr", "cubic", "compound", "lia", "olia", "balia")
SEED002_SCHEDS = ("lrf", "lpc", "let", "gr-sty", "tp-sty", "tr-sty")
SEED002_SCENARIOS = ("A1", "A2", "B1", "B2")
# The emulated subset: cells the text singles out that fit one session (why these, and why
# Cubic is optional: seed002_subset_text): BBR (good everywhere, retransmits more), LIA (the
# LIA variants poor), Compound (poor with TP-STY in A2, B2) × the default scheduler LRF and
# TP-STY.
SEED002_EMULATED_CCS = ("bbr", "lia", "compound")
SEED002_EMULATED_OPTIONAL_CCS = ("cubic",)
SEED002_EMULATED_SCHEDS = ("lrf", "tp-sty")
# Rules (ours) for the text's qualitative words, on the mean buffer underflows per trial.
GOOD_MAX_STALLS = 0.5
POOR_MIN_STALLS = 1.0
LIA_VARIANTS = ("lia", "olia", "balia")


@dataclass(frozen=True)
class MatrixRun:
    """A matrix of seed 002's scenarios over the user transport that a page runs through the
    plan layer (`run_matrix`); `argv` is the run_trials.sh command that means the same, shown
    on the page and recorded in the run's run.json."""

    ccs: tuple[str, ...]
    scheds: tuple[str, ...]
    video_s: int
    reps: int
    out: Path
    engine: str  # sim or emulate
    jobs: int | str | None = None  # None: the engine's default; "auto" (emulate)
    executor: str = "local"
    slurm_opts: tuple[str, ...] = ()
    dry_run: bool = False

    def argv(self) -> list[str]:
        args = ["--scenario", ",".join(SEED002_SCENARIOS), "--transport", "user",
                "--cc", ",".join(self.ccs), "--sched", ",".join(self.scheds),
                "--video-duration", str(self.video_s), "--reps", str(self.reps),
                "--out", str(self.out)]  # fmt: skip
        if self.engine == "sim":
            args += ["--engine", "sim"]
        if self.jobs is not None:
            args += ["--jobs", str(self.jobs)]
        if self.executor == "slurm":
            args += ["--executor", "slurm", *(f"--slurm-opt={o}" for o in self.slurm_opts)]
        return args + (["--dry-run"] if self.dry_run else [])


def seed002_matrix(opts: Options, out: Path, emulated: bool) -> MatrixRun:
    """The simulated matrix (every CC and scheduler) or the emulated subset."""
    return MatrixRun(
        ccs=SEED002_EMULATED_CCS if emulated else SEED002_CCS,
        scheds=SEED002_EMULATED_SCHEDS if emulated else SEED002_SCHEDS,
        video_s=opts.emulated_video_s if emulated else opts.video_duration_s,
        reps=opts.reps_for("seed002"),
        out=out,
        engine="emulate" if emulated else "sim",
        jobs=opts.jobs if opts.jobs is not None else "auto" if emulated else None,
        executor="slurm" if emulated and opts.executor == "slurm" else "local",
        slurm_opts=opts.slurm_opts if emulated and opts.executor == "slurm" else (),
        dry_run=opts.dry_run,
    )


def seed002_matrix_args(opts: Options, out: Path, emulated: bool) -> list[str]:
    return seed002_matrix(opts, out, emulated).argv()


def _shown(path: Path, repo: Path) -> Path:
    """A run folder as the docs show it: relative to the repository when inside it."""
    try:
        return path.relative_to(repo)
    except ValueError:
        return path


def run_matrix(run: MatrixRun, repo: Path) -> int:
    """Validates, expands and runs the matrix through the plan layer, as run_trials.sh
    would run `run.argv()`; its exit status (2: refused, 130: interrupted)."""
    from testbed import matrix, plan
    from testbed.env import kernel_caps
    from testbed.topology import Interrupted

    argv = run.argv()
    print(f"  ./run_trials.sh {shlex.join(argv)}", flush=True)
    options = plan.request(
        scenario=list(SEED002_SCENARIOS),
        transport=["user"],
        cc=list(run.ccs),
        sched=list(run.scheds),
        video_duration=run.video_s,
        reps=run.reps,
    )
    try:
        specs = plan.specs_for(options, repo, kernel_caps())
        return plan.run_plan(
            specs,
            matrix.run_dir_for(str(run.out), specs, repo),
            engine=run.engine,
            executor=run.executor,
            jobs=run.jobs if isinstance(run.jobs, int) else None,
            repo=repo,
            argv=argv,
            dry_run=run.dry_run,
            slurm_opts=run.slurm_opts,
        )
    except plan.UsageError as exc:
        print(f"run_trials.sh: {exc}", file=sys.stderr)
        return 2
    except (Interrupted, KeyboardInterrupt):
        print("run_trials.sh: interrupted", file=sys.stderr)
        return 130


def _cell_means(summary, metric: str) -> dict[tuple[str, str, str], float]:
    """Mean of `metric` over the repetitions of each (scenario, cc, sched) cell."""
    if metric not in summary.columns:
        return {}
    grouped = summary.groupby(["scenario", "cc", "sched"])[metric].mean()
    return {k: float(v) for k, v in grouped.items()}


def _load_summary(run: Path):
    import pandas as pd

    summary = pd.read_csv(run / "summary.csv")
    ok = summary[summary["status"] == "ok"] if "status" in summary.columns else summary
    return summary, ok


def _grid(means: dict, scenario: str, ccs, scheds, fmt: str = "{:.1f}") -> str:
    rows = ["| CC \\ scheduler | " + " | ".join(scheds) + " |", "|---" * (len(scheds) + 1) + "|"]
    for cc in ccs:
        cells = [means.get((scenario, cc, s)) for s in scheds]
        rows.append(
            f"| {cc} | "
            + " | ".join("–" if v is None or v != v else fmt.format(v) for v in cells)
            + " |"
        )
    return "\n".join(rows)


def _frac_verdict(hits: int, n: int) -> str:
    if n == 0:  # none of the claim's cells is in the run (an emulated subset, missing cells)
        return NOT_RUN
    return REPRODUCED if hits == n else PARTLY if hits >= 0.5 * n else NOT_REPRODUCED


def _kendall_tau(x: list[float], y: list[float]) -> float:
    from scipy.stats import kendalltau

    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan")
    return float(kendalltau(x, y).statistic)


GOOD_RULE = f"rule (ours): 'good' = mean buffer underflows ≤ {GOOD_MAX_STALLS} per trial, 'poor' = ≥ {POOR_MIN_STALLS}; reproduced if the statement holds in every cell it covers, partly in ≥ 50 %"
RETRANS_RULE = "rule: BBR's mean retransmitted packets above every other CC's with the same scheduler and path; reproduced if in every (scheduler, path) cell, partly in ≥ 50 %"


class Cells:
    """Per-cell means of one run's trials, keyed (scenario, cc, sched), and the predicates
    the text's qualitative words are read as."""

    def __init__(self, summary_ok) -> None:
        self.stalls = _cell_means(summary_ok, "stalls")
        self.pw = _cell_means(summary_ok, "pkts_down_wifi")
        self.pl = _cell_means(summary_ok, "pkts_down_lte")
        self.rw = _cell_means(summary_ok, "retrans_pkts_wifi")
        self.rl = _cell_means(summary_ok, "retrans_pkts_lte")
        self.discards = _cell_means(summary_ok, "discarded_frames")
        self.bitrate = _cell_means(summary_ok, "mean_bitrate_bps")
        self.present = set(self.stalls)
        self.ccs = [c for c in SEED002_CCS if any(k[1] == c for k in self.present)]
        self.scheds = [s for s in SEED002_SCHEDS if any(k[2] == s for k in self.present)]
        self.claims: list[Claim] = []

    def keys(self, scenario: str, cc_list) -> list[tuple[str, str, str]]:
        return [
            (scenario, c, s)
            for c in cc_list
            for s in self.scheds
            if (scenario, c, s) in self.present
        ]

    def good(self, k) -> bool:
        return self.stalls[k] <= GOOD_MAX_STALLS

    def poor(self, k) -> bool:
        return self.stalls[k] >= POOR_MIN_STALLS

    def wifi_share(self, k) -> float:
        total = self.pw.get(k, 0) + self.pl.get(k, 0)
        return self.pw.get(k, 0) / total if total else float("nan")

    def max_stalls(self, keys) -> str:
        return f"{max(self.stalls[k] for k in keys):.2f}" if keys else "–"

    def add(self, name: str, paper: str, keys, pred, detail: str, why: str = GOOD_RULE) -> None:
        hits, n = sum(1 for k in keys if pred(k)), len(keys)
        self.claims.append(
            Claim(name, paper, f"{hits} of {n} cells; {detail}", _frac_verdict(hits, n), why)
        )

    def bbr_retrans_most(self, scenario: str) -> tuple[int, int]:
        hits = n = 0
        for means in (self.rw, self.rl):
            for s in self.scheds:
                others = [means.get((scenario, c, s), float("nan")) for c in self.ccs
                          if c != "bbr" and (scenario, c, s) in self.present]  # fmt: skip
                if (scenario, "bbr", s) in self.present and others:
                    n += 1
                    hits += means.get((scenario, "bbr", s), float("nan")) > max(others)
        return hits, n


def _seed002_a(c: Cells) -> None:
    keys = c.keys("A1", ("bbr", "cubic", "compound"))
    c.add("A1: BBR, Cubic and Compound good over all schedulers (Fig. 4)", "'excellent' video performance", keys, c.good,
          "max mean underflows " + c.max_stalls(keys))  # fmt: skip
    ref = {
        s: max((c.stalls.get(("A1", x, s), 0) for x in ("bbr", "cubic", "compound")), default=0)
        for s in c.scheds
    }
    c.add("A1: LIA variants (LIA, OLIA, BALIA) perform poorly (Fig. 4)", "poor video performance", c.keys("A1", LIA_VARIANTS),
          lambda k: c.poor(k) and c.stalls[k] > ref[k[2]], "poor and worse than BBR/Cubic/Compound with the same scheduler")  # fmt: skip
    keys = c.keys("A1", c.ccs)
    shares = [c.wifi_share(k) for k in keys]
    c.add("A1: Wi-Fi is the most used path for every CC and scheduler (Fig. 5a, b)", "Wi-Fi packets > LTE packets everywhere", keys,
          lambda k: c.pw.get(k, 0) > c.pl.get(k, 0),
          "Wi-Fi share of data packets " + (f"{min(shares):.0%} to {max(shares):.0%}" if shares else "–"),
          "rule: Wi-Fi packets > LTE packets in every cell = reproduced, in ≥ 50 % partly")  # fmt: skip
    keys = c.keys("A2", ("bbr", "cubic"))
    c.add("A2: BBR and Cubic perform well with all schedulers (Fig. 6)", "good video performance", keys, c.good,
          "max mean underflows " + c.max_stalls(keys))  # fmt: skip
    poor_tp = [x for x in c.ccs if ("A2", x, "tp-sty") in c.present and c.poor(("A2", x, "tp-sty"))]
    name = "A2: the CCs that do poorly under TP-STY prefer the Wi-Fi path (Fig. 7a, b)"
    if not any(k[0] == "A2" and k[2] == "tp-sty" for k in c.present):
        c.claims.append(Claim(name, "Wi-Fi preferred despite its delay and loss",
                              "no A2 × TP-STY cell in this run", NOT_RUN))  # fmt: skip
    elif poor_tp:
        c.add(name, "Wi-Fi preferred despite its delay and loss", [("A2", x, "tp-sty") for x in poor_tp],
              lambda k: c.pw.get(k, 0) > c.pl.get(k, 0), f"poor under TP-STY here: {', '.join(poor_tp)}",
              "rule: Wi-Fi packets > LTE packets for each CC that is poor under TP-STY")  # fmt: skip
    else:
        c.claims.append(Claim(name, "Wi-Fi preferred despite its delay and loss",
                              "no CC is poor under TP-STY in A2 here, so the premise does not arise",
                              NOT_REPRODUCED, GOOD_RULE))  # fmt: skip


def _seed002_compound(c: Cells) -> None:
    for scenario, fig in (("A2", "Fig. 6"), ("B2", "Fig. 10")):
        k = (scenario, "compound", "tp-sty")
        if k not in c.present:
            c.claims.append(Claim(f"{scenario}: Compound has large buffer underflows with TP-STY ({fig})",
                                  "Compound × TP-STY poor, like the LIA variants",
                                  "the cell is not in this run", NOT_RUN))  # fmt: skip
            continue
        rest = [
            c.stalls[(scenario, "compound", s)]
            for s in c.scheds
            if s != "tp-sty" and (scenario, "compound", s) in c.present
        ]
        ok = c.poor(k) and bool(rest) and c.stalls[k] > max(rest)
        c.claims.append(Claim(
            f"{scenario}: Compound has large buffer underflows with TP-STY ({fig})",
            "Compound × TP-STY poor, like the LIA variants",
            f"Compound × TP-STY {c.stalls[k]:.2f} underflows per trial; Compound with the other schedulers at most {max(rest) if rest else float('nan'):.2f}",
            REPRODUCED if ok else NOT_REPRODUCED,
            GOOD_RULE + "; here: Compound × TP-STY poor and worse than Compound with every other scheduler",
        ))  # fmt: skip


def _seed002_retrans(c: Cells) -> None:
    for scenario, paper in (
        (
            "A1",
            "BBR retransmits more than the other CCs across all schedulers, both paths (Fig. 5c, d)",
        ),
        ("A2", "BBR retransmits more across most schedulers, except TP-STY on Wi-Fi (Fig. 7c, d)"),
        (
            "B1",
            "BBR has significantly more retransmissions across all schedulers (text; chart omitted)",
        ),
        ("B2", "BBR retransmits more (text; chart omitted)"),
    ):
        hits, n = c.bbr_retrans_most(scenario)
        c.claims.append(Claim(f"{scenario}: BBR retransmits more", paper,
                              f"{hits} of {n} (scheduler, path) cells where BBR retransmits most",
                              _frac_verdict(hits, n), RETRANS_RULE))  # fmt: skip


def _seed002_b(c: Cells) -> None:
    keys = c.keys("B1", ("bbr",))
    c.add("B1: BBR consistently good across all schedulers (Fig. 8)", "'impressive ... consistent good performance of BBR'", keys, c.good,
          "max mean underflows " + c.max_stalls(keys))  # fmt: skip
    keys = c.keys("B1", c.ccs)
    c.add("B1: Wi-Fi preferred by every CC (Fig. 9a, b)", "a preference for the Wi-Fi path for all TCP variants", keys,
          lambda k: c.pw.get(k, 0) > c.pl.get(k, 0), "Wi-Fi packets > LTE packets",
          "rule: Wi-Fi packets > LTE packets in every cell = reproduced, in ≥ 50 % partly")  # fmt: skip
    tau = _kendall_tau([c.wifi_share(k) for k in keys], [c.stalls[k] for k in keys])
    c.claims.append(Claim(
        "B1: the CCs that use Wi-Fi most have the worst buffer underflows (Fig. 8, 9)",
        "'TCP variants that utilize the most of Wi-Fi path deliver worst buffer underflow'",
        f"Kendall's τ-b between Wi-Fi share and mean underflows over the {len(keys)} cells: {tau:.2f}",
        NOT_RUN if not keys else REPRODUCED if tau >= 0.3 else PARTLY if tau > 0 else NOT_REPRODUCED,
        "rule (ours): τ-b ≥ 0.3 reproduced, > 0 partly (nan: no variation, e.g. no underflows at all)",
    ))  # fmt: skip
    keys = c.keys("B2", ("bbr", "cubic"))
    good = sum(1 for k in keys if c.good(k))
    others = [x for x in c.ccs if x not in ("bbr", "cubic")]
    others_bad = [x for x in others if any(not c.good(k) for k in c.keys("B2", (x,)))]
    all_good = bool(keys) and good == len(keys)
    c.claims.append(Claim(
        "B2: only BBR and Cubic deliver good performance across all schedulers (Fig. 10)",
        "BBR and Cubic good everywhere; every other CC not good with some scheduler",
        f"BBR/Cubic good in {good} of {len(keys)} cells; other CCs not good with at least one scheduler: {', '.join(others_bad) or 'none'}",
        NOT_RUN if not keys else REPRODUCED if all_good and len(others_bad) == len(others) else PARTLY if all_good else NOT_REPRODUCED,
        GOOD_RULE + "; partly if BBR and Cubic are good everywhere but some other CC is too",
    ))  # fmt: skip
    c.add("B2: LIA variants all deliver large buffer underflows (Fig. 10)", "'lack of aggressiveness'",
          c.keys("B2", LIA_VARIANTS), c.poor, "poor cells")  # fmt: skip
    c.add("B2: large LTE utilisation for every CC (Fig. 11)", "all CCs back off from Wi-Fi", c.keys("B2", c.ccs),
          lambda k: c.pl.get(k, 0) > c.pw.get(k, 0), "LTE packets > Wi-Fi packets",
          "rule: LTE packets > Wi-Fi packets in every cell = reproduced, in ≥ 50 % partly")  # fmt: skip

    def bbr_most_wifi(k) -> bool:
        rivals = [c.wifi_share(("B2", x, k[2])) for x in c.ccs if ("B2", x, k[2]) in c.present]
        return c.wifi_share(k) >= max(rivals)

    c.add("B2: BBR still uses more of the Wi-Fi path than the other CCs on most schedulers (Fig. 11)", "BBR's Wi-Fi share highest",
          c.keys("B2", ("bbr",)), bbr_most_wifi, "schedulers where BBR's Wi-Fi share is the highest",
          "rule: reproduced if on every scheduler, partly on ≥ 50 % ('most')")  # fmt: skip


def _seed002_figures(c: Cells) -> str:
    panels = [
        ("buffer underflows (mean per trial)", c.stalls, "{:.2f}"),
        ("picture discards (mean discarded frames per trial)", c.discards, "{:.1f}"),
        (
            "mean video bitrate played, Mbit/s (not a figure of the paper)",
            {k: v / 1e6 for k, v in c.bitrate.items()},
            "{:.2f}",
        ),  # fmt: skip
        ("Wi-Fi data packets (mean per trial)", c.pw, "{:.0f}"),
        ("LTE data packets (mean per trial)", c.pl, "{:.0f}"),
        ("Wi-Fi retransmitted packets (mean per trial)", c.rw, "{:.0f}"),
        ("LTE retransmitted packets (mean per trial)", c.rl, "{:.0f}"),
    ]
    fig_no = {"A1": "Figs. 4, 5", "A2": "Figs. 6, 7", "B1": "Figs. 8, 9", "B2": "Figs. 10, 11"}
    out = []
    for scenario in SEED002_SCENARIOS:
        out.append(f"### {scenario} (the paper's {fig_no[scenario]})")
        for title, means, fmt in panels:
            if means:
                out.append(
                    f"**{scenario}: {title}**\n\n" + _grid(means, scenario, c.ccs, c.scheds, fmt)
                )
    return "\n\n".join(out)


def seed002_observations(c: Cells) -> list[str]:
    """What the run shows that explains its verdicts (computed, not written by hand)."""
    notes = []
    poor = sorted((k for k in c.present if c.poor(k)), key=lambda k: (k[0], k[2], k[1]))
    scheds = sorted({k[2] for k in poor})
    notes.append(
        f"Buffer underflows (≥ {POOR_MIN_STALLS} per trial on average) in {len(poor)} of "
        f"{len(c.present)} cells, with scheduler(s) {', '.join(scheds) or 'none'}: "
        + (
            ", ".join(f"{k[0]} {k[1]}×{k[2]}" for k in poor[:12])
            + (" ..." if len(poor) > 12 else "")
            or "none"
        )
        + ". Most of the loss-based CCs' weakness in the paper does not show: with the scenario files' "
        "20 + 15 Mbit/s for a 5.24 Mbit/s top rung and an adaptive player, they keep the buffer up "
        "(see the mean bitrate tables)."
    )
    for sched in c.scheds:
        shares = [c.wifi_share(k) for k in c.present if k[2] == sched]
        if shares and min(shares) > 0.99:
            notes.append(
                f"{sched} sends more than 99 % of the packets on Wi-Fi in every cell: its switch "
                "rule never picks LTE here (LTE never has the smaller RTT), so it rides out every "
                "Wi-Fi loss episode on Wi-Fi."
            )
    same = {}
    for a in c.scheds:
        for b in c.scheds:
            if a < b:
                pairs = [(sc, cc) for sc in SEED002_SCENARIOS for cc in c.ccs
                         if (sc, cc, a) in c.present and (sc, cc, b) in c.present]  # fmt: skip
                equal = [
                    pc for pc in pairs
                    if all(m.get((*pc, a)) == m.get((*pc, b)) for m in (c.pw, c.pl, c.rw, c.rl))
                ]  # fmt: skip
                if pairs and len(equal) >= len(pairs) / 2:
                    same[(a, b)] = (len(equal), len(pairs))
    if same:
        notes.append(
            "Schedulers with identical per-path packet and retransmission means in most (scenario, "
            "CC) pairs: "
            + "; ".join(f"{a} = {b} in {n} of {m}" for (a, b), (n, m) in same.items())
            + ". Why these rules coincide here is not investigated (`--sched-trace` shows each decision)."
        )
    return notes


def seed002_claims(summary_ok) -> tuple[list[Claim], str]:
    """The text's findings checked on the per-cell means of a simulated (or emulated) run;
    returns the claims and the figures (one table per figure panel)."""
    c = Cells(summary_ok)
    _seed002_a(c)
    _seed002_compound(c)
    _seed002_b(c)
    _seed002_retrans(c)
    return c.claims, _seed002_figures(c)


def seed002(r: Runner) -> Page:
    opts = r.opts
    reps = opts.reps_for("seed002")
    page = Page(
        "seed002",
        "Video over MPTCP: CC × scheduler × scenario (seed 002)",
        f"""The paper's full matrix, CC {{{", ".join(SEED002_CCS)}}} × scheduler
{{{", ".join(SEED002_SCHEDS)}}} × scenarios A1, A2, B1, B2, {reps} repetitions (seeds) of
{opts.video_duration_s} s clips, in the simulator (`--engine sim`: the user-space transport and
linkemu's link model in virtual time, with the DASH player model; docs/SIMULATOR.md). Figures
are the mean over the repetitions of each cell, from the run's `summary.csv`. Buffer
underflows are the player's stalls after start-up; picture discards cannot be measured in the
simulator (its player model has no decoder), so they come only from the emulated subset.
Scenario parameters: `netem-scenarios/A1.toml`, `A2.toml`, `B1.toml`, `B2.toml`.""",
    )
    page.open_params = [
        ("link rates", "Wi-Fi 20 Mbit/s, LTE 15 Mbit/s (scenario files)", "the paper gives none"),
        (
            "Wi-Fi one-way delays, LTE delay",
            "Wi-Fi 20 ms (A1, B1) / 30 ms (A2, B2), LTE 40 ms one way",
            "Table II gives the RTTs 40/60 and 80 ms; split evenly",
        ),
        (
            "loss patterns A/B",
            "piecewise ramps (A: to 5 % at 30, 75, 120, 165 s; B: 10 % falling to 0), Wi-Fi data direction",
            "the paper's time series is a figure only (netem-scenarios/README.md)",
        ),
        (
            "clip",
            f"{opts.video_duration_s} s, 2 s segments, ladder 0.8/1.5/3/5.24 Mbit/s (dash.js ABR, modelled)",
            "Table I: 3 min at 5.24 Mbit/s; the paper does not say whether its player adapts",
        ),
        (
            "'good' / 'poor'",
            f"≤ {GOOD_MAX_STALLS} / ≥ {POOR_MIN_STALLS} mean buffer underflows per trial",
            "the paper's findings are qualitative, read off bar charts",
        ),
        ("repetitions", f"{reps} seeds per cell (`--reps`)", "the paper's count is not stated"),
        (
            "emulated subset's clip",
            f"{opts.emulated_video_s} s (the simulated matrix: {opts.video_duration_s} s)",
            "the paper plays 3 min; 60 s clips let the emulated subset run in one session; they see "
            "only the first 60 s of each loss pattern (see 'Emulated cross-check')",
        ),
    ]
    # The simulated matrix: a --from sim run at the matrix's clip (or of unknown clip); a sim
    # run at the emulated subset's clip is the subset's simulated twin instead.
    sim_runs = [
        run for run in opts.runs_of_engine("sim") if _run_clip(run) in (None, opts.video_duration_s)
    ]
    if sim_runs:
        sim_run = sim_runs[0]
        print(f"  seed002: simulated matrix from {sim_run}", flush=True)
    else:
        sim_run = r.run_dir / "sim"
        t0, c0 = time.monotonic(), _cpu_s()
        status = run_matrix(seed002_matrix(opts, sim_run, emulated=False), r.repo)
        (sim_run / MATRIX_TIMING).write_text(
            json.dumps({"wall_s": time.monotonic() - t0, "cpu_s": _cpu_s() - c0})
        )
        r.commands.append(
            "./run_trials.sh "
            + shlex.join(seed002_matrix_args(opts, _shown(sim_run, r.repo), emulated=False))
        )
        if status not in (0, 1):
            raise RuntimeError(f"seed002: the simulated matrix exited {status}")
    summary, ok = _load_summary(sim_run)
    n_failed = len(summary) - len(ok)
    claims, figures = seed002_claims(ok)
    page.claims = claims
    page.emulated, emulated = seed002_emulated_section(r)
    page.claims += seed002_discard_claims(emulated, seed002_live_selection(r))
    page.extra = figures
    page.extra_notes = [
        f"Simulated run: `{_shown(sim_run, r.repo)}` ({len(summary)} trials, {n_failed} not ok and left out of the means).",
        "Per-path packets are the data packets the emulated link carried server → client (`pkts_down_*`), retransmissions the sender's (`retrans_pkts_*`), as in `summary.csv`.",
        *seed002_observations(Cells(ok)),
    ]
    timing = sim_run / MATRIX_TIMING
    if timing.is_file():
        t = json.loads(timing.read_text())
        page.reps_note = (
            f"The simulated matrix ({len(summary)} trials, "
            f"{len(summary) * opts.video_duration_s / 3600:.1f} h of video) took {t['wall_s'] / 60:.1f} min "
            f"of wall time and {t['cpu_s'] / 60:.1f} min of CPU time (user + sys), including "
            "building its report."
        )
    return page


def seed002_live_subset(opts: Options) -> Subset:
    """Seed 002's cells in live mode: any of its CCs and schedulers, 1 repetition or more."""
    return Subset(SEED002_SCENARIOS, SEED002_CCS, SEED002_SCHEDS, 1, opts.emulated_video_s,
                  video_mode="live")  # fmt: skip


def seed002_live_selection(r: Runner) -> Selection | None:
    """Live-mode trials of seed 002's cells (any of its CCs and schedulers, 1 repetition or
    more) in the --from runs: the live discard claim's evidence. None without such a trial."""
    emu_runs = r.opts.runs_of_engine("emulate")
    if not emu_runs:
        return None
    sel = select_subset(emu_runs, seed002_live_subset(r.opts))
    return sel if len(sel.trials) else None


DISCARD_RULE = (
    "rule (ours): τ-b ≥ 0.3 reproduced, > 0 partly (nan: no variation); emulated cells only, "
    "60 s clips; discards = skipped + dropped frames (docs/PLAYER.md)"
)


def _discard_claim(name: str, paper: str, sel: Selection, what: str) -> Claim:
    """Whether the cells' mean discarded frames rank with their mean underflows."""
    stalls = _cell_means(sel.trials, "stalls")
    discards = _cell_means(sel.trials, "discarded_frames")
    keys = sorted(set(stalls) & set(discards))
    if not keys:
        return Claim(name, paper, f"{what}: no cell with both figures", NOT_RUN, DISCARD_RULE)
    tau = _kendall_tau([stalls[k] for k in keys], [discards[k] for k in keys])
    ours = (f"{what}: Kendall's τ-b between mean discarded frames and mean underflows over "
            f"{len(keys)} cells {tau:.2f} (discards per trial {min(discards[k] for k in keys):.1f} "
            f"to {max(discards[k] for k in keys):.1f}; underflows {min(stalls[k] for k in keys):.1f} "
            f"to {max(stalls[k] for k in keys):.1f})")  # fmt: skip
    verdict = REPRODUCED if tau >= 0.3 else PARTLY if tau > 0 else NOT_REPRODUCED
    return Claim(name, paper, ours, verdict, DISCARD_RULE)


def seed002_discard_claims(sel: Selection | None, live_sel: Selection | None = None) -> list[Claim]:
    """Picture discards: measurable only in emulation (the simulated player has no decoder)."""
    live_name = "Picture discards, live mode (Figs. 4b-10b)"
    live_paper = "discards follow the underflows"
    if live_sel is None:
        live = Claim(live_name, live_paper, "not run: no live-mode run of seed 002's cells given",
                     NOT_RUN, "the simulator's player has no live mode; pass an emulated "
                     "`--video-mode live` run of seed 002's scenarios with --from")  # fmt: skip
    else:
        cells = sorted({(sc, cc, s) for sc, cc, s in zip(
            live_sel.trials["scenario"], live_sel.trials["cc"], live_sel.trials["sched"], strict=True)})  # fmt: skip
        live = _discard_claim(live_name, live_paper, live_sel,
                              f"emulated live trials ({len(live_sel.trials)} in {len(cells)} cells: "
                              + ", ".join("/".join(c) for c in cells) + ")")  # fmt: skip
    name = "Picture discards follow the buffer underflows, VOD (Figs. 4b-10b)"
    paper = "cells with large underflows also discard pictures"
    if sel is None or not len(sel.trials):
        return [Claim(name, paper, "not measurable in the simulator (no decoder); the emulated subset is not run",
                      NOT_RUN, "the simulated player model has no decoder or CPU, so `discarded_frames` is 0 by construction"),
                live]  # fmt: skip
    return [_discard_claim(name, paper, sel, "emulated subset"), live]


# --- seed 002: the emulated subset, selected from run folders ---------------------------------


@dataclass(frozen=True)
class Subset:
    """Seed-002 cells (scenario, cc, sched) at one clip length, each with `reps` repetitions,
    as the matrix runner plays them (user transport, dash.js, VOD, no --cc-opt/--sched-opt).
    `optional_ccs` are used when a run holds them and never reported missing."""

    scenarios: tuple[str, ...]
    ccs: tuple[str, ...]
    scheds: tuple[str, ...]
    reps: int
    video_s: int
    optional_ccs: tuple[str, ...] = ()
    video_mode: str = "vod"

    def cells(self, ccs: tuple[str, ...] | None = None) -> list[tuple[str, str, str]]:
        return [
            (sc, cc, s) for sc in self.scenarios for cc in (ccs or self.ccs) for s in self.scheds
        ]

    @property
    def n_trials(self) -> int:
        return len(self.cells()) * self.reps


def seed002_emulated_subset(opts: Options) -> Subset:
    return Subset(SEED002_SCENARIOS, SEED002_EMULATED_CCS, SEED002_EMULATED_SCHEDS,
                  opts.reps_for("seed002"), opts.emulated_video_s,
                  SEED002_EMULATED_OPTIONAL_CCS)  # fmt: skip


def _truthy(value: object) -> bool:
    """summary.csv's `valid` read back: a bool, or the strings True/False when NaN rows made
    the column an object column."""
    return value is True or str(value).strip().lower() in ("true", "1", "1.0")


def _blank(value: object) -> bool:
    return value is None or str(value).strip() in ("", "nan", "[]", "None")


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_summary(run: Path) -> tuple[pd.DataFrame, str]:
    """A run's per-trial table and where it came from: its summary.csv, or, for a run still
    going (or one whose report was never built), the same table computed from its trial
    folders (metrics/report.py's reduction, read only: nothing is written into the run)."""
    import pandas as pd

    if (run / "summary.csv").is_file():
        return pd.read_csv(run / "summary.csv"), "its summary.csv"
    from metrics.read import trial_dirs
    from metrics.report import read_manifest, reduce_trials, with_unstarted_trials

    dirs = trial_dirs(run)
    summary, _, _ = reduce_trials(dirs)
    if summary.empty:
        summary = pd.DataFrame(columns=["trial_id", "scenario", "cc", "sched", "status"])
    summary = with_unstarted_trials(summary, read_manifest(run))
    return (
        summary,
        f"computed from its {len(dirs)} trial folders (no summary.csv: unfinished or no report built)",
    )


@dataclass
class RunSource:
    """One --from run folder: what it holds and what was taken from it."""

    run: Path
    commit: str
    command: str
    summary_from: str
    n_rows: int  # trials the run lists (run.json) or holds
    n_used: int  # in the subset, ok and valid
    n_rejected: int  # in the subset but failed, invalid or unfinished
    n_unfinished: int  # of those: not started or interrupted (status incomplete)
    n_outside: int  # other cells or another setup: ignored
    n_timed: int  # trials with a start time (trial.json) and a wall duration (result.json)
    span_s: float  # first start -> last end over the timed trials
    busy_s: float  # the timed trials' wall durations summed
    rejected: list[str] = field(default_factory=list)  # "trial_id: reason"


@dataclass
class Selection:
    subset: Subset
    trials: pd.DataFrame  # the used trials' summary rows, with `source_run`
    sources: list[RunSource]
    counts: dict[tuple[str, str, str], int]

    def missing(self) -> list[tuple[str, str, str]]:
        return [c for c in self.subset.cells() if self.counts.get(c, 0) == 0]

    def short(self) -> list[tuple[tuple[str, str, str], int]]:
        return [
            (c, n)
            for c in self.subset.cells()
            if 0 < (n := self.counts.get(c, 0)) < self.subset.reps
        ]

    def extra(self) -> list[tuple[tuple[str, str, str], int]]:
        """Cells with more usable trials than repetitions (the same cell in several runs)."""
        return [(c, n) for c, n in self.counts.items() if n > self.subset.reps]

    def optional_present(self) -> list[str]:
        return [cc for cc in self.subset.optional_ccs
                if any(self.counts.get(c, 0) for c in self.subset.cells((cc,)))]  # fmt: skip

    def wall_durations(self) -> list[float]:
        col = self.trials.get("wall_duration_s") if len(self.trials) else None
        return [] if col is None else [float(x) for x in col if x == x]


def _column(frame: pd.DataFrame, name: str, default: object) -> pd.Series:
    import pandas as pd

    if name in frame.columns:
        return frame[name]
    return pd.Series([default] * len(frame), index=frame.index, dtype=object)


def _video_mode(meta: dict, planned: dict) -> str:
    return str((meta.get("spec") or planned or {}).get("video_mode", "vod"))


def _select_from_run(run: Path, subset: Subset) -> tuple[RunSource, pd.DataFrame]:
    """(RunSource, the run's usable subset rows) for one run folder."""
    import pandas as pd

    summary, summary_from = run_summary(run)
    manifest = _read_json(run / "run.json")
    planned = dict(zip(manifest.get("trials", []), manifest.get("specs", []), strict=False))
    ids = [str(t) for t in _column(summary, "trial_id", "")]
    metas = {t: _read_json(run / "trials" / t / "trial.json") for t in ids}
    mode = pd.Series([_video_mode(metas[t], planned.get(t)) for t in ids], index=summary.index)
    clip = pd.to_numeric(_column(summary, "video_duration_s", subset.video_s), errors="coerce")
    in_cells = (
        _column(summary, "scenario", "").isin(subset.scenarios)
        & _column(summary, "cc", "").isin(subset.ccs + subset.optional_ccs)
        & _column(summary, "sched", "").isin(subset.scheds)
    )
    same_setup = (
        (_column(summary, "transport", "user") == "user")
        & (_column(summary, "player", "dashjs") == "dashjs")
        & (clip == subset.video_s)
        & (mode == subset.video_mode)
        & _column(summary, "cc_opts", "").map(_blank)
        & _column(summary, "sched_opts", "").map(_blank)
    )
    in_subset = in_cells & same_setup
    ok = (_column(summary, "status", "ok") == "ok") & _column(summary, "valid", True).map(_truthy)
    usable = in_subset & ok
    walls = pd.to_numeric(_column(summary, "wall_duration_s", float("nan")), errors="coerce")
    timed = []
    for t, wall in zip(ids, walls, strict=True):
        t0 = (metas[t].get("clock") or {}).get("t0_unix_ns")
        if isinstance(t0, int | float) and wall == wall:
            timed.append((t0 / 1e9, float(wall)))
    span = max(a + w for a, w in timed) - min(a for a, _ in timed) if timed else float("nan")
    bad = summary[in_subset & ~ok]
    unfinished = _column(bad, "status", "") == "incomplete"
    bad, n_unfinished = bad[~unfinished], int(unfinished.sum())
    rejected = [
        f"{t}: {status}, {reason if _blank(reason) is False else 'not valid'}"
        for t, status, reason in zip(
            _column(bad, "trial_id", ""),
            _column(bad, "status", ""),
            _column(bad, "invalid_reason", ""),
            strict=True,
        )
    ]
    argv = manifest.get("argv")
    source = RunSource(
        run=run,
        commit=str(manifest.get("git_commit") or "not recorded"),
        command="./run_trials.sh " + shlex.join(str(a) for a in argv) if argv else "not recorded",
        summary_from=summary_from,
        n_rows=len(summary),
        n_used=int(usable.sum()),
        n_rejected=len(bad) + n_unfinished,
        n_unfinished=n_unfinished,
        n_outside=int((~in_subset).sum()),
        n_timed=len(timed),
        span_s=span,
        busy_s=sum(w for _, w in timed),
        rejected=rejected,
    )
    return source, summary[usable].assign(source_run=str(run))


def select_subset(runs: list[Path], subset: Subset) -> Selection:
    """The subset's trials from run folders that may hold more (other CCs, schedulers,
    scenarios, clip lengths, setups): every trial of a subset cell that finished ok and valid
    is used, everything else is counted and ignored, and a subset cell without a usable
    trial is reported missing (Selection.missing), never dropped silently."""
    import pandas as pd

    picked = [_select_from_run(run, subset) for run in runs]
    used = [rows for _, rows in picked if len(rows)]
    trials = pd.concat(used, ignore_index=True) if used else pd.DataFrame()
    counts: dict[tuple[str, str, str], int] = {}
    if len(trials):
        for key in zip(trials["scenario"], trials["cc"], trials["sched"], strict=True):
            k = (str(key[0]), str(key[1]), str(key[2]))
            counts[k] = counts.get(k, 0) + 1
    return Selection(subset, trials, [source for source, _ in picked], counts)


def per_trial_s(sel: Selection) -> float:
    """Seconds one trial of the selection costs run one at a time: the runs' start-to-start
    time per trial (their span over their timed trials, so the runner's gap between trials is
    in it), or the median trial wall time if that is longer (trials that ran side by side)."""
    timed = sum(s.n_timed for s in sel.sources)
    slot = sum(s.span_s for s in sel.sources if s.n_timed) / timed if timed else float("nan")
    walls = sel.wall_durations()
    return max(slot, median(walls)) if walls else slot


def _hm(seconds: float) -> str:
    if seconds != seconds:
        return "–"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def seed002_twin(opts: Options, out: Path, ccs: tuple[str, ...]) -> MatrixRun:
    """The emulated subset's cells in the simulator, same clip, repetitions and seeds."""
    subset = seed002_matrix(opts, out, emulated=True)
    return replace(subset, ccs=ccs, engine="sim", jobs=None, executor="local", slurm_opts=(),
                   dry_run=False)  # fmt: skip


def seed002_subset_text(opts: Options, sel: Selection | None) -> list[str]:
    """Which cells, why these, why 60 s clips, and the commands (the section's fixed part)."""
    sub = seed002_emulated_subset(opts)
    args = seed002_matrix_args(
        opts, Path("results/reproduce-seed002-emulate-<stamp>"), emulated=True
    )
    args = [a for a in args if a != "--dry-run"]
    n_cubic = len(sub.cells(SEED002_EMULATED_OPTIONAL_CCS)) * sub.reps
    cubic_args = list(args)
    cubic_args[cubic_args.index("--cc") + 1] = ",".join(SEED002_EMULATED_OPTIONAL_CCS)
    cubic_args[cubic_args.index("--out") + 1] = "results/seed002-emulate-cubic"
    slot = per_trial_s(sel) if sel is not None else float("nan")
    return [
        f"Subset: CC {{{', '.join(sub.ccs)}}} × scheduler {{{', '.join(sub.scheds)}}} × "
        f"{', '.join(sub.scenarios)}, {sub.reps} repetitions (seeds 1-{sub.reps}) of "
        f"{sub.video_s} s clips: {sub.n_trials} trials with dash.js in headless Chromium over "
        "linkemu, user-space transport. These are the cells the paper's text singles out that "
        "fit one session on this machine:",
        "",
        "* **BBR**, the paper's subject: 'good' with every scheduler in every scenario, and it "
        "'retransmits more' (Figs. 5, 7 and the text for B1, B2);",
        "* **LIA**, for the LIA variants the text finds poor in A1 and B2 and whose "
        "'congestion adjustment coupling' its conclusion blames (OLIA and BALIA couple their "
        "increase the same way; they stay in the simulated matrix);",
        "* **Compound**, 'poor with TP-STY' in A2 and B2 and good with the others;",
        "* schedulers **LRF**, the default (the paper's 'shortest delay' scheduler), and "
        "**TP-STY**, the one the Compound finding names.",
        "",
        "Cubic is singled out as well, but always beside BBR as good ('BBR, Cubic and Compound' "
        "in A1, 'BBR and Cubic' in A2 and B2), a contrast the three CCs above already give; its "
        f"{n_cubic} trials did not fit the session. Its cells are optional: a run holding them "
        f"(`./run_trials.sh {shlex.join(cubic_args)}`"
        + (f", about {_hm(n_cubic * slot)} here" if slot == slot else "")
        + ") given to `--from` is used and shown; without it the claims that name Cubic are "
        "checked on the other CCs' cells only.",
        "",
        f"**{sub.video_s} s clips, not the paper's 3 min** (its Table I): with 3 min clips the subset "
        + (
            f"would take about {sub.n_trials} × {slot - sub.video_s + SEED002_VIDEO_S:.0f} s ≈ "
            f"{_hm(sub.n_trials * (slot - sub.video_s + SEED002_VIDEO_S))} (the per-trial time measured below, "
            f"with the clip {SEED002_VIDEO_S - sub.video_s} s longer), "
            if slot == slot
            else "would take three times as long, "
        )
        + "more than one session with the machine to itself. The scenario clock starts with the "
        f"trial, so a {sub.video_s} s clip plays through the first {sub.video_s} s of each loss "
        "pattern only. In **A1 and A2** that is one of pattern A's four ramps (the first starts at "
        "30 s: up to 5 % by 35 s, held to 40 s, back to 0 by 45 s), so 15 s of loss in 60 s "
        "instead of 60 s in 180 s, after 30 s of loss-free play in which the player has built its buffer. In **B1 and B2** "
        "it is pattern B's harsh phase only (10 % ± 50 % throughout; the fall towards 1 % starts "
        "at 60 s), so B's poor-to-good transition is not seen. Underflow counts per trial are "
        "therefore not comparable with the paper's 3 min counts; the verdicts compare CCs and "
        "schedulers with each other at the same clip, and the simulated twin below plays the "
        "same clip.",
        "",
        "Command (real time, root, a quiet machine): `./run_trials.sh --reproduce seed002 --engine emulate` "
        f"(= `./run_trials.sh {shlex.join(args)}`; `--dry-run` prints the trial list). Then "
        "`./run_trials.sh --reproduce seed002 --engine emulate --from RUN[,RUN]` rebuilds this page "
        "from run folders that hold the subset's cells, alone or among others (e.g. a "
        "`--cross-validate` run that also has the rr scheduler): the subset's cells are "
        "selected, everything else is ignored and counted, and missing cells are listed.",
        "",
    ]


def seed002_full_matrix_text(opts: Options, slot: float) -> list[str]:
    """The full emulated 6 × 6 × 4 matrix: its commands and its time, estimated from the
    measured time per trial."""
    reps = opts.reps_for("seed002")
    n_full = len(SEED002_CCS) * len(SEED002_SCHEDS) * len(SEED002_SCENARIOS) * reps
    base = ["--scenario", ",".join(SEED002_SCENARIOS), "--transport", "user",
            "--cc", ",".join(SEED002_CCS), "--sched", ",".join(SEED002_SCHEDS),
            "--video-duration", str(opts.emulated_video_s), "--reps", str(reps)]  # fmt: skip
    slurm = [*base, "--out", "/shared/runs/seed002-emulated-full", "--executor", "slurm"]
    local = [*base, "--out", "results/seed002-emulated-full", "--jobs", "auto"]
    lines = [
        f"**The full emulated matrix** (6 CCs × 6 schedulers × 4 scenarios × {reps} = {n_full} "
        f"trials) is for a cluster or a bigger machine: `./run_trials.sh {shlex.join(slurm)}` "
        "(README, 'Running on a Slurm cluster': one array task per trial, 2 CPUs each), or on "
        f"one machine `./run_trials.sh {shlex.join(local)}` (`--jobs auto` runs ⌊CPUs / 2⌋ "
        "trials side by side, each with a CPU for its player and one for its testbed "
        "processes). Then `--from` it as above (the subset's cells are selected from it).",
    ]
    if slot == slot:
        long_slot = slot - opts.emulated_video_s + SEED002_VIDEO_S
        lines += [
            "",
            f"Estimated from the measured {slot:.1f} s per trial (start to start, above): one at a "
            f"time here {_hm(n_full * slot)}; with `--jobs 8` (16 CPUs) {_hm(n_full * slot / 8)}; "
            f"as Slurm tasks, 16 at once {_hm(-(-n_full // 16) * slot)}, 48 at once "
            f"{_hm(-(-n_full // 48) * slot)}. With the paper's 3 min clips (about "
            f"{long_slot:.0f} s per trial, the same overhead around a {SEED002_VIDEO_S} s clip; an "
            f"extrapolation, not measured): {_hm(n_full * long_slot)} one at a time, "
            f"{_hm(-(-n_full // 16) * long_slot)} as 16 Slurm tasks at once.",
        ]
    return lines


def _provenance(sel: Selection, repo: Path) -> list[str]:
    rows = ["| run folder | commit | command | trials | used | in the subset, not usable (of which unfinished) | other cells, ignored | summary |",
            "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for s in sel.sources:
        rows.append(f"| `{_shown(s.run, repo)}` | {s.commit[:12]} | `{s.command}` | {s.n_rows} | "
                    f"{s.n_used} | {s.n_rejected} ({s.n_unfinished}) | {s.n_outside} | {s.summary_from} |")  # fmt: skip
    lines = ["The cells come from these runs:", "", *rows, ""]
    rejected = [r for s in sel.sources for r in s.rejected]
    if rejected:
        lines += [f"Failed or invalid ({len(rejected)}): " + "; ".join(rejected[:10])
                  + (" ..." if len(rejected) > 10 else "") + ".", ""]  # fmt: skip
    missing, short = sel.missing(), sel.short()
    lines.append(
        f"**Missing cells** (no usable trial; {len(missing)} of {len(sel.subset.cells())}): "
        + (", ".join(f"{a} {b}×{c}" for a, b, c in missing) if missing else "none")
        + ". Cells with fewer than "
        f"{sel.subset.reps} usable repetitions: "
        + (", ".join(f"{a} {b}×{c} ({n})" for (a, b, c), n in short) if short else "none")
        + ". Claims below are checked on the cells present only."
        + (
            " Cells with more usable trials than repetitions (in several runs; all are averaged): "
            + ", ".join(f"{a} {b}×{c} ({n})" for (a, b, c), n in sel.extra())
            + "."
            if sel.extra()
            else ""
        )
    )
    opt = sel.optional_present()
    lines += [
        "",
        "Optional Cubic cells: " + ("used (from the runs above)." if opt else "not in these runs."),
    ]
    return lines


def _timing(sel: Selection) -> list[str]:
    walls = sel.wall_durations()
    slot = per_trial_s(sel)
    spans = "; ".join(
        f"`{s.run.name}`: {s.n_timed} trials in {_hm(s.span_s)} ({s.span_s / s.n_timed:.1f} s per trial)"
        for s in sel.sources if s.n_timed
    )  # fmt: skip
    n = len(walls)
    return [
        f"**Wall time of the emulated subset, measured from the runs' own timings** (trial.json's "
        f"start, result.json's wall duration): its {n} used trials took {sum(walls) / 60:.1f} min "
        f"of trial time (median {median(walls):.1f} s per trial, set-up to teardown). The runs "
        f"(first start to last end, every trial they hold): {spans or 'no timed trials'}; "
        f"so one trial costs {slot:.1f} s start to start, and the subset's {sel.subset.n_trials} "
        f"trials one at a time take {_hm(sel.subset.n_trials * slot)} (its {n} used here: {_hm(n * slot)}).",
    ]


def _twin_comparison(r: Runner, sel: Selection) -> tuple[list[str], Selection | None]:
    """The same cells in the simulator at the same clip and seeds: a --from sim run that holds
    them, or run now (seconds)."""
    twins = [run for run in r.opts.runs_of_engine("sim") if _run_clip(run) == sel.subset.video_s]
    twin = select_subset(twins, sel.subset) if twins else None
    ccs = tuple(c for c in SEED002_CCS if c in sel.subset.ccs + tuple(sel.optional_present()))
    if twin is None or any(twin.counts.get(k, 0) == 0 for k in sel.counts):
        out = r.run_dir / "sim-twin"
        status = run_matrix(seed002_twin(r.opts, out, ccs), r.repo)
        r.commands.append(
            "./run_trials.sh " + shlex.join(seed002_twin(r.opts, _shown(out, r.repo), ccs).argv())
        )
        if status not in (0, 1):
            return [f"Simulated twin: the matrix exited {status}; no comparison."], None
        twin = select_subset([out], sel.subset)
    s_sim, s_emu = _cell_means(twin.trials, "stalls"), _cell_means(sel.trials, "stalls")
    common = sorted(set(s_sim) & set(s_emu))
    tau = _kendall_tau([s_sim[k] for k in common], [s_emu[k] for k in common])

    def word(v: float) -> str:
        return "good" if v <= GOOD_MAX_STALLS else "poor" if v >= POOR_MIN_STALLS else "between"

    agree = sum(1 for k in common if word(s_sim[k]) == word(s_emu[k]))
    rows = ["| cell | emulated underflows | simulated underflows |", "|---|---|---|"]
    rows += [
        f"| {k[0]} {k[1]}×{k[2]} | {s_emu[k]:.2f} ({word(s_emu[k])}) | {s_sim[k]:.2f} ({word(s_sim[k])}) |"
        for k in common
    ]
    return [
        f"Simulated twin (the same cells, clip and seeds in the simulator; "
        f"{', '.join(f'`{_shown(s.run, r.repo)}`' for s in twin.sources)}): over the {len(common)} "
        f"common cells Kendall's τ-b between the two engines' mean underflows {tau:.2f}; the "
        f"good/between/poor word agrees in {agree} of {len(common)} cells.",
        "",
        *rows,
    ], twin


def _run_clip(run: Path) -> int | None:
    """The clip length of a run's trials (run.json's specs), None if unknown or mixed."""
    specs = _read_json(run / "run.json").get("specs") or []
    clips = {s.get("video_duration_s") for s in specs if isinstance(s, dict)}
    return int(next(iter(clips))) if len(clips) == 1 and None not in clips else None


def seed002_emulated_section(r: Runner) -> tuple[str, Selection | None]:
    opts = r.opts
    emu_runs = opts.runs_of_engine("emulate")
    sel = select_subset(emu_runs, seed002_emulated_subset(opts)) if emu_runs else None
    lines = seed002_subset_text(opts, sel)
    if sel is None:
        lines += seed002_full_matrix_text(opts, float("nan"))
        lines += ["", "**Not run**: emulated video trials are valid only on a quiet machine "
                  "(docs/PLAYER.md); run the command above on one, then rebuild this page with "
                  "`--engine emulate --from`."]  # fmt: skip
        return "\n".join(lines), None
    lines += _provenance(sel, r.repo) + [""] + _timing(sel) + [""]
    lines += seed002_full_matrix_text(opts, per_trial_s(sel)) + [""]
    if not len(sel.trials):
        lines.append("No usable trial of the subset in these runs: no emulated verdicts.")
        return "\n".join(lines), sel
    claims, figures = seed002_claims(sel.trials)
    twin_lines, _ = _twin_comparison(r, sel)
    lines += [
        "| claim (emulated cells only) | emulated | verdict |",
        "|---|---|---|",
        *[f"| {c.name} | {c.ours} | **{c.verdict}** |" for c in claims],
        "",
        *twin_lines,
        "",
        figures,
    ]
    return "\n".join(lines), sel


# --- seed 003 --------------------------------------------------------------------------------


def _rates_line(v: dict) -> str:
    opts = "" if v.get("opts") in ("[]", None) else f" {v['opts']}"
    return f"{v['cc']}{opts}: x11 {v['x11']:.1f}, x12 {v['x12']:.1f}, x2 {v['x2']:.1f} (x1 {v['x11'] + v['x12']:.1f})"


def _medians_line(v: dict) -> str:
    return (
        f"case {v['case']} {v['cc']}: x11 {v['x11']:.1f}, x12 {v['x12']:.1f}, x2 {v['x2']:.1f} "
        f"(x1 {v['x11'] + v['x12']:.1f}; medians of seeds {', '.join(map(str, v['seeds']))})"
    )


def _bin_mean(series: list[float], bin_s: float, from_s: float, to_s: float) -> float:
    a, b = int(round(from_s / bin_s)), int(round(to_s / bin_s))
    chunk = series[a:b]
    return sum(chunk) / len(chunk) if chunk else float("nan")


def transition_s(v: dict) -> float:
    """Seconds from the capacity drop until x12's 1 s moving average first comes within 10 %
    of its new balanced rate (x12's mean over 10-13 s). Rule ours; the paper reads it off
    its Fig. 5."""
    bin_s, x12 = v["bin_s"], v["x12"]
    target = _bin_mean(x12, bin_s, 10.0, v["back_at_s"])
    per_s = int(round(1.0 / bin_s))
    start = int(round(v["drop_at_s"] / bin_s))
    for i in range(start, len(x12) - per_s + 1):
        avg = sum(x12[i : i + per_s]) / per_s
        if abs(avg - target) <= 0.1 * target:
            return i * bin_s - v["drop_at_s"]
    return float("nan")


def seed003(r: Runner) -> Page:
    reps = r.opts.reps_for("seed003")
    page = Page(
        "seed003",
        "H-MPTCP rate allocation and pricing (seed 003)",
        """The paper's two-source topology (S1: one Reno flow x2 sharing link C2 with the
MPTCP subflow x12; the MPTCP subflow x11 alone on C1), in the simulator
(`transport/tests/seed003_rates.rs` for cases 1, 2 and the pricing weight,
`transport/tests/seed003_case3.rs` for case 3), rates in the paper's units (Mbit/s; the
simulation runs every rate divided by 16). The tests assert the paper's case-2 rates under
EMPTCP and H-MPTCP within 10 % and the case-1 and case-3 properties; the 10 % bar for the
other rates (case 1, case 2 under WMPTCP) is kept as ignored tests, run here and reported as
they come out. The figures are the tests' JSON output.""",
    )
    page.reps_note = (
        f"Repetitions: cases 1 and 2 are medians over seeds 1-5 and the pricing run over seeds "
        f"1-3 (the tests' own; a 0-1 ms ACK jitter makes the seeds differ); case 3 runs "
        f"{reps} seed(s) (`--reps`, seeds 7, 8, ...), its transition times are the median."
    )
    page.open_params = [
        ("RTT", "20 ms on every path (10 ms one way)", "paper does not give it"),
        ("queues", "drop-tail, one BDP", "paper does not give them"),
        (
            "loss synchrony",
            "drop-tail queues (losses not forced synchronous)",
            "341/683 split assumes synchronised losses; independent losses give ≈424",
        ),
        (
            "ACK timing",
            "0-1 ms random on every ACK link (cases 1, 2, pricing)",
            "without it the drop-tail phase decides which flow loses and seeds do not differ",
        ),
        ("metered-path weight", "x12 weight 0.1 vs default 0.5", "paper: a price, no number"),
        (
            "case 3: which link changes",
            "x11's link (C1 of case 2) at 8 Mbit/s from 6 s to 13 s",
            "the text says 'C2 = 8 Mbps' but describes x11 dropping to 8 and the 6-13 s allocation as case 2's (C1 = 8)",
        ),
        (
            "case 3: transition time",
            "drop → first time x12's 1 s average is within 10 % of its 10-13 s mean",
            "the paper reads it off Fig. 5; 250 ms bins",
        ),
    ]
    # Cases 1 and 2: medians over seeds 1-5 with a 0-1 ms ACK jitter (see the test file).
    ok2, f2 = r.cargo_test("seed003_rates", "case2_emptcp_and_hmptcp")
    page.claims.append(
        Claim(
            "Case 2 (C1=8, C2=1024): EMPTCP/H-MPTCP rates within 10 %",
            "x11=8, x12=508, x2=516 (EMPTCP = H-MPTCP)",
            "<br>".join(_medians_line(v) for v in values(f2, "seed003_medians"))
            + f"<br>all three rates within 10 %: {passfail(ok2)}",
            REPRODUCED if ok2 else NOT_REPRODUCED,
            "tolerance 10 % is the issue's; synchronised and independent losses give the same "
            "rates here (x1 = x2 either way), which is why this point reproduces",
        )
    )
    okw2, fw2 = r.cargo_test("seed003_rates", "case2_wmptcp_gives", ignored=True)
    page.claims.append(
        Claim(
            "Case 2: WMPTCP rates within 10 %",
            "x11=8, x12=341, x2=683",
            "<br>".join(_medians_line(v) for v in values(fw2, "seed003_medians"))
            + f"<br>within 10 %: {passfail(okw2)}",
            REPRODUCED if okw2 else NOT_REPRODUCED,
            "341/683 is the split of synchronised losses (ω : 1); the simulator's drop-tail "
            "queue loses at an equal per-packet rate, which gives √ω : 1 (x12 ≈ 424). Ignored "
            "test with the 10 % bar",
        )
    )
    okh, fh = r.cargo_test("seed003_rates", "case2_hmptcp_does_at_least")
    page.claims.append(
        Claim(
            "Case 2: H-MPTCP does at least as well as the better of EMPTCP and WMPTCP",
            "H-MPTCP = EMPTCP in case 2",
            "<br>".join(_medians_line(v) for v in values(fh, "seed003_medians"))
            + f"<br>H-MPTCP's x1 ≥ 0.9 × the better half's: {passfail(okh)}",
            REPRODUCED if okh else NOT_REPRODUCED,
            "0.9 is this testbed's tolerance. A single jitter-free run measured 0.876 (the "
            "drop-tail phase); the medians over 5 seeds with jitter do not show it",
        )
    )
    ok1, f1 = r.cargo_test("seed003_rates", "case1_every_variant")
    page.claims.append(
        Claim(
            "Case 1 (C1=C2=1024): every variant beats the best single path; x11 ≈ 1024",
            "x11 = 1024; x1 = 1024 (EMPTCP, the best single path) and ≈ 1365 (WMPTCP = H-MPTCP)",
            "<br>".join(_medians_line(v) for v in values(f1, "seed003_medians"))
            + f"<br>assertions (x11 within 10 % of 1024, x1 > 1024, H-MPTCP x1 ≥ 0.9 × "
            f"the better half's): {passfail(ok1)}",
            REPRODUCED if ok1 else NOT_REPRODUCED,
            "the paper's conclusions for case 1, not its rates (next row)",
        )
    )
    okr1, _ = r.cargo_test("seed003_rates", "case1_gives", ignored=True)
    page.claims.append(
        Claim(
            "Case 1: the rates within 10 %",
            "EMPTCP x12=0, x2=1024; WMPTCP and H-MPTCP x12=341, x2=683",
            f"medians as in the row above; within 10 % (0 within 10 % of C2): {passfail(okr1)}",
            REPRODUCED if okr1 else NOT_REPRODUCED,
            "the paper's values are those of synchronised losses; independent losses give "
            "EMPTCP x12=341/x2=683 and WMPTCP x12≈424/x2≈600, which is where the simulator "
            "sits. Ignored test with the 10 % bar",
        )
    )
    okm, fm = r.cargo_test("seed003_rates", "under_synchronised_losses")
    page.claims.append(
        Claim(
            "The paper's theoretical rates follow from its equations under synchronised losses",
            "cases 1 and 2, all three CCs (the values above)",
            "the implemented increase rules in a fluid model where every flow on a link "
            f"halves at each overflow give them within 10 %: {passfail(okm)}",
            REPRODUCED if okm else NOT_REPRODUCED,
            "a model check, not the simulator: it shows the gap is the loss model, not the rules",
        )
    )
    # Medians over seeds 1-3 with a 0-1 ms ACK jitter (see the test's comment).
    okw, fw = r.cargo_test("seed003_rates", "a_path_weight")
    runs = values(fw, "seed003_rates")
    light = [v["x12"] for v in runs if "weight" in str(v.get("opts"))]
    default = [v["x12"] for v in runs if "weight" not in str(v.get("opts"))]
    shifted = bool(light and default) and median(light) < 0.9 * median(default)
    page.claims.append(
        Claim(
            "Pricing incentive: a low H-MPTCP weight on the metered path shifts traffic off it",
            "traffic moves off the priced path to the free one",
            "<br>".join(_rates_line(v) for v in runs)
            + f"<br>x12 < 0.9× default and x2 gains: {passfail(okw)}",
            REPRODUCED if okw else (PARTLY if shifted else NOT_REPRODUCED),
            "the paper gives no price → weight mapping; 0.1 is our choice. The ACK links add a "
            "random 0-1 ms and the figures are medians over 3 seeds: without any jitter the "
            "drop-tail phase decides who loses on C2 and the weight's effect vanishes behind it "
            "(x12 422 vs 424)",
        )
    )
    seeds = ",".join(str(7 + i) for i in range(reps))
    ok3, f3 = r.cargo_test("seed003_case3", ignored=True, env={"SEED003_CASE3_SEEDS": seeds})
    page.claims += seed003_case3_claims(values(f3, "seed003_case3"), ok3)
    page.emulated = crosscheck_section("seed003", r)
    return page


def seed003_case3_claims(runs: list[dict], ok: bool) -> list[Claim]:
    if not runs:
        return [
            Claim(
                "Case 3 (x11's link 1024 → 8 → 1024 Mbit/s at 6 s and 13 s)",
                "transition times EMPTCP 2 s, LIA/BALIA 3 s",
                f"test produced no figures (test {passfail(ok)})",
                NOT_REPRODUCED,
            )
        ]
    by_cc: dict[str, list[dict]] = {}
    for v in runs:
        by_cc.setdefault(v["cc"], []).append(v)
    t = {cc: median([transition_s(v) for v in vs]) for cc, vs in by_cc.items()}

    def phase(cc: str, i: int, a: float, b: float) -> float:
        key = ("x11", "x12", "x2")[i]
        return median([_bin_mean(v[key], v["bin_s"], a, b) for v in by_cc.get(cc, [])])

    # A "transition" is only meaningful where x12 moves: less than 10 % between its 3-6 s and
    # 10-13 s means counts as no shift.
    moved = {
        cc: abs(phase(cc, 1, 10, 13) - phase(cc, 1, 3, 6)) > 0.1 * phase(cc, 1, 3, 6)
        for cc in by_cc
    }
    shown = "; ".join(
        f"{cc} {t[cc]:.2f} s" if moved[cc] else f"{cc} no shift (x12 moves < 10 %)" for cc in by_cc
    )
    faster = bool(moved.get("emptcp")) and all(
        moved.get(cc) and t.get("emptcp", float("nan")) < t.get(cc, float("nan"))
        for cc in ("lia", "balia")
    )
    rates = "<br>".join(
        f"{cc}: x11/x12/x2 over 3-6 s {phase(cc, 0, 3, 6):.0f}/{phase(cc, 1, 3, 6):.0f}/{phase(cc, 2, 3, 6):.0f}, over 10-13 s {phase(cc, 0, 10, 13):.0f}/{phase(cc, 1, 10, 13):.0f}/{phase(cc, 2, 10, 13):.0f}, over 17-20 s {phase(cc, 0, 17, 20):.0f}/{phase(cc, 1, 17, 20):.0f}/{phase(cc, 2, 17, 20):.0f}"
        for cc in by_cc
    )
    w_before, w_during = phase("wmptcp", 1, 3, 6), phase("wmptcp", 1, 10, 13)
    rising = [
        cc
        for cc in ("emptcp", "lia", "balia")
        if phase(cc, 1, 10, 13) > phase(cc, 1, 3, 6) and phase(cc, 2, 10, 13) < phase(cc, 2, 3, 6)
    ]
    h_vs_e = abs(t.get("hmptcp", float("nan")) - t.get("emptcp", float("nan")))
    return [
        Claim(
            "Case 3: x11 drops to the new capacity at once; H-MPTCP does as well as the better of EMPTCP and WMPTCP (Fig. 5)",
            "x11 falls to 8 Mbit/s at about the same time in every protocol; H-MPTCP picks the higher of its halves",
            rates
            + f"<br>assertions (x11 ≤ 8.8 from 7 s; H-MPTCP x1 ≥ 0.9 × the better half over 10-13 s): {passfail(ok)}",
            REPRODUCED if ok else NOT_REPRODUCED,
            "rates are medians over the seeds; the assertion thresholds are ours",
        ),
        Claim(
            "Case 3: EMPTCP reaches x12's new balanced rate faster than LIA and BALIA",
            "EMPTCP ≈ 2 s (6 → 8 s), LIA and BALIA ≈ 3 s (6 → 9 s)",
            f"transition time of x12: {shown}",
            REPRODUCED if faster else NOT_REPRODUCED,
            "rule: reproduced if EMPTCP's transition is shorter than both LIA's and BALIA's, each of them shifting x12 by more than 10 % (transition as defined under the open parameters). x12 swings by ±20 % over seconds in every variant here (Reno-like sawtooth at 1/16 scale), which blurs any transition; the paper's curves are smoother",
        ),
        Claim(
            "Case 3: H-MPTCP's transition is similar to EMPTCP's",
            "'similar as that in EMPTCP' (Fig. 5d)",
            f"H-MPTCP and EMPTCP differ by {h_vs_e:.2f} s",
            REPRODUCED if h_vs_e <= 0.5 else PARTLY if h_vs_e <= 1.0 else NOT_REPRODUCED,
            "rule (ours): within 0.5 s reproduced, 1 s partly",
        ),
        Claim(
            "Case 3: WMPTCP's x12 does not change; under EMPTCP, LIA and BALIA x12 rises and x2 falls",
            "WMPTCP x12 unchanged (weight fixed); x12 up, x2 down for the coupled ones",
            f"WMPTCP x12 {w_before:.0f} → {w_during:.0f}; x12 up and x2 down for: {', '.join(rising) or 'none'} (of emptcp, lia, balia)",
            REPRODUCED
            if abs(w_during - w_before) <= 0.1 * w_before and len(rising) == 3
            else PARTLY
            if len(rising) >= 2 or abs(w_during - w_before) <= 0.1 * w_before
            else NOT_REPRODUCED,
            "rule (ours): WMPTCP's x12 within 10 % across the drop and all three coupled variants shifting = reproduced; one of the two = partly",
        ),
    ]


# --- seed 004 --------------------------------------------------------------------------------


def seed004(r: Runner) -> Page:
    reps = r.opts.reps_for("seed004")
    page = Page(
        "seed004",
        "HBDP vs MPCubic vs LIA on high-BDP paths (seed 004)",
        f"""Two disjoint paths, 500 Mbit/s × 100 ms RTT and 100 Mbit/s × 20 ms RTT, 0.01 % random
loss both directions, drop-tail queues of one BDP, 100 MB per CC in `mpsim`, {reps} seed(s)
(`--reps`). The paper's Table II topology (Fig. 7b) is not in its text, so these paths are our
choice. The after-warm-up comparison and the loss counts come from
`transport/tests/hbdp_vs_mpcubic.rs` (its JSON output; fixed seed).""",
    )
    page.open_params = [
        (
            "link rates, base delays, buffers",
            "500×100 ms and 100×20 ms, queue one BDP",
            "Fig. 7 is not in the text; a high-BDP and a moderate path",
        ),
        (
            "loss",
            "0.01 % both paths",
            "paper Table II: 0.1 %/0.3 % at given ε; lower loss keeps the BDP regime",
        ),
        ("HBDP options", "defaults (docs/algorithms/hbdp.md)", "not tuned"),
        ("transfer", f"100 MB, seeds 1..{reps}", "wall time"),
    ]
    paths = ["--path", "fast:500:50:0.0001", "--path", "slow:100:10:0.0001", "--bytes", "100000000"]
    g: dict[str, list[float]] = {}
    for cc in ("lia", "mpcubic", "hbdp"):
        g[cc] = [
            mbps(r.mpsim(*paths, "--cc", cc, "--sched", "lrf", "--seed", str(s)))
            for s in range(1, reps + 1)
        ]
    avg = {cc: sum(v) / len(v) for cc, v in g.items()}
    lia_lowest = avg["lia"] < min(avg["mpcubic"], avg["hbdp"])
    ahead = avg["hbdp"] > 1.05 * avg["mpcubic"]
    page.claims.append(
        Claim(
            "Throughput: HBDP > MPCubic > LIA at high BDP (Table II), 100 MB transfers",
            "LIA 91.85, MPCubic 163.61, HBDP 190.57 Mbit/s total (HBDP 1.16× MPCubic)",
            "; ".join(
                f"{cc} {avg[cc]:.1f} Mbit/s ({', '.join(f'{x:.1f}' for x in v)})"
                for cc, v in g.items()
            )
            + f"; HBDP/MPCubic {avg['hbdp'] / max(avg['mpcubic'], 1e-9):.2f}×",
            REPRODUCED if ahead and lia_lowest else (PARTLY if lia_lowest else NOT_REPRODUCED),
            "rule (ours): reproduced if HBDP is > 5 % ahead of MPCubic and LIA lowest, partly if "
            "only LIA is lowest. 100 MB transfers include slow start, where HBDP and MPCubic "
            "behave alike; absolute numbers differ because the topology and rates are ours",
        )
    )
    ok, figs = r.cargo_test("hbdp_vs_mpcubic", ignored=True, env={"HBDP_SIM_S": "20"})
    plain = {v["cc"]: v for v in values(figs, "hbdp_vs_mpcubic") if v.get("opts") == "[]"}
    shown = "<br>".join(
        f"{cc}: goodput {v['goodput_mbps']:.1f} Mbit/s (500×100 {v['p500x100_mbps']:.1f}, 100×20 {v['p100x20_mbps']:.1f}); lost {v['lost_pkts']} pkts after warm-up, {v['rtos']} RTOs; queue drops {v['queue_drops']}, random drops {v['random_drops']}"
        for cc, v in plain.items()
    )
    if "hbdp" in plain and "mpcubic" in plain:
        h, m = plain["hbdp"], plain["mpcubic"]
        ratio = h["goodput_mbps"] / max(m["goodput_mbps"], 1e-9)
        page.claims.append(
            Claim(
                "Throughput after warm-up: HBDP above MPCubic (Table II: 1.16×)",
                "HBDP 190.57 vs MPCubic 163.61 Mbit/s (1.16×)",
                f"HBDP {h['goodput_mbps']:.1f} vs MPCubic {m['goodput_mbps']:.1f} Mbit/s ({ratio:.2f}×), "
                "rates over 6-20 s of a 20 s bulk run",
                REPRODUCED if 1.05 < ratio <= 1.5 else (PARTLY if ratio > 1.5 else NOT_REPRODUCED),
                "rule (ours): reproduced if HBDP leads by 5-50 %, partly if it leads by more (the "
                "direction holds, the size does not): our MPCubic leaves the 500 Mbit/s × 100 ms "
                "path far below capacity; the paper's topology is not in its text",
            )
        )
        fewer = h["queue_drops"] <= m["queue_drops"] and h["lost_pkts"] <= m["lost_pkts"]
        verdict = REPRODUCED if fewer else NOT_REPRODUCED
    else:
        verdict = NOT_REPRODUCED
    page.claims.append(
        Claim(
            "Loss: HBDP causes fewer packet losses than MPCubic (which overshoots), Fig. 8 discussion",
            "MPCubic overshoots with many drops (an RTO at 11 s); HBDP reduces loss events",
            shown or f"benchmark failed (test {passfail(ok)})",
            verdict,
            "rule: reproduced if HBDP's queue drops and sender-declared losses are both ≤ MPCubic's "
            "(20 s simulated on 500 Mbit/s × 100 ms + 100 Mbit/s × 20 ms, one BDP of queue, 0.01 % "
            "random loss; LIA is not in this benchmark); the paper's cross-traffic pattern (Fig. 7a "
            "CBR flows) is not modelled",
        )
    )
    page.emulated = crosscheck_section("seed004", r)
    return page


BUILDERS: dict[str, Callable[[Runner], Page]] = {
    "seed000": seed000,
    "seed001": seed001,
    "seed002": seed002,
    "seed003": seed003,
    "seed004": seed004,
}


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


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
            reps = 1 if seed in FIXED_SEED_ONLY else opts.reps_for(seed)
            plan = crosscheck_plan(seed, reps, _shown(run_dir, repo))
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


# --- README's table of verdicts, generated from the pages ------------------------------------

README_BEGIN = "<!-- reproductions table: generated from docs/reproductions/*.md by testbed/reproduce.py (readme_table); do not edit by hand -->"
README_END = "<!-- end of the reproductions table -->"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_RUN)


def _verdict_rows(text: str, header: str) -> list[str]:
    """The verdicts of the markdown table that starts with `header` (its last column)."""
    lines = text.splitlines()
    if header not in lines:
        return []
    out = []
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        out.append(line.rstrip(" |").rsplit("|", 1)[-1].strip().strip("*"))
    return out


def _counts(verdicts: list[str]) -> str:
    return ", ".join(f"{verdicts.count(v)} {v}" for v in VERDICTS if verdicts.count(v))


def page_summary(text: str) -> dict[str, str]:
    """What README's table shows of one page: title, verdict counts, the emulated part, time."""
    import re

    title = text.splitlines()[0].removeprefix("# Reproduction: ")
    main = _verdict_rows(text, "| claim | paper | this testbed | verdict |")
    emulated = _verdict_rows(text, "| claim (emulated cells only) | emulated | verdict |")
    agreement = re.search(r"Agreement \(ours[^)]*\): (\d+ of \d+) cells", text)
    subset_time = re.search(
        r"the subset's (\d+) trials one at a time take ([^(]+?) \(its (\d+) used", text
    )
    if emulated:
        emu = "claims on the emulated cells: " + _counts(emulated)
        if subset_time:
            total, took, used = subset_time.groups()
            emu += f"; {used} of the subset's {total} trials used, all {total} take {took} one at a time (measured)"
    elif agreement:
        emu = f"simulated within ±15 % of emulated in {agreement.group(1)} cells"
    elif "**Not run" in text:
        emu = "not run"
    else:
        emu = "none"
    wall = re.search(r"Wall time on this machine: (\d+) s", text)
    cpu = re.search(r"CPU time \(user \+ sys[^)]*\): (\d+) s", text)
    return {
        "title": title,
        **{v: str(main.count(v)) for v in VERDICTS},
        "emulated": emu,
        "time": f"{wall.group(1) if wall else '–'} s / {cpu.group(1) if cpu else '–'} s",
    }


def readme_table(docs_dir: Path) -> str:
    """README's table of the reproduction pages, one row per page, from the pages alone."""
    rows = [
        README_BEGIN,
        "",
        "| paper | page | reproduced | partly | not reproduced | not yet run | emulated part | wall / CPU time of the page's command |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for page in sorted(docs_dir.glob("seed*.md")):
        p = page_summary(page.read_text())
        rows.append(f"| {p['title']} | [{page.stem}](docs/reproductions/{page.name}) | "
                    + " | ".join(p[v] for v in VERDICTS) + f" | {p['emulated']} | {p['time']} |")  # fmt: skip
    return "\n".join([*rows, "", README_END])


def update_readme(repo: Path) -> bool:
    """Rewrites README's generated table from the pages; False if README has no table."""
    readme = repo / "README.md"
    text = readme.read_text() if readme.is_file() else ""
    if README_BEGIN not in text or README_END not in text:
        return False
    head, rest = text.split(README_BEGIN, 1)
    tail = rest.split(README_END, 1)[1]
    readme.write_text(head + readme_table(repo / "docs" / "reproductions") + tail)
    return True


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
    needs_build = not (seeds == ["seed002"] and opts.runs_of_engine("sim"))
    build = (
        subprocess.run(
            ["cargo", "build", "--release", "--locked", "--bin", "mpsim"],
            cwd=repo / "transport",
            env={**os.environ, "CARGO_BUILD_JOBS": os.environ.get("CARGO_BUILD_JOBS", "1")},
        )
        if needs_build
        else None
    )
    if build is not None and build.returncode != 0:
        return 1
    timings = []
    for seed in seeds:
        run_dir = repo / "results" / f"reproduce-{seed}-{stamp}"
        run_dir.mkdir(parents=True, exist_ok=True)
        print(f"reproducing {seed} into {run_dir}", flush=True)
        if opts.reps is not None and seed in FIXED_SEED_ONLY:
            print(f"  {seed}: --reps does not apply (its tests fix their seed)", file=sys.stderr)
        runner = Runner(repo, opts, run_dir)
        t0, c0 = time.monotonic(), _cpu_s()
        page = BUILDERS[seed](runner)
        if not page.emulated and seed in CROSSCHECKS:
            page.emulated = crosscheck_section(seed, runner)
        page.commands = runner.commands
        wall, cpu = time.monotonic() - t0, _cpu_s() - c0
        text = page.markdown(wall, _command(seed, opts), cpu)
        docs = repo / "docs" / "reproductions"
        docs.mkdir(parents=True, exist_ok=True)
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
