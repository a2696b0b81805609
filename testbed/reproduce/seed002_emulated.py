# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""Seed 002's emulated subset: the cells selected from run folders that may hold more, where
they came from, what they cost, the claims checked on them, the picture-discard claims and
the simulated twin of the same cells."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from testbed.reproduce.base import (
    NOT_REPRODUCED,
    NOT_RUN,
    PARTLY,
    REPRODUCED,
    SEED002_VIDEO_S,
    Claim,
    Options,
    Runner,
    median,
    shown,
)
from testbed.reproduce.seed002_matrix import (
    GOOD_MAX_STALLS,
    POOR_MIN_STALLS,
    SEED002_CCS,
    SEED002_DEFAULT_REPS,
    SEED002_EMULATED_CCS,
    SEED002_EMULATED_OPTIONAL_CCS,
    SEED002_EMULATED_SCHEDS,
    SEED002_SCENARIOS,
    SEED002_SCHEDS,
    MatrixRun,
    cell_means,
    kendall_tau,
    run_matrix,
    seed002_claims,
    seed002_matrix,
    seed002_matrix_args,
)

if TYPE_CHECKING:  # pandas is imported where it is used (the simulated seeds do not need it)
    import pandas as pd


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
    stalls = cell_means(sel.trials, "stalls")
    discards = cell_means(sel.trials, "discarded_frames")
    keys = sorted(set(stalls) & set(discards))
    if not keys:
        return Claim(name, paper, f"{what}: no cell with both figures", NOT_RUN, DISCARD_RULE)
    tau = kendall_tau([stalls[k] for k in keys], [discards[k] for k in keys])
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
                  opts.reps_or(SEED002_DEFAULT_REPS), opts.emulated_video_s,
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
    reps = opts.reps_or(SEED002_DEFAULT_REPS)
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
        rows.append(f"| `{shown(s.run, repo)}` | {s.commit[:12]} | `{s.command}` | {s.n_rows} | "
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
    twins = [run for run in r.opts.runs_of_engine("sim") if run_clip(run) == sel.subset.video_s]
    twin = select_subset(twins, sel.subset) if twins else None
    ccs = tuple(c for c in SEED002_CCS if c in sel.subset.ccs + tuple(sel.optional_present()))
    if twin is None or any(twin.counts.get(k, 0) == 0 for k in sel.counts):
        out = r.run_dir / "sim-twin"
        status = run_matrix(seed002_twin(r.opts, out, ccs), r.repo)
        r.commands.append(
            "./run_trials.sh " + shlex.join(seed002_twin(r.opts, shown(out, r.repo), ccs).argv())
        )
        if status not in (0, 1):
            return [f"Simulated twin: the matrix exited {status}; no comparison."], None
        twin = select_subset([out], sel.subset)
    s_sim, s_emu = cell_means(twin.trials, "stalls"), cell_means(sel.trials, "stalls")
    common = sorted(set(s_sim) & set(s_emu))
    tau = kendall_tau([s_sim[k] for k in common], [s_emu[k] for k in common])

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
        f"{', '.join(f'`{shown(s.run, r.repo)}`' for s in twin.sources)}): over the {len(common)} "
        f"common cells Kendall's τ-b between the two engines' mean underflows {tau:.2f}; the "
        f"good/between/poor word agrees in {agree} of {len(common)} cells.",
        "",
        *rows,
    ], twin


def run_clip(run: Path) -> int | None:
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
