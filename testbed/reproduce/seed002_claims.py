# ruff: noqa: E501  (the claim texts are long string literals)
"""Seed 002's claims, decided as its pre-registration says (docs/reproductions/
preregistration-seed002.md, §7, §8): each claim is a set of cells, each cell a contrast the
paper draws, estimated over seeds (paired: repetition r of every cell uses seed r) and decided
by metrics/verdict.py; the claim's verdict follows one rule for every claim (`claim_outcome`).

Input: the ok and valid trials of one setting (summary.csv rows), every cell keyed by its base
scenario (A1, A2, B1, B2), CC and scheduler."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from metrics.stats import kruskal_effect
from metrics.verdict import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Verdict,
    check_band,
    check_direction,
)

# The paper's six CCs and six schedulers. Its "default scheduler (LRF)" is the Linux kernel's
# default, whose faithful counterpart here is `default-oot` (docs/algorithms/lrf.md, "Which
# scheduler is the paper's 'default scheduler'"); `lrf` is that description alone.
CCS = ("bbr", "cubic", "compound", "lia", "olia", "balia")
SCHEDS = ("default-oot", "lpc", "let", "gr-sty", "tp-sty", "tr-sty")
SCENARIOS = ("A1", "A2", "B1", "B2")
# The uncoupled window machine LIA and OLIA couple (P24's control; in no other claim).
UNCOUPLED = "reno"
GOOD_A1 = ("bbr", "cubic", "compound")  # G: A1's "good" group
LIA_VARIANTS = ("lia", "olia", "balia")  # L
GOOD_BC = ("bbr", "cubic")  # A2's and B2's "good" pair
# Equivalence margins (pre-registration §7).
DELTA_STALLS = 0.5
NOT_APPLICABLE = "n/a"
NOT_MEASURED = "–"  # the engine cannot measure the metric (the simulator's picture discards)
NOT_IN_RUN = "not yet run"

STALLS = "stalls"
SHARE = "wifi_share"  # pkts_down_wifi / (pkts_down_wifi + pkts_down_lte), added by `Trials`
WIFI_BYTES = "bytes_down_wifi"
DISCARDS = "discarded_frames_network"
RETRANS = {"wifi": "retrans_pkts_wifi", "lte": "retrans_pkts_lte"}


def base_scenario(scenario: str) -> str:
    """A1 for `A1`, `netem-scenarios/A1.toml` or `.../seed002-families/A1-lte3mbps.toml`."""
    stem = str(scenario).rsplit("/", 1)[-1].removesuffix(".toml")
    return stem.split("-", 1)[0]


@dataclass
class Cell:
    """One contrast of a claim: its label and metrics/verdict.py's verdict on it."""

    label: str
    verdict: Verdict

    @property
    def supports(self) -> bool:
        return self.verdict.outcome == REPRODUCED

    @property
    def contradicts(self) -> bool:
        return self.verdict.outcome == NOT_REPRODUCED

    def brief(self) -> str:
        v = self.verdict
        mark = "+" if self.supports else "−" if self.contradicts else "?"
        if math.isnan(v.low):
            return f"{self.label}: {v.estimate:.3g} (n {v.n}, no interval) {mark}"
        return f"{self.label}: {v.estimate:.3g} [{v.low:.3g}, {v.high:.3g}] (n {v.n}) {mark}"


@dataclass
class ClaimResult:
    """A claim's cells and its verdict in one setting on one engine."""

    cid: str
    scenario: str
    text: str
    paper: str
    rule: str
    cells: list[Cell] = field(default_factory=list)
    outcome: str = NOT_IN_RUN
    note: str = ""  # why n/a, "–" or not run; or what the premise selected

    def summary(self) -> str:
        """n, estimate and interval of the claim's weakest cell, and the cell counts."""
        if not self.cells:
            return self.note or "no cell of this claim in the run"
        support = sum(c.supports for c in self.cells)
        contra = sum(c.contradicts for c in self.cells)
        weakest = min(self.cells, key=_strength)
        text = (
            f"{support} of {len(self.cells)} cells support, {contra} contradict, "
            f"{len(self.cells) - support - contra} undecided; weakest cell {weakest.brief()}"
        )
        return f"{self.note}; {text}" if self.note else text


def _strength(cell: Cell) -> tuple[int, float]:
    """Contradicting cells first, then undecided, then supporting; within a class the lower
    end of the interval (the cell closest to failing)."""
    rank = 0 if cell.contradicts else 2 if cell.supports else 1
    low = cell.verdict.low if not math.isnan(cell.verdict.low) else -math.inf
    return rank, low


def claim_outcome(cells: list[Cell]) -> str:
    """The one rule for every claim (pre-registration §7): reproduced if every cell
    supports; partly if at least half do; not reproduced if fewer than half do and at least
    one contradicts; inconclusive otherwise."""
    if not cells:
        return NOT_IN_RUN
    support = sum(c.supports for c in cells)
    if support == len(cells):
        return REPRODUCED
    if 2 * support >= len(cells):
        return PARTLY
    if any(c.contradicts for c in cells):
        return NOT_REPRODUCED
    return INCONCLUSIVE


class Trials:
    """Per-seed values of one setting's ok and valid trials, keyed (scenario, cc, sched)."""

    def __init__(self, rows) -> None:
        frame = rows.copy()
        frame["base"] = [base_scenario(s) for s in frame["scenario"]]
        if "pkts_down_wifi" in frame and "pkts_down_lte" in frame:
            total = frame["pkts_down_wifi"] + frame["pkts_down_lte"]
            frame[SHARE] = frame["pkts_down_wifi"] / total.where(total > 0)
        self.frame = frame
        self._cache: dict[str, dict[tuple[str, str, str], dict[int, float]]] = {}
        present = set(zip(frame["base"], frame["cc"], frame["sched"], strict=True))
        self.present = present
        self.ccs = [c for c in (*CCS, UNCOUPLED) if any(k[1] == c for k in present)]
        self.scheds = [s for s in SCHEDS if any(k[2] == s for k in present)]

    def has(self, metric: str) -> bool:
        return metric in self.frame.columns and bool(self.frame[metric].notna().any())

    def _table(self, metric: str) -> dict[tuple[str, str, str], dict[int, float]]:
        if metric not in self._cache:
            table: dict[tuple[str, str, str], dict[int, float]] = {}
            if self.has(metric):
                grouped = self.frame.groupby(["base", "cc", "sched", "seed"])[metric].mean()
                for (sc, cc, s, seed), value in grouped.items():
                    if value == value:
                        table.setdefault((sc, cc, s), {})[int(seed)] = float(value)
            self._cache[metric] = table
        return self._cache[metric]

    def seeds(self, metric: str, scenario: str, cc: str, sched: str) -> dict[int, float]:
        return self._table(metric).get((scenario, cc, sched), {})

    def group(self, metric: str, scenario: str, ccs: Iterable[str], sched: str) -> dict[int, float]:
        """Per seed, the mean over those of `ccs` the run holds (the emulated study runs one
        LIA variant) of `metric`, at the seeds where each of them has a trial."""
        parts = [self.seeds(metric, scenario, cc, sched) for cc in ccs if cc in self.ccs]
        if not parts or not all(parts):
            return {}
        common = set.intersection(*(set(p) for p in parts))
        return {seed: sum(p[seed] for p in parts) / len(parts) for seed in sorted(common)}

    def mean(self, metric: str, scenario: str, cc: str, sched: str) -> float:
        values = list(self.seeds(metric, scenario, cc, sched).values())
        return sum(values) / len(values) if values else math.nan


def _paired(a: dict[int, float], b: dict[int, float]) -> tuple[list[float], list[float]]:
    seeds = sorted(set(a) & set(b))
    return [a[s] for s in seeds], [b[s] for s in seeds]


def higher(label: str, a: dict[int, float], b: dict[int, float]) -> Cell | None:
    """A cell: mean(a − b) over the shared seeds > 0 (one-sided by the interval). None when
    the two sides share no seed (a cell missing from the run)."""
    x, y = _paired(a, b)
    if not x:
        return None
    return Cell(label, check_direction(x, y, "higher", paired=True))


def above(label: str, a: dict[int, float], level: float) -> Cell | None:
    return higher(label, a, dict.fromkeys(a, level)) if a else None


def below(label: str, a: dict[int, float], level: float) -> Cell | None:
    return higher(label, dict.fromkeys(a, level), a) if a else None


def same(label: str, a: dict[int, float], b: dict[int, float], delta: float) -> Cell | None:
    """An equality cell: the 90 % interval of mean(a − b) inside ±delta (check_band, TOST)."""
    x, y = _paired(a, b)
    if not x:
        return None
    return Cell(label, check_band(x, -delta, delta, b=y, paired=True))


def _mean_over(parts: list[dict[int, float]]) -> dict[int, float]:
    if not parts or not all(parts):
        return {}
    common = set.intersection(*(set(p) for p in parts))
    return {s: sum(p[s] for p in parts) / len(parts) for s in sorted(common)}


def kendall_per_seed(
    t: Trials, x_metric: str, y_metric: str, keys: list[tuple[str, str, str]]
) -> dict[int, float]:
    """Per seed, Kendall's τ-b over `keys` between two metrics (NaN-free seeds with variation
    in both; a seed where every cell has the same value has no τ)."""
    from metrics.stats import kendall_tau_b

    xs = [t.seeds(x_metric, *k) for k in keys]
    ys = [t.seeds(y_metric, *k) for k in keys]
    if not all(xs) or not all(ys):
        return {}
    seeds = set.intersection(*(set(p) for p in xs + ys))
    out = {}
    for seed in sorted(seeds):
        a, b = [p[seed] for p in xs], [p[seed] for p in ys]
        if len(set(a)) > 1 and len(set(b)) > 1:
            out[seed] = kendall_tau_b(a, b)
    return out


def tau_cell(label: str, taus: dict[int, float], keys_present: bool) -> Cell | None:
    """A τ-b cell: the mean over seeds above 0; undecided (never dropped) when the CC's cells
    are in the run but no seed varies in both metrics, so no τ exists."""
    if taus:
        return above(label, taus, 0.0)
    if not keys_present:
        return None
    why = "no seed with variation in both metrics: no τ-b"
    return Cell(label, Verdict(INCONCLUSIVE, 0, math.nan, math.nan, math.nan, why))


def _cells(items: Iterable[Cell | None]) -> list[Cell]:
    return [c for c in items if c is not None]


def _rival(t: Trials, metric: str, scenario: str, cc: str, sched: str) -> str | None:
    """The other CC with the highest mean `metric` at (scenario, sched)."""
    rivals = [(t.mean(metric, scenario, o, sched), o) for o in t.ccs
              if o not in (cc, UNCOUPLED) and t.seeds(metric, scenario, o, sched)]  # fmt: skip
    rivals = [(m, o) for m, o in rivals if m == m]
    return max(rivals)[1] if rivals else None


def bbr_most(
    t: Trials, scenario: str, metric_of: dict[str, str], skip: set[tuple[str, str]] = frozenset()
) -> list[Cell]:
    """Per scheduler and path: BBR's metric minus that of the other CC with the highest mean
    (paired by seed)."""
    cells = []
    for sched in t.scheds:
        for path, metric in metric_of.items():
            if (sched, path) in skip:
                continue
            rival = _rival(t, metric, scenario, "bbr", sched)
            if rival is not None:
                cells.append(higher(f"{sched} {path} vs {rival}",
                                    t.seeds(metric, scenario, "bbr", sched),
                                    t.seeds(metric, scenario, rival, sched)))  # fmt: skip
    return _cells(cells)


def _per_sched_contrast(
    t: Trials, metric: str, scenario: str, worse: tuple, better: tuple
) -> list[Cell]:
    return _cells(higher(s, t.group(metric, scenario, worse, s), t.group(metric, scenario, better, s))
                  for s in t.scheds)  # fmt: skip


def _poor_with_tp_sty(t: Trials, scenario: str, cc: str) -> list[Cell]:
    """Compound (or any CC) poor with TP-STY: vs itself with the other schedulers, and vs
    BBR and Cubic with TP-STY."""
    tp = t.seeds(STALLS, scenario, cc, "tp-sty")
    others = _mean_over([t.seeds(STALLS, scenario, cc, s) for s in t.scheds if s != "tp-sty"])
    return _cells([
        higher(f"{cc}×tp-sty vs {cc} × mean of the other schedulers", tp, others),
        higher(f"{cc}×tp-sty vs {{bbr, cubic}}×tp-sty", tp, t.group(STALLS, scenario, GOOD_BC, "tp-sty")),
    ])  # fmt: skip


@dataclass(frozen=True)
class Spec:
    """One pre-registered claim: where it comes from and how its cells are built."""

    cid: str
    scenario: str
    text: str
    paper: str
    rule: str
    cells: Callable[[Trials], list[Cell] | str]  # a str: why n/a


def _share_cells(t: Trials, scenario: str, wifi_most: bool) -> list[Cell]:
    test = above if wifi_most else below
    return _cells(test(f"{cc}×{s}", t.seeds(SHARE, scenario, cc, s), 0.5)
                  for cc in t.ccs if cc != UNCOUPLED for s in t.scheds)  # fmt: skip


def _p8(t: Trials) -> list[Cell] | str:
    poor = [cc for cc in ("compound", *LIA_VARIANTS)
            if (c := higher(cc, t.seeds(STALLS, "A2", cc, "tp-sty"),
                            t.group(STALLS, "A2", GOOD_BC, "tp-sty"))) is not None and c.supports]  # fmt: skip
    if not poor:
        return "premise does not arise: no CC decided worse than BBR and Cubic under TP-STY in A2"
    return _cells(above(f"{cc}×tp-sty (poor under TP-STY)", t.seeds(SHARE, "A2", cc, "tp-sty"), 0.5)
                  for cc in poor)  # fmt: skip


def _p10(t: Trials) -> list[Cell] | str:
    """Kruskal-Wallis over the 36 cells' per-trial underflows; its p-value decides (the one
    claim that is not a contrast, pre-registration §7.5). The cell shows the test's effect
    size, epsilon-squared = H / (n - 1), with its bootstrap interval (metrics/stats.py
    kruskal_effect): how much of the underflows' rank variance lies between the cells."""
    groups = [
        list(t.seeds(STALLS, "B1", cc, s).values())
        for cc in t.ccs
        if cc != UNCOUPLED
        for s in t.scheds
    ]
    groups = [g for g in groups if g]
    if len(groups) < 2:
        return []
    found = kruskal_effect(groups)
    effect = found.effect
    if math.isnan(found.h):
        verdict = Verdict(
            INCONCLUSIVE, effect.n, 0.0, math.nan, math.nan,
            "every trial has the same underflows: no variety to test",
        )  # fmt: skip
    else:
        verdict = Verdict(
            REPRODUCED if found.p < 0.05 else INCONCLUSIVE,
            effect.n,
            effect.estimate,
            effect.low,
            effect.high,
            f"Kruskal-Wallis H = {found.h:.3g}, p = {found.p:.2g} over {len(groups)} cells; "
            "the estimate is its effect size epsilon-squared = H / (n - 1)",
        )
    return [Cell(f"ε² of Kruskal-Wallis over {len(groups)} cells (p decides)", verdict)]


def _p11(t: Trials) -> list[Cell] | str:
    good = [higher(f"{s}: others − bbr", t.group(STALLS, "B1", [c for c in CCS if c != "bbr"], s),
                   t.seeds(STALLS, "B1", "bbr", s)) for s in t.scheds]  # fmt: skip
    overall = _mean_over([t.seeds(STALLS, "B1", "bbr", s) for s in t.scheds])
    steady = [same(f"{s}: bbr − bbr's mean over schedulers", t.seeds(STALLS, "B1", "bbr", s), overall, DELTA_STALLS)
              for s in t.scheds]  # fmt: skip
    return _cells(good + steady)


def _p13(t: Trials) -> list[Cell] | str:
    ccs = [c for c in CCS if c in t.ccs]
    return _cells(tau_cell(f"{s}: τ-b over {len(ccs)} CCs", kendall_per_seed(t, SHARE, STALLS, [("B1", c, s) for c in ccs]),
                           any(("B1", c, s) in t.present for c in ccs))
                  for s in t.scheds)  # fmt: skip


def _p14(t: Trials) -> list[Cell] | str:
    return _cells(higher(f"{s}: bbr vs {cc}", t.seeds(WIFI_BYTES, "B1", "bbr", s), t.seeds(WIFI_BYTES, "B1", cc, s))
                  for s in t.scheds for cc in CCS if cc != "bbr" and cc in t.ccs)  # fmt: skip


def _p16(t: Trials) -> list[Cell] | str:
    cells = []
    for cc in ("compound", *LIA_VARIANTS):
        worst = [
            (t.mean(STALLS, "B2", cc, s) - _avg(t.group(STALLS, "B2", GOOD_BC, s)), s)
            for s in t.scheds
        ]
        worst = [(d, s) for d, s in worst if d == d]
        if worst:
            s = max(worst)[1]
            cells.append(
                higher(
                    f"{cc} at its worst scheduler {s}",
                    t.seeds(STALLS, "B2", cc, s),
                    t.group(STALLS, "B2", GOOD_BC, s),
                )
            )
    return _cells(cells)


def _avg(values: dict[int, float]) -> float:
    return sum(values.values()) / len(values) if values else math.nan


def _p18(t: Trials) -> list[Cell] | str:
    return _cells(higher(f"{cc}×{s}", t.seeds(STALLS, "B2", cc, s), t.group(STALLS, "B2", GOOD_BC, s))
                  for cc in LIA_VARIANTS for s in t.scheds)  # fmt: skip


def _p20(t: Trials) -> list[Cell] | str:
    return _cells(higher(f"{cc}×{s}", t.seeds(SHARE, "B1", cc, s), t.seeds(SHARE, "B2", cc, s))
                  for cc in CCS if cc in t.ccs for s in t.scheds)  # fmt: skip


def _p21(t: Trials) -> list[Cell] | str:
    cells = []
    for s in t.scheds:
        rival = _rival(t, SHARE, "B2", "bbr", s)
        if rival is not None:
            cells.append(
                higher(
                    f"{s} vs {rival}",
                    t.seeds(SHARE, "B2", "bbr", s),
                    t.seeds(SHARE, "B2", rival, s),
                )
            )
    return _cells(cells)


def _p24(t: Trials) -> list[Cell] | str:
    if UNCOUPLED not in t.ccs:
        return f"needs the uncoupled control `{UNCOUPLED}` in the matrix; not in this run"
    return _cells(higher(f"{sc} {cc}×{s}", t.seeds(STALLS, sc, cc, s), t.seeds(STALLS, sc, UNCOUPLED, s))
                  for sc in SCENARIOS for cc in ("lia", "olia") for s in t.scheds)  # fmt: skip


def discards_follow_stalls(t: Trials) -> list[Cell] | str:
    """P23 (and C5 in live mode): per CC, the per-seed τ-b over that CC's cells between
    network-attributed picture discards and underflows; each CC's mean τ-b > 0."""
    if not t.has(DISCARDS):
        return NOT_MEASURED
    cells = []
    for cc in t.ccs:
        keys = [(sc, cc, s) for sc in SCENARIOS for s in t.scheds if (sc, cc, s) in t.present]
        taus = kendall_per_seed(t, DISCARDS, STALLS, keys)
        cells.append(tau_cell(f"{cc}: τ-b over {len(keys)} cells", taus, bool(keys)))
    return _cells(cells)


def _p2(t: Trials) -> list[Cell] | str:
    if not t.has(DISCARDS):
        return NOT_MEASURED
    return _per_sched_contrast(t, DISCARDS, "A1", LIA_VARIANTS, GOOD_A1)


CONTRAST = "per cell: mean over seeds of the paired difference, 95 % bootstrap interval (metrics/verdict.py check_direction); the cell supports when the interval lies above 0"
SHARE_RULE = "per CC × scheduler: Wi-Fi share of data packets − ½ over seeds (check_direction); supports when the interval lies above 0"
RETRANS_RULE = "per scheduler × path: BBR's retransmitted packets − those of the other CC with the highest mean, paired by seed (check_direction)"
TAU_RULE = "per-seed Kendall τ-b over the CCs (one point per CC, never pooled over schedulers); the cell supports when the 95 % interval of its mean over seeds lies above 0"

CLAIMS: tuple[Spec, ...] = (
    Spec("P1", "A1", "BBR, Cubic and Compound excellent over all schedulers; the LIA variants poor (contrast)", "Fig. 4a",
         "per scheduler: underflows(LIA, OLIA, BALIA) − underflows(BBR, Cubic, Compound); " + CONTRAST,
         lambda t: _per_sched_contrast(t, STALLS, "A1", LIA_VARIANTS, GOOD_A1)),
    Spec("P2", "A1", "picture discards show the same contrast", "Fig. 4b",
         "as P1 on network-attributed picture discards (`discarded_frames_network`); emulation only", _p2),
    Spec("P3", "A1", "Wi-Fi is the most used path for all CCs and schedulers", "Fig. 5a, b", SHARE_RULE,
         lambda t: _share_cells(t, "A1", wifi_most=True)),
    Spec("P4", "A1", "BBR retransmits more than the other CCs across all schedulers, both paths", "Fig. 5c, d", RETRANS_RULE,
         lambda t: bbr_most(t, "A1", RETRANS)),
    Spec("P5", "A2", "BBR and Cubic perform well with all schedulers; the LIA variants do not (contrast)", "Fig. 6",
         "per scheduler: underflows(LIA variants) − underflows(BBR, Cubic); " + CONTRAST,
         lambda t: _per_sched_contrast(t, STALLS, "A2", LIA_VARIANTS, GOOD_BC)),
    Spec("P6", "A2", "Compound has a large buffer underflow with TP-STY", "Fig. 6",
         "2 cells: Compound×TP-STY vs Compound with the other schedulers; vs {BBR, Cubic}×TP-STY; " + CONTRAST,
         lambda t: _poor_with_tp_sty(t, "A2", "compound")),
    Spec("P7", "A2", "Compound × TP-STY similar to the LIA variants", "Fig. 6",
         f"equality: the 90 % interval of underflows(Compound, TP-STY) − underflows(LIA variants, TP-STY) inside ±{DELTA_STALLS} (check_band)",
         lambda t: _cells([same("compound×tp-sty − L×tp-sty", t.seeds(STALLS, "A2", "compound", "tp-sty"),
                                t.group(STALLS, "A2", LIA_VARIANTS, "tp-sty"), DELTA_STALLS)])),
    Spec("P8", "A2", "the CCs of poor video performance under TP-STY prefer Wi-Fi", "Fig. 7a, b",
         "premise: each CC decided worse than {BBR, Cubic} under TP-STY; its Wi-Fi share − ½ > 0 (n/a if none)", _p8),
    Spec("P9", "A2", "BBR retransmits more across most schedulers, except TP-STY on Wi-Fi", "Fig. 7c, d",
         RETRANS_RULE + "; 11 cells without (TP-STY, Wi-Fi); 'most' = partly",
         lambda t: bbr_most(t, "A2", RETRANS, {("tp-sty", "wifi")})),
    Spec("P10", "B1", "a wide variety of performances over scheduler/CC combinations", "Fig. 8",
         "Kruskal-Wallis over the 36 cells' per-trial underflows, p < 0.05 supports", _p10),
    Spec("P11", "B1", "consistent good performance of BBR across all schedulers", "Fig. 8",
         f"per scheduler: underflows(other CCs) − underflows(BBR) > 0; and BBR − BBR's mean over schedulers inside ±{DELTA_STALLS} (check_band)", _p11),
    Spec("P12", "B1", "a preference for the Wi-Fi path for all CCs", "Fig. 9a, b", SHARE_RULE,
         lambda t: _share_cells(t, "B1", wifi_most=True)),
    Spec("P13", "B1", "the CCs that use Wi-Fi most deliver the worst buffer underflows", "Figs. 8, 9",
         "per scheduler, Wi-Fi share vs underflows: " + TAU_RULE, _p13),
    Spec("P14", "B1", "BBR maintains a better Wi-Fi utilisation across all schedulers", "Fig. 9",
         "per scheduler × other CC: Wi-Fi bytes(BBR) − Wi-Fi bytes(CC); " + CONTRAST, _p14),
    Spec("P15", "B1", "BBR with significantly more retransmissions across all schedulers", "Section IV text", RETRANS_RULE,
         lambda t: bbr_most(t, "B1", RETRANS)),
    Spec("P16", "B2", "only BBR and Cubic deliver good performance across all schedulers", "Fig. 10",
         "per other CC at its worst scheduler (by mean): underflows(CC) − underflows(BBR, Cubic); " + CONTRAST, _p16),
    Spec("P17", "B2", "Compound again has a large buffer underflow with TP-STY", "Fig. 10", "as P6",
         lambda t: _poor_with_tp_sty(t, "B2", "compound")),
    Spec("P18", "B2", "the LIA variants all deliver large buffer underflows", "Fig. 10",
         "per LIA variant × scheduler: underflows(CC) − underflows(BBR, Cubic); " + CONTRAST, _p18),
    Spec("P19", "B2", "large LTE utilisation across all CCs", "Fig. 11",
         "per CC × scheduler: ½ − Wi-Fi share > 0 (check_direction)", lambda t: _share_cells(t, "B2", wifi_most=False)),
    Spec("P20", "B1→B2", "all CCs back off from Wi-Fi compared with B1", "Figs. 9, 11",
         "per CC × scheduler: Wi-Fi share(B1) − Wi-Fi share(B2), paired by seed (shared noise); " + CONTRAST, _p20),
    Spec("P21", "B2", "BBR still uses more of the Wi-Fi path than the other CCs on most schedulers", "Fig. 11",
         "per scheduler: Wi-Fi share(BBR) − that of the other CC with the highest mean; 'most' = partly", _p21),
    Spec("P22", "B2", "a larger number of retransmissions for BBR", "Section IV text", RETRANS_RULE,
         lambda t: bbr_most(t, "B2", RETRANS)),
    Spec("P23", "all", "picture discards accompany buffer underflows", "Figs. 4b-10b",
         "per CC, network-attributed discards vs underflows over its cells: " + TAU_RULE.replace("over the CCs (one point per CC, never pooled over schedulers)", "over the CC's cells") + "; emulation only",
         discards_follow_stalls),
    Spec("P24", "A1-B2", "LIA's and OLIA's coupling slows their loss recovery (video degradation)", "Section V (conclusion)",
         f"per scenario × {{LIA, OLIA}} × scheduler: underflows(CC) − underflows({UNCOUPLED}, the same window machine uncoupled); " + CONTRAST, _p24),
)  # fmt: skip


def decide(t: Trials, spec: Spec) -> ClaimResult:
    """One claim on one setting's trials."""
    result = ClaimResult(spec.cid, spec.scenario, spec.text, spec.paper, spec.rule)
    cells = spec.cells(t)
    if isinstance(cells, str):
        result.outcome = NOT_MEASURED if cells == NOT_MEASURED else NOT_APPLICABLE
        result.note = "the engine cannot measure this metric" if cells == NOT_MEASURED else cells
        return result
    result.cells = cells
    result.outcome = claim_outcome(cells)
    return result


def decide_all(rows, engine: str) -> list[ClaimResult]:
    """Every paper claim on one setting's ok and valid trials of one engine. The simulator's
    player has no decoder: its picture-discard columns are 0 by construction and not read."""
    if engine == "sim":
        rows = rows.drop(columns=[c for c in rows.columns if c.startswith("discarded_frames")])
    t = Trials(rows)
    return [decide(t, spec) for spec in CLAIMS]
