# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""`./run_trials.sh --reproduce SEED`: re-run a seed paper's experiments, claim by claim.

A thin layer over the simulator: each claim runs `mpsim` (one JSON object per transfer) or a
dedicated `cargo test` binary of `transport/tests/` (whose assertions encode the claim and
whose `--nocapture` lines carry the figures), then writes `docs/reproductions/<seed>.md`
and a copy into `results/reproduce-<seed>-<UTC stamp>/`. Verdicts are computed from the
measured figures by the rule printed beside each claim; nothing is tuned to match a paper.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SEEDS = ("seed000", "seed001", "seed002", "seed003", "seed004")
REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_RUN = (
    "reproduced",
    "partly",
    "not reproduced",
    "not yet run",
)


@dataclass
class Claim:
    name: str
    paper: str
    ours: str
    verdict: str
    why: str = ""


@dataclass
class Page:
    seed: str
    title: str
    setup: str
    open_params: list[tuple[str, str, str]] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    extra: str = ""
    extra_notes: list[str] = field(default_factory=list)

    def markdown(self, wall_s: float, command: str) -> str:
        lines = [f"# Reproduction: {self.title}", "", self.setup.strip(), ""]
        lines += [f"Command: `{command}`  ", f"Wall time on this machine: {wall_s:.0f} s.", ""]
        lines += [
            "## Verdicts",
            "",
            "| claim | paper | this testbed | verdict |",
            "|---|---|---|---|",
        ]
        for c in self.claims:
            lines.append(f"| {c.name} | {c.paper} | {c.ours} | **{c.verdict}** |")
        lines += ["", "## Likely reasons for differences", ""]
        lines += [f"* **{c.name}**: {c.why}" for c in self.claims if c.why]
        if self.extra:
            lines += ["", "## Figures", "", self.extra]
            lines += [""] + [f"* {n}" for n in self.extra_notes]
        if self.open_params:
            lines += [
                "",
                "## Parameters the paper leaves open",
                "",
                "| parameter | value used | why |",
                "|---|---|---|",
            ]
            lines += [f"| {p} | {v} | {w} |" for p, v, w in self.open_params]
        if self.commands:
            lines += ["", "## Underlying commands", ""]
            lines += [f"* `{c}`" for c in self.commands]
        return "\n".join(lines) + "\n"


class Runner:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.transport = repo / "transport"
        self.env = {**os.environ, "CARGO_BUILD_JOBS": os.environ.get("CARGO_BUILD_JOBS", "1")}
        self.commands: list[str] = []

    def mpsim(self, *args: str) -> dict:
        binary = self.transport / "target/release/mpsim"
        cmd = [str(binary), *args]
        self.commands.append("transport/target/release/mpsim " + shlex.join(args))
        out = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if out.returncode == 2:
            raise RuntimeError(f"mpsim {shlex.join(args)}: {out.stderr.strip()}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  mpsim {shlex.join(args)} -> {result.get('goodput_bps')}", flush=True)
        return result

    def cargo_test(
        self, test: str, filt: str = "", ignored: bool = False, env: dict[str, str] | None = None
    ) -> tuple[bool, list[str]]:
        args = ["cargo", "test", "--release", "--locked", "--test", test]
        args += [filt] if filt else []
        args += ["--", "--nocapture", "--test-threads", "1"] + (["--ignored"] if ignored else [])
        shown = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        self.commands.append(f"(cd transport && {shown + ' ' if shown else ''}{shlex.join(args)})")
        print(f"  {self.commands[-1]}", flush=True)
        out = subprocess.run(
            args,
            cwd=self.transport,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
        )
        lines = []
        for line in out.stdout.splitlines():
            # libtest prints "test NAME ... " and the test's own output on the same line.
            if line.startswith("test ") and " ... " in line:
                line = line.split(" ... ", 1)[1]
            skip = line.startswith(("running ", "test result", "failures", "---- "))
            if line.strip() and line.strip() not in ("ok", "FAILED", "ignored") and not skip:
                lines.append(line)
        return out.returncode == 0, lines


def mbps(r: dict) -> float:
    return (r.get("goodput_bps") or 0.0) / 1e6


def fmt_lines(lines: list[str], key: str) -> str:
    picked = [ln.strip() for ln in lines if key in ln]
    return "<br>".join(f"`{ln}`" for ln in picked) or "(no figures printed)"


# --- seed 000 --------------------------------------------------------------------------------


SEED000_TABLE1 = {  # MPTCP, sf1, sf2, TCP per flow on p1, on p2, utilisation (paper's Table I)
    "bbr": (55.9, 30.7, 25.2, 31.9, 27.5, 0.88),
    "cubic": (35.1, 27.6, 7.5, 27.7, 8.5, 0.54),
    "lia": (20.3, 19.1, 1.2, 21.1, 1.1, 0.32),
    "olia": (19.9, 19.6, 0.3, 21.3, 1.0, 0.32),
    "balia": (20.9, 20.5, 0.6, 20.8, 1.2, 0.33),
}


def table1_verdict(got: float, want: float) -> str:
    err = abs(got - want) / want
    return REPRODUCED if err <= 0.25 else PARTLY if err <= 0.5 else NOT_REPRODUCED


def seed000(r: Runner) -> Page:
    page = Page(
        "seed000",
        "Coupled BBR + AR&P (seed 000)",
        """Coupled BBR (the multipath BBR coupling of seed 000) and the AR&P scheduler, in the
deterministic simulator: Table I with `transport/tests/seed000_table1.rs` (shared-bottleneck
`sim::Net`, 2 single-path background flows per bottleneck), Coupled BBR at a shared
bottleneck with `transport/tests/coupled_bbr_sim.rs`, AR&P under asymmetric RTT and at a
path break with `transport/tests/sched_scenarios.rs`. One simulated seed each.""",
    )
    page.open_params = [
        (
            "Table I buffer",
            "drop-tail 0.7 BDP of the 50 ms RTT (≈ 437 kB)",
            "not given; loss-based RTTs of ≈ 85 ms imply ≥ 35 ms of queue",
        ),
        (
            "Table I loss placement",
            "0.01 % on bottleneck 1, 0.1 % on bottleneck 2, data direction",
            "the table's columns (sf1 > sf2, TCP p1 > p2) fit this reading",
        ),
        (
            "Table I background CC",
            "BBR for BBR/Coupled BBR, CUBIC for CUBIC, Reno for LIA/OLIA/BALIA",
            "paper: 'same family'; Reno for the coupled loss-based CCs",
        ),
        (
            "Table I duration",
            "40 s simulated, rates over 10-40 s",
            "wall time; paper's duration not stated",
        ),
        (
            "Table I BBR row",
            "uncoupled per-subflow BBR (`bbr`)",
            "the paper's BBR row is MPTCP with BBR per subflow",
        ),
        (
            "asymmetric-RTT rates / RTTs",
            "20 Mbit/s both, RTT 50 vs 150 ms, 20 MB, bbr",
            "paper: equal rates, value not given; one of Fig. 11's RTT points",
        ),
        (
            "path break",
            "50 MB, 2 × 20 Mbit/s, path 2 dies at 5 s",
            "paper: 15 s at 40 Mbit/s; shortened",
        ),
    ]
    ok, lines = r.cargo_test("seed000_table1", ignored=True)
    rows = [json.loads(ln.split(" ", 1)[1]) for ln in lines if ln.startswith("seed000_table1 {")]
    table = [
        "| CC | MPTCP | sf1 | sf2 | TCP/flow p1 | TCP/flow p2 | util |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        got = (
            row["mptcp_mbps"],
            row["sf1_mbps"],
            row["sf2_mbps"],
            row["tcp_per_flow_p1_mbps"],
            row["tcp_per_flow_p2_mbps"],
            row["utilisation"],
        )
        if row["cc"] not in SEED000_TABLE1:
            # Coupled BBR is not in the paper's Table I (its BBR column is MPTCP with plain
            # BBR per subflow); shown for comparison, without a verdict.
            table.append(
                f"| {row['cc']} (not in the paper) | " + " | ".join(f"{g:.2f}" for g in got) + " |"
            )
            page.extra_notes.append(
                f"Coupled BBR in the same setting (no paper figure): {got[0]:.1f} Mbit/s "
                f"({got[1]:.1f} + {got[2]:.1f}) against plain-BBR background flows of "
                f"{got[3]:.1f} / {got[4]:.1f} Mbit/s: far below one flow's share of either path "
                "(its coupling keeps Σβ·BW at the largest path estimate; why it ends this low is "
                "not investigated here)."
            )
            continue
        want = SEED000_TABLE1[row["cc"]]
        table.append(
            f"| {row['cc']} | "
            + " | ".join(
                f"{g:.2f} ({w})" if i == 5 else f"{g:.1f} ({w})"
                for i, (g, w) in enumerate(zip(got, want, strict=True))
            )
            + " |"
        )
        page.claims.append(
            Claim(
                f"Table I, {row['cc']}: MPTCP throughput",
                f"{want[0]} Mbit/s ({want[1]} + {want[2]}), util {want[5]}",
                f"{got[0]:.1f} Mbit/s ({got[1]:.1f} + {got[2]:.1f}), util {got[5]:.2f}",
                table1_verdict(got[0], want[0]),
                "rule (ours): MPTCP goodput within 25 % of the paper = reproduced, within 50 % = partly; the verdict is on the MPTCP total only, compare the subflow, background and utilisation columns in the Figures table (the loss-based background flows on the 0.1 % path get far more here than the paper's ≈ 1 Mbit/s)",
            )
        )
    if not rows:
        page.claims.append(
            Claim(
                "Table I", "see paper", "benchmark failed: " + " ".join(lines[-3:]), NOT_REPRODUCED
            )
        )
    page.extra = "**Table I, simulated (paper in brackets), Mbit/s**\n\n" + "\n".join(table)
    ok, lines = r.cargo_test("coupled_bbr_sim")
    page.claims.append(
        Claim(
            "Coupled BBR fair at a shared bottleneck; β·BW split on disjoint paths",
            "a coupled flow takes no more than a single BBR flow at a shared bottleneck",
            "<br>".join(f"`{ln}`" for ln in lines)
            + f"<br>assertions (≤ 1.3× a BBR flow; β·BW within 10 %): {'pass' if ok else 'FAIL'}",
            REPRODUCED if ok else NOT_REPRODUCED,
            "threshold 1.3× is this testbed's tolerance, not the paper's",
        )
    )
    ok, lines = r.cargo_test("sched_scenarios", "arp_cuts")
    page.claims.append(
        Claim(
            "AR&P vs minRTT under asymmetric RTT (out-of-order queue, download time)",
            "AR&P keeps the receiver's out-of-order queue smaller at no cost in download time (Fig. 11)",
            "<br>".join(f"`{ln}`" for ln in lines) + f"<br>assertions: {'pass' if ok else 'FAIL'}",
            PARTLY if ok else NOT_REPRODUCED,
            "partly: AR&P cuts the mean and steady-state queue, but its maximum (during start-up) is "
            "about the same or higher and the download a few percent slower; the paper shows the queue "
            "in packets over RTT2 = 50..250 ms, only RTT2 = 150 ms is run; RR is not in this test",
        )
    )
    ok, lines = r.cargo_test("sched_scenarios", "every_scheduler_survives")
    page.claims.append(
        Claim(
            "Path break: transfer continues on the surviving path",
            "goodput recovers on the remaining path after the break (Fig. 10a)",
            "<br>".join(f"`{ln}`" for ln in lines if "arp" in ln or "lrf" in ln or "× rr" in ln)
            + f"<br>all schedulers byte-exact: {'pass' if ok else 'FAIL'}",
            PARTLY if ok else NOT_REPRODUCED,
            "partly: completion after the break is shown, the goodput time series of Fig. 10a is not "
            "compared; the gradual failure of Fig. 10b (AR&P going redundant) is not run",
        )
    )
    return page


# --- seed 001 --------------------------------------------------------------------------------

SEED001_LOSS = (1e-5, 1e-4, 1e-3, 1e-2, 2e-2, 5e-2, 1e-1)


def seed001(r: Runner) -> Page:
    page = Page(
        "seed001",
        "mpbbr vs BALIA over a loss grid (seed 001)",
        """Two disjoint 100 Mbit/s paths with independent random loss, each path's loss taken from
the paper's grid {1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.05, 0.10} (7 × 7 = 49 points), mpbbr (our
`bbr`: per-subflow BBR, uncoupled, as seed 001) against BALIA, in `mpsim`, one 30 MB transfer
per point and CC. Both readings of the paper's "50 ms delay" are run: one-way 50 ms
(RTT 100 ms) and RTT 50 ms (one-way 25 ms). Goodput in Mbit/s; rows = loss on path a,
columns = loss on path b.""",
    )
    page.open_params = [
        (
            "delay 50 ms",
            "both: one-way 50 ms and one-way 25 ms",
            "paper does not say one-way or RTT",
        ),
        (
            "transfer",
            "30 MB per run (paper: iperf3 60 s)",
            "mpsim is size-based; at 10 % loss BALIA needs minutes of virtual time for more",
        ),
        ("queue", "one BDP (mpsim default)", "paper: netem default, not stated"),
        (
            "loss direction",
            "both directions (mpsim paths are symmetric)",
            "paper: netem on NE1/NE2, direction not stated",
        ),
        ("runs", "1 seed per point", "paper reports avg/min/max, number of runs not stated"),
    ]
    wins = 0
    n = 0
    ratio_low: list[float] = []
    ratio_high: list[float] = []
    tables = []
    for one_way, label in ((50, "one-way 50 ms"), (25, "RTT 50 ms")):
        head = "| a \\ b | " + " | ".join(f"{p:g}" for p in SEED001_LOSS) + " |"
        rows = [head, "|---" * (len(SEED001_LOSS) + 1) + "|"]
        for pa in SEED001_LOSS:
            cells = []
            for pb in SEED001_LOSS:
                paths = [
                    "--path",
                    f"a:100:{one_way}:{pa}",
                    "--path",
                    f"b:100:{one_way}:{pb}",
                    "--bytes",
                    "30000000",
                ]
                g = {
                    cc: mbps(r.mpsim(*paths, "--cc", cc, "--sched", "lrf"))
                    for cc in ("bbr", "balia")
                }
                n += 1
                wins += g["bbr"] > g["balia"]
                ratio = g["bbr"] / max(g["balia"], 1e-9)
                if max(pa, pb) <= 1e-4:
                    ratio_low.append(ratio)
                elif min(pa, pb) >= 1e-2:
                    ratio_high.append(ratio)
                cells.append(f"{g['bbr']:.1f} / {g['balia']:.1f}")
            rows.append(f"| {pa:g} | " + " | ".join(cells) + " |")
        tables.append(f"**{label}** (mpbbr / BALIA, Mbit/s)\n\n" + "\n".join(rows))
    page.extra = "\n\n".join(tables)

    def med(v: list[float]) -> float:
        return sorted(v)[len(v) // 2] if v else float("nan")

    rule = "one seed per point, 30 MB transfers (the paper: 60 s iperf3); "
    page.claims += [
        Claim(
            "mpbbr outperforms BALIA in all investigated conditions (Fig. 3a)",
            "mpbbr above BALIA at every grid point",
            f"mpbbr ahead at {wins}/{n} points (both readings)",
            REPRODUCED if wins == n else (PARTLY if wins >= 0.75 * n else NOT_REPRODUCED),
            rule + "rule: reproduced if ahead at every point, partly at ≥ 75 %; where it is not, "
            "both paths have little loss and BALIA fills the pipe as well as BBR",
        ),
        Claim(
            "At the lowest loss on both paths BALIA gets about half of mpbbr",
            "BALIA ≈ 0.5 × mpbbr at 0.001 % / 0.001 %",
            f"BALIA/mpbbr {1 / med(ratio_low):.2f} (median where both paths have ≤ 1e-4 loss)",
            REPRODUCED if 1 / med(ratio_low) <= 0.65 else NOT_REPRODUCED,
            rule + "rule: reproduced if BALIA/mpbbr ≤ 0.65. At near-zero random loss a loss-based "
            "CC with a one-BDP queue fills both paths here; the paper's testbed (netem, kernel 4.1 "
            "BALIA, unknown buffers, TSO/offloads) evidently did not",
        ),
        Claim(
            "BALIA collapses when both paths lose ≥ 1 %, mpbbr stays usable",
            "BALIA far below path capacity; mpbbr 'relatively high and usable'",
            f"median mpbbr/BALIA {med(ratio_high):.1f}× where both paths have ≥ 1 % loss",
            REPRODUCED
            if med(ratio_high) >= 5
            else (PARTLY if med(ratio_high) > 1 else NOT_REPRODUCED),
            rule + "rule: reproduced if mpbbr ≥ 5× BALIA there (ours)",
        ),
    ]
    return page


# --- seed 002 --------------------------------------------------------------------------------


def seed002(r: Runner) -> Page:
    page = Page(
        "seed002",
        "Video over MPTCP: CC × scheduler × scenario (seed 002)",
        """Nothing is run yet. The simulated matrix needs the DASH player model of the simulator
engine (`./run_trials.sh --engine sim`, in progress); the emulated cells need a quiet machine
(real players, 180 s per trial). Commands once available:

* simulated, full matrix: `./run_trials.sh --engine sim --scenario A1,A2,B1,B2 --transport user --cc bbr,cubic,compound,lia,olia,balia --sched lrf,lpc,let,gr-sty,tp-sty,tr-sty --video-duration 180 --reps 3` (432 simulated trials; `--engine` is not merged yet)
* emulated, the cells the text singles out: `./run_trials.sh --scenario A1,A2,B1,B2 --transport user --cc bbr,lia,olia,compound --sched lrf,tp-sty --video-duration 180 --reps 3 --jobs auto` (96 trials × ≈ 184 s ≈ 4.9 h on this 2-core machine, 1 trial at a time; the loss-peak sweeps are in `netem-scenarios/seed002-sweep/`) (or `--executor slurm` for the full matrix)""",
    )
    for claim, paper in (
        ("Buffer underflows per CC × scheduler (Figs. 4-12)", "counts per cell, A1/A2/B1/B2"),
        ("Picture discards, VOD and live modes", "counts per cell"),
        ("Per-path packets and retransmissions", "Wi-Fi most used in A1"),
        ("BBR good across schedulers", "stated finding"),
        ("LIA/OLIA poor", "stated finding"),
        ("Compound poor with TP-STY in A2 and B2", "stated finding"),
        ("BBR retransmits more", "stated finding"),
    ):
        page.claims.append(Claim(claim, paper, "not run", NOT_RUN))
    page.open_params = [
        ("link rates", "Wi-Fi 20 Mbit/s, LTE 15 Mbit/s (scenario files)", "paper gives none"),
        (
            "loss patterns A/B",
            "piecewise ramps as in netem-scenarios/seed002-sweep",
            "paper's time series is a figure only",
        ),
    ]
    return page


# --- seed 003 --------------------------------------------------------------------------------


def seed003(r: Runner) -> Page:
    page = Page(
        "seed003",
        "H-MPTCP rate allocation and pricing (seed 003)",
        """The paper's two-source topology (S1: one Reno flow x2 sharing link C2 with the
MPTCP subflow x12; the MPTCP subflow x11 alone on C1), in the simulator
(`transport/tests/seed003_rates.rs`), rates in the paper's units (packets/s scaled to the
paper's capacities). The test asserts the paper's case-2 rates within 10 % and the case-1
properties; the printed lines are the measured rates.""",
    )
    page.open_params = [
        ("RTT", "as in transport/tests/seed003_rates.rs", "paper does not give it"),
        (
            "loss synchrony",
            "drop-tail queues (losses not forced synchronous)",
            "341/683 split assumes synchronised losses; independent losses give ≈424",
        ),
        ("metered-path weight", "x12 weight 0.1 vs default 0.5", "paper: a price, no number"),
    ]
    ok2, l2 = r.cargo_test("seed003_rates", "case2")
    page.claims.append(
        Claim(
            "Case 2 (C1=8, C2=1024): EMPTCP/H-MPTCP rates",
            "x11=8, x12=508, x2=516 (EMPTCP = H-MPTCP)",
            fmt_lines(l2, "") + f"<br>within 10 %: {'pass' if ok2 else 'FAIL'}",
            REPRODUCED if ok2 else NOT_REPRODUCED,
            "tolerance 10 % is this testbed's choice",
        )
    )
    ok1, l1 = r.cargo_test("seed003_rates", "case1")
    page.claims.append(
        Claim(
            "Case 1 (C1=C2=1024): every variant beats the best single path; x11 ≈ 1024",
            "EMPTCP x12=0, WMPTCP x12=341/x2=683 (H = WMPTCP)",
            fmt_lines(l1, "") + f"<br>assertions: {'pass' if ok1 else 'FAIL'}",
            PARTLY if ok1 else NOT_REPRODUCED,
            "partly: x11 and the total are asserted; the exact 341/683 split assumes synchronised "
            "losses, which drop-tail queues do not force (printed, not asserted)",
        )
    )
    okw, lw = r.cargo_test("seed003_rates", "a_path_weight")
    page.claims.append(
        Claim(
            "Pricing incentive: a low H-MPTCP weight on the metered path shifts traffic off it",
            "traffic moves off the priced path to the free one",
            fmt_lines(lw, "") + f"<br>x12 < 0.9× default and x2 gains: {'pass' if okw else 'FAIL'}",
            REPRODUCED if okw else NOT_REPRODUCED,
            "the paper gives no price → weight mapping; 0.1 is our choice",
        )
    )
    page.claims.append(
        Claim(
            "Case 3 (C1 drops 1024 → 8 during 6-13 s): transition times",
            "EMPTCP 2 s, LIA 3 s, BALIA 3 s",
            "not run",
            NOT_RUN,
            "needs a time-varying capacity in the seed-003 topology; not wired into the test yet",
        )
    )
    return page


# --- seed 004 --------------------------------------------------------------------------------


def seed004(r: Runner) -> Page:
    page = Page(
        "seed004",
        "HBDP vs MPCubic vs LIA on high-BDP paths (seed 004)",
        """Two disjoint paths, 500 Mbit/s × 100 ms RTT and 100 Mbit/s × 20 ms RTT, 0.01 % random
loss both directions, drop-tail queues of one BDP, 100 MB per CC in `mpsim`, 2 seeds. The
paper's Table II topology (Fig. 7b) is not in its text, so these paths are our choice.""",
    )
    page.open_params = [
        (
            "link rates, base delays, buffers",
            "500×100 ms and 100×20 ms, queue one BDP",
            "Fig. 7 is not in the text; a high-BDP and a moderate path",
        ),
        (
            "loss",
            "0.01 % both paths",
            "paper Table II: 0.1 %/0.3 % at given ε; lower loss keeps the BDP regime",
        ),
        ("HBDP options", "defaults (docs/algorithms/hbdp.md)", "not tuned"),
        ("transfer", "100 MB, seeds 1 and 2", "wall time"),
    ]
    paths = ["--path", "fast:500:50:0.0001", "--path", "slow:100:10:0.0001", "--bytes", "100000000"]
    g: dict[str, list[float]] = {}
    for cc in ("lia", "mpcubic", "hbdp"):
        g[cc] = [
            mbps(r.mpsim(*paths, "--cc", cc, "--sched", "lrf", "--seed", str(s))) for s in (1, 2)
        ]
    avg = {cc: sum(v) / len(v) for cc, v in g.items()}
    lia_lowest = avg["lia"] < min(avg["mpcubic"], avg["hbdp"])
    ahead = avg["hbdp"] > 1.05 * avg["mpcubic"]
    page.claims.append(
        Claim(
            "Throughput: HBDP > MPCubic > LIA at high BDP (Table II), 100 MB transfers",
            "LIA 91.85, MPCubic 163.61, HBDP 190.57 Mbit/s total (HBDP 1.16× MPCubic)",
            "; ".join(
                f"{cc} {avg[cc]:.1f} Mbit/s ({', '.join(f'{x:.1f}' for x in v)})"
                for cc, v in g.items()
            )
            + f"; HBDP/MPCubic {avg['hbdp'] / max(avg['mpcubic'], 1e-9):.2f}×",
            REPRODUCED if ahead and lia_lowest else (PARTLY if lia_lowest else NOT_REPRODUCED),
            "rule (ours): reproduced if HBDP is > 5 % ahead of MPCubic and LIA lowest, partly if "
            "only LIA is lowest. 100 MB transfers include slow start, where HBDP and MPCubic "
            "behave alike; absolute numbers differ because the topology and rates are ours",
        )
    )
    ok, lines = r.cargo_test("hbdp_vs_mpcubic", ignored=True, env={"HBDP_SIM_S": "20"})
    drops: dict[str, tuple[int, int]] = {}
    for ln in lines:
        m = re.match(r"hbdp_vs_mpcubic (\w+) \[\]: .*lost pkts (\d+) .*queue drops (\d+)", ln)
        if m:
            drops[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    rates = {
        m.group(1): float(m.group(2))
        for ln in lines
        if (m := re.match(r"hbdp_vs_mpcubic (\w+) \[\]: goodput ([0-9.]+)", ln))
    }
    if "hbdp" in rates and "mpcubic" in rates:
        ratio = rates["hbdp"] / max(rates["mpcubic"], 1e-9)
        page.claims.append(
            Claim(
                "Throughput after warm-up: HBDP above MPCubic (Table II: 1.16×)",
                "HBDP 190.57 vs MPCubic 163.61 Mbit/s (1.16×)",
                f"HBDP {rates['hbdp']:.1f} vs MPCubic {rates['mpcubic']:.1f} Mbit/s ({ratio:.2f}×), "
                "rates over 6-20 s of a 20 s bulk run",
                REPRODUCED if 1.05 < ratio <= 1.5 else (PARTLY if ratio > 1.5 else NOT_REPRODUCED),
                "rule (ours): reproduced if HBDP leads by 5-50 %, partly if it leads by more (the "
                "direction holds, the size does not): our MPCubic leaves the 500 Mbit/s × 100 ms "
                "path far below capacity; the paper's topology is not in its text",
            )
        )
    if "hbdp" in drops and "mpcubic" in drops:
        fewer = drops["hbdp"][1] <= drops["mpcubic"][1] and drops["hbdp"][0] <= drops["mpcubic"][0]
        verdict = REPRODUCED if fewer else NOT_REPRODUCED
    else:
        verdict = NOT_REPRODUCED
    page.claims.append(
        Claim(
            "Loss: HBDP causes fewer packet losses than MPCubic (which overshoots), Fig. 8 discussion",
            "MPCubic overshoots with many drops (an RTO at 11 s); HBDP reduces loss events",
            "<br>".join(f"`{ln}`" for ln in lines if "goodput" in ln) or "benchmark failed",
            verdict,
            "rule: reproduced if HBDP's queue drops and sender-declared losses are both ≤ MPCubic's "
            "(20 s simulated on 500 Mbit/s × 100 ms + 100 Mbit/s × 20 ms, one BDP of queue, 0.01 % "
            "random loss; LIA is not in this benchmark); the paper's cross-traffic pattern (Fig. 7a "
            "CBR flows) is not modelled",
        )
    )
    return page


BUILDERS: dict[str, Callable[[Runner], Page]] = {
    "seed000": seed000,
    "seed001": seed001,
    "seed002": seed002,
    "seed003": seed003,
    "seed004": seed004,
}


def reproduce(which: str, repo: Path) -> int:
    seeds = list(SEEDS) if which == "all" else [which]
    if any(s not in SEEDS for s in seeds):
        print(
            f"run_trials.sh: --reproduce '{which}': valid are {', '.join(SEEDS)}, all",
            file=sys.stderr,
        )
        return 2
    build = subprocess.run(
        ["cargo", "build", "--release", "--locked", "--bin", "mpsim"],
        cwd=repo / "transport",
        env={**os.environ, "CARGO_BUILD_JOBS": "1"},
    )
    if build.returncode != 0:
        return 1
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for seed in seeds:
        run_dir = repo / "results" / f"reproduce-{seed}-{stamp}"
        run_dir.mkdir(parents=True, exist_ok=True)
        print(f"reproducing {seed} into {run_dir}", flush=True)
        runner = Runner(repo)
        t0 = time.monotonic()
        page = BUILDERS[seed](runner)
        page.commands = runner.commands
        text = page.markdown(time.monotonic() - t0, f"./run_trials.sh --reproduce {seed}")
        docs = repo / "docs" / "reproductions"
        docs.mkdir(parents=True, exist_ok=True)
        (docs / f"{seed}.md").write_text(text)
        (run_dir / f"{seed}.md").write_text(text)
        for c in page.claims:
            print(f"  {c.verdict:>15}: {c.name}")
    return 0
