# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""Seed 002's matrix (CC x scheduler x scenario A1, A2, B1, B2): its cells, how a page runs
it through the plan layer (`MatrixRun`, `run_matrix`), and the paper's findings checked on
the per-cell means of a run (`Cells`, `seed002_claims`)."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from testbed.reproduce.base import NOT_REPRODUCED, NOT_RUN, PARTLY, REPRODUCED, Claim, Options

SEED002_DEFAULT_REPS = 3
# --- seed 002 --------------------------------------------------------------------------------

SEED002_CCS = ("bbr", "cubic", "compound", "lia", "olia", "balia")
SEED002_SCHEDS = ("lrf", "lpc", "let", "gr-sty", "tp-sty", "tr-sty")
SEED002_SCENARIOS = ("A1", "A2", "B1", "B2")
# The emulated subset: cells the text singles out that fit one session (why these, and why
# Cubic is optional: seed002_subset_text): BBR (good everywhere, retransmits more), LIA (the
# LIA variants poor), Compound (poor with TP-STY in A2, B2) × the default scheduler LRF and
# TP-STY.
SEED002_EMULATED_CCS = ("bbr", "lia", "compound")
SEED002_EMULATED_OPTIONAL_CCS = ("cubic",)
SEED002_EMULATED_SCHEDS = ("lrf", "tp-sty")
# Rules (ours) for the text's qualitative words, on the mean buffer underflows per trial.
GOOD_MAX_STALLS = 0.5
POOR_MIN_STALLS = 1.0
LIA_VARIANTS = ("lia", "olia", "balia")


@dataclass(frozen=True)
class MatrixRun:
    """A matrix of seed 002's scenarios over the user transport that a page runs through the
    plan layer (`run_matrix`); `argv` is the run_trials.sh command that means the same, shown
    on the page and recorded in the run's run.json."""

    ccs: tuple[str, ...]
    scheds: tuple[str, ...]
    video_s: int
    reps: int
    out: Path
    engine: str  # sim or emulate
    jobs: int | str | None = None  # None: the engine's default; "auto" (emulate)
    executor: str = "local"
    slurm_opts: tuple[str, ...] = ()
    dry_run: bool = False

    def argv(self) -> list[str]:
        args = ["--scenario", ",".join(SEED002_SCENARIOS), "--transport", "user",
                "--cc", ",".join(self.ccs), "--sched", ",".join(self.scheds),
                "--video-duration", str(self.video_s), "--reps", str(self.reps),
                "--out", str(self.out)]  # fmt: skip
        if self.engine == "sim":
            args += ["--engine", "sim"]
        if self.jobs is not None:
            args += ["--jobs", str(self.jobs)]
        if self.executor == "slurm":
            args += ["--executor", "slurm", *(f"--slurm-opt={o}" for o in self.slurm_opts)]
        return args + (["--dry-run"] if self.dry_run else [])


def seed002_matrix(opts: Options, out: Path, emulated: bool) -> MatrixRun:
    """The simulated matrix (every CC and scheduler) or the emulated subset."""
    return MatrixRun(
        ccs=SEED002_EMULATED_CCS if emulated else SEED002_CCS,
        scheds=SEED002_EMULATED_SCHEDS if emulated else SEED002_SCHEDS,
        video_s=opts.emulated_video_s if emulated else opts.video_duration_s,
        reps=opts.reps_or(SEED002_DEFAULT_REPS),
        out=out,
        engine="emulate" if emulated else "sim",
        jobs=opts.jobs if opts.jobs is not None else "auto" if emulated else None,
        executor="slurm" if emulated and opts.executor == "slurm" else "local",
        slurm_opts=opts.slurm_opts if emulated and opts.executor == "slurm" else (),
        dry_run=opts.dry_run,
    )


def seed002_matrix_args(opts: Options, out: Path, emulated: bool) -> list[str]:
    return seed002_matrix(opts, out, emulated).argv()


def run_matrix(run: MatrixRun, repo: Path) -> int:
    """Validates, expands and runs the matrix through the plan layer, as run_trials.sh
    would run `run.argv()`; its exit status (2: refused, 130: interrupted)."""
    from testbed import matrix, plan
    from testbed.env import kernel_caps
    from testbed.topology import Interrupted

    argv = run.argv()
    print(f"  ./run_trials.sh {shlex.join(argv)}", flush=True)
    options = plan.request(
        scenario=list(SEED002_SCENARIOS),
        transport=["user"],
        cc=list(run.ccs),
        sched=list(run.scheds),
        video_duration=run.video_s,
        reps=run.reps,
    )
    try:
        specs = plan.specs_for(options, repo, kernel_caps())
        return plan.run_plan(
            specs,
            matrix.run_dir_for(str(run.out), specs, repo),
            engine=run.engine,
            executor=run.executor,
            jobs=run.jobs if isinstance(run.jobs, int) else None,
            repo=repo,
            argv=argv,
            dry_run=run.dry_run,
            slurm_opts=run.slurm_opts,
        )
    except plan.UsageError as exc:
        print(f"run_trials.sh: {exc}", file=sys.stderr)
        return 2
    except (Interrupted, KeyboardInterrupt):
        print("run_trials.sh: interrupted", file=sys.stderr)
        return 130


def cell_means(summary, metric: str) -> dict[tuple[str, str, str], float]:
    """Mean of `metric` over the repetitions of each (scenario, cc, sched) cell."""
    if metric not in summary.columns:
        return {}
    grouped = summary.groupby(["scenario", "cc", "sched"])[metric].mean()
    return {k: float(v) for k, v in grouped.items()}


def load_summary(run: Path):
    import pandas as pd

    summary = pd.read_csv(run / "summary.csv")
    ok = summary[summary["status"] == "ok"] if "status" in summary.columns else summary
    return summary, ok


def _grid(means: dict, scenario: str, ccs, scheds, fmt: str = "{:.1f}") -> str:
    rows = ["| CC \\ scheduler | " + " | ".join(scheds) + " |", "|---" * (len(scheds) + 1) + "|"]
    for cc in ccs:
        cells = [means.get((scenario, cc, s)) for s in scheds]
        rows.append(
            f"| {cc} | "
            + " | ".join("–" if v is None or v != v else fmt.format(v) for v in cells)
            + " |"
        )
    return "\n".join(rows)


def frac_verdict(hits: int, n: int) -> str:
    if n == 0:  # none of the claim's cells is in the run (an emulated subset, missing cells)
        return NOT_RUN
    return REPRODUCED if hits == n else PARTLY if hits >= 0.5 * n else NOT_REPRODUCED


def kendall_tau(x: list[float], y: list[float]) -> float:
    from scipy.stats import kendalltau

    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan")
    return float(kendalltau(x, y).statistic)


GOOD_RULE = f"rule (ours): 'good' = mean buffer underflows ≤ {GOOD_MAX_STALLS} per trial, 'poor' = ≥ {POOR_MIN_STALLS}; reproduced if the statement holds in every cell it covers, partly in ≥ 50 %"
RETRANS_RULE = "rule: BBR's mean retransmitted packets above every other CC's with the same scheduler and path; reproduced if in every (scheduler, path) cell, partly in ≥ 50 %"


class Cells:
    """Per-cell means of one run's trials, keyed (scenario, cc, sched), and the predicates
    the text's qualitative words are read as."""

    def __init__(self, summary_ok) -> None:
        self.stalls = cell_means(summary_ok, "stalls")
        self.pw = cell_means(summary_ok, "pkts_down_wifi")
        self.pl = cell_means(summary_ok, "pkts_down_lte")
        self.rw = cell_means(summary_ok, "retrans_pkts_wifi")
        self.rl = cell_means(summary_ok, "retrans_pkts_lte")
        self.discards = cell_means(summary_ok, "discarded_frames")
        self.bitrate = cell_means(summary_ok, "mean_bitrate_bps")
        self.present = set(self.stalls)
        self.ccs = [c for c in SEED002_CCS if any(k[1] == c for k in self.present)]
        self.scheds = [s for s in SEED002_SCHEDS if any(k[2] == s for k in self.present)]
        self.claims: list[Claim] = []

    def keys(self, scenario: str, cc_list) -> list[tuple[str, str, str]]:
        return [
            (scenario, c, s)
            for c in cc_list
            for s in self.scheds
            if (scenario, c, s) in self.present
        ]

    def good(self, k) -> bool:
        return self.stalls[k] <= GOOD_MAX_STALLS

    def poor(self, k) -> bool:
        return self.stalls[k] >= POOR_MIN_STALLS

    def wifi_share(self, k) -> float:
        total = self.pw.get(k, 0) + self.pl.get(k, 0)
        return self.pw.get(k, 0) / total if total else float("nan")

    def max_stalls(self, keys) -> str:
        return f"{max(self.stalls[k] for k in keys):.2f}" if keys else "–"

    def add(self, name: str, paper: str, keys, pred, detail: str, why: str = GOOD_RULE) -> None:
        hits, n = sum(1 for k in keys if pred(k)), len(keys)
        self.claims.append(
            Claim(name, paper, f"{hits} of {n} cells; {detail}", frac_verdict(hits, n), why)
        )

    def bbr_retrans_most(self, scenario: str) -> tuple[int, int]:
        hits = n = 0
        for means in (self.rw, self.rl):
            for s in self.scheds:
                others = [means.get((scenario, c, s), float("nan")) for c in self.ccs
                          if c != "bbr" and (scenario, c, s) in self.present]  # fmt: skip
                if (scenario, "bbr", s) in self.present and others:
                    n += 1
                    hits += means.get((scenario, "bbr", s), float("nan")) > max(others)
        return hits, n


def _seed002_a(c: Cells) -> None:
    keys = c.keys("A1", ("bbr", "cubic", "compound"))
    c.add("A1: BBR, Cubic and Compound good over all schedulers (Fig. 4)", "'excellent' video performance", keys, c.good,
          "max mean underflows " + c.max_stalls(keys))  # fmt: skip
    ref = {
        s: max((c.stalls.get(("A1", x, s), 0) for x in ("bbr", "cubic", "compound")), default=0)
        for s in c.scheds
    }
    c.add("A1: LIA variants (LIA, OLIA, BALIA) perform poorly (Fig. 4)", "poor video performance", c.keys("A1", LIA_VARIANTS),
          lambda k: c.poor(k) and c.stalls[k] > ref[k[2]], "poor and worse than BBR/Cubic/Compound with the same scheduler")  # fmt: skip
    keys = c.keys("A1", c.ccs)
    shares = [c.wifi_share(k) for k in keys]
    c.add("A1: Wi-Fi is the most used path for every CC and scheduler (Fig. 5a, b)", "Wi-Fi packets > LTE packets everywhere", keys,
          lambda k: c.pw.get(k, 0) > c.pl.get(k, 0),
          "Wi-Fi share of data packets " + (f"{min(shares):.0%} to {max(shares):.0%}" if shares else "–"),
          "rule: Wi-Fi packets > LTE packets in every cell = reproduced, in ≥ 50 % partly")  # fmt: skip
    keys = c.keys("A2", ("bbr", "cubic"))
    c.add("A2: BBR and Cubic perform well with all schedulers (Fig. 6)", "good video performance", keys, c.good,
          "max mean underflows " + c.max_stalls(keys))  # fmt: skip
    poor_tp = [x for x in c.ccs if ("A2", x, "tp-sty") in c.present and c.poor(("A2", x, "tp-sty"))]
    name = "A2: the CCs that do poorly under TP-STY prefer the Wi-Fi path (Fig. 7a, b)"
    if not any(k[0] == "A2" and k[2] == "tp-sty" for k in c.present):
        c.claims.append(Claim(name, "Wi-Fi preferred despite its delay and loss",
                              "no A2 × TP-STY cell in this run", NOT_RUN))  # fmt: skip
    elif poor_tp:
        c.add(name, "Wi-Fi preferred despite its delay and loss", [("A2", x, "tp-sty") for x in poor_tp],
              lambda k: c.pw.get(k, 0) > c.pl.get(k, 0), f"poor under TP-STY here: {', '.join(poor_tp)}",
              "rule: Wi-Fi packets > LTE packets for each CC that is poor under TP-STY")  # fmt: skip
    else:
        c.claims.append(Claim(name, "Wi-Fi preferred despite its delay and loss",
                              "no CC is poor under TP-STY in A2 here, so the premise does not arise",
                              NOT_REPRODUCED, GOOD_RULE))  # fmt: skip


def _seed002_compound(c: Cells) -> None:
    for scenario, fig in (("A2", "Fig. 6"), ("B2", "Fig. 10")):
        k = (scenario, "compound", "tp-sty")
        if k not in c.present:
            c.claims.append(Claim(f"{scenario}: Compound has large buffer underflows with TP-STY ({fig})",
                                  "Compound × TP-STY poor, like the LIA variants",
                                  "the cell is not in this run", NOT_RUN))  # fmt: skip
            continue
        rest = [
            c.stalls[(scenario, "compound", s)]
            for s in c.scheds
            if s != "tp-sty" and (scenario, "compound", s) in c.present
        ]
        ok = c.poor(k) and bool(rest) and c.stalls[k] > max(rest)
        c.claims.append(Claim(
            f"{scenario}: Compound has large buffer underflows with TP-STY ({fig})",
            "Compound × TP-STY poor, like the LIA variants",
            f"Compound × TP-STY {c.stalls[k]:.2f} underflows per trial; Compound with the other schedulers at most {max(rest) if rest else float('nan'):.2f}",
            REPRODUCED if ok else NOT_REPRODUCED,
            GOOD_RULE + "; here: Compound × TP-STY poor and worse than Compound with every other scheduler",
        ))  # fmt: skip


def _seed002_retrans(c: Cells) -> None:
    for scenario, paper in (
        (
            "A1",
            "BBR retransmits more than the other CCs across all schedulers, both paths (Fig. 5c, d)",
        ),
        ("A2", "BBR retransmits more across most schedulers, except TP-STY on Wi-Fi (Fig. 7c, d)"),
        (
            "B1",
            "BBR has significantly more retransmissions across all schedulers (text; chart omitted)",
        ),
        ("B2", "BBR retransmits more (text; chart omitted)"),
    ):
        hits, n = c.bbr_retrans_most(scenario)
        c.claims.append(Claim(f"{scenario}: BBR retransmits more", paper,
                              f"{hits} of {n} (scheduler, path) cells where BBR retransmits most",
                              frac_verdict(hits, n), RETRANS_RULE))  # fmt: skip


def _seed002_b(c: Cells) -> None:
    keys = c.keys("B1", ("bbr",))
    c.add("B1: BBR consistently good across all schedulers (Fig. 8)", "'impressive ... consistent good performance of BBR'", keys, c.good,
          "max mean underflows " + c.max_stalls(keys))  # fmt: skip
    keys = c.keys("B1", c.ccs)
    c.add("B1: Wi-Fi preferred by every CC (Fig. 9a, b)", "a preference for the Wi-Fi path for all TCP variants", keys,
          lambda k: c.pw.get(k, 0) > c.pl.get(k, 0), "Wi-Fi packets > LTE packets",
          "rule: Wi-Fi packets > LTE packets in every cell = reproduced, in ≥ 50 % partly")  # fmt: skip
    tau = kendall_tau([c.wifi_share(k) for k in keys], [c.stalls[k] for k in keys])
    c.claims.append(Claim(
        "B1: the CCs that use Wi-Fi most have the worst buffer underflows (Fig. 8, 9)",
        "'TCP variants that utilize the most of Wi-Fi path deliver worst buffer underflow'",
        f"Kendall's τ-b between Wi-Fi share and mean underflows over the {len(keys)} cells: {tau:.2f}",
        NOT_RUN if not keys else REPRODUCED if tau >= 0.3 else PARTLY if tau > 0 else NOT_REPRODUCED,
        "rule (ours): τ-b ≥ 0.3 reproduced, > 0 partly (nan: no variation, e.g. no underflows at all)",
    ))  # fmt: skip
    keys = c.keys("B2", ("bbr", "cubic"))
    good = sum(1 for k in keys if c.good(k))
    others = [x for x in c.ccs if x not in ("bbr", "cubic")]
    others_bad = [x for x in others if any(not c.good(k) for k in c.keys("B2", (x,)))]
    all_good = bool(keys) and good == len(keys)
    c.claims.append(Claim(
        "B2: only BBR and Cubic deliver good performance across all schedulers (Fig. 10)",
        "BBR and Cubic good everywhere; every other CC not good with some scheduler",
        f"BBR/Cubic good in {good} of {len(keys)} cells; other CCs not good with at least one scheduler: {', '.join(others_bad) or 'none'}",
        NOT_RUN if not keys else REPRODUCED if all_good and len(others_bad) == len(others) else PARTLY if all_good else NOT_REPRODUCED,
        GOOD_RULE + "; partly if BBR and Cubic are good everywhere but some other CC is too",
    ))  # fmt: skip
    c.add("B2: LIA variants all deliver large buffer underflows (Fig. 10)", "'lack of aggressiveness'",
          c.keys("B2", LIA_VARIANTS), c.poor, "poor cells")  # fmt: skip
    c.add("B2: large LTE utilisation for every CC (Fig. 11)", "all CCs back off from Wi-Fi", c.keys("B2", c.ccs),
          lambda k: c.pl.get(k, 0) > c.pw.get(k, 0), "LTE packets > Wi-Fi packets",
          "rule: LTE packets > Wi-Fi packets in every cell = reproduced, in ≥ 50 % partly")  # fmt: skip

    def bbr_most_wifi(k) -> bool:
        rivals = [c.wifi_share(("B2", x, k[2])) for x in c.ccs if ("B2", x, k[2]) in c.present]
        return c.wifi_share(k) >= max(rivals)

    c.add("B2: BBR still uses more of the Wi-Fi path than the other CCs on most schedulers (Fig. 11)", "BBR's Wi-Fi share highest",
          c.keys("B2", ("bbr",)), bbr_most_wifi, "schedulers where BBR's Wi-Fi share is the highest",
          "rule: reproduced if on every scheduler, partly on ≥ 50 % ('most')")  # fmt: skip


def _seed002_figures(c: Cells) -> str:
    panels = [
        ("buffer underflows (mean per trial)", c.stalls, "{:.2f}"),
        ("picture discards (mean discarded frames per trial)", c.discards, "{:.1f}"),
        (
            "mean video bitrate played, Mbit/s (not a figure of the paper)",
            {k: v / 1e6 for k, v in c.bitrate.items()},
            "{:.2f}",
        ),  # fmt: skip
        ("Wi-Fi data packets (mean per trial)", c.pw, "{:.0f}"),
        ("LTE data packets (mean per trial)", c.pl, "{:.0f}"),
        ("Wi-Fi retransmitted packets (mean per trial)", c.rw, "{:.0f}"),
        ("LTE retransmitted packets (mean per trial)", c.rl, "{:.0f}"),
    ]
    fig_no = {"A1": "Figs. 4, 5", "A2": "Figs. 6, 7", "B1": "Figs. 8, 9", "B2": "Figs. 10, 11"}
    out = []
    for scenario in SEED002_SCENARIOS:
        out.append(f"### {scenario} (the paper's {fig_no[scenario]})")
        for title, means, fmt in panels:
            if means:
                out.append(
                    f"**{scenario}: {title}**\n\n" + _grid(means, scenario, c.ccs, c.scheds, fmt)
                )
    return "\n\n".join(out)


def seed002_observations(c: Cells) -> list[str]:
    """What the run shows that explains its verdicts (computed, not written by hand)."""
    notes = []
    poor = sorted((k for k in c.present if c.poor(k)), key=lambda k: (k[0], k[2], k[1]))
    scheds = sorted({k[2] for k in poor})
    notes.append(
        f"Buffer underflows (≥ {POOR_MIN_STALLS} per trial on average) in {len(poor)} of "
        f"{len(c.present)} cells, with scheduler(s) {', '.join(scheds) or 'none'}: "
        + (
            ", ".join(f"{k[0]} {k[1]}×{k[2]}" for k in poor[:12])
            + (" ..." if len(poor) > 12 else "")
            or "none"
        )
        + ". Most of the loss-based CCs' weakness in the paper does not show: with the scenario files' "
        "20 + 15 Mbit/s for a 5.24 Mbit/s top rung and an adaptive player, they keep the buffer up "
        "(see the mean bitrate tables)."
    )
    for sched in c.scheds:
        shares = [c.wifi_share(k) for k in c.present if k[2] == sched]
        if shares and min(shares) > 0.99:
            notes.append(
                f"{sched} sends more than 99 % of the packets on Wi-Fi in every cell: its switch "
                "rule never picks LTE here (LTE never has the smaller RTT), so it rides out every "
                "Wi-Fi loss episode on Wi-Fi."
            )
    same = {}
    for a in c.scheds:
        for b in c.scheds:
            if a < b:
                pairs = [(sc, cc) for sc in SEED002_SCENARIOS for cc in c.ccs
                         if (sc, cc, a) in c.present and (sc, cc, b) in c.present]  # fmt: skip
                equal = [
                    pc for pc in pairs
                    if all(m.get((*pc, a)) == m.get((*pc, b)) for m in (c.pw, c.pl, c.rw, c.rl))
                ]  # fmt: skip
                if pairs and len(equal) >= len(pairs) / 2:
                    same[(a, b)] = (len(equal), len(pairs))
    if same:
        notes.append(
            "Schedulers with identical per-path packet and retransmission means in most (scenario, "
            "CC) pairs: "
            + "; ".join(f"{a} = {b} in {n} of {m}" for (a, b), (n, m) in same.items())
            + ". Why these rules coincide here is not investigated (`--sched-trace` shows each decision)."
        )
    return notes


def seed002_claims(summary_ok) -> tuple[list[Claim], str]:
    """The text's findings checked on the per-cell means of a simulated (or emulated) run;
    returns the claims and the figures (one table per figure panel)."""
    c = Cells(summary_ok)
    _seed002_a(c)
    _seed002_compound(c)
    _seed002_b(c)
    _seed002_retrans(c)
    return c.claims, _seed002_figures(c)
