# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""The reproductions' base: verdict words, options, a claim, a page, the runner of
simulated experiments, and the small helpers every paper's module uses."""

from __future__ import annotations

import json
import os
import resource
import shlex
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from metrics.verdict import INCONCLUSIVE as INCONCLUSIVE  # re-exported for the pages
from metrics.verdict import NOT_REPRODUCED as NOT_REPRODUCED
from metrics.verdict import PARTLY as PARTLY
from metrics.verdict import REPRODUCED as REPRODUCED
from metrics.verdict import Verdict

# The verdict words are metrics/verdict.py's (which decides them from samples, never from a
# point estimate), plus "not yet run" for a claim whose experiment has not run.
NOT_RUN = "not yet run"
# A claim the paper makes (counted in README's table) or a check this testbed adds (model
# checks, survival of an outage, live mode: shown on the page in their own table, not counted).
PAPER_CLAIM, TESTBED_CHECK = "paper", "testbed"
PAPER_TABLE_HEADER = "| claim | paper | this testbed | verdict |"
TESTBED_TABLE_HEADER = "| check | rule | this testbed | verdict |"
# Every figure and table of a paper's evaluation: where the page runs it, or why it does not.
FIGURES_TABLE_HEADER = "| figure / table | status |"
RUN, NOT_RUN_FIGURE = "run", "not run"
# Repetitions (seeds) per simulated point when --reps is not given.
SEED002_VIDEO_S = 180  # the paper's playout time (Table I: 3 min)
# The emulated study's clip: the paper's 3 min as well (seed 002's pre-registration, §5).
SEED002_EMULATED_VIDEO_S = 180
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
    reps: int | None = None  # None: each paper's default (its module's DEFAULT_REPS)
    dry_run: bool = False
    from_runs: tuple[Path, ...] = ()
    video_duration_s: int = SEED002_VIDEO_S  # the simulated matrix's clip
    emulated_video_s: int = SEED002_EMULATED_VIDEO_S  # the emulated subset's clip
    jobs: int | None = None
    executor: str = "local"
    slurm_opts: tuple[str, ...] = ()

    def reps_or(self, default: int) -> int:
        """--reps if given, else the paper's `default`."""
        return self.reps if self.reps is not None else default

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


def ran(where: str) -> str:
    """The status of a paper figure the page runs: which claims (or checks) read it."""
    return f"{RUN}: {where}"


def not_ran(reason: str) -> str:
    """The status of a paper figure the page does not run, with the reason."""
    return f"{NOT_RUN_FIGURE}: {reason}"


@dataclass
class Claim:
    name: str
    paper: str  # what the paper says, and where (figure, table, section)
    ours: str
    verdict: str
    why: str = ""
    kind: str = PAPER_CLAIM  # or TESTBED_CHECK

    @classmethod
    def decided(
        cls, name: str, paper: str, verdict: Verdict, why: str = "", kind: str = PAPER_CLAIM
    ) -> Claim:
        """A claim whose verdict metrics/verdict.py decided: the page shows n, the estimate
        and its interval (or "inconclusive") beside it."""
        return cls(name, paper, verdict.text(), verdict.outcome, why, kind)


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
    fingerprint: str = ""  # digest of the simulated part's inputs (fingerprint.py)
    # (figure or table of the paper's evaluation, ran(...) or not_ran(...)): every one of them
    paper_figures: tuple[tuple[str, str], ...] = ()

    def markdown(self, wall_s: float, command: str, cpu_s: float | None = None) -> str:
        lines = [f"# Reproduction: {self.title}", "", self.setup.strip(), ""]
        timing = f"Wall time on this machine: {wall_s:.0f} s"
        if cpu_s is not None:
            timing += (
                f" ({wall_s / 60:.1f} min); CPU time (user + sys, this process and its "
                f"children): {cpu_s:.0f} s; {_scheduling_note()}"
            )
        lines += [f"Command: `{command}`  ", timing + ".", ""]
        if self.fingerprint:
            lines += [
                f"Inputs of the simulated part: SHA-256 `{self.fingerprint[:16]}…` over the files "
                f"listed in `{self.seed}.inputs.json` beside this page; a test fails when the "
                "checkout no longer matches them (regenerate with the command above).",
                "",
            ]
        if self.reps_note:
            lines += [self.reps_note, ""]
        lines += ["## Verdicts", "", PAPER_TABLE_HEADER, "|---|---|---|---|"]
        for c in self.claims:
            if c.kind == PAPER_CLAIM:
                lines.append(f"| {c.name} | {c.paper} | {c.ours} | **{c.verdict}** |")
        checks = [c for c in self.claims if c.kind == TESTBED_CHECK]
        if checks:
            lines += [
                "",
                "## Checks this testbed adds (not paper claims; not counted in README)",
                "",
            ]
            lines += [TESTBED_TABLE_HEADER, "|---|---|---|---|"]
            lines += [f"| {c.name} | {c.paper} | {c.ours} | **{c.verdict}** |" for c in checks]
        if self.paper_figures:
            lines += [
                "",
                "## Paper's figures and tables",
                "",
                "Every figure and table of the paper's evaluation: which claim or check above runs "
                "it, or why this page does not.",
                "",
                FIGURES_TABLE_HEADER,
                "|---|---|",
            ]
            lines += [f"| {f} | {status} |" for f, status in self.paper_figures]
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


def shown(path: Path, repo: Path) -> Path:
    """A run folder as the docs show it: relative to the repository when inside it."""
    try:
        return path.relative_to(repo)
    except ValueError:
        return path


def cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
