# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""Seed 002: video over MPTCP, CC x scheduler x scenario. The page: the simulated matrix's
verdicts and figures (seed002_matrix.py), the emulated subset (seed002_emulated.py)."""

from __future__ import annotations

import json
import shlex
import time

from testbed.reproduce.base import MATRIX_TIMING, Page, Runner, cpu_s, shown
from testbed.reproduce.seed002_emulated import (
    run_clip,
    seed002_discard_claims,
    seed002_emulated_section,
    seed002_live_selection,
)
from testbed.reproduce.seed002_matrix import (
    GOOD_MAX_STALLS,
    POOR_MIN_STALLS,
    SEED002_CCS,
    SEED002_DEFAULT_REPS,
    SEED002_SCHEDS,
    Cells,
    load_summary,
    run_matrix,
    seed002_claims,
    seed002_matrix,
    seed002_matrix_args,
    seed002_observations,
)

DEFAULT_REPS = SEED002_DEFAULT_REPS
# Beyond the simulator's sources (fingerprint.COMMON_INPUTS): the matrix this page runs goes
# through the plan layer, the simulator engine, the scenario files, the content ladder and the
# metrics that make summary.csv.
FINGERPRINT_INPUTS = (
    "netem-scenarios/A1*.toml",
    "netem-scenarios/A2*.toml",
    "netem-scenarios/B1*.toml",
    "netem-scenarios/B2*.toml",
    "server/content.py",
    "testbed/engine_sim.py",
    "testbed/plan.py",
    "testbed/matrix.py",
    "testbed/scenario.py",
    "metrics/*.py",
)


def build(r: Runner) -> Page:
    opts = r.opts
    reps = opts.reps_or(SEED002_DEFAULT_REPS)
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
        run for run in opts.runs_of_engine("sim") if run_clip(run) in (None, opts.video_duration_s)
    ]
    if sim_runs:
        sim_run = sim_runs[0]
        print(f"  seed002: simulated matrix from {sim_run}", flush=True)
    else:
        sim_run = r.run_dir / "sim"
        t0, c0 = time.monotonic(), cpu_s()
        status = run_matrix(seed002_matrix(opts, sim_run, emulated=False), r.repo)
        (sim_run / MATRIX_TIMING).write_text(
            json.dumps({"wall_s": time.monotonic() - t0, "cpu_s": cpu_s() - c0})
        )
        r.commands.append(
            "./run_trials.sh "
            + shlex.join(seed002_matrix_args(opts, shown(sim_run, r.repo), emulated=False))
        )
        if status not in (0, 1):
            raise RuntimeError(f"seed002: the simulated matrix exited {status}")
    summary, ok = load_summary(sim_run)
    n_failed = len(summary) - len(ok)
    claims, figures = seed002_claims(ok)
    page.claims = claims
    page.emulated, emulated = seed002_emulated_section(r)
    page.claims += seed002_discard_claims(emulated, seed002_live_selection(r))
    page.extra = figures
    page.extra_notes = [
        f"Simulated run: `{shown(sim_run, r.repo)}` ({len(summary)} trials, {n_failed} not ok and left out of the means).",
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
