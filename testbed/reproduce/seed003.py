# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""Seed 003: H-MPTCP's rate allocation and pricing (cases 1-3), from transport tests'
figures."""

from __future__ import annotations

from testbed.reproduce.base import (
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Claim,
    Page,
    Runner,
    median,
    passfail,
    values,
)
from testbed.reproduce.crosscheck import crosscheck_section

DEFAULT_REPS = 3

# --- seed 003 --------------------------------------------------------------------------------


def _rates_line(v: dict) -> str:
    opts = "" if v.get("opts") in ("[]", None) else f" {v['opts']}"
    return f"{v['cc']}{opts}: x11 {v['x11']:.1f}, x12 {v['x12']:.1f}, x2 {v['x2']:.1f} (x1 {v['x11'] + v['x12']:.1f})"


def _medians_line(v: dict) -> str:
    return (
        f"case {v['case']} {v['cc']}: x11 {v['x11']:.1f}, x12 {v['x12']:.1f}, x2 {v['x2']:.1f} "
        f"(x1 {v['x11'] + v['x12']:.1f}; medians of seeds {', '.join(map(str, v['seeds']))})"
    )


def _bin_mean(series: list[float], bin_s: float, from_s: float, to_s: float) -> float:
    a, b = int(round(from_s / bin_s)), int(round(to_s / bin_s))
    chunk = series[a:b]
    return sum(chunk) / len(chunk) if chunk else float("nan")


def transition_s(v: dict) -> float:
    """Seconds from the capacity drop until x12's 1 s moving average first comes within 10 %
    of its new balanced rate (x12's mean over 10-13 s). Rule ours; the paper reads it off
    its Fig. 5."""
    bin_s, x12 = v["bin_s"], v["x12"]
    target = _bin_mean(x12, bin_s, 10.0, v["back_at_s"])
    per_s = int(round(1.0 / bin_s))
    start = int(round(v["drop_at_s"] / bin_s))
    for i in range(start, len(x12) - per_s + 1):
        avg = sum(x12[i : i + per_s]) / per_s
        if abs(avg - target) <= 0.1 * target:
            return i * bin_s - v["drop_at_s"]
    return float("nan")


def build(r: Runner) -> Page:
    reps = r.opts.reps_or(DEFAULT_REPS)
    page = Page(
        "seed003",
        "H-MPTCP rate allocation and pricing (seed 003)",
        """The paper's two-source topology (S1: one Reno flow x2 sharing link C2 with the
MPTCP subflow x12; the MPTCP subflow x11 alone on C1), in the simulator
(`transport/tests/seed003_rates.rs` for cases 1, 2 and the pricing weight,
`transport/tests/seed003_case3.rs` for case 3), rates in the paper's units (Mbit/s; the
simulation runs every rate divided by 16). The tests assert the paper's case-2 rates under
EMPTCP and H-MPTCP within 10 % and the case-1 and case-3 properties; the 10 % bar for the
other rates (case 1, case 2 under WMPTCP) is kept as ignored tests, run here and reported as
they come out. The figures are the tests' JSON output.""",
    )
    page.reps_note = (
        f"Repetitions: cases 1 and 2 are medians over seeds 1-5 and the pricing run over seeds "
        f"1-3 (the tests' own; a 0-1 ms ACK jitter makes the seeds differ); case 3 runs "
        f"{reps} seed(s) (`--reps`, seeds 7, 8, ...), its transition times are the median."
    )
    page.open_params = [
        ("RTT", "20 ms on every path (10 ms one way)", "paper does not give it"),
        ("queues", "drop-tail, one BDP", "paper does not give them"),
        (
            "loss synchrony",
            "drop-tail queues (losses not forced synchronous)",
            "341/683 split assumes synchronised losses; independent losses give ≈424",
        ),
        (
            "ACK timing",
            "0-1 ms random on every ACK link (cases 1, 2, pricing)",
            "without it the drop-tail phase decides which flow loses and seeds do not differ",
        ),
        ("metered-path weight", "x12 weight 0.1 vs default 0.5", "paper: a price, no number"),
        (
            "case 3: which link changes",
            "x11's link (C1 of case 2) at 8 Mbit/s from 6 s to 13 s",
            "the text says 'C2 = 8 Mbps' but describes x11 dropping to 8 and the 6-13 s allocation as case 2's (C1 = 8)",
        ),
        (
            "case 3: transition time",
            "drop → first time x12's 1 s average is within 10 % of its 10-13 s mean",
            "the paper reads it off Fig. 5; 250 ms bins",
        ),
    ]
    # Cases 1 and 2: medians over seeds 1-5 with a 0-1 ms ACK jitter (see the test file).
    ok2, f2 = r.cargo_test("seed003_rates", "case2_emptcp_and_hmptcp")
    page.claims.append(
        Claim(
            "Case 2 (C1=8, C2=1024): EMPTCP/H-MPTCP rates within 10 %",
            "x11=8, x12=508, x2=516 (EMPTCP = H-MPTCP)",
            "<br>".join(_medians_line(v) for v in values(f2, "seed003_medians"))
            + f"<br>all three rates within 10 %: {passfail(ok2)}",
            REPRODUCED if ok2 else NOT_REPRODUCED,
            "tolerance 10 % is the issue's; synchronised and independent losses give the same "
            "rates here (x1 = x2 either way), which is why this point reproduces",
        )
    )
    okw2, fw2 = r.cargo_test("seed003_rates", "case2_wmptcp_gives", ignored=True)
    page.claims.append(
        Claim(
            "Case 2: WMPTCP rates within 10 %",
            "x11=8, x12=341, x2=683",
            "<br>".join(_medians_line(v) for v in values(fw2, "seed003_medians"))
            + f"<br>within 10 %: {passfail(okw2)}",
            REPRODUCED if okw2 else NOT_REPRODUCED,
            "341/683 is the split of synchronised losses (ω : 1); the simulator's drop-tail "
            "queue loses at an equal per-packet rate, which gives √ω : 1 (x12 ≈ 424). Ignored "
            "test with the 10 % bar",
        )
    )
    okh, fh = r.cargo_test("seed003_rates", "case2_hmptcp_does_at_least")
    page.claims.append(
        Claim(
            "Case 2: H-MPTCP does at least as well as the better of EMPTCP and WMPTCP",
            "H-MPTCP = EMPTCP in case 2",
            "<br>".join(_medians_line(v) for v in values(fh, "seed003_medians"))
            + f"<br>H-MPTCP's x1 ≥ 0.9 × the better half's: {passfail(okh)}",
            REPRODUCED if okh else NOT_REPRODUCED,
            "0.9 is this testbed's tolerance. A single jitter-free run measured 0.876 (the "
            "drop-tail phase); the medians over 5 seeds with jitter do not show it",
        )
    )
    ok1, f1 = r.cargo_test("seed003_rates", "case1_every_variant")
    page.claims.append(
        Claim(
            "Case 1 (C1=C2=1024): every variant beats the best single path; x11 ≈ 1024",
            "x11 = 1024; x1 = 1024 (EMPTCP, the best single path) and ≈ 1365 (WMPTCP = H-MPTCP)",
            "<br>".join(_medians_line(v) for v in values(f1, "seed003_medians"))
            + f"<br>assertions (x11 within 10 % of 1024, x1 > 1024, H-MPTCP x1 ≥ 0.9 × "
            f"the better half's): {passfail(ok1)}",
            REPRODUCED if ok1 else NOT_REPRODUCED,
            "the paper's conclusions for case 1, not its rates (next row)",
        )
    )
    okr1, _ = r.cargo_test("seed003_rates", "case1_gives", ignored=True)
    page.claims.append(
        Claim(
            "Case 1: the rates within 10 %",
            "EMPTCP x12=0, x2=1024; WMPTCP and H-MPTCP x12=341, x2=683",
            f"medians as in the row above; within 10 % (0 within 10 % of C2): {passfail(okr1)}",
            REPRODUCED if okr1 else NOT_REPRODUCED,
            "the paper's values are those of synchronised losses; independent losses give "
            "EMPTCP x12=341/x2=683 and WMPTCP x12≈424/x2≈600, which is where the simulator "
            "sits. Ignored test with the 10 % bar",
        )
    )
    okm, fm = r.cargo_test("seed003_rates", "under_synchronised_losses")
    page.claims.append(
        Claim(
            "The paper's theoretical rates follow from its equations under synchronised losses",
            "cases 1 and 2, all three CCs (the values above)",
            "the implemented increase rules in a fluid model where every flow on a link "
            f"halves at each overflow give them within 10 %: {passfail(okm)}",
            REPRODUCED if okm else NOT_REPRODUCED,
            "a model check, not the simulator: it shows the gap is the loss model, not the rules",
        )
    )
    # Medians over seeds 1-3 with a 0-1 ms ACK jitter (see the test's comment).
    okw, fw = r.cargo_test("seed003_rates", "a_path_weight")
    runs = values(fw, "seed003_rates")
    light = [v["x12"] for v in runs if "weight" in str(v.get("opts"))]
    default = [v["x12"] for v in runs if "weight" not in str(v.get("opts"))]
    shifted = bool(light and default) and median(light) < 0.9 * median(default)
    page.claims.append(
        Claim(
            "Pricing incentive: a low H-MPTCP weight on the metered path shifts traffic off it",
            "traffic moves off the priced path to the free one",
            "<br>".join(_rates_line(v) for v in runs)
            + f"<br>x12 < 0.9× default and x2 gains: {passfail(okw)}",
            REPRODUCED if okw else (PARTLY if shifted else NOT_REPRODUCED),
            "the paper gives no price → weight mapping; 0.1 is our choice. The ACK links add a "
            "random 0-1 ms and the figures are medians over 3 seeds: without any jitter the "
            "drop-tail phase decides who loses on C2 and the weight's effect vanishes behind it "
            "(x12 422 vs 424)",
        )
    )
    seeds = ",".join(str(7 + i) for i in range(reps))
    ok3, f3 = r.cargo_test("seed003_case3", ignored=True, env={"SEED003_CASE3_SEEDS": seeds})
    page.claims += seed003_case3_claims(values(f3, "seed003_case3"), ok3)
    page.emulated = crosscheck_section("seed003", r, reps)
    return page


def seed003_case3_claims(runs: list[dict], ok: bool) -> list[Claim]:
    if not runs:
        return [
            Claim(
                "Case 3 (x11's link 1024 → 8 → 1024 Mbit/s at 6 s and 13 s)",
                "transition times EMPTCP 2 s, LIA/BALIA 3 s",
                f"test produced no figures (test {passfail(ok)})",
                NOT_REPRODUCED,
            )
        ]
    by_cc: dict[str, list[dict]] = {}
    for v in runs:
        by_cc.setdefault(v["cc"], []).append(v)
    t = {cc: median([transition_s(v) for v in vs]) for cc, vs in by_cc.items()}

    def phase(cc: str, i: int, a: float, b: float) -> float:
        key = ("x11", "x12", "x2")[i]
        return median([_bin_mean(v[key], v["bin_s"], a, b) for v in by_cc.get(cc, [])])

    # A "transition" is only meaningful where x12 moves: less than 10 % between its 3-6 s and
    # 10-13 s means counts as no shift.
    moved = {
        cc: abs(phase(cc, 1, 10, 13) - phase(cc, 1, 3, 6)) > 0.1 * phase(cc, 1, 3, 6)
        for cc in by_cc
    }
    shown = "; ".join(
        f"{cc} {t[cc]:.2f} s" if moved[cc] else f"{cc} no shift (x12 moves < 10 %)" for cc in by_cc
    )
    faster = bool(moved.get("emptcp")) and all(
        moved.get(cc) and t.get("emptcp", float("nan")) < t.get(cc, float("nan"))
        for cc in ("lia", "balia")
    )
    rates = "<br>".join(
        f"{cc}: x11/x12/x2 over 3-6 s {phase(cc, 0, 3, 6):.0f}/{phase(cc, 1, 3, 6):.0f}/{phase(cc, 2, 3, 6):.0f}, over 10-13 s {phase(cc, 0, 10, 13):.0f}/{phase(cc, 1, 10, 13):.0f}/{phase(cc, 2, 10, 13):.0f}, over 17-20 s {phase(cc, 0, 17, 20):.0f}/{phase(cc, 1, 17, 20):.0f}/{phase(cc, 2, 17, 20):.0f}"
        for cc in by_cc
    )
    w_before, w_during = phase("wmptcp", 1, 3, 6), phase("wmptcp", 1, 10, 13)
    rising = [
        cc
        for cc in ("emptcp", "lia", "balia")
        if phase(cc, 1, 10, 13) > phase(cc, 1, 3, 6) and phase(cc, 2, 10, 13) < phase(cc, 2, 3, 6)
    ]
    h_vs_e = abs(t.get("hmptcp", float("nan")) - t.get("emptcp", float("nan")))
    return [
        Claim(
            "Case 3: x11 drops to the new capacity at once; H-MPTCP does as well as the better of EMPTCP and WMPTCP (Fig. 5)",
            "x11 falls to 8 Mbit/s at about the same time in every protocol; H-MPTCP picks the higher of its halves",
            rates
            + f"<br>assertions (x11 ≤ 8.8 from 7 s; H-MPTCP x1 ≥ 0.9 × the better half over 10-13 s): {passfail(ok)}",
            REPRODUCED if ok else NOT_REPRODUCED,
            "rates are medians over the seeds; the assertion thresholds are ours",
        ),
        Claim(
            "Case 3: EMPTCP reaches x12's new balanced rate faster than LIA and BALIA",
            "EMPTCP ≈ 2 s (6 → 8 s), LIA and BALIA ≈ 3 s (6 → 9 s)",
            f"transition time of x12: {shown}",
            REPRODUCED if faster else NOT_REPRODUCED,
            "rule: reproduced if EMPTCP's transition is shorter than both LIA's and BALIA's, each of them shifting x12 by more than 10 % (transition as defined under the open parameters). x12 swings by ±20 % over seconds in every variant here (Reno-like sawtooth at 1/16 scale), which blurs any transition; the paper's curves are smoother",
        ),
        Claim(
            "Case 3: H-MPTCP's transition is similar to EMPTCP's",
            "'similar as that in EMPTCP' (Fig. 5d)",
            f"H-MPTCP and EMPTCP differ by {h_vs_e:.2f} s",
            REPRODUCED if h_vs_e <= 0.5 else PARTLY if h_vs_e <= 1.0 else NOT_REPRODUCED,
            "rule (ours): within 0.5 s reproduced, 1 s partly",
        ),
        Claim(
            "Case 3: WMPTCP's x12 does not change; under EMPTCP, LIA and BALIA x12 rises and x2 falls",
            "WMPTCP x12 unchanged (weight fixed); x12 up, x2 down for the coupled ones",
            f"WMPTCP x12 {w_before:.0f} → {w_during:.0f}; x12 up and x2 down for: {', '.join(rising) or 'none'} (of emptcp, lia, balia)",
            REPRODUCED
            if abs(w_during - w_before) <= 0.1 * w_before and len(rising) == 3
            else PARTLY
            if len(rising) >= 2 or abs(w_during - w_before) <= 0.1 * w_before
            else NOT_REPRODUCED,
            "rule (ours): WMPTCP's x12 within 10 % across the drop and all three coupled variants shifting = reproduced; one of the two = partly",
        ),
    ]
