# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""Seed 001: mpbbr vs BALIA under random loss ("An Evaluation of Multipath TCP in Lossy
Environment"), as 60 s time-based transfers in mpsim at a few points of the paper's 7 x 7 loss
grid, each over several seeds."""

from __future__ import annotations

import shlex
import statistics
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from metrics.verdict import check_band, check_direction, combine
from testbed.reproduce.base import TESTBED_CHECK, Claim, Page, Runner, mbps, not_ran, ran

# Seeds per point and CC (`--reps`), the sensitivity variants' included.
DEFAULT_REPS = 10

# The paper's grid (Table I), loss as a fraction.
GRID_LOSS = (1e-5, 1e-4, 1e-3, 1e-2, 2e-2, 5e-2, 1e-1)
PATH_MBIT_S = 100
ONE_WAY_MS = 50  # "50 ms delay" read as netem's delay on each direction: RTT 100 ms
DURATION_S = 60  # the paper's iperf3 runs
MEASURE_FROM_S = 10  # goodput counts 10-60 s: start-up excluded
RECV_WINDOW_BYTES = 64 << 20  # large enough that the CC, not the receive buffer, limits
# The points run: (path 1 loss, path 2 loss) and the claims each serves.
POINTS = ((1e-5, 1e-5), (1e-5, 1e-2), (1e-1, 1e-1))
CLAIM3_POINTS = ((1e-5, 1e-2), (1e-1, 1e-1))
HALF_BAND = (0.4, 0.6)  # "about half" (ours: 0.5 ± 0.1)

# Every figure and table of the paper's evaluation (Section III), with where it runs.
_ALL_CLAIMS = "claims 1 (mpbbr above BALIA) and 4 (BALIA's instability)"
_PANEL_COST = (
    "CPU: a panel is 7 loss pairs × 2 CCs × 10 seeds of 60 s runs, about 15 min of CPU here "
    "(9 s per mpbbr run, up to 5 s per BALIA run); the page runs the grid's two corners and "
    "one high-loss pair instead (see the repetitions note)"
)
PAPER_FIGURES: tuple[tuple[str, str], ...] = (
    (
        "Fig. 2 (the testbed: client, two emulated paths NE1/NE2, server)",
        ran("the set-up above: two disjoint 100 Mbit/s paths, 50 ms delay, in mpsim"),
    ),
    (
        "Table I (loss conditions: {0.001, 0.01, 0.1, 1, 2, 5, 10} % on each path, 49 pairs)",
        ran(
            f"{len(POINTS)} of the 49 pairs (0.001 % / 0.001 %, 0.001 % / 1 %, 10 % / 10 %); "
            f"the other 46 not run: {_PANEL_COST}"
        ),
    ),
    (
        "Fig. 3a (average throughput of both CCs over the whole grid)",
        ran(f"{_ALL_CLAIMS}, at the 3 pairs run"),
    ),
    (
        "Fig. 3b (path 1 at 0.001 %, path 2 over the grid)",
        ran(
            "path 2 at 0.001 %: claims 1, 2 (BALIA about half of mpbbr) and 4; path 2 at 1 %: "
            "claims 1, 3 (path 2 above 0.1 %) and 4; the other five path-2 values not run: "
            + _PANEL_COST
        ),
    ),
    (
        "Figs. 3c–3g (path 1 at 0.01, 0.1, 1, 2, 5 %; the text lists six path-1 values for the "
        "seven panels 3b–3h, leaving out 1 %)",
        not_ran(
            _PANEL_COST + "; the paper's instability example (BALIA higher at path 2 = 5 % "
            "than at 1 % in Figs. 3b, 3c) needs these pairs and is not run, claim 4 reads the "
            "run-to-run spread instead"
        ),
    ),
    (
        "Fig. 3h (path 1 at 10 %)",
        ran(
            "path 2 at 10 %: claims 1, 3 and 4; the other six path-2 values not run: " + _PANEL_COST
        ),
    ),
)


@dataclass(frozen=True)
class Setup:
    """One configuration of the runs (the primary one, or a sensitivity variant)."""

    one_way_ms: float = ONE_WAY_MS
    loss_direction: str = "down"
    recv_window_bytes: int | None = RECV_WINDOW_BYTES

    def args(self, loss_a: float, loss_b: float, cc: str, seed: int) -> list[str]:
        args = [
            "--path", f"path1:{PATH_MBIT_S}:{self.one_way_ms:g}:{loss_a:g}",
            "--path", f"path2:{PATH_MBIT_S}:{self.one_way_ms:g}:{loss_b:g}",
            "--duration-s", str(DURATION_S), "--measure-from-s", str(MEASURE_FROM_S),
            "--loss-direction", self.loss_direction,
            "--cc", cc, "--sched", "lrf", "--seed", str(seed),
        ]  # fmt: skip
        if self.recv_window_bytes is not None:
            args += ["--recv-window-bytes", str(self.recv_window_bytes)]
        return args


PRIMARY = Setup()


def _run_all(r: Runner, jobs: list[tuple[Setup, float, float, str, int]]) -> dict:
    """Runs every (setup, loss_a, loss_b, cc, seed) once, two at a time; returns the mpsim
    JSON of each, and records one seed loop per configuration as the page's command."""
    with ThreadPoolExecutor(max_workers=max(1, r.opts.jobs or 2)) as pool:
        results = list(pool.map(lambda j: r.mpsim(*j[0].args(*j[1:]), record=False), jobs))
    seen: dict[tuple, list[int]] = {}
    for setup, a, b, cc, seed in jobs:
        seen.setdefault((setup, a, b, cc), []).append(seed)
    for (setup, a, b, cc), seeds in seen.items():
        args = setup.args(a, b, cc, 1)
        i = args.index("--seed")
        loop = f"for s in {' '.join(map(str, seeds))}; do transport/target/release/mpsim "
        r.commands.append(
            loop + shlex.join(args[:i]) + " --seed $s " + shlex.join(args[i + 2 :]) + "; done"
        )
    return dict(zip(jobs, results, strict=True))


def _g(
    results: dict, setup: Setup, a: float, b: float, cc: str, seeds: Sequence[int]
) -> list[float]:
    return [mbps(results[(setup, a, b, cc, s)]) for s in seeds]


def _whole(
    results: dict, setup: Setup, a: float, b: float, cc: str, seeds: Sequence[int]
) -> list[float]:
    return [results[(setup, a, b, cc, s)]["goodput_whole_bps"] / 1e6 for s in seeds]


def _rel_dev(values: list[float]) -> list[float]:
    """Each run's distance from its point's mean, as a fraction of the mean."""
    m = statistics.mean(values)
    return [abs(v - m) / m if m > 0 else 0.0 for v in values]


def _fmt(values: list[float]) -> str:
    return f"{statistics.mean(values):.1f} (min {min(values):.1f}, max {max(values):.1f}, n = {len(values)})"


# Sensitivity variants: each changes one open parameter at one point, over the same seeds as
# the primary points (mpbbr too where the parameter can change it).
RTT50 = Setup(one_way_ms=25)
BOTH_DIRECTIONS = Setup(loss_direction="both")
AUTOTUNED = Setup(recv_window_bytes=None)
LOW = (1e-5, 1e-5)  # the grid's best point: claim 2 and most sensitivity variants
RULE = f"{DURATION_S} s runs, goodput over {MEASURE_FROM_S}–{DURATION_S} s; "


def build(r: Runner) -> Page:
    reps = r.opts.reps_or(DEFAULT_REPS)
    balia_seeds = list(range(1, reps + 1))
    bbr_seeds = balia_seeds
    sens_seeds = balia_seeds
    page = _page(reps)
    page.paper_figures = PAPER_FIGURES
    res = _run_all(r, _jobs(balia_seeds, bbr_seeds, sens_seeds))
    g = {
        (a, b): {
            "balia": _g(res, PRIMARY, a, b, "balia", balia_seeds),
            "bbr": _g(res, PRIMARY, a, b, "bbr", bbr_seeds),
        }
        for a, b in POINTS
    }
    page.claims += [
        _claim_mpbbr_above_balia(g),
        _claim_balia_half_of_mpbbr(g),
        _claim_high_loss_on_path2(g),
        _claim_balia_unstable(g),
    ]
    bbr_mean = statistics.mean(g[LOW]["bbr"])
    page.claims += _sensitivity_claims(res, bbr_mean, balia_seeds, bbr_seeds, sens_seeds)
    page.extra = _figures(res, g, balia_seeds, bbr_seeds)
    page.extra_notes = [
        "The earlier version of this page ran 30 MB transfers over the full grid with one seed: at "
        "0.001 % a 30 MB transfer ends in its first 1.5 s, before any steady state, and mpbbr was "
        "held at about 120 Mbit/s by the default receive buffer (see the sensitivity table), which "
        "is why BALIA then looked as fast as mpbbr at the lowest loss.",
    ]
    return page


def _page(reps: int) -> Page:
    """The page's set-up, repetitions note and open parameters (before any run)."""
    page = Page(
        "seed001",
        "mpbbr vs BALIA under random loss (seed 001)",
        f"""Two disjoint {PATH_MBIT_S} Mbit/s paths with independent random (Bernoulli) loss on the data
direction, one-way delay {ONE_WAY_MS} ms (RTT {2 * ONE_WAY_MS} ms), drop-tail queues of one BDP, in `mpsim`.
mpbbr is our `bbr` (per-subflow BBR, uncoupled, as the paper integrates it) against `balia`,
scheduler `lrf` (the kernel's default, lowest RTT first). Every run is a {DURATION_S} s time-based bulk
transfer, as the paper's iperf3 runs (`mpsim --duration-s {DURATION_S} --measure-from-s {MEASURE_FROM_S}`); goodput counts what the
client read from {MEASURE_FROM_S} s to {DURATION_S} s, so slow start and the first window overshoot are left out. Receive
window {RECV_WINDOW_BYTES >> 20} MiB, so that the congestion control, not the receive buffer, limits (see the
sensitivity table). Points: {", ".join(f"{a * 100:g} % / {b * 100:g} %" for a, b in POINTS)} (path 1 / path 2
loss) of the paper's 7 × 7 grid {{{", ".join(f"{x * 100:g}" for x in GRID_LOSS)}}} %.""",
    )
    page.reps_note = (
        f"Repetitions: {reps} seeds per point and CC (1–{reps}), the sensitivity variants' "
        "included. A seed changes where the random losses fall; the two CCs send different "
        "packet sequences, so a seed does not give them the same losses and comparisons between "
        "the CCs are unpaired (bootstrap of the difference of the means). A coarser grid with many "
        "seeds is preferred to the full 49-point grid with one seed: one 60 s mpbbr run at "
        "190 Mbit/s takes about 9 s of CPU here (BALIA about 5 s at 100 Mbit/s), so the whole grid "
        "at 10 seeds and both CCs would take over an hour, and a single seed per point cannot "
        "give an interval."
    )
    page.open_params = [
        (
            "delay 50 ms",
            "one-way 50 ms (RTT 100 ms)",
            "netem delay on each path's emulator; one-way vs RTT not stated. Sensitivity: RTT 50 ms below",
        ),
        (
            "loss direction",
            "data direction only (`--loss-direction down`)",
            "netem on NE1/NE2, direction not stated; the repository's emulated grid scenarios (`netem-scenarios/seed001-grid/`) drop on the data direction only too. The emulated cross-check's bulk harness drops both ways (see there). Sensitivity: both directions below",
        ),
        (
            "run length",
            f"{DURATION_S} s, goodput over {MEASURE_FROM_S}–{DURATION_S} s",
            f"the paper: 60 s iperf3 (which averages the whole run). Sensitivity: the whole 0–{DURATION_S} s below",
        ),
        (
            "receive buffer",
            f"{RECV_WINDOW_BYTES >> 20} MiB",
            "not stated; Linux's default autotuning (tcp_rmem max 6 MiB) caps the connection below 200 Mbit/s at RTT 100 ms. Sensitivity: the autotuned default below",
        ),
        (
            "queue",
            "one BDP (863 packets at 100 Mbit/s × 100 ms)",
            "not stated; netem's default limit is 1000 packets, 1.16 BDP here, so one BDP is the nearest round figure (no separate run)",
        ),
        (
            "runs",
            f"{reps} seeds per point and CC",
            "the paper reports average, min and max; number of runs not stated",
        ),
    ]
    return page


def _jobs(
    balia_seeds: list[int], bbr_seeds: list[int], sens_seeds: list[int]
) -> list[tuple[Setup, float, float, str, int]]:
    """Every run of the page: the primary points per CC, then the sensitivity variants."""
    jobs: list[tuple[Setup, float, float, str, int]] = []
    for a, b in POINTS:
        jobs += [(PRIMARY, a, b, "balia", s) for s in balia_seeds]
        jobs += [(PRIMARY, a, b, "bbr", s) for s in bbr_seeds]
    jobs += [(RTT50, 1e-5, 1e-5, "balia", s) for s in sens_seeds]
    jobs += [(BOTH_DIRECTIONS, 1e-5, 1e-2, "balia", s) for s in sens_seeds]
    jobs += [(AUTOTUNED, 1e-5, 1e-5, "balia", s) for s in sens_seeds]
    jobs += [(AUTOTUNED, 1e-5, 1e-5, "bbr", s) for s in sens_seeds]
    return jobs


def _claim_mpbbr_above_balia(g: dict) -> Claim:
    """Claim 1: mpbbr above BALIA at every point run."""
    parts = {p: check_direction(g[p]["bbr"], g[p]["balia"], "higher", paired=False) for p in POINTS}
    overall = combine(parts.values())
    return Claim(
        "mpbbr outperforms BALIA in all investigated conditions",
        "Fig. 3a (and 3b–3h): mpbbr's average above BALIA's at every loss pair",
        "<br>".join(
            f"{a * 100:g} % / {b * 100:g} %: mpbbr − BALIA {v.text()}"
            for (a, b), v in parts.items()
        ),
        overall,
        RULE + f"rule: mpbbr's mean above BALIA's at each of the {len(POINTS)} points run "
        "(metrics/verdict.py check_direction, unpaired), combined (reproduced only if every point is). "
        f"{len(POINTS)} of the paper's 49 points: see the repetitions note",
    )


def _claim_balia_half_of_mpbbr(g: dict) -> Claim:
    """Claim 2: at 0.001 % on both paths BALIA gets about half of mpbbr."""
    bbr_mean = statistics.mean(g[LOW]["bbr"])
    ratios = [x / bbr_mean for x in g[LOW]["balia"]]
    v2 = check_band(ratios, *HALF_BAND)
    return Claim.decided(
        "At 0.001 % loss on both paths BALIA reaches its best, about half of mpbbr's",
        "Section IV (Fig. 3b): BALIA/mpbbr ≈ 0.5 at 0.001 % / 0.001 %",
        v2,
        RULE + f"each BALIA seed's goodput over mpbbr's mean at the point ({bbr_mean:.1f} Mbit/s); "
        f'rule: the ratio\'s 90 % interval inside {HALF_BAND[0]}–{HALF_BAND[1]} ("about half" read as 0.5 ± 0.1). '
        f"BALIA {_fmt(g[LOW]['balia'])}, mpbbr {_fmt(g[LOW]['bbr'])} Mbit/s. A 30 MB transfer ends about "
        "1.5 s in, before BALIA's window first halves after slow start: at 0.001 % each path sees one "
        "random loss every 12 s, after which a coupled increase of under one packet per 100 ms round "
        "trip takes tens of seconds to regrow, so only a run of a minute shows the steady state "
        "(the per-path rate of Mathis et al. at RTT 100 ms and 0.001 % is about 45 Mbit/s)",
    )


def _claim_high_loss_on_path2(g: dict) -> Claim:
    """Claim 3: path 2 above 0.1 %: BALIA far below a path's capacity, mpbbr still aggregates."""
    c3 = []
    for p in CLAIM3_POINTS:
        c3.append((p, "BALIA", check_band(g[p]["balia"], 0.0, PATH_MBIT_S / 2)))
        c3.append((p, "mpbbr", check_band(g[p]["bbr"], float(PATH_MBIT_S), 2.0 * PATH_MBIT_S)))
    return Claim(
        "Path 2 above 0.1 % loss: BALIA far below each path's capacity, mpbbr high and still aggregating both paths",
        "Section IV: 'when the loss rate of Path2 is higher than 0.1 %, the results in all the figures' (every path-1 loss, 0.001 % included) show BALIA 'significantly lower than the capacity of each path', mpbbr 'relatively high and usable', aggregating 'even in the extreme cases of 10 % loss rate on both paths'",
        "<br>".join(f"{a * 100:g} % / {b * 100:g} % {who}: {v.text()}" for (a, b), who, v in c3),
        combine(v for _, _, v in c3),
        RULE
        + f"rule (ours): BALIA's 90 % interval inside 0–{PATH_MBIT_S // 2} Mbit/s (under half of one path's "
        f"capacity) and mpbbr's inside {PATH_MBIT_S}–{2 * PATH_MBIT_S} Mbit/s (more than one path can carry: both are used), "
        "at path 1 = 0.001 % (the grid's best path 1) and at 10 % on both paths (its worst point); combined",
    )


def _claim_balia_unstable(g: dict) -> Claim:
    """Instability: BALIA's goodput varies more between runs than mpbbr's."""
    dev_balia = [d for p in POINTS for d in _rel_dev(g[p]["balia"])]
    dev_bbr = [d for p in POINTS for d in _rel_dev(g[p]["bbr"])]
    v4 = check_direction(dev_balia, dev_bbr, "higher", paired=False)
    return Claim.decided(
        "BALIA's throughput is unstable between runs; mpbbr's is more stable in all conditions",
        "Section IV (Figs. 3b, 3c: min/max over runs; BALIA at 5 % can beat BALIA at 1 %)",
        v4,
        RULE
        + "each run's distance from its point's mean, as a fraction of that mean, pooled over the "
        f"{len(POINTS)} points; rule: BALIA's mean relative deviation above mpbbr's (unpaired). The paper's "
        "example (BALIA higher at 5 % than at 1 % on path 2) is a non-monotone pair of grid cells, "
        "not run here",
    )


def _sensitivity_claims(
    res: dict,
    bbr_mean: float,
    balia_seeds: list[int],
    bbr_seeds: list[int],
    sens_seeds: list[int],
) -> list[Claim]:
    """Does each verdict survive the other plausible value of its open parameter?"""
    sens = []
    r50 = [x / bbr_mean for x in _g(res, RTT50, 1e-5, 1e-5, "balia", sens_seeds)]
    sens.append(
        (
            "delay read as RTT 50 ms (one-way 25 ms)",
            "claim 2 (BALIA/mpbbr at 0.001 % / 0.001 %)",
            check_band(r50, *HALF_BAND),
            "BALIA over the primary mpbbr mean (BBR fills both paths at either RTT)",
        )
    )
    both_v = check_band(
        _g(res, BOTH_DIRECTIONS, 1e-5, 1e-2, "balia", sens_seeds), 0.0, PATH_MBIT_S / 2
    )
    sens.append(
        (
            "loss on both directions",
            "claim 3's BALIA part at 0.001 % / 1 %",
            both_v,
            "ACKs lost at the same rate",
        )
    )
    whole = [
        x / statistics.mean(_whole(res, PRIMARY, 1e-5, 1e-5, "bbr", bbr_seeds))
        for x in _whole(res, PRIMARY, 1e-5, 1e-5, "balia", balia_seeds)
    ]
    sens.append(
        (
            f"goodput over the whole 0–{DURATION_S} s (iperf3's average)",
            "claim 2",
            check_band(whole, *HALF_BAND),
            "same runs, start-up included",
        )
    )
    auto_bbr = statistics.mean(_g(res, AUTOTUNED, 1e-5, 1e-5, "bbr", sens_seeds))
    auto = [x / auto_bbr for x in _g(res, AUTOTUNED, 1e-5, 1e-5, "balia", sens_seeds)]
    sens.append(
        (
            "receive buffer autotuned as Linux (tcp_rmem max 6 MiB)",
            "claim 2",
            check_band(auto, *HALF_BAND),
            f"BALIA over the autotuned mpbbr's mean, {auto_bbr:.1f} Mbit/s over {len(sens_seeds)} seeds: the receive window, not BBR, limits it",
        )
    )
    return [
        Claim(
            f"Sensitivity: {name}",
            f"{claim}: does the verdict survive?",
            v.text() + f" ({note})",
            v.outcome,
            "",
            kind=TESTBED_CHECK,
        )
        for name, claim, v, note in sens
    ]


def _figures(res: dict, g: dict, balia_seeds: list[int], bbr_seeds: list[int]) -> str:
    """The page's table: goodput and per-path rates of every primary point."""
    rows = [
        "| path 1 / path 2 loss | mpbbr Mbit/s | BALIA Mbit/s | mpbbr per path (mean) | BALIA per path (mean) |",
        "|---|---|---|---|---|",
    ]
    for a, b in POINTS:

        def per_path(cc: str, seeds: list[int], a: float = a, b: float = b) -> str:
            runs = [res[(PRIMARY, a, b, cc, s)]["acked_bps_measured_per_path"] for s in seeds]
            return " / ".join(
                f"{statistics.mean(x[n] for x in runs) / 1e6:.1f}" for n in ("path1", "path2")
            )

        rows.append(
            f"| {a * 100:g} % / {b * 100:g} % | {_fmt(g[(a, b)]['bbr'])} | {_fmt(g[(a, b)]['balia'])} | {per_path('bbr', bbr_seeds)} | {per_path('balia', balia_seeds)} |"
        )
    return (
        f"Goodput over {MEASURE_FROM_S}–{DURATION_S} s, mean (min, max) over the seeds; per path: bytes acknowledged on each path over the same interval.\n\n"
        + "\n".join(rows)
    )
