"""One QoE figure per trial and per segment: the linear QoE of Yin et al. as used by Pensieve.

    QoE = sum_n q(R_n) - lambda * sum_n |q(R_n) - q(R_(n-1))| - mu * T_stall - mu_s * T_startup

Form: X. Yin, A. Jindal, V. Sekar, B. Sinopoli, "A Control-Theoretic Approach for Dynamic
Adaptive Video Streaming over HTTP", ACM SIGCOMM 2015 (the QoE of its section 3, with the
start-up term). Constants: H. Mao, R. Netravali, M. Alizadeh, "Neural Adaptive Video Streaming
with Pensieve", ACM SIGCOMM 2017, "QoE_lin": q(R) = R in Mbit/s, lambda = 1 (its simulator's
SMOOTH_PENALTY), mu = 4.3 (REBUF_PENALTY: one second of stall costs as much as one segment at
Pensieve's top rung, 4.3 Mbit/s). Pensieve has no separate start-up term; we set mu_s = mu
(our choice: a second spent waiting for the first frame costs what a second of stall costs).
The constants are kept fixed, not scaled to this testbed's ladder (top rung 5.24 Mbit/s), so
figures compare with the literature's; docs/METRICS.md says so.

Inputs (player.jsonl, CONTRACTS §5.4): the media `segment` lines (rendition -> nominal bitrate
from the `representations` line; the last download of a segment index counts), `stall`
lines (each charged to the segment whose media time it happened at), `startup`.
R_n is the nominal bitrate of the rendition downloaded for segment n, as in both papers
(the bitrate the ABR chose), in Mbit/s.

`qoe_lin` is the sum over the session's segments; `qoe_lin_per_segment` divides by their
number (Pensieve reports this average), which compares sessions of different lengths.

ITU-T P.1203 mode 0 (`p1203_mode0`, 1..5 MOS) is computed only when the reference
implementation (`itu-p1203`, GitHub itu-p1203/itu-p1203, not on PyPI and not
bundled because of its licence) is importable; otherwise the column is empty and
`p1203_status()` says it is absent.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from metrics.numbers import number_or_none

NS_PER_S = 1_000_000_000
BITS_PER_MBIT = 1_000_000
LAMBDA_SWITCH = 1.0  # Pensieve SMOOTH_PENALTY (per Mbit/s of change)
MU_STALL = 4.3  # Pensieve REBUF_PENALTY (per second of stall)
MU_STARTUP = MU_STALL  # our choice, see the module docstring
# The fields of trial_qoe, in order (summary.csv's QoE columns, metrics/tables.py).
TRIAL_QOE_FIELDS = [
    "qoe_lin",
    "qoe_lin_per_segment",
    "qoe_bitrate_term",
    "qoe_switch_term",
    "qoe_stall_term",
    "qoe_startup_term",
]
SEGMENT_NUMBER = re.compile(r"(\d+)\.m4s$")


@dataclass(frozen=True)
class SegmentQoe:
    index: int
    bitrate_mbps: float
    switch_mbps: float  # |q(R_n) - q(R_(n-1))|, 0 for the first
    stall_s: float
    qoe: float  # q(R_n) - lambda * switch - mu * stall (start-up is charged to the trial)


def _segment_index(line: dict) -> int | None:
    for key in ("segment_index", "index"):
        value = number_or_none(line.get(key))
        if value is not None:
            return int(value)
    match = SEGMENT_NUMBER.search(str(line.get("url", "")))
    return int(match.group(1)) if match else None


def segment_qoe(
    lines: list[dict], segment_s: float = 2.0, *, lam: float = LAMBDA_SWITCH, mu: float = MU_STALL
) -> list[SegmentQoe]:
    """Per-segment terms, in segment order (see the module docstring)."""
    bitrates: dict[str, float] = {}
    for line in lines:
        if line.get("event") == "representations":
            for rep in line.get("reps") or []:
                rate = number_or_none(rep.get("bitrate_bps"))
                if rate is not None:
                    bitrates[str(rep.get("rep_id"))] = rate / BITS_PER_MBIT
    chosen: dict[int, float] = {}
    for line in lines:
        if line.get("event") != "segment" or line.get("media_type") != "video":
            continue
        index = _segment_index(line)
        rate = bitrates.get(str(line.get("rep_id")))
        if index is not None and rate is not None:
            chosen[index] = rate  # a re-download replaces the earlier one
    stall_by_segment: dict[int, float] = {}
    first = min(chosen) if chosen else 0
    for line in lines:
        if line.get("event") != "stall":
            continue
        media = number_or_none(line.get("media_time_s")) or 0.0
        duration = (number_or_none(line.get("duration_ms")) or 0.0) / 1000
        # Numbering may start at 0 or 1 ($Number$ starts at 1 in FFmpeg's dash muxer).
        index = first + int(media // segment_s)
        stall_by_segment[index] = stall_by_segment.get(index, 0.0) + duration
    out: list[SegmentQoe] = []
    previous: float | None = None
    for index in sorted(set(chosen) | set(stall_by_segment)):
        rate = chosen.get(index, previous if previous is not None else 0.0)
        switch = abs(rate - previous) if previous is not None else 0.0
        stall = stall_by_segment.get(index, 0.0)
        out.append(SegmentQoe(index, rate, switch, stall, rate - lam * switch - mu * stall))
        previous = rate
    return out


def trial_qoe(
    lines: list[dict],
    segment_s: float = 2.0,
    *,
    lam: float = LAMBDA_SWITCH,
    mu: float = MU_STALL,
    mu_s: float = MU_STARTUP,
) -> dict[str, float]:
    """{qoe_lin, qoe_lin_per_segment, qoe_bitrate_term, qoe_switch_term, qoe_stall_term,
    qoe_startup_term}: the sum over segments minus the start-up penalty; NaN without segments."""
    segments = segment_qoe(lines, segment_s, lam=lam, mu=mu)
    startup_ms = next(
        (
            number_or_none(ln.get("startup_delay_ms"))
            for ln in lines
            if ln.get("event") == "startup"
        ),
        None,
    )
    if not segments:
        return dict.fromkeys(TRIAL_QOE_FIELDS, math.nan)
    bitrate = sum(s.bitrate_mbps for s in segments)
    switch = lam * sum(s.switch_mbps for s in segments)
    stall = mu * sum(s.stall_s for s in segments)
    startup = mu_s * (startup_ms or 0.0) / 1000
    total = bitrate - switch - stall - startup
    return {
        "qoe_lin": total,
        "qoe_lin_per_segment": total / len(segments),
        "qoe_bitrate_term": bitrate,
        "qoe_switch_term": switch,
        "qoe_stall_term": stall,
        "qoe_startup_term": startup,
    }


# ---------------------------------------------------------------- ITU-T P.1203 (optional)


def p1203_status() -> str:
    """'available' or why P.1203 is absent."""
    try:
        import itu_p1203  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return (
            "absent: the ITU-T P.1203 reference implementation (itu-p1203) is not installed; "
            "install it yourself from its GitHub repository itu-p1203/itu-p1203 (its licence "
            "forbids bundling) to get p1203_mode0"
        )
    return "available"


def p1203_mode0(lines: list[dict], segment_s: float = 2.0) -> float:
    """P.1203 mode 0 O.46 (MOS 1..5) from segment metadata, or NaN when absent/unusable.
    Mode 0 needs per segment only bitrate, resolution, frame rate, codec and duration."""
    if p1203_status() != "available":
        return math.nan
    from itu_p1203 import P1203Standalone  # type: ignore[import-not-found]

    reps = {}
    for line in lines:
        if line.get("event") == "representations":
            reps = {str(r.get("rep_id")): r for r in line.get("reps") or []}
    segments = []
    start = 0.0
    for seg in segment_qoe(lines, segment_s):
        rep = next(
            (
                r
                for r in reps.values()
                if number_or_none(r.get("bitrate_bps")) == seg.bitrate_mbps * 1e6
            ),
            {},
        )
        segments.append(
            {
                "bitrate": seg.bitrate_mbps * 1000,  # kbit/s
                "codec": "h264",
                "duration": segment_s,
                "fps": 30.0,
                "resolution": f"{rep.get('width', 1280)}x{rep.get('height', 720)}",
                "start": start,
            }
        )
        start += segment_s
    stalls = [
        [
            number_or_none(ln.get("media_time_s")) or 0.0,
            (number_or_none(ln.get("duration_ms")) or 0.0) / 1000,
        ]
        for ln in lines
        if ln.get("event") == "stall"
    ]
    startup_ms = next(
        (
            number_or_none(ln.get("startup_delay_ms"))
            for ln in lines
            if ln.get("event") == "startup"
        ),
        None,
    )
    if startup_ms:
        stalls.insert(0, [0.0, startup_ms / 1000])
    if not segments:
        return math.nan
    report = {
        "I11": {"segments": [], "streamId": 1},
        "I13": {"segments": segments, "streamId": 1},
        "I23": {"stalling": stalls, "streamId": 1},
        "IGen": {"device": "pc", "displaySize": "1920x1080"},
    }
    try:
        result = P1203Standalone(report, quiet=True).calculate_complete()
        return float(result["O46"])
    except Exception:
        return math.nan
