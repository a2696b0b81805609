# ruff: noqa: E501  (commands and prose are long string literals)
"""Seed 002's pre-registered study (docs/reproductions/preregistration-seed002.md): its 18
plausible settings, the matrices that run them (simulated: every setting; emulated: the main
setting's cells the text singles out), which setting a trial belongs to, and the tables the
page builds from the run folders: each claim's verdict per setting, "reproduced in k of n
plausible settings", and the engines' agreement with its two baselines.

Run the study (resumable: the same command skips finished trials):

    .venv/bin/python -m testbed.reproduce.seed002_study --engine sim [--settings S0,S1] [--reps 10] [--discard-raw]
    .venv/bin/python -m testbed.reproduce.seed002_study --engine emulate [--reps 3]

Each run's trial folders go to results/seed002-study/<run>/ (raw logs, not versioned); after
each matrix the runner appends the summary rows of the trials it finished to the study's
archive, studies/seed002/<run>/ (testbed/reproduce/archive.py), which is committed and is what
the next session resumes from: a trial the archive holds is not run again. Build the page
from the archive: `./run_trials.sh --reproduce seed002 --from studies/seed002`.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from metrics.verdict import INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED
from testbed.matrix import finished_result
from testbed.reproduce import archive
from testbed.reproduce.archive import ok_and_valid, truthy
from testbed.reproduce.seed002_claims import (
    CCS,
    CLAIMS,
    NOT_APPLICABLE,
    NOT_IN_RUN,
    NOT_MEASURED,
    SCENARIOS,
    SCHEDS,
    UNCOUPLED,
    ClaimResult,
    Trials,
    base_scenario,
    decide_all,
)

if TYPE_CHECKING:  # pandas is imported where it is used
    from collections.abc import Callable

    import pandas as pd

T = TypeVar("T")

FAMILIES = "netem-scenarios/seed002-families"
STUDY_DIR = "results/seed002-study"  # the runs' trial folders (raw logs, not versioned)
ARCHIVE_DIR = f"{archive.STUDIES_DIR}/seed002"  # their summary rows, committed
MAIN_LADDER = "720p-top-only"
VIDEO_S = 180  # the paper's clip (Table I: 3 min)
SIM_MIN_REPS, SIM_MAX_REPS, SIM_BLOCK = 10, 30, 5  # pre-registration §5
EMU_MIN_REPS, EMU_MAX_REPS, EMU_BLOCK = 3, 10, 1
# The emulated cells (pre-registration §5; the paper's "default scheduler" is default-oot).
EMU_CCS = ("bbr", "cubic", "lia", "compound")
EMU_SCHEDS = ("default-oot", "tp-sty")
EMU_BASELINES = ("tcp-lte", "tcp-wifi")
EMU_CELLS = len(EMU_CCS) * len(EMU_SCHEDS) * len(SCENARIOS)  # one trial each per repetition


@dataclass(frozen=True)
class Setting:
    """One plausible setting: the main one with one parameter changed (§3)."""

    sid: str
    name: str
    a_suffix: str  # scenario file seed002-families/<A1|A2>-<a_suffix>.toml
    b_suffix: str  # ... <B1|B2>-<b_suffix>.toml
    ladder: str = MAIN_LADDER
    recv_window_bytes: int | None = None

    def scenario_files(self) -> list[str]:
        return [f"{FAMILIES}/{base}-{self.a_suffix if base[0] == 'A' else self.b_suffix}.toml"
                for base in SCENARIOS]  # fmt: skip

    def key(self, base: str) -> tuple[str, str, str]:
        suffix = self.a_suffix if base[0] == "A" else self.b_suffix
        window = "auto" if self.recv_window_bytes is None else str(self.recv_window_bytes)
        return suffix, self.ladder, window


SETTINGS: tuple[Setting, ...] = (
    Setting("S0", "main (LTE 5 Mbit/s, 1 BDP queue, one-rung player, autotuned buffer)", "main", "main"),
    Setting("S1", "LTE 3 Mbit/s", "lte3mbps", "lte3mbps"),
    Setting("S2", "LTE 8 Mbit/s", "lte8mbps", "lte8mbps"),
    Setting("S3", "LTE 15 Mbit/s", "lte15mbps", "lte15mbps"),
    Setting("S4", "LTE trace T-Mobile", "lte-trace-tmobile", "lte-trace-tmobile"),
    Setting("S5", "LTE trace Verizon", "lte-trace-verizon", "lte-trace-verizon"),
    Setting("S6", "LTE trace AT&T driving", "lte-trace-att", "lte-trace-att"),
    Setting("S7", "LTE queue 200 ms", "lteq200ms", "lteq200ms"),
    Setting("S8", "LTE queue 500 ms", "lteq500ms", "lteq500ms"),
    Setting("S9", "Wi-Fi loss A 1 % / B 2 %", "peak1pct", "start2pct"),
    Setting("S10", "Wi-Fi loss A 2 % / B 3 %", "peak2pct", "start3pct"),
    Setting("S11", "Wi-Fi loss A 3 % / B 5 %", "peak3pct", "start5pct"),
    Setting("S12", "Wi-Fi loss A 10 % / B 20 %", "peak10pct", "start20pct"),
    Setting("S13", "Gilbert-Elliott bursts of 3", "ge-burst3", "ge-burst3"),
    Setting("S14", "Gilbert-Elliott bursts of 10", "ge-burst10", "ge-burst10"),
    Setting("S15", "fixed receive buffer 128 KiB", "main", "main", recv_window_bytes=128 * 1024),
    Setting("S16", "fixed receive buffer 16 MiB", "main", "main", recv_window_bytes=16 * 2**20),
    Setting("S17", "ABR player (4-rung ladder)", "main", "main", ladder="720p"),
)  # fmt: skip
MAIN = SETTINGS[0]


def _window_label(window: object) -> str:
    """summary.csv's recv_window_bytes as a label: "auto" or the integer."""
    text = str(window).strip()
    if window is None or text in ("", "auto", "nan", "None"):
        return "auto"
    return str(int(float(text)))


def setting_of(scenario: str, ladder: object, window: object) -> str | None:
    """The setting id of a trial (its scenario file, ladder and receive window), or None for
    a trial outside the study (e.g. the shipped A1.toml)."""
    stem = str(scenario).rsplit("/", 1)[-1].removesuffix(".toml")
    base, _, suffix = stem.partition("-")
    ladder_name = str(ladder) if isinstance(ladder, str) and ladder else "720p"
    key = (suffix, ladder_name, _window_label(window))
    for setting in SETTINGS:
        if base in SCENARIOS and setting.key(base) == key:
            return setting.sid
    return None


@dataclass(frozen=True)
class StudyMatrix:
    """One run of the study: a run_trials.sh command (the page shows it) and its folder."""

    engine: str
    setting: Setting
    ccs: tuple[str, ...]
    scheds: tuple[str, ...]
    transports: tuple[str, ...]
    reps: int
    out: str
    video_s: int = VIDEO_S
    dry_run: bool = False
    # The study's archive folder (relative to the repository): the trials it holds are not
    # run again, and what the matrix finishes is appended. None for a page's own preview run,
    # which is not part of the study.
    archive: str | None = None
    # Delete each trial's raw logs once its summary row is archived (--discard-raw).
    discard_raw: bool = False

    def argv(self) -> list[str]:
        args = ["--scenario", ",".join(self.setting.scenario_files()),
                "--transport", ",".join(self.transports)]  # fmt: skip
        if self.ccs:
            args += ["--cc", ",".join(self.ccs), "--sched", ",".join(self.scheds)]
        args += ["--video-duration", str(self.video_s), "--ladder", self.setting.ladder]
        if self.setting.recv_window_bytes is not None:
            args += ["--recv-window-bytes", str(self.setting.recv_window_bytes)]
        args += ["--reps", str(self.reps), "--out", self.out]
        if self.engine == "sim":
            args += ["--engine", "sim"]
        else:
            args += ["--jobs", "auto"]
        return args

    def command(self) -> str:
        return "./run_trials.sh " + shlex.join(self.argv())


SIM_CCS = (*CCS, UNCOUPLED)  # the simulated matrix's CCs: the paper's six and P24's control


def sim_matrix(setting: Setting, reps: int = SIM_MIN_REPS, root: str = STUDY_DIR) -> StudyMatrix:
    """The full matrix of one setting in the simulator, with the uncoupled control (P24)."""
    return StudyMatrix("sim", setting, SIM_CCS, SCHEDS, ("user",), reps,
                       f"{root}/sim-{setting.sid}", archive=f"{ARCHIVE_DIR}/sim-{setting.sid}")  # fmt: skip


def emulated_matrices(reps: int = EMU_MIN_REPS, root: str = STUDY_DIR) -> list[StudyMatrix]:
    """The main setting's emulated cells, and its single-path baselines (checks C1, C2)."""
    return [
        StudyMatrix(
            "emulate",
            MAIN,
            EMU_CCS,
            EMU_SCHEDS,
            ("user",),
            reps,
            f"{root}/emulate-S0",
            archive=f"{ARCHIVE_DIR}/emulate-S0",
        ),
        StudyMatrix(
            "emulate",
            MAIN,
            (),
            (),
            EMU_BASELINES,
            EMU_MIN_REPS,
            f"{root}/emulate-S0-baselines",
            archive=f"{ARCHIVE_DIR}/emulate-S0-baselines",
        ),  # fmt: skip
    ]


FIRST_ATTEMPTS_SUFFIX = "-first-attempts"


def set_aside_for_retry(run_dir: Path) -> list[str]:
    """Pre-registration §5: a trial that failed or is invalid is re-run once with the same
    seed. Its first attempt moves to `<run>-first-attempts/trials/` (kept for the record), so
    the runner redoes it; a trial whose first attempt is already there keeps its second
    result, whatever it is. Only emulated runs call this: a simulated trial is deterministic,
    so its re-run would repeat its result. Unfinished trials and those stopped for want of
    space (the runner redoes those itself) stay. Returns the trial ids set aside."""
    trials = run_dir / "trials"
    aside = Path(f"{run_dir}{FIRST_ATTEMPTS_SUFFIX}") / "trials"
    moved: list[str] = []
    for trial_dir in sorted(p for p in trials.glob("*") if p.is_dir()):
        result = finished_result(trial_dir)
        if result is None:
            continue
        if result.get("status") == "ok" and truthy(result.get("valid")):
            continue
        if (aside / trial_dir.name).exists():
            continue
        aside.mkdir(parents=True, exist_ok=True)
        trial_dir.rename(aside / trial_dir.name)
        moved.append(trial_dir.name)
    return moved


def archive_of(m: StudyMatrix, repo: Path) -> Path | None:
    """The matrix's archive folder, or None when it has none (a page's own run)."""
    return repo / m.archive if m.archive else None


def finished_ids(folder: Path, engine: str) -> set[str]:
    """The archived trials the study does not run again. Simulated: every one (the simulator
    is deterministic: a re-run repeats the result). Emulated (pre-registration §5): a trial
    whose last attempt is ok and valid, or that has had its one re-run."""
    if not archive.is_archive(folder):
        return set()
    attempts = archive.read_attempts(folder)
    rows = archive.last_attempts(attempts)
    if engine == "sim":
        return set(rows["trial_id"].astype(str))
    counts = archive.attempt_counts(attempts)
    good = (rows["status"] == "ok") & rows["valid"].map(truthy)
    return {
        str(t) for t, ok in zip(rows["trial_id"], good, strict=True) if ok or counts[str(t)] >= 2
    }


def run_study_matrix(m: StudyMatrix, repo: Path) -> int:
    """Runs one matrix through the plan layer: the trials its archive does not hold (and,
    within a session, not those its run folder has finished), then appends what finished to
    the archive, also when stopped."""
    from testbed import matrix, plan
    from testbed.env import kernel_caps
    from testbed.topology import Interrupted

    print(f"  {m.command()}", flush=True)
    options = plan.request(
        scenario=m.setting.scenario_files(), transport=list(m.transports),
        cc=list(m.ccs) or None, sched=list(m.scheds) or None, video_duration=m.video_s,
        reps=m.reps, ladder=m.setting.ladder, recv_window_bytes=m.setting.recv_window_bytes,
    )  # fmt: skip
    store = archive_of(m, repo)
    run_dir: Path | None = None
    code, stopped_while_archiving = 1, False
    try:
        specs = plan.specs_for(options, repo, kernel_caps())
        run_dir = matrix.run_dir_for(m.out, specs, repo)
        done = finished_ids(store, m.engine) if store else set()
        todo = [s for s in specs if s.trial_id() not in done]
        if len(todo) < len(specs):
            print(f"  {len(specs) - len(todo)} of {len(specs)} trials are in {m.archive}: not run again", flush=True)  # fmt: skip
        if not todo:
            code = 0
        else:
            if m.engine == "emulate" and not m.dry_run:
                for trial_id in set_aside_for_retry(run_dir):
                    print(f"  re-running once (pre-registration §5): {trial_id}", flush=True)
            code = plan.run_plan(todo, run_dir, engine=m.engine, jobs=None, repo=repo,
                                 argv=m.argv(), dry_run=m.dry_run, report=False)  # fmt: skip
    except plan.UsageError as exc:
        print(f"seed002 study: {exc}", file=sys.stderr)
        code = 2
    except (Interrupted, KeyboardInterrupt):
        print(STOPPED_TEXT, file=sys.stderr)
        code = 130
    finally:
        if store is not None and run_dir is not None and not m.dry_run:
            stopped_while_archiving = archive_finished(run_dir, store, str(m.archive))
            if m.discard_raw and discard_raw_logs(run_dir, store):
                stopped_while_archiving = True
    return 130 if stopped_while_archiving else code


STOPPED_TEXT = "seed002 study: interrupted; the same command resumes"


def _holding_signals(work: Callable[[], T], default: T) -> tuple[T, bool]:
    """Runs `work` with SIGINT and SIGTERM held until it returns (testbed/topology.py
    shielded_from_signals); its result (`default` if it did not return) and whether a signal
    arrived meanwhile, which stops the study (and says so)."""
    from testbed.topology import Interrupted, shielded_from_signals

    result, stopped = default, False
    try:
        with shielded_from_signals():
            result = work()
    except (Interrupted, KeyboardInterrupt):
        stopped = True
        print(STOPPED_TEXT, file=sys.stderr)
    return result, stopped


def archive_finished(run_dir: Path, store: Path, name: str) -> bool:
    """Appends the run folder's finished trials to the archive. A SIGINT or SIGTERM that
    arrives meanwhile waits until the archive is written (the part is written whole or not at
    all either way); returns whether one arrived, which stops the study."""
    added, stopped = _holding_signals(lambda: archive.add_new(run_dir, store), 0)
    if added:
        print(f"  archived {added} trial attempt(s) in {name} (commit it)", flush=True)
    return stopped


def discard_raw_logs(run_dir: Path, store: Path) -> bool:
    """--discard-raw: the archived trials' folders go (the archive is what the study resumes
    from and what the page reads). A signal meanwhile waits, as while archiving; returns
    whether one arrived, which stops the study."""
    (folders, size), stopped = _holding_signals(
        lambda: archive.discard_archived(run_dir, store), (0, 0)
    )
    if folders:
        print(f"  discarded the raw logs of {folders} archived trial(s) ({size / 1e9:.2f} GB) from {run_dir}", flush=True)  # fmt: skip
    return stopped


def undecided(results: list[ClaimResult]) -> list[str]:
    """The claims with an undecided cell: more seeds could change their verdict."""
    return [r.cid for r in results
            if any(not c.supports and not c.contradicts for c in r.cells)]  # fmt: skip


def run_matrices_until_stopped(matrices: list[StudyMatrix], repo: Path) -> list[int]:
    """Runs the matrices in order; the first that did not run through (130: stopped by
    Ctrl-C or SIGTERM; 2: refused; 3: out of space) ends the study there. The signal handler
    turns only the first signal into an interruption, so a matrix started after it would
    ignore every later Ctrl-C while each one still killed its running trial."""
    codes: list[int] = []
    for m in matrices:
        codes.append(run_study_matrix(m, repo))
        if codes[-1] not in (0, 1):
            break
    return codes


def run_study(
    engine: str, settings: list[Setting], reps: int | None, repo: Path, discard_raw: bool = False
) -> int:
    """Each setting from its minimum repetitions, adding a block of seeds while a claim has
    an undecided cell, up to the maximum (pre-registration §5)."""
    status = 0
    for setting in settings if engine == "sim" else [MAIN]:
        low, high, block = (
            (SIM_MIN_REPS, SIM_MAX_REPS, SIM_BLOCK)
            if engine == "sim"
            else (EMU_MIN_REPS, EMU_MAX_REPS, EMU_BLOCK)
        )
        n = reps or low
        while True:
            matrices = [sim_matrix(setting, n)] if engine == "sim" else emulated_matrices(n)
            matrices = [replace(m, discard_raw=discard_raw) for m in matrices]
            codes = run_matrices_until_stopped(matrices, repo)
            status = max(status, *codes)
            if any(c not in (0, 1) for c in codes):
                return status  # stopped (Ctrl-C, SIGTERM), refused or out of space: no more
            if reps is not None or n >= high:
                break
            rows = ok_and_valid(archive.read_rows(repo / str(matrices[0].archive)))
            rows = rows[rows["rep"] < n]  # the archive may hold more seeds than this step's
            open_claims = undecided(decide_all(rows, engine))
            if not open_claims:
                break
            print(
                f"  {setting.sid}: undecided cells in {', '.join(open_claims)}; {n} -> {min(high, n + block)} repetitions",
                flush=True,
            )
            n = min(high, n + block)
    return status


def run_summary(run: Path) -> tuple[pd.DataFrame, str]:
    """A run's per-trial table and where it came from: an archive's rows (archive.py), its
    summary.csv, or, for a run still going (or one whose report was never built), the same
    table computed from its trial folders (metrics/report.py's reduction, read only: nothing
    is written into the run)."""
    import pandas as pd

    if archive.is_archive(run):
        attempts = archive.read_attempts(run)
        again = sum(1 for n in archive.attempt_counts(attempts).values() if n > 1)
        note = "" if not again else (
            "; 1 trial re-run, its last attempt read" if again == 1
            else f"; {again} trials re-run, their last attempt read"
        )  # fmt: skip
        rows = archive.last_attempts(attempts)
        return rows, f"its archive ({len(archive.parts(run))} parts{note})"
    if (run / "summary.csv").is_file():
        return pd.read_csv(run / "summary.csv"), "its summary.csv"
    from metrics.read import trial_dirs
    from metrics.report import read_manifest, reduce_trials, with_unstarted_trials

    dirs = trial_dirs(run)
    summary, _, _ = reduce_trials(dirs)
    if summary.empty:
        summary = pd.DataFrame(columns=["trial_id", "scenario", "cc", "sched", "status"])
    summary = with_unstarted_trials(summary, read_manifest(run))
    return summary, f"computed from its {len(dirs)} trial folders (no summary.csv: unfinished)"


def by_setting(rows) -> dict[str, object]:
    """The trials of each setting (rows outside the study are dropped)."""
    if not len(rows):
        return {}
    ladders = rows["ladder"] if "ladder" in rows.columns else ["720p"] * len(rows)
    windows = (
        rows["recv_window_bytes"] if "recv_window_bytes" in rows.columns else [None] * len(rows)
    )
    sids = [
        setting_of(s, lad, w) for s, lad, w in zip(rows["scenario"], ladders, windows, strict=True)
    ]
    rows = rows.assign(_setting=sids)
    return {sid: group.drop(columns="_setting") for sid, group in rows.groupby("_setting")}


SHORT = {REPRODUCED: "R", PARTLY: "P", NOT_REPRODUCED: "N", INCONCLUSIVE: "I",
         NOT_APPLICABLE: "n/a", NOT_MEASURED: "–", NOT_IN_RUN: "·"}  # fmt: skip


def seeds_run(rows) -> tuple[int, bool]:
    """A setting's step: the most seeds any cell has, and whether every cell of its full
    matrix (scenarios × CCs and the uncoupled control × schedulers) has that many, i.e. the
    step ran through. `rows` are every trial that ran, the timed-out ones included."""
    if not len(rows):
        return 0, False
    cells = rows.assign(_base=rows["scenario"].map(base_scenario))
    counts = cells.groupby(["_base", "cc", "sched"])["seed"].nunique()
    most = int(counts.max())
    full = len(SCENARIOS) * len(SIM_CCS) * len(SCHEDS)
    return most, len(counts) == full and bool((counts == most).all())


def rule_finished(results: list[ClaimResult], seeds: int, ran_through: bool) -> bool:
    """Pre-registration §5: a setting's study ends when its step ran through and no claim has
    an undecided cell, or when it has the most seeds the rule allows (the page's reading of
    the rule `run_study` applies as it goes)."""
    return ran_through and (seeds >= SIM_MAX_REPS or not undecided(results))


def per_setting_table(
    results: dict[str, list[ClaimResult]], seeds: dict[str, tuple[int, bool]] | None = None
) -> list[str]:
    """Claim × setting verdicts, and per claim "reproduced in k of n plausible settings"; with
    `seeds` (each setting's `seeds_run`), a row of them and whether the study's rule of adding
    seeds has finished there: a setting still running has provisional verdicts, which the
    k-of-n count leaves out."""
    sids = [s.sid for s in SETTINGS if s.sid in results]
    if not sids:
        return ["No study run given: no per-setting verdicts yet (commands above)."]
    done = {
        sid: seeds is None or rule_finished(results[sid], *seeds.get(sid, (0, False)))
        for sid in sids
    }
    head = (
        "| claim | "
        + " | ".join(sids)
        + " | reproduced in k of n settings (partly, not, inconclusive) |"
    )
    rows = [head, "|---" * (len(sids) + 2) + "|"]
    for i, spec in enumerate(CLAIMS):
        outcomes = [results[sid][i].outcome for sid in sids]
        counted = [results[sid][i].outcome for sid in sids if done[sid]]
        decided = [o for o in counted if o in (REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE)]
        k = decided.count(REPRODUCED)
        tally = (f"{k} of {len(decided)} ({decided.count(PARTLY)}, {decided.count(NOT_REPRODUCED)}, "
                 f"{decided.count(INCONCLUSIVE)})") if decided else "–"  # fmt: skip
        rows.append(
            f"| {spec.cid} {spec.scenario} | "
            + " | ".join(SHORT[o] for o in outcomes)
            + f" | {tally} |"
        )
    if seeds is not None:
        rows.append(
            "| seeds per cell | "
            + " | ".join(str(seeds.get(sid, (0, False))[0]) for sid in sids)
            + " | |"
        )
        rows.append(
            "| seeds added | "
            + " | ".join("done" if done[sid] else "**running**" for sid in sids)
            + " | |"
        )
        running = [sid for sid in sids if not done[sid]]
        if running:
            rows += ["", f"**Provisional**: the study is still running {', '.join(running)} "
                     "(its last step did not run through, or a claim has an undecided cell there "
                     f"and the setting has fewer than {SIM_MAX_REPS} seeds), so those columns may "
                     "change; the k-of-n count leaves them out."]  # fmt: skip
    legend = ("R reproduced, P partly, N not reproduced, I inconclusive, n/a premise does not arise, "
              "– the engine cannot measure the metric, · no cell of the claim in the run. "
              "n = settings where the claim was decided or inconclusive.")  # fmt: skip
    names = "; ".join(f"{s.sid} {s.name}" for s in SETTINGS if s.sid in results)
    return [*rows, "", legend, "", f"Settings: {names}."]


# --- engine agreement at the main setting (check C4) -------------------------------------------

AGREEMENT_METRICS = (
    ("wifi_share", "Wi-Fi share of data packets"),
    ("retrans_pkts_wifi", "Wi-Fi retransmissions"),
    ("retrans_pkts_lte", "LTE retransmissions"),
    ("stalls", "buffer underflows"),
    ("stall_total_ms", "stall time, ms"),
    ("mean_bitrate_bps", "mean bitrate"),
)
STALL_METRICS = {"stalls", "stall_total_ms"}


def _cell_intervals(
    t: Trials, metric: str, seeds: set[int] | None = None
) -> dict[tuple[str, str, str], tuple[float, float, float]]:
    """(mean, low, high) per cell over its seeds (metrics/stats.py interval)."""
    from metrics.stats import interval

    out = {}
    for key in t.present:
        values = t.seeds(metric, *key)
        sample = [v for s, v in values.items() if seeds is None or s in seeds]
        if sample:
            found = interval(sample, metric)
            out[key] = (found.estimate, found.low, found.high)
    return out


def _agreement(a: dict, b: dict) -> tuple[float, float, int]:
    """Kendall τ-b of the cell means, and the share of cells whose intervals overlap."""
    from metrics.stats import kendall_tau_b

    keys = sorted(set(a) & set(b))
    if not keys:
        return math.nan, math.nan, 0
    x, y = [a[k][0] for k in keys], [b[k][0] for k in keys]
    tau = kendall_tau_b(x, y)  # NaN when either side has no variation

    def overlap(p, q) -> bool:
        lo1, hi1 = (p[1], p[2]) if p[1] == p[1] else (p[0], p[0])
        lo2, hi2 = (q[1], q[2]) if q[1] == q[1] else (q[0], q[0])
        return lo1 <= hi2 and lo2 <= hi1

    return tau, sum(overlap(a[k], b[k]) for k in keys) / len(keys), len(keys)


def agreement_table(emu: Trials, sim: Trials) -> list[str]:
    """Per metric: the engines' agreement over the emulated cells, beside emulation against
    its own other repetitions (odd vs even seeds) and a simulator that never stalls."""
    seeds = sorted({int(s) for s in emu.frame["seed"]})
    odd, even = {s for s in seeds if s % 2}, {s for s in seeds if not s % 2}
    fmt = lambda v: "–" if v != v else f"{v:.2f}"  # noqa: E731
    rows = ["| metric | sim vs emulation: τ-b | intervals overlap | emulation odd vs even seeds: τ-b | overlap | never-stalling simulator: τ-b | overlap | cells |",
            "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for metric, label in AGREEMENT_METRICS:
        if not emu.has(metric) or not sim.has(metric):
            rows.append(f"| {label} | – | – | – | – | – | – | 0 |")
            continue
        e = _cell_intervals(emu, metric)
        s = {k: v for k, v in _cell_intervals(sim, metric).items() if k in e}
        tau, share, n = _agreement(s, e)
        tau_self, share_self, _ = _agreement(
            _cell_intervals(emu, metric, odd), _cell_intervals(emu, metric, even)
        )
        if metric in STALL_METRICS:
            flat = {k: (0.0, 0.0, 0.0) for k in s}
            tau_flat, share_flat, _ = _agreement(flat, e)
        else:
            tau_flat, share_flat = tau, share
        rows.append(
            f"| {label} | {fmt(tau)} | {fmt(share)} | {fmt(tau_self)} | {fmt(share_self)} | {fmt(tau_flat)} | {fmt(share_flat)} | {n} |"
        )
    return [
        *rows,
        "",
        "τ-b: Kendall's rank correlation of the cell means (– where a side has no variation); "
        "overlap: the share of cells whose 95 % intervals (metrics/stats.py) overlap. The first "
        "baseline is emulation against itself (odd against even seeds): agreement no simulator "
        "can be expected to beat. The second is a simulator whose stall metrics are 0 everywhere "
        "(other metrics as the simulator's): agreement on stalls no better than it means the "
        "simulator's stalls carry no information.",
        "",
        "Where the engines disagree cell by cell, and why: "
        "[engine-agreement-seed002.md](engine-agreement-seed002.md) (the request gap the "
        "simulator lacked until d835440, and what still differs).",
    ]


def main(argv: list[str] | None = None, repo: Path | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.reproduce.seed002_study",
                                     description="Run seed 002's pre-registered study (resumable).")  # fmt: skip
    parser.add_argument("--engine", choices=("sim", "emulate"), default="sim")
    parser.add_argument(
        "--settings", default="all", help="S0,S1,... or all (sim only; emulate runs S0)"
    )
    parser.add_argument(
        "--reps",
        type=int,
        default=None,
        help="fixed repetitions (default: from the minimum, adding blocks while a claim is undecided)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the commands only")
    parser.add_argument(
        "--discard-raw",
        action="store_true",
        help="delete each trial's folder under results/ once its summary row is in the archive "
        "(a simulated setting leaves ~3.3 GB of raw logs; the page needs only the archive)",
    )
    args = parser.parse_args(argv)
    known = {s.sid: s for s in SETTINGS}
    wanted = list(known) if args.settings == "all" else args.settings.split(",")
    bad = [w for w in wanted if w not in known]
    if bad:
        print(
            f"seed002 study: --settings {','.join(bad)}: unknown; valid: {', '.join(known)}, all",
            file=sys.stderr,
        )
        return 2
    if args.reps is not None and args.reps < 1:
        print(f"seed002 study: --reps {args.reps}: must be at least 1", file=sys.stderr)
        return 2
    settings = [known[w] for w in wanted]
    if args.dry_run:
        ms = (
            [sim_matrix(s, args.reps or SIM_MIN_REPS) for s in settings]
            if args.engine == "sim"
            else emulated_matrices(args.reps or EMU_MIN_REPS)
        )
        for m in ms:
            print(m.command())
        return 0
    repo = repo or Path(__file__).resolve().parents[2]
    return run_study(args.engine, settings, args.reps, repo, discard_raw=args.discard_raw)


if __name__ == "__main__":
    sys.exit(main())
