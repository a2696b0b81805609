# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""Seed 004: HBDP vs MPCubic vs LIA ("An Efficient MPTCP-Based Congestion Control Scheme for
HBDP Networks"): Table II and Fig. 9 at the paper's loss rates, Fig. 10 (cross traffic entering
and leaving a path) and Fig. 11 (a CUBIC flow at a common bottleneck), in mpsim and the
hbdp_friendliness transport benchmark."""

from __future__ import annotations

import json
import math
import shlex
import statistics
from concurrent.futures import ThreadPoolExecutor

from metrics.verdict import check_band, check_direction, combine
from testbed.reproduce.base import (
    TESTBED_CHECK,
    Claim,
    Page,
    Runner,
    mbps,
    not_ran,
    ran,
    values,
)
from testbed.reproduce.crosscheck import crosscheck_section

DEFAULT_REPS = 10
CCS = ("lia", "mpcubic", "hbdp")
MSS_BITS = 1448 * 8
# Table II / Fig. 9: the paper's loss rates on our high-BDP pair (Fig. 7b is not in the text).
LONG = ("path1", 500, 50, 1e-3)  # name, Mbit/s, one-way ms, random loss (paper p1 = 0.1 %)
SHORT = ("path2", 100, 10, 3e-3)  # (paper p2 = 0.3 %)
TABLE2_S, TABLE2_FROM_S, TABLE2_BIN_S = 60, 10, 10
# Fig. 10: two equal paths, CBR cross traffic on path 1 during 10-30 s (Table III), 45 s.
FIG10_MBPS, FIG10_ONE_WAY_MS, FIG10_S = 20, 50, 45
FIG10_CBR_FLOWS, FIG10_CBR_BPS = 2, 6e6
# A little random loss on the data direction, so that the seeds differ (without it every seed
# is the same run) and the links are not simply kept full.
FIG10_LOSS = 1e-4
FIG10_WINDOWS = {"before": (5, 10), "during": (15, 30), "after": (40, 45)}

# Every figure and table of the paper's evaluation (Section V), with where it runs.
PAPER_FIGURES: tuple[tuple[str, str], ...] = (
    (
        "Fig. 7(a), (b) (simulation topologies)",
        ran(
            "(b): Table II's and Fig. 10's two disjoint paths, rates and delays ours (the figure's "
            "values are not in the text); (a): see Fig. 8"
        ),
    ),
    (
        "Fig. 8 and Table I (congestion windows of LIA, MPCubic and HBDP with 0/2/0/1/2/0 CBR "
        "flows over 0–50 s on Fig. 7(a))",
        not_ran(
            "not built: Fig. 7(a)'s link values are not in the text and Table I gives the "
            "number of CBR flows, not their rate; its statement that MPCubic overshoots and "
            "loses more is tested on Table II's runs ('HBDP causes fewer congestion losses "
            "than MPCubic'), HBDP's reaction to cross traffic by Fig. 10"
        ),
    ),
    (
        "Fig. 9(a)–(c) (congestion window per path: MPCubic, HBDP, LIA)",
        ran(
            "'Fig. 9 / Table II: HBDP moves traffic to the path of higher expected throughput "
            "(path 2); MPCubic drifts to path 1' (each path's share of the bytes, not the "
            "window); 'HBDP causes fewer congestion losses than MPCubic'"
        ),
    ),
    (
        "Table II (throughput per path and total: LIA, MPCubic, HBDP)",
        ran(
            "'Table II: HBDP's total throughput above MPCubic's, MPCubic's above LIA's' and the "
            "Fig. 9 claim, at the paper's loss rates; the absolute figures are not attainable "
            "there (see the set-up); sensitivity: path 1 at a 173 ms RTT"
        ),
    ),
    (
        "Fig. 10(a)–(c) and Table III (congestion windows as cross traffic enters path 1 at 10 s "
        "and leaves at 30 s)",
        ran(
            "'Fig. 10: HBDP moves traffic off a path …' for HBDP (Fig. 10(c)); LIA's and "
            "MPCubic's curves (Fig. 10(a), (b)) not run: the paper states no claim of theirs "
            "beyond their shapes"
        ),
    ),
    (
        "Fig. 11 (HBDP's window against a regular CUBIC flow at a common bottleneck)",
        ran("'Fig. 11: at a common bottleneck HBDP takes no more than a regular CUBIC flow'"),
    ),
)


def _mathis_mbps(one_way_ms: float, loss: float) -> float:
    """Reno's steady-state rate under random loss (Mathis et al.: 1.22 MSS / (RTT √p))."""
    return 1.22 * MSS_BITS / (2 * one_way_ms / 1e3 * math.sqrt(loss)) / 1e6


def _path_arg(p: tuple[str, int, int, float]) -> str:
    return f"{p[0]}:{p[1]}:{p[2]}:{p[3]:g}"


def _fig10_toml() -> str:
    link = f"rate = {{ bps = {FIG10_MBPS * 1_000_000} }}\ndelay_ms = {FIG10_ONE_WAY_MS}.0\n"
    loss = f'loss = {{ model = "bernoulli", p = {FIG10_LOSS:g} }}\n'
    return (
        'name = "seed004-fig10"\n'
        'description = "Seed 004 Fig. 10: two equal paths, CBR cross traffic on path1 10-30 s"\n'
        f"duration_s = {FIG10_S}.0\n\n[paths.path1]\n{link}\n[paths.path1.down]\n{loss}\n"
        f"[paths.path2]\n{link}\n[paths.path2.down]\n{loss}\n"
        '[[cross_traffic]]\nkind = "udp_cbr"\npath = "path1"\ndirection = "down"\n'
        f"count = {FIG10_CBR_FLOWS}\nstart_s = 10.0\nstop_s = 30.0\nrate_bps = {FIG10_CBR_BPS:g}\n"
    )


def _run_parallel(r: Runner, arglists: list[list[str]]) -> list[dict]:
    with ThreadPoolExecutor(max_workers=max(1, r.opts.jobs or 2)) as pool:
        return list(pool.map(lambda a: r.mpsim(*a, record=False), arglists))


def _loop(args: list[str], seeds: list[int]) -> str:
    i = args.index("--seed")
    return (
        f"for s in {' '.join(map(str, seeds))}; do transport/target/release/mpsim "
        f"{shlex.join(args[:i])} --seed $s {shlex.join(args[i + 2 :])}; done"
    )


def _share(run: dict, name: str, a: float, b: float) -> float:
    """Path `name`'s share of the bytes acknowledged over bins [a, b) s."""
    bins = run["acked_bps_per_bin_per_path"]
    w = run["bin_s"]
    lo, hi = int(round(a / w)), int(round(b / w))
    total = sum(sum(v[lo:hi]) for v in bins.values())
    return sum(bins[name][lo:hi]) / total if total > 0 else float("nan")


def _mean_text(xs: list[float], unit: str = "") -> str:
    return f"{statistics.mean(xs):.3g}{unit} (min {min(xs):.3g}, max {max(xs):.3g}, n = {len(xs)})"


# Table II's sensitivity: path 1 at a 173 ms RTT (Mathis' rate 223 pkt/s at 0.1 %), 3 seeds.
LONG_173 = (LONG[0], LONG[1], 87, LONG[3])
SENS_CCS = ("mpcubic", "hbdp")


def build(r: Runner) -> Page:
    reps = r.opts.reps_or(DEFAULT_REPS)
    seeds = list(range(1, reps + 1))
    sens_seeds = seeds  # the sensitivity variant over the same seeds as the primary point
    m_long, m_short = _mathis_mbps(LONG[2], LONG[3]), _mathis_mbps(SHORT[2], SHORT[3])
    page = _page(reps, m_long, m_short)
    page.paper_figures = PAPER_FIGURES
    t2, s173 = _run_table2(r, seeds, sens_seeds)
    g = {cc: [mbps(x) for x in runs] for cc, runs in t2.items()}
    per_path = {
        cc: {
            n: [x["acked_bps_measured_per_path"][n] / 1e6 for x in runs] for n in ("path1", "path2")
        }
        for cc, runs in t2.items()
    }
    drops, lost = _loss_counts(t2)
    page.claims += [
        _claim_table2_order(g),
        _claim_table2_path_shares(t2, per_path),
        _claim_fewer_losses(drops, lost),
    ]
    f10 = _run_fig10(r, seeds)
    page.claims.append(_claim_fig10(f10))
    page.claims.append(_claim_fig11(r, seeds))
    page.claims.append(_sensitivity_rtt173(s173, sens_seeds))
    page.extra = _figures(reps, m_long, m_short, g, per_path, drops, lost, f10)
    page.emulated = crosscheck_section("seed004", r, reps)
    return page


def _page(reps: int, m_long: float, m_short: float) -> Page:
    """The page's set-up, repetitions note and open parameters (before any run)."""
    page = Page(
        "seed004",
        "HBDP vs MPCubic vs LIA (seed 004)",
        f"""Table II and Fig. 9 (load balancing over paths with different properties) at the paper's
random loss rates, 0.1 % on path 1 and 0.3 % on path 2, in `mpsim`: path 1 {LONG[1]} Mbit/s with a
{2 * LONG[2]} ms RTT, path 2 {SHORT[1]} Mbit/s with a {2 * SHORT[2]} ms RTT (Fig. 7b, with its link rates, is not in
the text, so the rates and delays are ours; the long path is the one with the lower expected
throughput, as the paper's 223 pkt/s against 1075 pkt/s), one-BDP drop-tail queues, loss on the
data direction, {TABLE2_S} s time-based runs with goodput over {TABLE2_FROM_S}–{TABLE2_S} s. Fig. 10: two equal paths
({FIG10_MBPS} Mbit/s, RTT {2 * FIG10_ONE_WAY_MS} ms, {FIG10_LOSS * 100:g} % random loss on the data direction) with {FIG10_CBR_FLOWS} CBR flows of {FIG10_CBR_BPS / 1e6:g} Mbit/s entering path 1
at 10 s and leaving at 30 s (Table III), {FIG10_S} s, the scenario's cross traffic in `mpsim
--scenario`. Fig. 11: HBDP's two subflows and a CUBIC flow through one bottleneck
(`transport/tests/hbdp_friendliness.rs`). {reps} seeds per point.

What the paper's loss rates allow: at 0.1 % and 0.3 % random loss a window congestion control
that halves on loss sustains about {m_long:.1f} Mbit/s on path 1 and {m_short:.1f} Mbit/s on path 2 (Mathis et al.,
1.22 MSS/(RTT √p), Reno's rule; CUBIC's and HBDP's growth do better on the long path but still halve
on every loss), far below the paper's 190.57 Mbit/s for HBDP. The paper's Table II figures are
not attainable at these loss rates in this model; the verdicts below compare the directions it
states (which scheme is ahead, where the traffic goes), not its absolute figures.""",
    )
    page.reps_note = f"Repetitions: {reps} seeds (1–{reps}) per CC and point; comparisons between CCs are paired by seed (the same seed draws the same link losses)."
    page.open_params = [
        (
            "link rates, base delays",
            f"Table II: {LONG[1]} Mbit/s × {2 * LONG[2]} ms and {SHORT[1]} Mbit/s × {2 * SHORT[2]} ms RTT; Fig. 10: 2 × {FIG10_MBPS} Mbit/s × {2 * FIG10_ONE_WAY_MS} ms; Fig. 11: {50} Mbit/s × 100 ms",
            "Fig. 7 is not in the text; the paper's ε values and its 223/1075 pkt/s do not determine them (its own figures are inconsistent). Sensitivity: Table II with path 1 at a 173 ms RTT (the RTT that makes Mathis' rate 223 pkt/s at 0.1 %) below",
        ),
        (
            "loss",
            "0.1 % (path 1) and 0.3 % (path 2), Bernoulli, data direction",
            "the paper's Table II values; the model's link has Bernoulli loss only",
        ),
        ("queues", "drop-tail, one BDP", "not stated (NS2 defaults unknown)"),
        ("HBDP options", "defaults (docs/algorithms/hbdp.md)", "not tuned"),
        (
            "Fig. 10 cross traffic",
            f"{FIG10_CBR_FLOWS} UDP CBR flows × {FIG10_CBR_BPS / 1e6:g} Mbit/s on path 1, 10–30 s",
            "Table III gives the number of flows, not their rate",
        ),
        (
            "run lengths",
            f"Table II/Fig. 9: {TABLE2_S} s (goodput over {TABLE2_FROM_S}–{TABLE2_S} s); Fig. 10: {FIG10_S} s; Fig. 11: 40 s (rates over 20–40 s)",
            "the paper's figures' time axes; Table II's averaging window is not stated",
        ),
    ]
    return page


# --- Table II / Fig. 9 at the paper's loss rates ----------------------------------------------


def _table2_args(cc: str, seed: int, long: tuple = LONG) -> list[str]:
    """One Table II run of `cc` (path 1 `long`: the primary one or the sensitivity's)."""
    return ["--path", _path_arg(long), "--path", _path_arg(SHORT), "--duration-s", str(TABLE2_S),
            "--measure-from-s", str(TABLE2_FROM_S), "--bin-s", str(TABLE2_BIN_S), "--loss-direction", "down",
            "--recv-window-bytes", str(64 << 20), "--cc", cc, "--sched", "lrf", "--seed", str(seed)]  # fmt: skip


def _run_table2(
    r: Runner, seeds: list[int], sens_seeds: list[int]
) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """Table II's runs per CC, and the 173 ms sensitivity runs per CC; records the seed loops."""
    reps = len(seeds)
    jobs = [_table2_args(cc, s) for cc in CCS for s in seeds]
    jobs += [_table2_args(cc, s, LONG_173) for cc in SENS_CCS for s in sens_seeds]
    out = _run_parallel(r, jobs)
    t2 = {cc: out[i * reps : (i + 1) * reps] for i, cc in enumerate(CCS)}
    sens = out[len(CCS) * reps :]
    s173 = {
        cc: sens[i * len(sens_seeds) : (i + 1) * len(sens_seeds)] for i, cc in enumerate(SENS_CCS)
    }
    r.commands += [_loop(_table2_args(cc, 1), seeds) for cc in CCS]
    r.commands += [_loop(_table2_args(cc, 1, LONG_173), sens_seeds) for cc in SENS_CCS]
    return t2, s173


def _loss_counts(t2: dict[str, list[dict]]) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Per CC and run, both paths: queue drops (congestion losses) and packets the sender
    declared lost (random + congestion)."""
    drops = {
        cc: [sum(x["links"][n]["down"]["drops_queue"] for n in ("path1", "path2")) for x in runs]
        for cc, runs in t2.items()
    }
    lost = {
        cc: [
            sum(x["sender_counters"][n]["pkts_lost_total"] for n in ("path1", "path2"))
            for x in runs
        ]
        for cc, runs in t2.items()
    }
    return drops, lost


def _claim_table2_order(g: dict[str, list[float]]) -> Claim:
    """Table II: the total goodputs in the paper's order, paired by seed."""
    ahead = check_direction(g["hbdp"], g["mpcubic"], "higher", paired=True)
    order = check_direction(g["mpcubic"], g["lia"], "higher", paired=True)
    return Claim(
        "Table II: HBDP's total throughput above MPCubic's, MPCubic's above LIA's",
        "LIA 91.85, MPCubic 163.61, HBDP 190.57 Mbit/s total ('the proposed scheme can achieve higher total throughput than the others')",
        "; ".join(f"{cc} {_mean_text(v, ' Mbit/s')}" for cc, v in g.items())
        + f"<br>HBDP − MPCubic: {ahead.text()}<br>MPCubic − LIA: {order.text()}",
        combine([ahead, order]),
        f"{TABLE2_S} s runs, goodput over {TABLE2_FROM_S}–{TABLE2_S} s, paired by seed; rule: the paper's order (directional: it claims "
        "'higher', not a size), both differences' 95 % intervals above 0; combined. Absolute figures are an order of "
        "magnitude below the paper's: its 190 Mbit/s is not attainable at 0.1 %/0.3 % random loss (see the set-up)",
    )


def _claim_table2_path_shares(
    t2: dict[str, list[dict]], per_path: dict[str, dict[str, list[float]]]
) -> Claim:
    """Fig. 9 / Table II: where each CC puts its traffic, and MPCubic's drift to path 1."""
    share2 = {
        cc: [
            b / (a + b) if a + b > 0 else float("nan")
            for a, b in zip(per_path[cc]["path1"], per_path[cc]["path2"], strict=True)
        ]
        for cc in CCS
    }
    more2 = check_direction(share2["hbdp"], share2["mpcubic"], "higher", paired=True)
    mpc_drift = check_direction(
        [_share(x, "path1", 50, 60) for x in t2["mpcubic"]],
        [_share(x, "path1", 10, 20) for x in t2["mpcubic"]],
        "higher",
        paired=True,
    )
    return Claim(
        "Fig. 9 / Table II: HBDP moves traffic to the path of higher expected throughput (path 2); MPCubic drifts to path 1",
        "HBDP 187.92 of 190.57 Mbit/s on path 2; MPCubic 'transfers its traffic from path2 to path1 gradually' (12.39 on path 1)",
        "path 2's share of the goodput: "
        + "; ".join(f"{cc} {_mean_text(v)}" for cc, v in share2.items())
        + f"<br>HBDP − MPCubic (path 2 share): {more2.text()}<br>MPCubic's path-1 share, 50–60 s − 10–20 s: {mpc_drift.text()}",
        combine([more2, mpc_drift]),
        f"same runs; path 2's share = bytes acknowledged on path 2 over both, {TABLE2_FROM_S}–{TABLE2_S} s; rule: HBDP's share above MPCubic's "
        "(paired) and MPCubic's path-1 share higher in the last 10 s than in 10–20 s (its drift); combined",
    )


def _claim_fewer_losses(drops: dict[str, list[int]], lost: dict[str, list[int]]) -> Claim:
    """Congestion losses (queue drops) of HBDP against MPCubic over Table II's runs."""
    fewer = check_direction(drops["hbdp"], drops["mpcubic"], "lower", paired=True)
    return Claim(
        "HBDP causes fewer congestion losses than MPCubic (which overshoots)",
        "Fig. 8 and Fig. 9 discussion: MPCubic 'overshoots which causes lots of packet drops'; HBDP 'reduces packet loss events better than MPCUBIC'",
        "queue drops (congestion losses, both paths, whole run): "
        + "; ".join(f"{cc} {_mean_text([float(x) for x in v])}" for cc, v in drops.items())
        + "<br>packets the sender declared lost (random + congestion): "
        + "; ".join(f"{cc} {_mean_text([float(x) for x in v])}" for cc, v in lost.items())
        + f"<br>HBDP − MPCubic (queue drops): {fewer.text()}",
        fewer.outcome,
        f"Table II's runs ({TABLE2_S} s); rule: HBDP's queue drops below MPCubic's (95 % interval of the paired difference). "
        "At these loss rates the windows stay below the queues after slow start, so the queue drops are those of the first "
        "overshoot on the long path, where MPCubic and HBDP both grow as CUBIC's slow start does. "
        "Fig. 8's own set-up (Fig. 7a with the CBR schedule of Table I) is not run: its claim is this one",
    )


# --- Fig. 10: cross traffic enters and leaves path 1 ------------------------------------------


def _run_fig10(r: Runner, seeds: list[int]) -> list[dict]:
    """HBDP over the Fig. 10 scenario, one run per seed; records the seed loop."""
    from testbed.scenario import resolve_file

    toml = r.run_dir / "seed004-fig10.toml"
    toml.write_text(_fig10_toml())
    f10_jobs = []
    for s in seeds:
        resolved = r.run_dir / f"seed004-fig10-seed{s}.json"
        resolved.write_text(json.dumps(resolve_file(toml, r.repo, s)))
        f10_jobs.append(["--scenario", str(resolved), "--duration-s", str(FIG10_S), "--bin-s", "1",
                         "--recv-window-bytes", str(64 << 20), "--cc", "hbdp", "--sched", "lrf", "--seed", str(s)])  # fmt: skip
    f10 = _run_parallel(r, f10_jobs)
    r.commands.append(
        f"for s in {' '.join(map(str, seeds))}; do python -m testbed.scenario resolve {toml.name} --seed $s > fig10-$s.json; "
        f"transport/target/release/mpsim --scenario fig10-$s.json --duration-s {FIG10_S} --bin-s 1 --recv-window-bytes {64 << 20} "
        "--cc hbdp --sched lrf --seed $s; done  # the scenario file is written into the run folder"
    )
    return f10


def _claim_fig10(f10: list[dict]) -> Claim:
    """Fig. 10: HBDP's path-1 share before, during and after the cross traffic."""
    share1 = {k: [_share(x, "path1", a, b) for x in f10] for k, (a, b) in FIG10_WINDOWS.items()}
    away = check_direction(share1["during"], share1["before"], "lower", paired=True)
    back = check_direction(share1["after"], share1["during"], "higher", paired=True)
    even = check_band(share1["after"], 0.4, 0.6)
    return Claim(
        "Fig. 10: HBDP moves traffic off a path when cross traffic enters it and back when it leaves, ending even",
        "'a lot of traffic is transferred from path1 to path2 in 20 seconds. After 30 seconds, traffic transfers from path2 to path1 and after 43 seconds, both paths have the same traffic'",
        "HBDP's path-1 share of its bytes: "
        + "; ".join(
            f"{k} ({a}–{b} s) {_mean_text(share1[k])}" for k, (a, b) in FIG10_WINDOWS.items()
        )
        + f"<br>during − before: {away.text()}<br>after − during: {back.text()}<br>after, inside 0.4–0.6: {even.text()}",
        combine([away, back, even]),
        f"{FIG10_S} s runs; rule: the share lower during the cross traffic than before it and higher after it than during "
        "(95 % intervals of the paired differences), and in the last 5 s inside 0.5 ± 0.1 (90 % interval, 'the same traffic': ours); combined. "
        "HBDP keeps both links full here (path 2 at its 20 Mbit/s throughout, see Figures), so its 'transfer' is path 1 "
        "giving up what the cross traffic takes, not path 2 taking more; with the links full every seed gives the same "
        "shares, so the intervals have no width. The paper's LIA and MPCubic curves (LIA slow to move back, MPCubic's RTO) "
        "are not run here",
    )


# --- Fig. 11: friendliness with a CUBIC flow at a common bottleneck ---------------------------


def _claim_fig11(r: Runner, seeds: list[int]) -> Claim:
    """Fig. 11: runs hbdp_friendliness.rs and compares HBDP's goodput with CUBIC's."""
    _, figs = r.cargo_test(
        "hbdp_friendliness", ignored=True, env={"HBDP_FRIEND_SEEDS": ",".join(map(str, seeds))}
    )
    fr = [v for v in values(figs, "hbdp_friendliness") if v["cc"] == "hbdp"]
    mp, cubic = [v["mp_mbps"] for v in fr], [v["cubic_mbps"] for v in fr]
    friendly = check_direction(mp, cubic, "lower", paired=True)
    return Claim.decided(
        "Fig. 11: at a common bottleneck HBDP takes no more than a regular CUBIC flow",
        "'after 20 seconds, the proposed scheme keeps its congestion window size below that of regular Cubic TCP'; CUBIC 'does not suffer'",
        friendly,
        f"HBDP (both subflows) {_mean_text(mp, ' Mbit/s') if mp else 'no runs'}, CUBIC {_mean_text(cubic, ' Mbit/s') if cubic else 'no runs'} over 20–40 s of 40 s runs at "
        "50 Mbit/s × 100 ms (one-BDP queue); rule: HBDP's goodput below CUBIC's (95 % interval of the paired difference). "
        "The paper compares windows; with equal RTTs the goodputs compare the same way",
    )


# --- sensitivity and figures -------------------------------------------------------------------


def _sensitivity_rtt173(s173: dict[str, list[dict]], sens_seeds: list[int]) -> Claim:
    """Does the first Table II verdict survive path 1 at a 173 ms RTT?"""
    g173 = {cc: [mbps(x) for x in runs] for cc, runs in s173.items()}
    v173 = check_direction(g173["hbdp"], g173["mpcubic"], "higher", paired=True)
    return Claim(
        "Sensitivity: Table II with path 1 at a 173 ms RTT",
        "the first Table II verdict (HBDP above MPCubic): does it survive?",
        v173.text()
        + f" (HBDP {_mean_text(g173['hbdp'], ' Mbit/s')}, MPCubic {_mean_text(g173['mpcubic'], ' Mbit/s')}; {len(sens_seeds)} seeds)",
        v173.outcome,
        "",
        kind=TESTBED_CHECK,
    )


def _figures(
    reps: int,
    m_long: float,
    m_short: float,
    g: dict[str, list[float]],
    per_path: dict[str, dict[str, list[float]]],
    drops: dict[str, list[int]],
    lost: dict[str, list[int]],
    f10: list[dict],
) -> str:
    """The page's tables: Table II per CC and HBDP's Fig. 10 rate per path every 5 s."""
    rows = [
        "| CC | total Mbit/s | path 1 Mbit/s | path 2 Mbit/s | queue drops | declared lost |",
        "|---|---|---|---|---|---|",
    ]
    for cc in CCS:
        rows.append(
            f"| {cc} | {statistics.mean(g[cc]):.2f} | {statistics.mean(per_path[cc]['path1']):.2f} | {statistics.mean(per_path[cc]['path2']):.2f} "
            f"| {statistics.mean(drops[cc]):.0f} | {statistics.mean(lost[cc]):.0f} |"
        )
    f10rows = [
        "| second | " + " | ".join(str(t) for t in range(0, FIG10_S, 5)) + " |",
        "|---" * (FIG10_S // 5 + 1) + "|",
    ]
    for name in ("path1", "path2"):
        per_s = [
            statistics.mean(x["acked_bps_per_bin_per_path"][name][t] for x in f10) / 1e6
            for t in range(0, FIG10_S, 5)
        ]
        f10rows.append(f"| HBDP {name} Mbit/s | " + " | ".join(f"{v:.1f}" for v in per_s) + " |")
    return (
        f"Table II at the paper's loss rates (means over {reps} seeds; Mathis' rate for a halving window: path 1 {m_long:.1f}, path 2 {m_short:.1f} Mbit/s):\n\n"
        + "\n".join(rows)
        + f"\n\nFig. 10: HBDP's rate per path (mean over {reps} seeds, the 1 s bin starting at each second shown; cross traffic on path 1 from 10 s to 30 s):\n\n"
        + "\n".join(f10rows)
    )
