"""Seed 003's paper ("H-MPTCP", the hybrid of equally-weighted and weighted MPTCP): every figure
and table of its evaluation (Section IV), plus the two tables of Sections II and III whose
statements the page tests, each with where the page runs it or why it does not."""

from __future__ import annotations

from testbed.reproduce.base import not_ran, ran

PAPER_FIGURES: tuple[tuple[str, str], ...] = (
    (
        "Table I (§II: the family-party example's rates and costs, EMPTCP vs WMPTCP)",
        not_ran(
            "a worked example on the fairness definitions, not an experiment; its point (a "
            "weight lets the user keep traffic off the priced path) is the claim 'Pricing "
            "incentive: …', run on H-MPTCP in case 1"
        ),
    ),
    (
        "Table II (§III: design objectives and responsiveness per protocol)",
        not_ran(
            "a qualitative summary; its 'Best-case TCP' column is tested by the case 1 and "
            "case 2 claims against the best single path, its 'Responsiveness' column by "
            "case 3's transition claims"
        ),
    ),
    (
        "Fig. 2 (the evaluation topology: x11 alone on C1, x12 and a Reno flow x2 on C2)",
        ran("every claim: the simulated topology above"),
    ),
    (
        "Fig. 3(a)–(e) (case 1, C1 = C2 = 1024: each protocol's x11, x12, x2 over 10 s)",
        ran(
            "'Case 1: the rates within 10 %', 'Case 1: H-MPTCP does as well as the better of "
            "EMPTCP and WMPTCP'; model check 'The paper's theoretical rates …'"
        ),
    ),
    (
        "Fig. 3(f) (case 1: x1 of every protocol against the best single path, 1024)",
        ran(
            "'Case 1 (C1 = C2 = 1024): EMPTCP, LIA and BALIA stay close to the best single path; "
            "WMPTCP and H-MPTCP exceed it'"
        ),
    ),
    (
        "Fig. 4(a)–(e) (case 2, C1 = 8, C2 = 1024: each protocol's rates)",
        ran(
            "'Case 2 (C1 = 8, C2 = 1024): EMPTCP and H-MPTCP rates within 10 %', 'Case 2: "
            "WMPTCP rates within 10 %', 'Case 2: H-MPTCP does as well as the better of EMPTCP "
            "and WMPTCP'"
        ),
    ),
    (
        "Fig. 4(f) (case 2: x1 of every protocol against the best single path, 512)",
        ran(
            "'Case 2: EMPTCP, H-MPTCP, LIA and BALIA get more than the best single path; "
            "WMPTCP less'"
        ),
    ),
    (
        "Fig. 5(a)–(e) (case 3: C1 1024 → 8 → 1024 Mbit/s at 6 s and 13 s, each protocol's "
        "rates over 20 s)",
        ran(
            "the four 'Case 3: …' claims (x11's drop and H-MPTCP's choice, EMPTCP's transition "
            "against LIA's and BALIA's, H-MPTCP's against EMPTCP's, WMPTCP's flat x12)"
        ),
    ),
)
