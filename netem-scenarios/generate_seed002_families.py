"""Write seed 002's scenario families over the parameters the paper leaves open (seed002-families/).

Seed 002 (Kondo et al., "Evaluation of MPTCP with BBR Performance on Wi-Fi/Cellular networks
for Video Streaming") ran a real LTE base station and a real 802.11a router; its emulators
added only delay and Wi-Fi loss, and it gives neither link rates, queues nor its loss series
in numbers. Each family here varies ONE of those parameters around the main setting and keeps
the others at the main setting's value, for each of the paper's four scenarios A1, A2, B1, B2
(Wi-Fi one-way delay 20 / 30 ms, loss pattern A / B; LTE 40 ms one-way, RTT 80 ms).

Main setting (docs/reproductions/preregistration-seed002.md says how it was chosen):
Wi-Fi 20 Mbit/s with the testbed's proposed Bernoulli patterns (A: ramps to 5 %; B: 10 % -> 1 %
with +-50 % noise every 1 s; netem-scenarios/README.md), LTE 5 Mbit/s both ways, default
queues (1 BDP). Files `<base>-main.toml`.

Families (file name after the base scenario):

* LTE capacity: `lte3mbps`, `lte8mbps`, `lte15mbps` (constant, both ways; 5 Mbit/s is the main
  setting; 15 is the shipped A1/A2/B1/B2) and the three Mahimahi downlink traces shipped in
  traces/ (`lte-trace-tmobile` 16.7, `lte-trace-verizon` 5.03, `lte-trace-att` 4.56 Mbit/s
  mean; uplink constant 5 Mbit/s). A trace link's default queue is 1 BDP at its mean rate.
* LTE queue (down): `lteq200ms`, `lteq500ms`, a bufferbloated cellular queue that drops when it
  would take longer than that to drain at the link rate (main: 1 BDP = 34 packets at 5 Mbit/s
  x 80 ms).
* Wi-Fi loss level (Bernoulli, time shape kept): pattern A peak `peak1pct`, `peak2pct`,
  `peak3pct`, `peak10pct` (main 5 %); pattern B start `start2pct`, `start3pct`, `start5pct`,
  `start20pct` (main 10 %; always falling to 1 % from 60 to 150 s, with the noise).
* Wi-Fi loss burstiness: `ge-burst3`, `ge-burst10`: Gilbert-Elliott loss (loss 0 in the good
  state, 1 in the bad state) whose stationary loss equals the main pattern's time average
  (A: 1.11 %, B: 6.25 %) with a mean burst of 3 or 10 packets. Stationary over the trial:
  linkemu's schedules change only a Bernoulli link's `loss_p` (emulator/src/scenario.rs), so a
  bursty loss with pattern A's or B's time shape is not expressible; the burst files keep the
  mean and drop the shape.

Receive buffer and player are trial options, not scenario fields: see the pre-registration.

    .venv/bin/python netem-scenarios/generate_seed002_families.py            # rewrite the files
    .venv/bin/python netem-scenarios/generate_seed002_families.py --out DIR  # write elsewhere

The committed files are this script's output; testbed/test_scenario_grid.py checks that.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from scenario_writer import parser, percent_label, write

BASES = ("A1", "A2", "B1", "B2")
WIFI_DELAY_MS = {"A1": 20.0, "A2": 30.0, "B1": 20.0, "B2": 30.0}
WIFI_BPS = 20_000_000
LTE_DELAY_MS = 40.0
DURATION_S = 180.0

MAIN_LTE_BPS = 5_000_000
LTE_CAPACITIES_BPS = (3_000_000, 8_000_000, 15_000_000)  # besides the main 5 Mbit/s
LTE_TRACES = {  # file label -> trace in netem-scenarios/traces/ (mean rate in the docstring)
    "tmobile": "TMobile-LTE-short.down",
    "verizon": "Verizon-LTE-short.down",
    "att": "ATT-LTE-driving-2016.down",
}
LTE_QUEUES_MS = (200.0, 500.0)  # besides the main 1 BDP

# Pattern A: loss 0, ramps to the peak at these times (5 s up, 5 s hold, 5 s down).
MAIN_PEAK_A = 0.05
PEAKS_A = (0.01, 0.02, 0.03, 0.10)
RAMP_STARTS_S = (30.0, 75.0, 120.0, 165.0)
UP_S = HOLD_S = DOWN_S = 5.0
# Pattern B: the start level until 60 s, linear to 1 % at 150 s, 1 % to 180 s, x U[0.5, 1.5]
# resampled every 1 s.
MAIN_START_B = 0.10
STARTS_B = (0.02, 0.03, 0.05, 0.20)
B_FALL_S = (60.0, 150.0)
B_END_P = 0.01
B_NOISE_SPREAD = 0.5
GE_BURSTS_PKTS = (3, 10)


def mean_loss_a(peak: float) -> float:
    """Time-average loss of pattern A over the trial (each event: ramp, hold, ramp)."""
    per_event = peak * (UP_S / 2 + HOLD_S + DOWN_S / 2)
    return per_event * len(RAMP_STARTS_S) / DURATION_S


def mean_loss_b(start: float) -> float:
    """Time-average loss of pattern B over the trial (the noise has mean factor 1)."""
    t0, t1 = B_FALL_S
    return (start * t0 + (start + B_END_P) / 2 * (t1 - t0) + B_END_P * (DURATION_S - t1)) / (
        DURATION_S
    )


def gilbert_elliott(mean_loss: float, burst_pkts: int) -> str:
    """GE loss (0 in good, 1 in bad) with stationary loss `mean_loss` and mean burst length."""
    p_bad_to_good = 1.0 / burst_pkts
    p_good_to_bad = mean_loss * p_bad_to_good / (1.0 - mean_loss)
    return (
        f'{{ model = "gilbert_elliott", p_good_to_bad = {p_good_to_bad:.6g}, '
        f"p_bad_to_good = {p_bad_to_good:.6g}, loss_in_good = 0.0, loss_in_bad = 1.0 }}"
    )


def schedule_a(peak: float) -> list[str]:
    out = []
    for start in RAMP_STARTS_S:
        top, fall = start + UP_S, start + UP_S + HOLD_S
        out.append(
            f'{{ t_s = {start!r}, op = "ramp", field = "loss_p", value = {peak!r}, '
            f"until_s = {top!r} }}"
        )
        out.append(
            f'{{ t_s = {fall!r}, op = "ramp", field = "loss_p", value = 0.0, '
            f"until_s = {fall + DOWN_S!r} }}"
        )
    return out


def schedule_b() -> list[str]:
    return [
        f'{{ t_s = 0.0, op = "noise", field = "loss_p", until_s = {DURATION_S!r}, every_s = 1.0, '
        f"spread = {B_NOISE_SPREAD!r} }}",
        f'{{ t_s = {B_FALL_S[0]!r}, op = "ramp", field = "loss_p", value = {B_END_P!r}, '
        f"until_s = {B_FALL_S[1]!r} }}",
    ]


def wifi_bernoulli(base: str, level: float) -> list[str]:
    """Wi-Fi down: Bernoulli loss with the base's pattern at `level` (A's peak or B's start)."""
    pattern_a = base.startswith("A")
    schedule = schedule_a(level) if pattern_a else schedule_b()
    return [
        "[paths.wifi.down]",
        f'loss = {{ model = "bernoulli", p = {0.0 if pattern_a else level!r} }}',
        "schedule = [",
        *[f"  {line}," for line in schedule],
        "]",
    ]


def wifi_ge(base: str, burst_pkts: int) -> list[str]:
    mean = mean_loss_a(MAIN_PEAK_A) if base.startswith("A") else mean_loss_b(MAIN_START_B)
    return ["[paths.wifi.down]", f"loss = {gilbert_elliott(mean, burst_pkts)}"]


def lte(rate_bps: int = MAIN_LTE_BPS, trace: str | None = None, queue_ms: float | None = None):
    lines = ["[paths.lte]", f"rate = {{ bps = {rate_bps:_} }}", f"delay_ms = {LTE_DELAY_MS!r}"]
    down = []
    if trace:
        down.append(f'rate = {{ trace = "{trace}" }}')
    if queue_ms is not None:
        down.append(f"queue = {{ ms = {queue_ms!r} }}")
    return lines + (["", "[paths.lte.down]", *down] if down else [])


def scenario(
    base: str, label: str, what: str, wifi_down: list[str], lte_lines: list[str], traces: bool
) -> tuple[str, str]:
    name = f"{base}-{label}"
    description = (
        f"Seed 002 {base}, {what}: Wi-Fi 20 Mbit/s {WIFI_DELAY_MS[base]:g} ms one-way, "
        f"LTE {LTE_DELAY_MS:g} ms one-way"
    )
    lines = [
        "# Generated by netem-scenarios/generate_seed002_families.py; do not edit by hand.",
        f"# Seed 002 {base}, {what}.",
        "# PROPOSAL: the paper gives no link rates, queues or loss series in numbers; this family",
        "# varies one open parameter around the main setting of",
        "# docs/reproductions/preregistration-seed002.md (see the generator's docstring).",
        f'name = "seed002-{name}"',
        f'description = "{description}"',
        *(['traces = "../traces"'] if traces else []),
        f"duration_s = {DURATION_S!r}",
        "",
        "[paths.wifi]",
        f"rate = {{ bps = {WIFI_BPS:_} }}",
        f"delay_ms = {WIFI_DELAY_MS[base]!r}",
        "",
        *wifi_down,
        "",
        *lte_lines,
    ]
    return f"{name}.toml", "\n".join(lines) + "\n"


def main_level(base: str) -> float:
    return MAIN_PEAK_A if base.startswith("A") else MAIN_START_B


def pattern_text(base: str, level: float) -> str:
    if base.startswith("A"):
        return f"loss pattern A peaking at {level * 100:g} %"
    return f"loss pattern B from {level * 100:g} % to 1 % (+-50 % noise)"


def family_files(base: str) -> list[tuple[str, str]]:
    main_wifi = wifi_bernoulli(base, main_level(base))
    main_pattern = pattern_text(base, main_level(base))
    mbps = MAIN_LTE_BPS / 1e6
    files = [
        scenario(
            base,
            "main",
            f"main setting ({main_pattern}, LTE {mbps:g} Mbit/s)",
            main_wifi,
            lte(),
            traces=False,
        ),
    ]
    for bps in LTE_CAPACITIES_BPS:
        files.append(
            scenario(
                base,
                f"lte{bps / 1e6:g}mbps",
                f"{main_pattern}, LTE {bps / 1e6:g} Mbit/s",
                main_wifi,
                lte(bps),
                traces=False,
            )
        )
    for label, trace in LTE_TRACES.items():
        files.append(
            scenario(
                base,
                f"lte-trace-{label}",
                f"{main_pattern}, LTE down from trace {trace}",
                main_wifi,
                lte(trace=trace),
                traces=True,
            )
        )
    for ms in LTE_QUEUES_MS:
        files.append(
            scenario(
                base,
                f"lteq{ms:g}ms",
                f"{main_pattern}, LTE {mbps:g} Mbit/s with a {ms:g} ms down queue",
                main_wifi,
                lte(queue_ms=ms),
                traces=False,
            )
        )
    levels, tag = (PEAKS_A, "peak") if base.startswith("A") else (STARTS_B, "start")
    for level in levels:
        files.append(
            scenario(
                base,
                f"{tag}{percent_label(level)}",
                f"{pattern_text(base, level)}, LTE {mbps:g} Mbit/s",
                wifi_bernoulli(base, level),
                lte(),
                traces=False,
            )
        )
    mean: Callable[[float], float] = mean_loss_a if base.startswith("A") else mean_loss_b
    for burst in GE_BURSTS_PKTS:
        files.append(
            scenario(
                base,
                f"ge-burst{burst}",
                f"Gilbert-Elliott loss, mean {mean(main_level(base)) * 100:.3g} % (the main "
                f"pattern's time average), mean burst {burst} packets, LTE {mbps:g} Mbit/s",
                wifi_ge(base, burst),
                lte(),
                traces=False,
            )
        )
    return files


def family_files_all() -> dict[str, str]:
    """File name -> contents for every family point of every base scenario."""
    return dict(f for base in BASES for f in family_files(base))


def main(argv: list[str] | None = None) -> int:
    args = parser(__doc__.split("\n\n")[0], "seed002-families").parse_args(argv)
    return write(args.out, family_files_all())


if __name__ == "__main__":
    sys.exit(main())
