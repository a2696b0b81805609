"""summary.csv, aggregate.csv and a self-contained report.html for one run folder.

`build(run_dir)` only reads the trial folders (results/<run>/trials/*/) and writes
into run_dir; it never runs anything, so `./run_trials.sh --report results/<run>`
can rebuild a report at any time. The HTML embeds every figure as a base64 PNG and
needs no network or other file.
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import functools
import hashlib
import html
import json
import math
import multiprocessing
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from metrics import plots
from metrics.aggregate import RANKED_METRICS, aggregate, compare_run, counted, rank_table
from metrics.decided import kinds, reach_line, summary_lines
from metrics.qoe import LAMBDA_SWITCH, MU_STALL, MU_STARTUP, p1203_status
from metrics.read import read_json, read_trial, trial_dirs
from metrics.tables import (
    KNOWN_PATHS,
    SPEC_COLUMNS,
    order_summary_columns,
    path_intervals_table,
    qoe_segments_table,
    samples_table,
    segments_table,
    spec_values,
    stalls_table,
    summary_table,
)

SUMMARY_CSV = "summary.csv"
TABLES_DIR = "tables"  # stalls, segments, samples, path_intervals as .csv.gz
AGGREGATE_CSV = "aggregate.csv"
RANKING_CSV = "ranking.csv"  # each cell's decided rank per scenario and metric
COMPARISONS_CSV = "comparisons.csv"  # every paired comparison, with Holm-adjusted p
# Per-trial distributions (CDFs) are drawn for cells with at least this many counted trials.
CDF_MIN_TRIALS = 5
REPORT_HTML = "report.html"
RUN_JSON = "run.json"  # optional: the orchestrator's record of the run's command and matrix
NOT_STARTED_REASON = "not started: listed in run.json, no trial folder"

# Columns of the per-scenario table in the report (all of them are in summary.csv).
REPORT_METRICS = [
    ("stalls", "stalls"),
    ("stall_total_ms", "stall total (ms)"),
    ("discarded_frames", "discarded frames"),
    ("discarded_frames_network", "discarded: stream only"),
    ("live_latency_median_s", "live latency median (s)"),
    ("dropped_frames", "dropped frames"),
    ("dropped_frames_network", "drops: network"),
    ("dropped_frames_decoder", "drops: decoder"),
    ("qoe_lin_per_segment", "QoE per segment"),
    ("startup_delay_ms", "startup (ms)"),
    ("mean_bitrate_bps", "mean bitrate (b/s)"),
    ("cpu_player_s", "player CPU (s)"),
    ("cpu_testbed_s", "testbed CPU (s)"),
    ("loadavg_1m_max", "load avg max"),
    *[(f"pkts_down_{p}", f"pkts down {p}") for p in KNOWN_PATHS],
    *[(f"retrans_pkts_{p}", f"retrans {p}") for p in KNOWN_PATHS],
    *[(f"probe_goodput_down_bps_{p}", f"probe goodput down {p} (b/s)") for p in KNOWN_PATHS],
    *[(f"probe_rtt_median_ms_{p}", f"probe RTT median {p} (ms)") for p in KNOWN_PATHS],
]
TRIAL_TABLE_COLUMNS = [
    "trial_id",
    "status",
    "valid",
    "paths_unused",
    "stalls",
    "stall_total_ms",
    "discarded_frames",
    "skipped_media_s",
    "live_latency_median_s",
    "dropped_frames",
    "dropped_frames_network",
    "dropped_frames_decoder",
    "total_frames",
    "qoe_lin_per_segment",
    "startup_delay_ms",
    "mean_bitrate_bps",
    *[f"bytes_down_{p}" for p in KNOWN_PATHS],
    *[f"retrans_pkts_{p}" for p in KNOWN_PATHS],
    "cpu_isolation",
    "cpu_player_s",
    "cpu_testbed_s",
    "loadavg_1m_max",
]


class NotARunError(ValueError):
    """The folder given is not a run folder (no trials/ inside)."""


def build(run_dir: Path) -> Path:
    """Write summary.csv, aggregate.csv and report.html into run_dir; return the report."""
    run_dir = Path(run_dir)
    if not (run_dir / "trials").is_dir():
        raise NotARunError(
            f"{run_dir}: not a run folder: expected {run_dir / 'trials'}/ holding one folder "
            "per trial (results/<run>/trials/<trial-id>/, docs/CONTRACTS.md §2)"
        )
    dirs = trial_dirs(run_dir)  # listed once: the reduction and the timeline use it
    summary, tables, environments = reduce_trials(dirs)
    manifest = read_manifest(run_dir)
    summary = with_unstarted_trials(summary, manifest)
    # Write-then-rename: a full disk must not leave a cut summary.csv behind.
    summary.to_csv(run_dir / f".{SUMMARY_CSV}.tmp", index=False)
    os.replace(run_dir / f".{SUMMARY_CSV}.tmp", run_dir / SUMMARY_CSV)
    agg = aggregate(summary)
    agg.to_csv(run_dir / AGGREGATE_CSV, index=False)
    # A large run's paired statistics and its figures each take many seconds: the statistics
    # run in a forked process while this one writes the tables and draws the figures.
    beside = len(dirs) >= PARALLEL_MIN_TRIALS and (os.cpu_count() or 1) > 1
    context = multiprocessing.get_context("fork")
    with (
        concurrent.futures.ProcessPoolExecutor(1, mp_context=context)
        if beside
        else _Inline() as pool
    ):
        statistics = pool.submit(_statistics, run_dir, summary)
        write_tables(run_dir / TABLES_DIR, tables, source_key=_tables_key(dirs))
        page = render_html(run_dir, environments, summary, agg, tables, manifest, statistics, dirs)
    if isinstance(manifest, dict) and manifest.get("engine") == "sim":
        page = mark_simulated(page)
    report = run_dir / REPORT_HTML
    partial = report.with_name(REPORT_HTML + ".partial")
    partial.write_text(page, encoding="utf-8")
    partial.replace(report)  # never a half-written report
    return report


def _statistics(run_dir: Path, summary: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run's paired comparisons and decided ranks, written as comparisons.csv and
    ranking.csv."""
    comparisons = compare_run(summary)
    comparisons.to_csv(run_dir / COMPARISONS_CSV, index=False)
    ranks = rank_table(comparisons, summary)
    ranks.to_csv(run_dir / RANKING_CSV, index=False)
    return comparisons, ranks


class _Inline:
    """An executor that runs what is submitted at once, in this process (a small run)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def submit(self, function: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        done: concurrent.futures.Future = concurrent.futures.Future()
        done.set_result(function(*args))
        return done


TABLE_FUNCTIONS = {
    "stalls": stalls_table,
    "segments": segments_table,
    "samples": samples_table,
    "path_intervals": path_intervals_table,
    "qoe_segments": qoe_segments_table,
}


def reduce_trials(
    dirs: list[Path],
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], list[dict[str, Any]]]:
    """Read one trial at a time and keep only its tables: a heavy trial's raw lines take
    tens of MB in pandas, so a whole matrix must never be in memory at once.
    Returns the summary, the tidy tables and each trial's trial.json `env`."""
    summaries: list[pd.DataFrame] = []
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLE_FUNCTIONS}
    environments: list[dict[str, Any]] = []
    for row, tables, env in _reduced_in_order(dirs):
        summaries.append(row)
        for name, table in tables.items():
            parts[name].append(table)
        if env is not None:
            environments.append(env)
    if summaries:
        summary = order_summary_columns(pd.concat(summaries, ignore_index=True))
    else:
        summary = summary_table([])
    tables = {
        name: pd.concat(frames, ignore_index=True) if frames else TABLE_FUNCTIONS[name]([])
        for name, frames in parts.items()
    }
    return summary, tables, environments


# Below this many trials the report reduces them in this process (a pool costs more).
PARALLEL_MIN_TRIALS = 64


# Per-trial reductions of finished trials, kept beside the code (the repository's cache/, not
# the run folder: a pickle is only ever read from where this checkout wrote it). A cached
# reduction is used only when this code and every file of the trial folder are unchanged.
CACHE_DIR = Path(__file__).resolve().parent.parent / "cache" / "metrics"


@functools.cache
def _code_version() -> str:
    """A hash of metrics/*.py: any change to the code that reduces a trial voids the cache."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _cache_entry(trial_dir: Path) -> tuple[Path, tuple] | None:
    """Where a finished trial's reduction is cached and the key it must match (None: the
    trial has no result.json yet, so it may still change)."""
    try:
        files = sorted(
            (p.name, p.stat().st_size, p.stat().st_mtime_ns)
            for p in trial_dir.iterdir()
            if p.is_file()
        )
    except OSError:
        return None
    if not any(name == "result.json" for name, _, _ in files):
        return None
    where = hashlib.sha256(str(trial_dir.resolve()).encode()).hexdigest()[:24]
    return CACHE_DIR / f"{where}.pkl", (_code_version(), tuple(files))


def _reduce_one(
    trial_dir: Path,
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, Any] | None]:
    """`_reduce_uncached`, from the cache when the trial and the code are unchanged."""
    entry = _cache_entry(trial_dir)
    if entry is not None:
        path, key = entry
        try:
            with path.open("rb") as cached:
                stored_key, reduced = pickle.load(cached)
            if stored_key == key:
                return reduced
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
            pass
    reduced = _reduce_uncached(trial_dir)
    if entry is not None:
        path, key = entry
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
            with partial.open("wb") as out:
                pickle.dump((key, reduced), out, protocol=pickle.HIGHEST_PROTOCOL)
            partial.replace(path)
        except OSError:
            pass  # a read-only checkout: no cache, same result
    return reduced


def summary_of(run_dir: Path) -> pd.DataFrame:
    """The run's summary table (one row per trial, planned ones included), without writing
    anything into the run folder: what `--reps auto` reads after every round."""
    summary, _, _ = reduce_trials(trial_dirs(run_dir))
    return with_unstarted_trials(summary, read_manifest(run_dir))


def _reduce_uncached(
    trial_dir: Path,
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, Any] | None]:
    """One trial's summary row, tidy tables and trial.json `env` (None without trial.json)."""
    try:
        trial = read_trial(trial_dir, strict=False)
        row = summary_table([trial])
        tables = {name: function([trial]) for name, function in TABLE_FUNCTIONS.items()}
    except Exception as exc:  # one odd trial must not hide the others
        return unprocessable_trial_row(trial_dir, exc), {}, None
    return row, tables, dict(trial.meta.get("env", {})) if trial.meta else None


def _reduced_in_order(dirs: list[Path]):
    """`_reduce_one` of every trial, in the order of `dirs`; a large run is reduced by one
    process per CPU (the trials are independent; the result is the same)."""
    workers = min(os.cpu_count() or 1, max(1, len(dirs) // PARALLEL_MIN_TRIALS))
    if workers < 2:
        yield from map(_reduce_one, dirs)
        return
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        yield from pool.map(_reduce_one, dirs, chunksize=16)


def unprocessable_trial_row(trial_dir: Path, error: Exception) -> pd.DataFrame:
    """A summary row for a trial whose logs parse but break a metric (e.g. a text where a
    number belongs): spec and status as far as readable, never counted, error shown."""

    def readable(name: str) -> dict[str, Any]:
        try:
            return read_json(trial_dir / name)
        except (OSError, ValueError):
            return {}

    meta, result = readable("trial.json"), readable("result.json")
    spec = meta.get("spec", {})
    row: dict[str, Any] = spec_values(spec)
    row |= {"trial_id": meta.get("trial_id", trial_dir.name), "run": meta.get("run", math.nan)}
    row |= {
        "status": result.get("status", "incomplete"),
        "reason": result.get("reason") or ("" if result else "no result.json: interrupted"),
        "valid": False,
        "invalid_reason": f"metrics could not process this trial: {type(error).__name__}: {error}",
    }
    return order_summary_columns(pd.DataFrame([row]))


TABLES_KEY_FILE = ".source-key"  # in tables/: what the .csv.gz files were written from


def write_tables(
    folder: Path, tables: dict[str, pd.DataFrame], source_key: str | None = None
) -> None:
    """The tidy event and interval tables, for analysis without code: <name>.csv.gz. With a
    `source_key` (`_tables_key`) equal to the one stored beside files that all exist, they
    are left as they are: the same trials and code wrote them (a 2 000-trial run has
    millions of interval rows, the largest part of a rebuilt report's time)."""
    folder.mkdir(exist_ok=True)
    stamp = folder / TABLES_KEY_FILE
    written = [folder / f"{name}.csv.gz" for name in tables]
    if (
        source_key is not None
        and stamp.is_file()
        and stamp.read_text() == source_key
        and all(path.is_file() for path in written)
    ):
        return
    stamp.unlink(missing_ok=True)
    for path, table in zip(written, tables.values(), strict=True):
        # gzip level 1: level 9 (the default) took several times longer for files about a
        # third smaller.
        compression = {"method": "gzip", "compresslevel": 1, "mtime": 0}
        table.to_csv(path, index=False, compression=compression)
    if source_key is not None:
        stamp.write_text(source_key)


def _tables_key(dirs: list[Path]) -> str | None:
    """A hash of the code and of every trial folder's files (names, sizes, times), or None
    when a trial has not finished (its files may still change)."""
    digest = hashlib.sha256(_code_version().encode())
    for trial_dir in dirs:
        entry = _cache_entry(trial_dir)
        if entry is None:
            return None
        digest.update(repr((str(trial_dir.resolve()), entry[1])).encode())
    return digest.hexdigest()


def read_manifest(run_dir: Path) -> dict[str, Any] | str | None:
    """run.json (testbed/matrix.py) as a dict; an error message if unreadable; None."""
    path = run_dir / RUN_JSON
    if not path.is_file():
        return None
    try:
        return read_json(path)
    except ValueError as exc:
        return str(exc)


def with_unstarted_trials(summary: pd.DataFrame, manifest: dict | str | None) -> pd.DataFrame:
    """Add a row (status incomplete) for every trial run.json plans that has no folder yet,
    so an interrupted run's summary shows what is missing; fill the spec of folders that
    have no trial.json."""
    if not isinstance(manifest, dict):
        return summary
    planned = dict(zip(manifest.get("trials", []), manifest.get("specs", []), strict=False))
    summary = summary.copy()
    for index, trial_id in summary["trial_id"].items():
        spec = planned.get(trial_id)
        if isinstance(spec, dict) and pd.isna(summary.at[index, "scenario"]):
            # a folder without trial.json (interrupted at once): its spec from run.json
            for column, value in list(spec_values(spec).items())[2:]:
                summary.at[index, column] = value
    present = set(summary["trial_id"].astype(str))
    missing = []
    for trial_id, spec in zip(manifest.get("trials", []), manifest.get("specs", []), strict=False):
        if str(trial_id) in present or not isinstance(spec, dict):
            continue
        row = spec_values(spec)
        row |= {"trial_id": str(trial_id), "run": manifest.get("run", math.nan)}
        row |= {"status": "incomplete", "reason": NOT_STARTED_REASON, "valid": False}
        row |= {"invalid_reason": "trial did not finish", "log_errors": 0}
        missing.append(row)
    if not missing:
        return summary
    return pd.concat([summary, pd.DataFrame(missing)], ignore_index=True)[summary.columns]


# ---------------------------------------------------------------- HTML

STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
td:first-child { white-space: nowrap; } .wide { overflow-x: auto; }
.problems { background: #fff4f0; border: 1px solid #e0a090; padding: 0.5em 1em; }
.ok { background: #f0fff0; border: 1px solid #90c090; padding: 0.5em 1em; }
img { max-width: 100%; border: 1px solid #eee; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.8em; }
"""
# Confirms in the page itself that every embedded image decoded, and measures the page
# (metrics/browser.py reads these data-* attributes from the DOM Chromium dumps).
SCRIPT = """
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const ok = images.filter((i) => i.complete && i.naturalWidth > 0).length;
  document.body.dataset.imagesOk = String(ok);
  document.body.dataset.imagesTotal = String(images.length);
  document.body.dataset.pageHeight = String(document.documentElement.scrollHeight);
});
"""


def render_html(
    run_dir: Path,
    environments: list[dict[str, Any]],
    summary: pd.DataFrame,
    agg: pd.DataFrame,
    tables: dict[str, pd.DataFrame],
    manifest: dict[str, Any] | str | None,
    statistics: concurrent.futures.Future,
    dirs: list[Path] | None = None,
) -> str:
    """The page; `statistics` (`_statistics`, possibly still running) is waited for only
    after the figures are drawn: its sections are filled in last."""
    run_name = run_dir.resolve().name
    generated = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Run {_e(run_name)}: MPTCP video testbed report</title>",
        f"<style>{STYLE}</style><script>{SCRIPT}</script></head><body>",
        f"<h1>Run {_e(run_name)}</h1>",
        f"<p>{_counts_sentence(summary)} Generated {generated} by "
        f"<code>python -m metrics report {_e(str(run_dir))}</code>. Aggregates count only "
        "trials with status ok and valid; error bars are 95% intervals over repetitions "
        "(BCa bootstrap; Student t for QoE and bitrate; none with a single repetition), and "
        "cells are compared paired over the seeds they share, with Holm's correction over "
        "every comparison of the report (docs/METRICS.md, Statistics).</p>",
    ]
    decided_at = len(parts)  # What this run decided: filled in when the statistics are done
    parts += [
        "",
        _problems_section(summary),
        _spec_section(summary, manifest),
        _quality_section(summary),
    ]
    ranking_at: dict[int, str] = {}  # part index -> scenario, filled in with the statistics
    scenarios = sorted(str(s) for s in summary["scenario"].dropna().unique())
    intervals, samples, stalls = (tables[k] for k in ("path_intervals", "samples", "stalls"))
    paths = _paths(summary)
    for scenario in scenarios:
        parts.append(f"<h2>Scenario {_e(scenario)}</h2>")
        scenario_agg = agg[agg["scenario"].astype(str) == scenario]
        if scenario_agg.empty:
            # Better an honest look at invalid trials than an empty page (e.g. every trial
            # of an overloaded machine is invalid), but never silently.
            in_scenario = summary[summary["scenario"].astype(str) == scenario]
            scenario_agg = aggregate(in_scenario, include_invalid=True)
            if scenario_agg.empty:
                parts.append("<p>No finished trial in this scenario: nothing to plot.</p>")
            else:
                invalid = (in_scenario["status"] == "ok").sum()
                parts.append(
                    f'<p class="problems"><strong>No valid trial in this scenario.</strong> '
                    f"The figures and table below include {invalid} finished but INVALID "
                    "trial(s) (reasons in the list above): look, do not conclude.</p>"
                )
        if not scenario_agg.empty:
            if scenario_agg["metric"].isin(["stalls", "dropped_frames"]).any():
                figure = plots.video_figure(scenario_agg, scenario)
                parts.append(_image(figure, f"{scenario} video"))
            parts.append(
                _image(
                    plots.transmission_figure(scenario_agg, scenario, paths),
                    f"{scenario} transmission",
                )
            )
            parts.append(_aggregate_table(scenario_agg))
            in_scenario = summary[summary["scenario"].astype(str) == scenario]
            parts.extend(_cdf_section(in_scenario, scenario))
            ranking_at[len(parts)] = scenario
            parts.append("")
        example = _example_trial(summary[summary["scenario"].astype(str) == scenario], intervals)
        if example is not None:
            parts.append(
                f"<h3>One trial over time: {_e(example)}</h3>"
                "<p>The trial of this scenario with the longest total stall time (among "
                "finished, valid trials when there are any).</p>"
            )
            figure = plots.timeseries_figure(intervals, samples, stalls, example)
            parts.append(_image(figure, f"{example} time series"))
    parts.extend(_timeline_section(trial_dirs(run_dir) if dirs is None else dirs))
    parts.append("<h2>All trials</h2>")
    shown = [c for c in TRIAL_TABLE_COLUMNS if c in summary.columns]
    # Paths beyond wifi/lte (a three-path scenario's), after the fixed columns.
    shown += [
        f"{m}_{p}" for m in ("bytes_down", "retrans_pkts") for p in paths
        if p not in KNOWN_PATHS and f"{m}_{p}" in summary.columns
    ]  # fmt: skip
    parts.append(_table(summary[shown]))
    parts.append(_cross_traffic_section(summary))
    parts.append(
        f"<p>Every column of every trial is in <code>{SUMMARY_CSV}</code>; the means and "
        f"confidence intervals in <code>{AGGREGATE_CSV}</code>; every stall, segment, player "
        f"sample and 100 ms path interval in <code>{TABLES_DIR}/*.csv.gz</code>; definitions "
        "in docs/METRICS.md.</p>"
    )
    parts.append(_environment_section(environments))
    parts.append("</body></html>")
    comparisons, ranks = statistics.result()
    parts[decided_at] = _decided_section(comparisons)
    for at, scenario in ranking_at.items():
        parts[at] = _ranking_section(ranks[ranks["scenario"].astype(str) == scenario])
    return "\n".join(parts)


def _timeline_section(dirs: list[Path]) -> list[str]:
    """The scheduler timeline of one traced trial (run_trials.sh --sched-trace), if any."""
    from metrics import timeline

    chosen = timeline.pick_trial(dirs)
    if chosen is None:
        return []
    try:
        data = timeline.read_timeline(chosen)
    except (ValueError, KeyError) as exc:
        return [f"<h2>Scheduler timeline</h2><p>{_e(chosen.name)}: unreadable trace: {_e(exc)}</p>"]
    if data is None:
        return []
    figure = timeline.timeline_figure(data, f"{chosen.name}: connection {data.conn_id}")
    return [
        f"<h2>Scheduler timeline: {_e(chosen.name)}</h2>",
        f"<p>The first trial with a scheduler trace; its busiest connection "
        f"({data.decisions} decisions). Per path, the data ranges the scheduler placed "
        "(fresh, reinjection, redundant copy) at the time it placed them; the scheduler's "
        "deliberate waits by reason; the receiver's out-of-order queue (100 ms samples). "
        "docs/METRICS.md, Scheduler timeline.</p>",
        _image(figure, f"{chosen.name} scheduler timeline"),
    ]


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _utc(unix_s: Any) -> str:
    if not isinstance(unix_s, int | float):
        return ""
    return dt.datetime.fromtimestamp(unix_s, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _counts_sentence(summary: pd.DataFrame) -> str:
    status = summary["status"].value_counts()
    valid = counted(summary)
    sentence = (
        f"{len(summary)} trial(s): {status.get('ok', 0)} ok, {status.get('failed', 0)} failed, "
        f"{status.get('incomplete', 0)} incomplete; {len(valid)} counted (ok and valid)."
    )
    flags = valid["paths_unused"] if "paths_unused" in valid.columns else pd.Series(dtype=object)
    unused = flags.notna() & (flags.astype(str) != "")
    if unused.any():
        sentence += (
            f" {int(unused.sum())} counted trial(s) left a path unused: its subflow was "
            "established but carried no stream data (<code>paths_unused</code>; docs/METRICS.md)."
        )
    return sentence


def _problems_section(summary: pd.DataFrame) -> str:
    valid = summary["valid"].astype("boolean").fillna(False)
    problems = summary[(summary["status"] != "ok") | ~valid]
    if problems.empty:
        return (
            '<h2 id="problems">Failed and invalid trials</h2>'
            '<p class="ok">None: every trial ran and is valid.</p>'
        )
    table = _table(problems[["trial_id", "status", "reason", "valid", "invalid_reason"]])
    return (
        '<h2 id="problems">Failed and invalid trials</h2><div class="problems">'
        f"<p>{len(problems)} trial(s) are not counted in the figures:</p>{table}</div>"
    )


def _spec_section(summary: pd.DataFrame, manifest: dict[str, Any] | str | None) -> str:
    parts = ["<h2>Run specification</h2>"]
    if isinstance(manifest, str):
        parts.append(f"<p>{RUN_JSON} unreadable: {_e(manifest)}</p>")
    elif isinstance(manifest, dict):
        facts = {
            "command": "./run_trials.sh " + " ".join(str(a) for a in manifest.get("argv", [])),
            "git commit": manifest.get("git_commit", ""),
            "created": _utc(manifest.get("created_unix_s")),
            "resumed": ", ".join(_utc(t) for t in manifest.get("resumed_unix_s", [])) or "never",
            "trials planned": len(manifest.get("trials", [])),
        }
        rows = [{"run.json": key, "value": str(value)} for key, value in facts.items()]
        parts.append(_table(pd.DataFrame(rows)))
    rows = []
    for column in SPEC_COLUMNS[2:]:
        values = sorted({str(v) for v in summary[column].dropna()})
        rows.append({"spec field": column, "values in this run": ", ".join(values)})
    parts.append("<p>The matrix, as found in the trials' trial.json files:</p>")
    parts.append(_table(pd.DataFrame(rows)))
    return "\n".join(parts)


def _environment_section(environments: list[dict[str, Any]]) -> str:
    # The load average differs in every trial; it is shown as a range, not as a difference.
    loads = [e.get("loadavg_1m") for e in environments]
    loads = [x for x in loads if isinstance(x, int | float)]
    envs = {
        json.dumps({k: v for k, v in e.items() if k != "loadavg_1m"}, sort_keys=True)
        for e in environments
    }
    if not envs:
        return ""
    body = "\n".join(_e(json.dumps(json.loads(e), indent=2)) for e in sorted(envs))
    load = (
        f" 1-minute load average at trial start: {min(loads):.1f} to {max(loads):.1f}."
        if loads
        else ""
    )
    return (
        f"<h2>Environment</h2><p>As recorded in trial.json ({len(envs)} distinct).{load}</p>"
        f"<pre>{body}</pre>"
    )


def _quality_section(summary: pd.DataFrame) -> str:
    """Where the dropped frames came from, how the QoE is defined, whether P.1203 ran."""
    finished = summary[summary["status"] == "ok"]
    total = pd.to_numeric(finished.get("dropped_frames"), errors="coerce").sum()
    decoder = pd.to_numeric(finished.get("dropped_frames_decoder"), errors="coerce").sum()
    by_cause = {
        cause: int(pd.to_numeric(finished.get(f"dropped_frames_{cause}"), errors="coerce").sum())
        for cause in ("cpu", "qos", "stall", "switch", "other")
    }
    network = total - decoder
    lines = [
        "<h2>Dropped frames and QoE</h2>",
        f"<p><strong>Dropped frames: {_number(float(total))} in the finished trials</strong>; "
        f"decoder-side (the machine) {_number(float(decoder))}: {by_cause['cpu']} with the "
        f"player's CPUs saturated, {by_cause['qos']} with a GStreamer QoS drop; "
        f"network-attributable {_number(float(network))}: {by_cause['stall']} during a stall "
        f"or with under 1 s buffered, {by_cause['switch']} at a change of rendition, "
        f"{by_cause['other']} otherwise (no machine evidence). Rules: docs/PLAYER.md and "
        "metrics/drops.py; every episode with its evidence is in summary.csv "
        "(<code>drop_episodes</code>).</p>",
    ]
    with_drops = finished[pd.to_numeric(finished.get("dropped_frames"), errors="coerce") > 0]
    if len(with_drops) and "drop_episodes" in with_drops.columns:
        lines.append(_table(with_drops[["trial_id", "dropped_frames", "drop_episodes"]]))
    lines.append(
        "<p><strong>QoE per segment</strong> is the linear QoE of Yin et al. (SIGCOMM 2015) "
        f"with Pensieve's QoE_lin constants (Mao et al., SIGCOMM 2017): bitrate in Mbit/s "
        f"minus {LAMBDA_SWITCH:g} x |bitrate change| minus {MU_STALL:g} x stall seconds, "
        f"minus {MU_STARTUP:g} x start-up seconds, divided by the number of segments "
        "(docs/METRICS.md). Higher is better; per-segment terms are in "
        f"<code>{TABLES_DIR}/qoe_segments.csv.gz</code>. ITU-T P.1203 mode 0: "
        f"{_e(p1203_status())}.</p>"
    )
    return "\n".join(lines)


def _ranking_section(ranks: pd.DataFrame) -> str:
    """The decided ranks of this scenario's cells (ranking.csv), one table per metric."""
    if ranks.empty:
        return "<p>Ranks: no comparison (one configuration, or no counted trial).</p>"
    parts = [
        "<h3>Decided ranks</h3><p>Rank = 1 + the number of configurations decided better "
        "(paired test over shared seeds, Holm-adjusted, 95 %); configurations not "
        "distinguishable from each other can share a rank.</p>"
    ]
    for metric, rows in ranks.groupby("metric", sort=False):
        parts.append(f"<p><strong>{_e(metric)}</strong></p>")
        parts.append(_table(rows[["configuration", "rank", "better_than", "worse_than",
                                  "not_distinguishable"]]))  # fmt: skip
    return "\n".join(parts)


def _decided_section(comparisons: pd.DataFrame, shown: int = 40) -> str:
    """ "What this run decided": every decided comparison, then what is equivalent and what is
    not decided (with the repetitions that would decide it), in plain words."""
    parts = ['<h2 id="decided">What this run decided</h2>']
    if comparisons.empty:
        parts.append("<p>Nothing to compare: every scenario has one configuration, or too few "
                     "counted trials share a seed.</p>")  # fmt: skip
        return "\n".join(parts)
    lines = summary_lines(comparisons, limit=shown)
    counts = kinds(comparisons).value_counts()
    total = len(comparisons)
    parts.append(
        f"<p>{counts.get('decided', 0)} of {total} paired comparison(s) decided at 95 % (Holm "
        f"over all {total}), {counts.get('equivalent', 0)} equivalent within their margin, "
        f"{counts.get('not decided', 0)} not decided. Metrics compared: "
        f"{_e(', '.join(RANKED_METRICS))}; every comparison is in "
        f"<code>{COMPARISONS_CSV}</code>.</p>"
    )
    if reach := reach_line(comparisons):
        parts.append(f"<p>{_e(reach)}</p>")
    for kind, found in lines.items():
        if not found:
            continue
        items = "".join(f"<li>{_e(line)}</li>" for line in found)
        left = int(counts.get(kind, 0)) - len(found)
        more = f"<li>... and {left} more</li>" if left > 0 else ""
        parts.append(f"<p><strong>{kind.capitalize()}</strong></p><ul>{items}{more}</ul>")
    return "\n".join(parts)


def _cdf_section(in_scenario: pd.DataFrame, scenario: str) -> list[str]:
    """Per ranked metric, the CDF of the per-trial values of each cell with at least
    CDF_MIN_TRIALS counted trials."""
    rows = counted(in_scenario)
    if rows.empty:
        return []
    labels = pd.Series(
        ["+".join(str(v) for v in r if str(v) not in ("", "nan", "None"))
         for r in rows[["transport", "cc", "sched", "cc_opts", "sched_opts"]].fillna("")
         .itertuples(index=False)], index=rows.index)  # fmt: skip
    sizes = labels.value_counts()
    keep = labels.isin(sizes[sizes >= CDF_MIN_TRIALS].index)
    if not keep.any():
        return []
    figure = plots.cdf_figure(rows[keep], labels[keep], RANKED_METRICS, scenario)
    return [
        f"<h3>Per-trial distributions</h3><p>Empirical CDF of each configuration's per-trial "
        f"values (configurations with at least {CDF_MIN_TRIALS} counted trials).</p>",
        _image(figure, f"{scenario} per-trial CDFs"),
    ]


def _aggregate_table(agg: pd.DataFrame) -> str:
    """mean ± CI half-width (n) per configuration and metric."""
    cells = agg.copy()
    cells["cell"] = [
        _mean_ci(m, low, high, n)
        for m, low, high, n in zip(
            cells["mean"], cells["ci95_low"], cells["ci95_high"], cells["n"], strict=True
        )  # fmt: skip
    ]
    wide = cells.pivot_table(
        index=["transport", "cc", "cc_opts", "sched", "sched_opts"],
        columns="metric",
        values="cell",
        aggfunc="first",
    )
    shown = [(m, label) for m, label in REPORT_METRICS if m in wide.columns]
    wide = wide[[m for m, _ in shown]].rename(columns=dict(shown)).reset_index()
    wide.columns.name = None
    return _table(wide)


def _mean_ci(mean: float, low: float, high: float, n: int) -> str:
    """mean [95 % interval] (n=...)."""
    text = _number(mean)
    if not (math.isnan(low) or math.isnan(high)):
        text += f" [{_number(low)}, {_number(high)}]"
    return f"{text} (n={n})"


def _number(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def _table(df: pd.DataFrame) -> str:
    formatted = df.astype(object).map(lambda v: _number(v) if isinstance(v, float) else v)
    table = formatted.to_html(index=False, escape=True, na_rep="", border=0)
    return f'<div class="wide">{table}</div>'


SIMULATED_NOTE = (
    "simulated: virtual time, the user-space transport over the emulator's link model and a "
    "DASH player model (run_trials.sh --engine sim, docs/SIMULATOR.md)"
)


def mark_simulated(page: str) -> str:
    """A run of `--engine sim`: say so in the title, at the top and above every figure."""
    page = page.replace(
        "MPTCP video testbed report</title>", "MPTCP video testbed report (simulated)</title>", 1
    )
    page = page.replace("<h1>Run ", "<h1>Simulated run ", 1)
    page = page.replace("</h1>", f"</h1><p><strong>{_e(SIMULATED_NOTE)}</strong></p>", 1)
    return page.replace("<p><img ", f"<p><em>{_e(SIMULATED_NOTE)}</em><br><img ")


def _image(figure: Any, alt: str) -> str:
    data = plots.figure_png_base64(figure)
    return f'<p><img alt="{_e(alt)}" src="data:image/png;base64,{data}"></p>'


def _cross_traffic_section(summary: pd.DataFrame) -> str:
    """The multipath connection's goodput beside each cross flow's (metrics/crosstraffic.py)."""
    if "cross_goodput_bps" not in summary.columns or summary["cross_goodput_bps"].isna().all():
        return ""
    flows = sorted(c for c in summary.columns if c.startswith("cross_goodput_bps_"))
    rows = summary[summary["cross_goodput_bps"].notna()]
    columns = ["trial_id", "scenario", "transport", "cc", "sched", "valid",
               "download_goodput_bps", "cross_goodput_bps", *flows]  # fmt: skip
    return (
        "<h2>Cross traffic</h2><p>Goodput of the multipath connection (segment bytes over the "
        "time a segment download was under way) beside that of each cross-traffic flow "
        "(receiver bytes between its first and last byte), in bit/s; definitions in "
        "docs/METRICS.md.</p>" + _table(rows[[c for c in columns if c in rows.columns]])
    )


def _paths(summary: pd.DataFrame) -> list[str]:
    found = [c.removeprefix("pkts_down_") for c in summary.columns if c.startswith("pkts_down_")]
    return [p for p in found if summary[f"pkts_down_{p}"].notna().any()] or KNOWN_PATHS


def _example_trial(summary: pd.DataFrame, intervals: pd.DataFrame) -> str | None:
    """The trial to draw over time: longest total stall, preferring counted trials that
    have interval data; None when no trial of the scenario has any."""
    with_data = summary[summary["trial_id"].isin(set(intervals["trial_id"]))]
    if with_data.empty:
        return None
    pool = counted(with_data)
    pool = pool if len(pool) else with_data
    ranked = pool.assign(stall=pool["stall_total_ms"].astype(float).fillna(-1))
    ranked = ranked.sort_values(["stall", "trial_id"], ascending=[False, True])
    return str(ranked["trial_id"].iloc[0])
