# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""The emulated bulk cross-checks (seeds 000, 001, 004): a few points of a paper's simulated
sweep run as emulated bulk transfers through mpproxy (testbed/bulk.py) and as the same transfer
in mpsim, side by side on the page."""

from __future__ import annotations

import json
import shlex
import statistics
from dataclasses import dataclass
from pathlib import Path

from testbed.reproduce.base import Runner, mbps, median, shown

# --- emulated bulk cross-checks (seeds 000, 001, 004) -----------------------------------------


@dataclass(frozen=True)
class BulkPoint:
    """One point of a simulated sweep, run as an emulated bulk transfer through mpproxy (the
    transport benchmark's harness, transport/bench/bench.py) and as the same transfer in mpsim.
    Paths: (name, Mbit/s, one-way ms, loss, queue bytes); names are the topology's wifi/lte.

    Both engines read one scenario file (`crosscheck_scenario`): mpsim's `--scenario` seeds
    each link as linkemu does (trial seed, link index), so for the same seed both draw the
    same random losses for the same packets, which `--path` links (seeded from mpsim's own
    generator) do not. `spread_seeds` > 0 also simulates seeds 1..N: the spread over loss
    draws, for a point whose outcome hinges on where a few random losses fall; `note` says
    why on the page."""

    label: str
    paths: tuple[tuple[str, float, float, float, int], ...]
    ccs: tuple[str, ...]
    sched: str
    nbytes: int
    spread_seeds: int = 0
    note: str = ""

    def mpsim_args(self, cc: str, seed: int, scenario: str) -> list[str]:
        """The simulated twin of one transfer; `scenario` is the point's scenario file."""
        return ["--scenario", scenario, "--bytes", str(self.nbytes), "--cc", cc,
                "--sched", self.sched, "--seed", str(seed)]  # fmt: skip

    def bench_links(self) -> tuple[str, str]:
        def link(rate: float, delay: float, loss: float, queue: int) -> str:
            lines = [f"rate = {{ bps = {int(rate * 1e6)} }}", f"delay_ms = {delay}",
                     f"queue = {{ bytes = {queue} }}"]  # fmt: skip
            if loss:
                lines.append(f'loss = {{ model = "bernoulli", p = {loss} }}')
            return "\n".join(lines)

        by_name = {p[0]: link(*p[1:]) for p in self.paths}
        return by_name["wifi"], by_name["lte"]


def bdp(mbit_s: float, one_way_ms: float) -> int:
    return int(mbit_s * 1e6 / 8 * 2 * one_way_ms / 1e3)


CROSSCHECKS: dict[str, tuple[str, list[BulkPoint]]] = {
    "seed000": (
        "the asymmetric-RTT point of the AR&P claims (20 Mbit/s both paths, one-way 25 vs 75 ms, "
        "Coupled BBR as the paper ran AR&P and as the simulated verdicts above do, 20 MB, lrf and "
        "arp): download time on both engines. Table I and Coupled BBR at a "
        "shared bottleneck are not cross-checked: the emulated bulk harness has no cross "
        "traffic, and the matrix's cross-traffic scenarios (`seed000-table1-*.toml`) carry "
        "video, which is application-limited far below 100 Mbit/s",
        [
            BulkPoint(
                "asym-rtt 25/75 ms, lrf",
                (("wifi", 20, 25, 0, bdp(20, 25)), ("lte", 20, 75, 0, bdp(20, 75))),
                ("coupled-bbr",),
                "lrf",
                20_000_000,
            ),
            BulkPoint(
                "asym-rtt 25/75 ms, arp",
                (("wifi", 20, 25, 0, bdp(20, 25)), ("lte", 20, 75, 0, bdp(20, 75))),
                ("coupled-bbr",),
                "arp",
                20_000_000,
                note="One emulated transfer per scheduler: it compares the two engines on one "
                "run, not AR&P's modes; the simulated verdicts above read 20 seeds of ACK jitter, "
                "where arp's download time depends on whether LTE joins AR's set N (Figures).",
            ),
        ],
    ),
    "seed001": (
        "three points of the 49-point grid at the grid's delay and queues (one-way 50 ms, "
        "one-BDP queues): 1e-5/1e-5, 1e-3/1e-2 and 5e-2/5e-2 loss, mpbbr (`bbr`) and BALIA, "
        "20 MB each: goodput on both engines. It checks that the two engines agree, not the "
        "grid's figures: the bulk harness drops on both directions of a path (the grid only on "
        "the data direction; the sensitivity table above runs the grid both ways), moves a given "
        "number of bytes (the grid runs 60 s) and keeps mpproxy's default receive buffer (the "
        "grid's is 64 MiB)",
        [
            BulkPoint(
                f"loss {a:g}/{b:g}",
                (("wifi", 100, 50, a, bdp(100, 50)), ("lte", 100, 50, b, bdp(100, 50))),
                ("bbr", "balia"),
                "lrf",
                20_000_000,
            )
            for a, b in ((1e-5, 1e-5), (1e-3, 1e-2), (5e-2, 5e-2))
        ],
    ),
    "seed004": (
        "the high-BDP pair scaled down by 5 so that the emulator and the user-space proxy keep "
        "up on this machine (100 Mbit/s × 100 ms RTT and 20 Mbit/s × 20 ms RTT, 0.01 % loss, "
        "one-BDP queues), LIA, MPCubic and HBDP, 50 MB each: goodput on both engines (the "
        "simulated side is run at the same scaled point, so the comparison is like for like)",
        [
            BulkPoint(
                "scaled high-BDP pair",
                (("wifi", 100, 50, 1e-4, bdp(100, 50)), ("lte", 20, 10, 1e-4, bdp(20, 10))),
                ("lia", "mpcubic", "hbdp"),
                "lrf",
                50_000_000,
                spread_seeds=20,
                note="At this point the outcome hinges on where a few random losses fall: "
                "the 100 ms path's slow start sends several thousand packets before its "
                "one-BDP queue overflows, so at 0.01 % a random loss often falls inside it. "
                "One early in slow start halves the window far below the path's BDP, and a "
                "50 MB transfer ends before the window grows back (LIA adds about one packet "
                "per 100 ms round trip); one near the end of slow start, or none, leaves both "
                "links full from about 1 s on. Across seeds the goodput therefore spreads "
                "wide (the last column), and two seeds compare the engines only when both "
                "draw the same losses (the per-seed pairs).",
            ),
        ],
    ),
}
NO_CROSSCHECK = {
    "seed003": "none: every seed-003 experiment has a single-path Reno flow sharing x12's link "
    "(cross traffic), which the emulated bulk harness does not have, and the matrix's "
    "cross-traffic scenarios carry video, not bulk data. An emulated seed-003 check needs a "
    "bulk mode for the matrix's user transport (not built)",
}


def crosscheck_scenario(repo: Path, seed: str, index: int, directory: Path) -> Path:
    """Writes point `index`'s scenario file into `directory`: the text the bulk harness
    gives linkemu for it (testbed/bulk.py scenario_toml, same name), which the simulated twin
    reads."""
    from testbed import bulk

    p = CROSSCHECKS[seed][1][index]
    path = directory / f"{seed}-xc{index}.toml"
    path.write_text(bulk.scenario_toml(f"{seed}-xc{index}", p.bench_links()))
    return path


def crosscheck_plan(seed: str, reps: int, scenario_dir: Path) -> list[str]:
    """What `--engine emulate` runs, each transfer with its simulated twin (its scenario file
    in `scenario_dir`, written by the run)."""
    _, points = CROSSCHECKS[seed]
    return [
        f"{p.label}: {cc} × {p.sched}, {p.nbytes / 1e6:g} MB, emulator seed {rep + 1}; "
        f"simulated twin: mpsim "
        f"{shlex.join(p.mpsim_args(cc, rep + 1, str(scenario_dir / f'{seed}-xc{i}.toml')))}"
        for i, p in enumerate(points)
        for cc in p.ccs
        for rep in range(reps)
    ]


def run_crosscheck(seed: str, reps: int, run_dir: Path, repo: Path) -> Path:
    """Runs the seed's emulated bulk points (real time, root); one JSON line per transfer in
    RUN/crosscheck.jsonl, each point's scenario file beside it. Every transfer gets a fresh
    emulator, so its links' loss draws start at the seed's first, as in its simulated twin
    (sharing one emulator, a later transfer would continue the earlier one's draws)."""
    from testbed import bulk

    out = run_dir / "crosscheck.jsonl"
    _, points = CROSSCHECKS[seed]
    for i, p in enumerate(points):
        crosscheck_scenario(repo, seed, i, run_dir)
        for rep in range(reps):
            for cc in p.ccs:
                links = p.bench_links()
                with bulk.emulated(f"{seed}-xc{i}", rep + 1, links) as (topo, workdir, t0):
                    row = bulk.run_user(topo, workdir, t0, cc, p.sched, ["wifi", "lte"],
                                         p.nbytes, f"{seed}x{i}{cc}{rep}")  # fmt: skip
                row = {"point": p.label, "rep": rep, "seed": rep + 1, "fresh_emulator": True,
                       **row}  # fmt: skip
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(f"  {p.label} {cc}: {mbps(row):.2f} Mbit/s", flush=True)
    return out


def _same_loss_draws(row: dict, point: BulkPoint) -> bool:
    """Whether an emulated transfer drew its losses from its emulator seed's start, as its
    simulated twin does: rows say so (`fresh_emulator`); runs made before that field shared
    one emulator per point and seed, running the CCs in order, so only the first CC's did."""
    return bool(row.get("fresh_emulator", row.get("cc") == point.ccs[0]))


def _spread(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"{median(values):.1f} (IQR {q[0]:.1f}–{q[2]:.1f}, range {min(values):.1f}–{max(values):.1f})"


def crosscheck_section(seed: str, r: Runner, reps: int) -> str:
    """The page's emulated cross-check: the subset, its command, and either "not run" or the
    two engines side by side (from --from RUN)."""
    command = f"./run_trials.sh --reproduce {seed} --engine emulate"
    if seed in NO_CROSSCHECK:
        return f"Subset: {NO_CROSSCHECK[seed]}."
    what, points = CROSSCHECKS[seed]
    lines = [
        f"Subset: {what}.",
        "",
        f"Command (real time, root, a quiet machine): `{command}` (`--dry-run` lists the "
        f"transfers; then `./run_trials.sh --reproduce {seed} --from results/<its run>` "
        "rebuilds this page with both engines side by side). The emulated side moves the bytes "
        "through mpproxy over linkemu (transport/bench/bench.py's harness), a fresh emulator per "
        "transfer; the simulated side is mpsim on the same scenario file (`mpsim --scenario`, "
        "written into this page's run folder), bytes and seeds, so its links draw linkemu's "
        "random losses for the same seed, packet for packet (`mpsim --path` links are seeded "
        "from mpsim's own generator and draw others).",
        "",
    ]
    runs = r.opts.runs_of_engine("crosscheck")
    if not runs:
        per_point = ", ".join(f"{p.label}: {len(p.ccs)} CC(s) × {reps}" for p in points)
        lines.append(
            f"**Not run in this session**: {reps} repetitions (emulator seeds 1–{reps}) per point "
            f"and CC, {sum(len(p.ccs) for p in points) * reps} transfers ({per_point}); "
            f"`--reps N` changes the repetitions (at least 5 per point for a verdict). Run the "
            "command above on a quiet machine: with other work competing for the CPU the "
            "user-space proxy falls behind and the emulated figures are not valid."
        )
        return "\n".join(lines)
    rows = [
        json.loads(ln)
        for run in runs
        for ln in (run / "crosscheck.jsonl").read_text().splitlines()
        if ln.strip()
    ]
    spread = any(p.spread_seeds for p in points)
    table = ["| point | CC | emulated Mbit/s (median) | simulated Mbit/s (median) | sim/emulated "
             "| per seed: emulated / simulated |" + (" simulated, seeds 1–N: median (IQR, range) |" if spread else ""),
             "|---|---|---|---|---|---|" + ("---|" if spread else "")]  # fmt: skip
    ratios, notes, unmatched = [], [], False
    for i, p in enumerate(points):
        scenario = str(shown(crosscheck_scenario(r.repo, seed, i, r.run_dir), r.repo))
        notes += [p.note] if p.note else []
        seeds = sorted({int(x.get("seed", 1)) for x in rows if x.get("point") == p.label})
        for cc in p.ccs:
            mine = sorted((x for x in rows if x.get("point") == p.label and x.get("cc") == cc),
                          key=lambda x: int(x.get("seed", 1)))  # fmt: skip
            emu = [mbps(x) for x in mine]
            sim = {s: mbps(r.mpsim(*p.mpsim_args(cc, s, scenario))) for s in seeds}
            sim_median = median(list(sim.values()))
            ratio = sim_median / median(emu) if emu and median(emu) > 0 else float("nan")
            ratios.append(ratio)
            pairs = []
            for x in mine:
                same = _same_loss_draws(x, p)
                unmatched |= not same
                s = int(x.get("seed", 1))
                pairs.append(f"{s}: {mbps(x):.1f} / {sim[s]:.1f}{'' if same else '*'}")
            row = (f"| {p.label} | {cc} | {median(emu):.2f} (n={len(emu)}) | {sim_median:.2f} | "
                   f"{ratio:.2f} | {'; '.join(pairs)} |")  # fmt: skip
            if p.spread_seeds:
                sweep = range(1, p.spread_seeds + 1)
                more = {s: mbps(r.mpsim(*p.mpsim_args(cc, s, scenario), record=False))
                        for s in sweep if s not in sim}  # fmt: skip
                every = {**sim, **more}
                r.commands.append(
                    f"for s in $(seq 1 {p.spread_seeds}); do transport/target/release/mpsim "
                    f"{shlex.join(p.mpsim_args(cc, 1, scenario)[:-2])} --seed $s; done"
                )
                row += f" {_spread([every[s] for s in sweep])}, N={p.spread_seeds} |"
            elif spread:
                row += " – |"
            table.append(row)
    agree = sum(1 for x in ratios if 0.85 <= x <= 1.15)
    lines += [f"Run folder(s): {', '.join(str(x) for x in runs)}.", "", *table, ""]
    if unmatched:
        lines += ["\\* this emulated transfer ran after another on the same emulator (runs made "
                  "before the harness started one emulator per transfer), so its loss draws "
                  "are not its twin's.", ""]  # fmt: skip
    lines += [f"Agreement (ours: simulated within ±15 % of emulated): {agree} of {len(ratios)} "
              "cells."]  # fmt: skip
    lines += ["", *notes] if notes else []
    return "\n".join(lines)
