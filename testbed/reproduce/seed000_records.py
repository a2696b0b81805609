# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""Seed 000's page: the helpers every claim uses on the benchmarks' per-seed records (select,
pair by seed, average) and the two ways a claim is built without a single verdict."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence

from metrics.verdict import Verdict, combine
from testbed.reproduce.base import INCONCLUSIVE, PAPER_CLAIM, Claim


def _mean(v: Sequence[float]) -> float:
    v = [x for x in v if not math.isnan(x)]
    return statistics.fmean(v) if v else float("nan")


def _rows(records: list[dict], **match: object) -> list[dict]:
    """The records whose fields equal `match`, in seed order."""
    return sorted(
        (r for r in records if all(r.get(k) == v for k, v in match.items())),
        key=lambda r: r["seed"],
    )


def _paired(
    a: list[dict], b: list[dict], fa: Callable[[dict], float], fb: Callable[[dict], float]
) -> tuple[list[float], list[float]]:
    """The figures of the seeds both record lists have, aligned by seed."""
    bs = {r["seed"]: r for r in b}
    common = [r for r in a if r["seed"] in bs]
    return [fa(r) for r in common], [fb(bs[r["seed"]]) for r in common]


def _tcp_p1(r: dict) -> float:
    return _mean(r["tcp_p1_mbps"])


def _combined(
    name: str, paper: str, parts: list[tuple[str, Verdict]], why: str, kind: str = PAPER_CLAIM
) -> Claim:
    """A claim made of parts: metrics/verdict.py's combine over them; each part's n,
    estimate and interval shown."""
    ours = "<br>".join(f"{label}: {v.text()}" for label, v in parts)
    return Claim(name, paper, ours, combine(v for _, v in parts), why, kind)


def _no_records(name: str, paper: str, what: str, ok: bool) -> Claim:
    return Claim(
        name,
        paper,
        f"no records from {what} (benchmark {'passed' if ok else 'failed'})",
        INCONCLUSIVE,
        "the benchmark produced no figures; its log is in the run folder",
    )
