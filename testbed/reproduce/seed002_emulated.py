# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""Seed 002's run folders and its emulated part: reading a run (summary.csv, or its trial
folders while it is unfinished), which of its trials belong to the pre-registered study and
where they came from, and the page's emulated section: the main setting's emulated cells,
their verdicts, the single-path baselines and the engines' agreement with its baselines."""

from __future__ import annotations

import shlex
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from testbed.engine_sim import PLAYER_UNFINISHED
from testbed.env import DIRTY_MARK, short_commit
from testbed.players import session_timeout_s
from testbed.reproduce.archive import (
    COMMIT_COLUMN,
    CONTENT_COLUMN,
    ENV_COLUMN,
    NOT_RECORDED,
    environment_label,
    read_json,
    truthy,
)
from testbed.reproduce.base import NOT_RUN, TESTBED_CHECK, Claim, shown
from testbed.reproduce.seed002_claims import (
    NOT_MEASURED,
    SCENARIOS,
    ClaimResult,
    Trials,
    base_scenario,
    claim_outcome,
    decide_all,
    discards_follow_stalls,
)
from testbed.reproduce.seed002_study import (
    EMU_BASELINES,
    EMU_CCS,
    EMU_CELLS,
    EMU_MAX_REPS,
    EMU_MIN_REPS,
    EMU_SCHEDS,
    STUDY_DIR,
    VIDEO_S,
    agreement_table,
    by_setting,
    emulated_matrices,
    run_summary,
)

if TYPE_CHECKING:  # pandas is imported where it is used
    import pandas as pd

# Start to start per emulated trial, measured on this machine for 60 s clips (66.7 s: the
# seed 002 page at commit af64071, 71 trials); the 180 s estimate adds the clip's extra 120 s.
MEASURED_SLOT_60S_S = 66.7
SLOT_180S_S = MEASURED_SLOT_60S_S + (VIDEO_S - 60)


def run_engine_of(run: Path) -> str:
    return "sim" if read_json(run / "run.json").get("engine") == "sim" else "emulate"


def study_runs(paths: tuple[Path, ...] | list[Path]) -> list[Path]:
    """Run folders or their archives: each path that holds a run.json, or those one level
    below a folder that holds none (e.g. studies/seed002, results/seed002-study)."""
    out = []
    for path in paths:
        if (path / "run.json").is_file():
            out.append(path)
        elif path.is_dir():
            out += sorted(p for p in path.iterdir() if (p / "run.json").is_file())
    return out


@dataclass
class RunSource:
    """One run folder: what it holds and what the page took from it."""

    run: Path
    engine: str
    commit: str
    command: str
    summary_from: str
    n_rows: int
    n_used: int  # in the study, ok and valid
    n_not_ok: int  # in the study, failed, invalid or unfinished
    n_outside: int  # not a study setting (another scenario file, live mode, ...)
    commits: tuple[str, ...] = ()  # the trials' own commits (trial.json), emulated runs
    contents: tuple[str, ...] = ()  # the content folders its trials played (an archive's)
    # The machines its trials ran on (an archive's): (environment_label, trials), most first.
    machines: tuple[tuple[str, int], ...] = ()


def _one_commit_or_not(commits: list[str]) -> str:
    """Whether the trials ran one commit's code: a `-dirty` mark says tracked files differed
    from that commit, which one commit with and without it cannot tell apart from a change of
    code; trial.json's env.git_dirty_paths (newer trials) or the study's notes say which."""
    if len(commits) == 1:
        return " (all on one commit)."
    if len({c.removesuffix(DIRTY_MARK) for c in commits}) == 1:
        return (" (**one commit, some trials with tracked files differing from it**: the study "
                "asks for one commit; the pre-registration's changes say which files differed).")  # fmt: skip
    return " (**more than one commit**: the study asks for one)."


def _trial_commits(run: Path, ids) -> list[str]:
    return [str((read_json(run / "trials" / str(t) / "trial.json").get("env") or {}).get("git_commit") or "not recorded")
            for t in ids]  # fmt: skip


# A simulated trial that its virtual-time limit ended before the video did: it failed by
# pre-registration §5 (and fails again with the same seed: the simulator is deterministic),
# but its stalls up to the limit are a measurement (a lower bound).
SIM_TIMED_OUT = f"{PLAYER_UNFINISHED} (timeout)"
# An emulated trial whose player session ran out of time before the video ended
# (testbed/players.py marks it invalid with this reason first): its stalls up to then are a
# measurement too, censored at the timeout.
EMU_TIMED_OUT = "player session timed out before the video ended"
# The outcome of a check whose registered rule is a report, not a test (C2, C4).
REPORTED = "reported"


def collect(
    runs: list[Path], engine: str, live: bool = False, timed_out: bool = False
) -> tuple[pd.DataFrame, list[RunSource]]:
    """The ok and valid study trials of one engine's runs (VOD; `live` for live mode) with a
    `setting` and a `commit` column, and one RunSource per run. `timed_out` adds the trials
    whose video did not end in the time given, which the pre-registered rule excludes:
    simulated ones that met the virtual-time limit ([`SIM_TIMED_OUT`], for a sensitivity
    line) and emulated ones invalid because the player session timed out
    ([`EMU_TIMED_OUT`], for check C2's report)."""
    import pandas as pd

    from testbed.reproduce.seed002_study import setting_of

    frames, sources = [], []
    for run in (r for r in runs if run_engine_of(r) == engine):
        summary, summary_from = run_summary(run)
        manifest = read_json(run / "run.json")
        if summary.empty:
            continue
        ladders = (
            summary["ladder"] if "ladder" in summary.columns else pd.Series(["720p"] * len(summary))
        )
        windows = (
            summary["recv_window_bytes"]
            if "recv_window_bytes" in summary.columns
            else pd.Series([None] * len(summary))
        )
        settings = [
            setting_of(s, lad, w)
            for s, lad, w in zip(summary["scenario"], ladders, windows, strict=True)
        ]
        is_live = summary["trial_id"].astype(str).str.contains("__live")
        inside = pd.Series([s is not None for s in settings], index=summary.index) & (
            is_live == live
        )
        ok = (summary.get("status", "ok") == "ok") & summary.get(
            "valid", pd.Series(True, index=summary.index)
        ).map(truthy)
        if timed_out and engine == "sim" and "reason" in summary.columns:
            ok = ok | (summary["reason"] == SIM_TIMED_OUT)
        if timed_out and engine == "emulate" and "invalid_reason" in summary.columns:
            ok = ok | (
                (summary.get("status", "ok") == "ok")
                & summary["invalid_reason"].astype(str).str.startswith(EMU_TIMED_OUT)
            )
        used = summary[inside & ok].assign(setting=[s for s, keep in zip(settings, inside & ok, strict=True) if keep],
                                           source_run=str(run))  # fmt: skip
        commit = str(manifest.get("git_commit") or "not recorded")
        if COMMIT_COLUMN in summary.columns:  # an archive records each trial's commit
            commits = [str(c) for c in summary.loc[used.index, COMMIT_COLUMN]]
        elif engine == "emulate":
            commits = _trial_commits(run, used["trial_id"])
        else:
            commits = [commit] * len(used)
        used = used.assign(commit=commits)
        contents = (
            tuple(sorted({str(c) for c in summary[CONTENT_COLUMN]}))
            if CONTENT_COLUMN in summary.columns
            else ()
        )
        machines = (
            tuple(sorted(((str(k), int(n)) for k, n in summary[ENV_COLUMN].fillna(NOT_RECORDED).map(environment_label).value_counts().items()),
                         key=lambda m: (-m[1], m[0])))
            if ENV_COLUMN in summary.columns
            else ()
        )  # most trials first, then by name  # fmt: skip
        argv = manifest.get("argv")
        sources.append(RunSource(run, engine, commit, "./run_trials.sh " + shlex.join(map(str, argv)) if argv else "not recorded",
                                 summary_from, len(summary), len(used), int((inside & ~ok).sum()), int((~inside).sum()),
                                 tuple(sorted(set(commits))), contents, machines))  # fmt: skip
        frames.append(used)
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return rows, sources


def content_label(content: str, repo: Path) -> str:
    """A content folder's name and the FFmpeg that encoded it (its ladder.json, when this
    checkout has the folder): the simulated player's segment sizes are those bytes."""
    params = read_json(repo / "cache" / "content" / content / "ladder.json").get("params") or {}
    ffmpeg = str(params.get("ffmpeg") or "").removeprefix("ffmpeg version ").split(" ")[0]
    return f"{content} (FFmpeg {ffmpeg})" if ffmpeg else content


def provenance(sources: list[RunSource], repo: Path) -> list[str]:
    rows = ["| run folder | engine | commit (run.json) | trials' commits | content played | machine (kernel, browser): trials | trials | used (ok, valid, in the study) | not ok | outside the study | read from |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for s in sources:
        contents = ", ".join(content_label(c, repo) for c in s.contents) or NOT_RECORDED
        machines = "; ".join(f"{label}: {n}" for label, n in s.machines) or NOT_RECORDED
        rows.append(f"| `{shown(s.run, repo)}` | {s.engine} | {short_commit(s.commit)} | {', '.join(short_commit(c) for c in s.commits) or '–'} | "
                    f"{contents} | {machines} | {s.n_rows} | {s.n_used} | {s.n_not_ok} | {s.n_outside} | {s.summary_from} |")  # fmt: skip
    # The commands as run.json recorded them, with this checkout's absolute path taken out (a
    # page must not name the machine it was made on).
    commands = [f"* `{shown(s.run, repo)}`: `{s.command.replace(f'{repo}/', '')}`" for s in sources]
    return [*rows, "", "Their commands:", "", *commands]


def _hm(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min"


def plan_text(measured_wall_s: list[float] | None = None) -> list[str]:
    """The emulated study: its cells, commands, and duration estimate: from the wall times
    of the trials run so far (`measured_wall_s`), else extrapolated from 60 s clips."""
    main, baselines = emulated_matrices()
    n_baselines = len(EMU_BASELINES) * len(SCENARIOS) * EMU_MIN_REPS
    n_min = EMU_CELLS * EMU_MIN_REPS + n_baselines
    n_max = EMU_CELLS * EMU_MAX_REPS + n_baselines
    if measured_wall_s:
        slot_s = statistics.median(measured_wall_s)
        slot_source = (
            f"the median wall time of the {len(measured_wall_s)} emulated trials used below, "
            "from their summary rows: a trial lasts its clip, its stalls and its set-up; the "
            "moments between two trials are not counted"
        )
    else:
        slot_s = SLOT_180S_S
        slot_source = (
            f"{MEASURED_SLOT_60S_S} s measured start to start for 60 s clips on this machine, "
            "plus the 120 s longer clip; an extrapolation"
        )
    return [
        f"Cells (pre-registration §5): CC {{{', '.join(EMU_CCS)}}} × scheduler {{{', '.join(EMU_SCHEDS)}}} "
        f"× A1, A2, B1, B2 at the main setting, {VIDEO_S} s clips (the paper's 3 min), the one-rung "
        f"player, {EMU_MIN_REPS} to {EMU_MAX_REPS} repetitions (seeds 1…), plus the single-path "
        f"baselines {', '.join(EMU_BASELINES)} ({EMU_MIN_REPS} each): dash.js in headless Chromium "
        "over linkemu, real time, root, a quiet machine: the player has a CPU of its own, on "
        "which nothing else runs, because the drop attribution counts a saturated player CPU as "
        "evidence against the decoder whoever used it (docs/PLAYER.md; the pre-registration's "
        "changes say what ran beside the trials). `default-oot` is the paper's 'default "
        "scheduler (LRF)': the kernel's default with its opportunistic reinjection and penalisation "
        "(docs/algorithms/lrf.md).",
        "",
        "Commands (each resumes: re-running it skips finished trials):",
        "",
        "* `.venv/bin/python -m testbed.reproduce.seed002_study --engine emulate` (runs both below, "
        f"from {EMU_MIN_REPS} repetitions, adding one while a claim has an undecided cell, up to {EMU_MAX_REPS})",
        f"* or by hand: `{main.command()}` and `{baselines.command()}` (raise `--reps` to add seeds)",
        "* then: `./run_trials.sh --reproduce seed002 --from studies/seed002` builds this page.",
        "",
        f"Expected duration, one trial at a time (2 CPUs: `--jobs auto` runs one): about "
        f"{slot_s:.0f} s per trial ({slot_source}), so {n_min} trials at "
        f"{EMU_MIN_REPS} repetitions take about {_hm(n_min * slot_s)}, and at most {n_max} trials "
        f"({EMU_MAX_REPS} repetitions) about {_hm(n_max * slot_s)}. The first run also encodes "
        f"the {VIDEO_S} s one-rung content (minutes, once).",
    ]


def _claims_table(results: list[ClaimResult]) -> list[str]:
    rows = ["| claim (emulated cells only) | emulated | verdict |", "|---|---|---|"]
    for r in results:
        rows.append(
            f"| {r.cid} {r.scenario}: {r.text} ({r.paper}) | {r.summary()} | **{r.outcome}** |"
        )
    return rows


def _played_to_end(rows: pd.DataFrame) -> pd.Series:
    """Per trial: did the player play the video to its end (not cut by the timeout)?"""
    import pandas as pd

    if "player_end" not in rows.columns:
        return pd.Series(True, index=rows.index)
    return rows["player_end"].astype(str) != "timeout"


def wifi_alone_report(rows: pd.DataFrame) -> str:
    """C2, per family: the underflows per trial of the trials that played to the end, with
    their interval; and the trials that could not play the video in the session's time,
    with how much they played and their underflows by then (censored at the timeout)."""
    from metrics.stats import interval

    families = rows["scenario"].map(base_scenario)
    parts = []
    for family in sorted(set(families)):
        mine = rows[families == family]
        finished = _played_to_end(mine)
        done, cut = mine[finished], mine[~finished]
        text = []
        if len(done):
            iv = interval([float(v) for v in done["stalls"]], "stalls")
            text.append(f"{iv.estimate:.3g} [{iv.low:.3g}, {iv.high:.3g}] underflows per trial "
                        f"(n {iv.n}, played to the end)")  # fmt: skip
        if len(cut):
            played, stalls = cut["played_s"].astype(float), cut["stalls"].astype(float)
            text.append(
                f"{len(cut)} of {len(mine)} trials did not play the video to the end: the player "
                f"session timed out ({session_timeout_s(VIDEO_S)} s, twice the clip) after "
                f"{played.min():.0f}–{played.max():.0f} s of it, with "
                f"{stalls.min():.0f}–{stalls.max():.0f} underflows by then (censored at the "
                "timeout; invalid, so in no other figure)"
            )
        parts.append(f"{family}: " + "; ".join(text))
    return ". ".join(parts)


def baseline_checks(rows: pd.DataFrame) -> list[Claim]:
    """C1 (LTE alone cannot sustain the top rung: underflows per trial above 0) and C2 (Wi-Fi
    alone: underflows reported), from the emulated single-path baselines. `rows` may hold
    trials whose player session timed out (collect's `timed_out`): C1 leaves them out, as
    pre-registration §5 does; C2 reports them apart."""
    from metrics.verdict import check_direction

    out = []
    for transport, cid, rule in (("tcp-lte", "C1", "LTE alone cannot sustain the top rung: mean underflows per trial above 0 (check_direction against 0), one-rung player, main setting"),
                                 ("tcp-wifi", "C2", "Wi-Fi alone in its lossy phases: underflows per trial per family, reported with their interval; trials that could not play the video in the session's time are reported apart")):  # fmt: skip
        mine = (
            rows[rows["transport"] == transport]
            if len(rows) and "transport" in rows.columns
            else rows.iloc[0:0]
        )
        name = f"{cid}: {transport} at the main setting"
        if cid == "C2" and len(mine):
            out.append(Claim(name, rule, wifi_alone_report(mine), REPORTED, kind=TESTBED_CHECK))
            continue
        mine = mine[_played_to_end(mine)]
        if not len(mine):
            out.append(
                Claim(
                    name,
                    rule,
                    f"not run: `{emulated_matrices()[1].command()}`",
                    NOT_RUN,
                    kind=TESTBED_CHECK,
                )
            )
            continue
        stalls = [float(v) for v in mine["stalls"]]
        verdict = check_direction(stalls, [0.0] * len(stalls), "higher", paired=True)
        out.append(Claim.decided(name, rule, verdict, kind=TESTBED_CHECK))
    return out


def live_check(runs: list[Path]) -> Claim:
    """C5: picture discards follow underflows in live mode (the paper never used it)."""
    name = "C5: picture discards follow underflows, live mode"
    rule = "as P23 on emulated live-mode trials of the study's cells (the paper used VOD only)"
    rows, _ = collect(runs, "emulate", live=True)
    if not len(rows):
        cells = replace(emulated_matrices()[0], out=f"{STUDY_DIR}/emulate-S0-live", archive=None)
        return Claim(
            name,
            rule,
            "not run: no emulated live-mode run of the study's cells given (the study does not "
            f"plan one; {EMU_CELLS * EMU_MIN_REPS} trials of {VIDEO_S} s): "
            f"`{cells.command()} --video-mode live`, then add that folder to `--from`",
            NOT_RUN,
            kind=TESTBED_CHECK,
        )
    cells = discards_follow_stalls(Trials(rows))
    if isinstance(cells, str):
        return Claim(
            name,
            rule,
            "no network-attributed discard column in these runs",
            NOT_MEASURED,
            kind=TESTBED_CHECK,
        )
    result = ClaimResult("C5", "all", name, "", rule, cells, claim_outcome(cells))
    return Claim(name, rule, result.summary(), result.outcome, kind=TESTBED_CHECK)


def emulated_section(
    runs: list[Path], sim_main: pd.DataFrame | None, repo: Path
) -> tuple[str, list[Claim]]:
    """The page's emulated section (main setting) and the checks it decides (C1, C2, C4)."""
    rows, sources = collect(runs, "emulate")
    with_timed_out, _ = collect(runs, "emulate", timed_out=True)
    walls = (
        [float(w) for w in rows["wall_duration_s"].dropna()]
        if "wall_duration_s" in rows.columns
        else []
    )
    lines = plan_text(walls) + [""]
    main = by_setting(rows).get("S0")
    baselines = by_setting(with_timed_out).get("S0")
    checks = baseline_checks(baselines if baselines is not None else with_timed_out)
    if main is None or not len(main[main["transport"] == "user"]):
        lines += ["**Not run yet**: no emulated trial of the main setting in the given runs. Emulated video "
                  "trials are valid only on a quiet machine (docs/PLAYER.md); run the commands above on one."]  # fmt: skip
        checks.append(Claim("C4: simulator vs emulator at the main setting", "per metric: τ-b and interval overlap beside two baselines",
                            "not run: no emulated trial", NOT_RUN, kind=TESTBED_CHECK))  # fmt: skip
        return "\n".join(lines), checks
    main = main[
        (main["transport"] == "user") & main["cc"].isin(EMU_CCS) & main["sched"].isin(EMU_SCHEDS)
    ]
    commits = main["commit"].value_counts().sort_index()
    counts = main.groupby(["scenario", "cc", "sched"]).size()
    lines += provenance([s for s in sources if s.n_used or s.n_not_ok], repo) + [""]
    lines += [
        f"Valid trials used: {len(main)} in {len(counts)} of {EMU_CELLS} cells "
        f"({counts.min()} to {counts.max()} per cell); trials' commits: "
        + ", ".join(f"{short_commit(c)} ({n})" for c, n in commits.items())
        + _one_commit_or_not(list(commits.index)),
        "",
        "Verdicts on the emulated cells only (groups restricted to the CCs run: the LIA variants are LIA):",
        "",
        *_claims_table(decide_all(main, "emulate")),
        "",
    ]
    if sim_main is not None and len(sim_main):
        sim_cells = sim_main[sim_main["cc"].isin(EMU_CCS) & sim_main["sched"].isin(EMU_SCHEDS)]
        lines += ["**Engine agreement (check C4)** at the main setting, over the emulated cells:", "",
                  *agreement_table(Trials(main), Trials(sim_cells))]  # fmt: skip
        checks.append(Claim("C4: simulator vs emulator at the main setting", "per metric: τ-b and interval overlap beside two baselines",
                            "see the engine-agreement table in 'Emulated study'", REPORTED, kind=TESTBED_CHECK))  # fmt: skip
    else:
        checks.append(Claim("C4: simulator vs emulator at the main setting", "per metric: τ-b and interval overlap beside two baselines",
                            "no simulated main-setting run to compare with", NOT_RUN, kind=TESTBED_CHECK))  # fmt: skip
    return "\n".join(lines), checks
