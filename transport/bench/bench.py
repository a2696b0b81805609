"""Benchmark of mpproxy (`user`) against kernel TCP on the real emulator (docs/TRANSPORT.md).

Each case builds a fresh testbed topology (three namespaces, CONTRACTS §3), runs linkemu
with a scenario written here, moves seeded random bytes server -> client through TCP
(kernel) or through mpproxy client/server (user) and checks their SHA-256; the harness is
testbed/bulk.py, which the reproductions' emulated cross-checks use too.

    .venv/bin/python transport/bench/bench.py fidelity     # 100 Mbit/s, 25 ms, 1-BDP queue:
                                                           # kernel cubic/bbr vs user cubic/bbr
    .venv/bin/python transport/bench/bench.py loss         # same link, 0.1 % loss, bbr
    .venv/bin/python transport/bench/bench.py aggregate    # 50 + 20 Mbit/s, bbr + lrf
    .venv/bin/python transport/bench/bench.py exact        # 1 %/2 % loss, 20/40 ms: bbr+lrf,
                                                           # cubic+rr, 200 MB each
    .venv/bin/python transport/bench/bench.py grid         # single path, 20 Mbit/s, 1-BDP queue,
                       # {reno,cubic,bbr} x loss {0.1,1} % x one-way {10,40} ms, kernel vs user;
                       # transfers sized for >= 20 expected losses, steady-state goodput
    .venv/bin/python transport/bench/bench.py outage       # 20 Mbit/s, 25 ms, path dead 3 s:
                       # time from the outage's end to 90 % of the pre-outage goodput
Options: --bytes N (per transfer; grid: overrides the per-cell size), --expected-losses N (grid),
--reps N, --seed N, --cc a,b (grid/outage). Prints one JSON line per transfer and a summary;
needs root, built mpproxy and linkemu. Every transfer's line carries the sender's loss-recovery
counters: kernel TCP's TcpExt deltas of the server namespace, the user transport's stats
(`counters` summed over its paths, `counters_per_path` per path).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

from testbed.bulk import LINKEMU, MPPROXY, emulated, link, run_kernel, run_user

BDP_100M_50MS = 625_000  # 100 Mbit/s × 50 ms RTT
SCENARIOS = {
    "fidelity": (
        link(100_000_000, 25.0, 0, BDP_100M_50MS),
        link(100_000_000, 25.0, 0, BDP_100M_50MS),
    ),
    "loss": (
        link(100_000_000, 25.0, 0.001, BDP_100M_50MS),
        link(100_000_000, 25.0, 0.001, BDP_100M_50MS),
    ),
    "aggregate": (link(50_000_000, 25.0), link(20_000_000, 25.0)),
    "exact": (link(50_000_000, 20.0, 0.01), link(20_000_000, 40.0, 0.02)),
}


GRID_RATE_BPS = 20_000_000
GRID_LOSSES = (0.001, 0.01)
GRID_ONE_WAY_MS = (10.0, 40.0)
# Grid transfer size. A loss-based CC's goodput is set by its loss epochs (the sawtooth
# between two losses), so a transfer must span many of them to be dominated by steady
# state: with 5 MB at 0.1 % a transfer sees ~3.5 data losses, and whether one lands in slow
# start changes its goodput up to 4x for both stacks. Each cell's size is therefore
# GRID_EXPECTED_LOSSES / p full-size packets (0.1 %: 29 MB; 1 %: 2.9 MB, raised to
# GRID_MIN_BYTES), and the goodput compared is the steady-state one: bytes received after
# the first GRID_WARMUP_S seconds (slow start and the first reduction) over the time taken.
# 20 losses rather than more keeps the whole grid near 20 min on this path (the 0.1 %/40 ms
# cubic and reno transfers run at 6-7 Mbit/s in steady state). BBR's goodput is not set by
# loss epochs (it ignores random loss below ~20 %), so its transfers are sized by time
# instead: GRID_RATE_BASED_BYTES last about 5 s at its 18-19 Mbit/s, 3 s of them after the
# warm-up.
GRID_EXPECTED_LOSSES = 20
GRID_MIN_BYTES = 5_000_000
GRID_RATE_BASED_CCS = ("bbr",)
GRID_RATE_BASED_BYTES = 12_000_000
GRID_WARMUP_S = 2.0
GRID_TIMELINE_MS = 100
TCP_MSS_BYTES = 1448
OUTAGE_ONE_WAY_MS = 25.0
OUTAGE_S = 3.0
# Each outage transfer gets its own slot of the emulator's clock: it starts at the slot's
# start, the path is dead from OUTAGE_AT_S to OUTAGE_AT_S + OUTAGE_S into the slot.
OUTAGE_FIRST_SLOT_S = 5.0
OUTAGE_SLOT_S = 40.0
OUTAGE_AT_S = 10.0
# Pre-outage goodput: mean over this window before the outage; recovery: the first window of
# RECOVERY_WINDOW_S after the outage whose goodput reaches RECOVERY_FRACTION of it.
PRE_OUTAGE_WINDOW_S = 5.0
RECOVERY_WINDOW_S = 0.5
RECOVERY_FRACTION = 0.9
TIMELINE_MS = 50


def bdp_bytes(rate_bps: int, one_way_ms: float) -> int:
    return int(rate_bps / 8 * 2 * one_way_ms / 1000)


def show(row: dict, rows: list[dict]) -> None:
    rows.append(row)
    print(json.dumps(row), flush=True)


def median_goodput(rows: list[dict], transport: str, cc: str) -> float:
    vals = [r["goodput_bps"] for r in rows if r["transport"] == transport and r["cc"] == cc]
    return statistics.median(vals) if vals else float("nan")


def grid_links(loss: float, one_way_ms: float) -> tuple[str, str]:
    wifi = link(GRID_RATE_BPS, one_way_ms, loss, bdp_bytes(GRID_RATE_BPS, one_way_ms))
    return wifi, wifi


def grid_bytes(cc: str, loss: float, expected_losses: int) -> int:
    """Transfer size of a grid cell: `expected_losses` data-packet losses at rate `loss`
    (a fixed size for the rate-based CCs)."""
    if cc in GRID_RATE_BASED_CCS:
        return GRID_RATE_BASED_BYTES
    return max(GRID_MIN_BYTES, math.ceil(expected_losses / loss) * TCP_MSS_BYTES)


def steady_goodput_bps(timeline: list[list[int]], warmup_s: float) -> float | None:
    """Goodput after the first `warmup_s` of a (ns, bytes) timeline; None if too short."""
    t_first, t_last = timeline[0][0], timeline[-1][0]
    start = t_first + int(warmup_s * 1e9)
    if t_last - start < 1e9:
        return None
    return goodput_between(timeline, start, t_last)


def run_grid(a: argparse.Namespace, ccs: list[str]) -> list[dict]:
    """Each (loss, delay) cell in its own emulator; per CC and repetition, kernel then user."""
    rows: list[dict] = []
    for loss in GRID_LOSSES:
        for one_way in GRID_ONE_WAY_MS:
            name = f"grid-{loss}-{one_way:g}"
            with emulated(name, a.seed, grid_links(loss, one_way)) as (topo, workdir, t0):
                for rep in range(a.reps):
                    for cc in ccs:
                        n = a.bytes or grid_bytes(cc, loss, a.expected_losses)
                        cell = {"loss": loss, "one_way_ms": one_way, "rep": rep}
                        k = run_kernel(topo, workdir, cc, n, f"g{cc}{rep}k", GRID_TIMELINE_MS)
                        u = run_user(topo, workdir, t0, cc, "lrf", ["wifi"], n, f"g{cc}{rep}u",
                                     GRID_TIMELINE_MS)  # fmt: skip
                        for r in (k, u):
                            steady = steady_goodput_bps(r.pop("timeline"), GRID_WARMUP_S)
                            r["steady_goodput_bps"] = round(steady) if steady else None
                            show({**cell, **r}, rows)
    print(f"summary (median user/kernel steady-state goodput ratio per cell: after the first "
          f"{GRID_WARMUP_S:g} s; whole-transfer ratio in brackets):")  # fmt: skip
    for loss in GRID_LOSSES:
        for one_way in GRID_ONE_WAY_MS:
            for cc in ccs:
                cell = [r for r in rows if r["loss"] == loss and r["one_way_ms"] == one_way
                        and r["cc"] == cc]  # fmt: skip

                def med(transport: str, key: str, cell: list[dict] = cell) -> float:
                    vals = [r[key] or r["goodput_bps"] for r in cell
                            if (r["transport"] == "user") == (transport == "user")]  # fmt: skip
                    return statistics.median(vals)

                k, u = med("kernel", "steady_goodput_bps"), med("user", "steady_goodput_bps")
                kw, uw = med("kernel", "goodput_bps"), med("user", "goodput_bps")
                print(f"  loss {loss * 100:g} % one-way {one_way:g} ms {cc:6} kernel "
                      f"{k / 1e6:6.2f} user {u / 1e6:6.2f} Mbit/s ratio {u / k:.2f} "
                      f"[{uw / kw:.2f}]")  # fmt: skip
    return rows


def outage_links(slots: int) -> tuple[str, str]:
    schedule = ", ".join(
        f'{{ t_s = {OUTAGE_FIRST_SLOT_S + i * OUTAGE_SLOT_S + OUTAGE_AT_S}, op = "outage", '
        f"until_s = {OUTAGE_FIRST_SLOT_S + i * OUTAGE_SLOT_S + OUTAGE_AT_S + OUTAGE_S} }}"
        for i in range(slots)
    )
    bdp = bdp_bytes(GRID_RATE_BPS, OUTAGE_ONE_WAY_MS)
    wifi = link(GRID_RATE_BPS, OUTAGE_ONE_WAY_MS, 0, bdp) + f"\nschedule = [{schedule}]"
    return wifi, link(GRID_RATE_BPS, OUTAGE_ONE_WAY_MS, 0, bdp)


def goodput_between(timeline: list[list[int]], a_ns: int, b_ns: int) -> float:
    """Mean goodput (bit/s) in [a, b] from a cumulative (ns, bytes) timeline (step-wise)."""

    def bytes_at(t: int) -> int:
        got = 0
        for ts, b in timeline:
            if ts > t:
                break
            got = b
        return got

    return (bytes_at(b_ns) - bytes_at(a_ns)) * 8 / ((b_ns - a_ns) / 1e9)


def recovery_s(timeline: list[list[int]], outage_start_ns: int, outage_end_ns: int) -> float | None:
    """Seconds from the outage's end until a RECOVERY_WINDOW_S window reaches
    RECOVERY_FRACTION of the goodput of the PRE_OUTAGE_WINDOW_S before the outage."""
    pre = goodput_between(timeline, outage_start_ns - int(PRE_OUTAGE_WINDOW_S * 1e9),
                          outage_start_ns)  # fmt: skip
    win = int(RECOVERY_WINDOW_S * 1e9)
    step = TIMELINE_MS * 1_000_000
    t = outage_end_ns
    while t + win <= timeline[-1][0]:
        if goodput_between(timeline, t, t + win) >= RECOVERY_FRACTION * pre:
            return (t + win - outage_end_ns) / 1e9
        t += step
    return None


def run_outage(a: argparse.Namespace, ccs: list[str]) -> list[dict]:
    """One slot per transfer; kernel and user alternate, each CC in turn."""
    rows: list[dict] = []
    # 20 Mbit/s for the whole slot but the outage: the transfer outlasts the recovery.
    n = a.bytes or 60_000_000
    plan = [(cc, rep, t) for rep in range(a.reps) for cc in ccs for t in ("kernel", "user")]
    with emulated("outage", a.seed, outage_links(len(plan))) as (topo, workdir, t0):
        for i, (cc, rep, transport) in enumerate(plan):
            slot_ns = t0 + int((OUTAGE_FIRST_SLOT_S + i * OUTAGE_SLOT_S) * 1e9)
            time.sleep(max(0.0, (slot_ns - time.monotonic_ns()) / 1e9))
            tag = f"o{cc}{rep}{transport[0]}"
            if transport == "kernel":
                r = run_kernel(topo, workdir, cc, n, tag, TIMELINE_MS)
            else:
                r = run_user(topo, workdir, t0, cc, "lrf", ["wifi"], n, tag, TIMELINE_MS)
            start = slot_ns + int(OUTAGE_AT_S * 1e9)
            end = start + int(OUTAGE_S * 1e9)
            timeline = r.pop("timeline")
            rec = recovery_s(timeline, start, end)
            show({**r, "rep": rep, "recovery_s": rec,
                  "pre_outage_bps": round(goodput_between(
                      timeline, start - int(PRE_OUTAGE_WINDOW_S * 1e9), start))}, rows)  # fmt: skip
    print("summary (median seconds from the outage's end to 90 % of the pre-outage goodput):")
    for cc in ccs:
        med = {}
        for transport in ("kernel-tcp", "user"):
            vals = [r["recovery_s"] for r in rows if r["cc"] == cc and r["transport"] == transport]
            ok = [v for v in vals if v is not None]
            med[transport] = statistics.median(ok) if len(ok) == len(vals) and ok else None
        k, u = med["kernel-tcp"], med["user"]
        ratio = f"{u / k:.2f}" if k and u else "n/a"
        print(f"  {cc:6} kernel {k} s  user {u} s  ratio user/kernel {ratio}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("case", choices=["fidelity", "loss", "aggregate", "exact", "grid", "outage"])
    ap.add_argument("--bytes", type=int, default=None, help="bytes per transfer")
    ap.add_argument("--expected-losses", type=int, default=GRID_EXPECTED_LOSSES,
                    help="grid: size reno/cubic transfers for this many losses")  # fmt: skip
    ap.add_argument("--reps", type=int, default=None, help="default 3 (grid), 2 (outage), 1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cc", default=None, help="grid/outage: comma-separated CCs")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench.py: needs root (network namespaces)", file=sys.stderr)
        return 2
    for binary in (MPPROXY, LINKEMU):
        if not binary.is_file():
            print(f"bench.py: {binary} not built", file=sys.stderr)
            return 2
    a.reps = a.reps or {"grid": 3, "outage": 2}.get(a.case, 1)
    if a.case in ("grid", "outage"):
        ccs = (a.cc or ("reno,cubic,bbr" if a.case == "grid" else "reno,cubic")).split(",")
        rows = run_grid(a, ccs) if a.case == "grid" else run_outage(a, ccs)
        print(f"  all byte-exact: {all(r['sha_ok'] for r in rows)}")
        return 0 if all(r["sha_ok"] for r in rows) else 1
    rows: list[dict] = []
    with emulated(a.case, a.seed, SCENARIOS[a.case]) as (topo, workdir, t0):
        for rep in range(a.reps):
            if a.case == "fidelity":
                n = a.bytes or 100_000_000
                for cc in ("cubic", "bbr"):
                    show(run_kernel(topo, workdir, cc, n, f"k{cc}{rep}"), rows)
                    show(run_user(topo, workdir, t0, cc, "lrf", ["wifi"], n, f"u{cc}{rep}"), rows)
            elif a.case == "loss":
                n = a.bytes or 100_000_000
                show(run_kernel(topo, workdir, "bbr", n, f"kbbr{rep}"), rows)
                show(run_user(topo, workdir, t0, "bbr", "lrf", ["wifi"], n, f"ubbr{rep}"), rows)
            elif a.case == "aggregate":
                n = a.bytes or 100_000_000
                show(
                    run_user(topo, workdir, t0, "bbr", "lrf", ["wifi", "lte"], n, f"agg{rep}"), rows
                )
            else:
                n = a.bytes or 200_000_000
                for cc, sched in (("bbr", "lrf"), ("cubic", "rr")):
                    show(run_user(topo, workdir, t0, cc, sched, ["wifi", "lte"], n,
                                  f"x{cc}{sched}{rep}"), rows)  # fmt: skip
    print("summary:")
    for transport in ("kernel-tcp", "user"):
        for cc in ("cubic", "bbr"):
            g = median_goodput(rows, transport, cc)
            if g == g:
                print(f"  {transport:10} {cc:6} median goodput {g / 1e6:7.2f} Mbit/s")
    if a.case in ("fidelity", "loss"):
        for cc in ("cubic", "bbr"):
            k, u = median_goodput(rows, "kernel-tcp", cc), median_goodput(rows, "user", cc)
            if k == k and u == u:
                print(f"  ratio user/kernel {cc}: {u / k:.3f}")
    print(f"  all byte-exact: {all(r['sha_ok'] for r in rows)}")
    subprocess.run(["true"])
    return 0 if all(r["sha_ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
