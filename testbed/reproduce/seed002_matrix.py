# ruff: noqa: E501  (table titles are long string literals)
"""Seed 002's matrices as `--reproduce` runs them (the main setting's simulated matrix; its
emulated cells) and the figure tables of a setting's trials (cell means per scenario)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from testbed.reproduce.base import Options
from testbed.reproduce.seed002_claims import SCENARIOS, Trials
from testbed.reproduce.seed002_study import (
    EMU_MIN_REPS,
    MAIN,
    StudyMatrix,
    emulated_matrices,
    run_study_matrix,
    sim_matrix,
)

# The page's own simulated run (no --from): the main setting's cells of the two schedulers the
# text singles out (the default, default-oot, and TP-STY), every CC and the uncoupled control,
# 6 seeds: 336 trials, what fits the page's CPU budget (6 min): 448 trials (8 seeds) cost 264 s
# of CPU (0.59 s per 180 s trial) and the page 379 s in all (commit 4d17924). The study's
# main-setting run (all six schedulers, 10 to 30 seeds) replaces it when given with --from.
SEED002_DEFAULT_REPS = 6
PAGE_SCHEDS = ("default-oot", "tp-sty")


def seed002_matrix(opts: Options, out: Path, emulated: bool) -> StudyMatrix:
    """The main setting's simulated matrix (every CC, scheduler and the uncoupled control),
    or its emulated cells, into `out`: the page's own run, outside the study's archive."""
    if emulated:
        m = emulated_matrices(opts.reps_or(EMU_MIN_REPS))[0]
        return replace(m, out=str(out), video_s=opts.emulated_video_s, dry_run=opts.dry_run,
                       archive=None)  # fmt: skip
    m = sim_matrix(MAIN, opts.reps_or(SEED002_DEFAULT_REPS))
    return replace(m, scheds=PAGE_SCHEDS, out=str(out), video_s=opts.video_duration_s,
                   dry_run=opts.dry_run, archive=None)  # fmt: skip


def run_matrix(m: StudyMatrix, repo: Path) -> int:
    return run_study_matrix(m, repo)


def _grid(t: Trials, metric: str, scenario: str, scale: float, fmt: str) -> str:
    rows = [
        "| CC \\ scheduler | " + " | ".join(t.scheds) + " |",
        "|---" * (len(t.scheds) + 1) + "|",
    ]
    for cc in t.ccs:
        values = [t.mean(metric, scenario, cc, s) * scale for s in t.scheds]
        rows.append(
            f"| {cc} | " + " | ".join("–" if v != v else fmt.format(v) for v in values) + " |"
        )
    return "\n".join(rows)


PANELS = (
    ("stalls", "buffer underflows (mean per trial)", 1.0, "{:.2f}"),
    ("stall_total_ms", "stall time, s (mean per trial)", 1e-3, "{:.1f}"),
    ("wifi_share", "Wi-Fi share of data packets", 1.0, "{:.2f}"),
    ("bytes_down_wifi", "Wi-Fi bytes, MB (mean per trial)", 1e-6, "{:.0f}"),
    ("retrans_pkts_wifi", "Wi-Fi retransmitted packets (mean per trial)", 1.0, "{:.0f}"),
    ("retrans_pkts_lte", "LTE retransmitted packets (mean per trial)", 1.0, "{:.0f}"),
    (
        "mean_bitrate_bps",
        "mean video bitrate played, Mbit/s (constant with one rendition)",
        1e-6,
        "{:.2f}",
    ),
)
FIGURES = {"A1": "Figs. 4, 5", "A2": "Figs. 6, 7", "B1": "Figs. 8, 9", "B2": "Figs. 10, 11"}


def figures(t: Trials) -> str:
    """One table per panel and scenario: the cell means of the setting's trials."""
    out = []
    for scenario in SCENARIOS:
        out.append(f"### {scenario} (the paper's {FIGURES[scenario]})")
        for metric, title, scale, fmt in PANELS:
            if t.has(metric):
                out.append(f"**{scenario}: {title}**\n\n" + _grid(t, metric, scenario, scale, fmt))
    return "\n\n".join(out)
