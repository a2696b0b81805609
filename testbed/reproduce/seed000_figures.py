"""Seed 000's paper ("Leveraging Coupled BBR and Adaptive Packet Scheduling to Boost MPTCP"):
every figure and table of its evaluation (Section VI), plus the motivation's Table I and Fig. 3
that the page also runs, each with where the page runs it or why it does not."""

from __future__ import annotations

from testbed.reproduce.base import not_ran, ran

PAPER_FIGURES: tuple[tuple[str, str], ...] = (
    (
        "Table I (§II-C: MPTCP throughput per CC on Fig. 2's topology)",
        ran(
            "'Table I, <cc>: MPTCP throughput' (five rows), 'Table I: BBR > CUBIC > LIA, …'; "
            "check 'LIA's subflow on bottleneck 1 …'"
        ),
    ),
    (
        "Fig. 3 (§II-C: RTT distribution per CC)",
        ran("'Fig. 3: MPTCP over BBR keeps its RTT ≈ 55 ms', 'Fig. 3: loss-based CCs hold …'"),
    ),
    (
        "Fig. 8(a) (Coupled BBR at 0 / 0.01 / 1 % loss)",
        ran("'Fig. 8(a): Coupled BBR gets a single BBR flow's throughput on the best path'"),
    ),
    (
        "Fig. 8(b) (per-second rates at 0 / 1 %)",
        not_ran(
            "a time series of one run, no claim beyond Fig. 8(a)'s; the Fig. 8(a) runs "
            "cover its set-up"
        ),
    ),
    (
        "Fig. 9(a), (b) (asymmetric bandwidth / delay: Coupled BBR's split and fairness)",
        not_ran(
            "the β·BW split on disjoint paths is checked by coupled_bbr.rs' unit tests and "
            "`transport/tests/coupled_bbr_sim.rs` (docs/algorithms/coupled-bbr.md); its "
            "fairness half rests on the mechanism of Fig. 8(a) and 'Coupled BBR fair to a TCP "
            "BBR flow at a shared bottleneck' here"
        ),
    ),
    (
        "Fig. 10(a) (path breaks down: AR&P, Round-Robin, Redundant)",
        ran("'Fig. 10(a): AR&P recovers much faster …', 'Fig. 10(a): AR&P above Redundant …'"),
    ),
    (
        "Fig. 10(b) (path deteriorating)",
        ran("'Fig. 10(b): while one path deteriorates, AR&P keeps more goodput …'"),
    ),
    (
        "Fig. 11(a), (b) (out-of-order queue under asymmetric RTT)",
        ran(
            "'Fig. 11: AR&P's out-of-order queue shorter than minRTT's …' (RTT 50 vs 150 ms "
            "only, Fig. 11(b)'s point); check 'AR&P no slower than minRTT …'"
        ),
    ),
    (
        "Figs. 12–15 (§VI-B: real 4G / Wi-Fi and cloud paths)",
        not_ran(
            "measurements on the authors' networks; no model of those paths exists to simulate"
        ),
    ),
    ("Fig. 16 (simulation topology)", ran("the topology of 'Fig. 17(a): …' (three paths)")),
    (
        "Fig. 17(a) (loss sweep 0–0.5 % on 3 × 100 Mbit/s)",
        ran(
            "'Fig. 17(a): with random loss Coupled BBR keeps its throughput, LIA's declines' "
            "(the sweep's two ends, LIA for the loss-based CCs)"
        ),
    ),
    (
        "Fig. 17(b) (delay sweep 2–100 ms at 0.05 %)",
        not_ran(
            "CPU budget: at 100 ms one way a run needs several seconds of start-up before "
            "a window can be read; Fig. 17(a) carries the loss side of the claim"
        ),
    ),
    (
        "Fig. 18 (loss ramping from 0.01 % to 1 % over 10–30 s on Fig. 16's topology)",
        not_ran(
            "CPU budget: 10 seeds × {Coupled BBR, LIA} × 30 s took about 50 s of CPU even "
            "at 20 Mbit/s per path (a run of this page at commit c6d1bb3); Fig. 17(a) tests "
            "the same direction (Coupled BBR holds, LIA declines) at the ramp's loss range"
        ),
    ),
    (
        "Fig. 19(a), (b) (100 random networks: goodput and out-of-order packets per CC × "
        "scheduler)",
        not_ran(
            "CPU budget: 100 networks × 5 CC-scheduler pairs on three paths of up to "
            "100 Mbit/s with background flows; one 20 s run of Fig. 16's topology at "
            "100 Mbit/s took 6.9 s of CPU here (Coupled BBR, seed 1), so the figure alone "
            "would be about ten times this page's CPU"
        ),
    ),
    (
        "Fig. 20 (changing network: goodput and out-of-order packets, AR&P vs minRTT)",
        not_ran(
            "it needs per-path rate/delay/loss schedules on Fig. 16's topology (not built); "
            "AR&P's reaction to a deteriorating path is tested on two paths instead "
            "(Fig. 10), its out-of-order queue under asymmetric RTT by Fig. 11"
        ),
    ),
)
