"""The installed `tc` parses every command the netem backend generates.

This kernel has no sch_netem, but `tc` parses a netem command completely before the kernel
refuses the qdisc kind, so a parse error ("What is ...", usage) and the kernel's
"Specified qdisc kind is unknown" can be told apart. tbf exists here, so tbf commands are
applied for real (as the root qdisc, since their netem parent cannot be created). Runs in
its own network namespace (prefix `scen-`), removed at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed import netem_backend as nb
from testbed.scenario import load_resolved, resolve_file

REPO = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.netns,
    pytest.mark.skipif(
        os.geteuid() != 0 or not shutil.which("tc") or not shutil.which("ip"),
        reason="needs root, ip and tc",
    ),
]

VARIED = """
duration_s = 60.0
[paths.wifi]
rate = { bps = 10_000_000 }
delay_ms = 10.0
jitter_ms = 2.5
[paths.wifi.loss]
model = "gilbert_elliott"
p_good_to_bad = 0.01
p_bad_to_good = 0.3
loss_in_good = 0.001
[paths.lte]
rate = { bps = 100_000_000 }
delay_ms = 25.0
queue = { ms = 35.0 }
loss = { model = "bernoulli", p = 0.00001 }
[paths.lte.up]
queue = { bytes = 30000 }
schedule = [
  { t_s = 10.0, op = "ramp", field = "rate_bps", value = 5e7, until_s = 11.0 },
  { t_s = 10.0, op = "step", field = "jitter_ms", value = 4.0 },
  { t_s = 20.0, op = "outage", until_s = 25.0 },
]
[paths.lte.down]
rate = { unlimited = true }
"""


@pytest.fixture
def router_ns() -> Iterator[str]:
    name = f"scen-tc-{os.getpid():x}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        for a, b in (("c-wifi", "s-wifi"), ("c-lte", "s-lte")):
            subprocess.run(
                ["ip", "-n", name, "link", "add", a, "type", "veth", "peer", "name", b],
                check=True,
            )
            for dev in (a, b):
                subprocess.run(["ip", "-n", name, "link", "set", dev, "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def _all_commands(resolved: dict) -> list[tuple[str, ...]]:
    netem_plan = nb.plan(resolved)
    unique = dict.fromkeys([*netem_plan.setup, *(c.argv for c in netem_plan.timeline)])
    return list(unique)


def test_tc_parses_every_generated_command(router_ns: str, tmp_path: Path) -> None:
    varied_file = tmp_path / "varied.toml"
    varied_file.write_text(VARIED)
    scenarios = [
        load_resolved("control", REPO, seed=1),
        load_resolved("A1", REPO, seed=1),
        load_resolved("B2", REPO, seed=1),
        load_resolved("seed000-path-break", REPO, seed=1),
        load_resolved("seed001-grid/wifi-0.001pct_lte-10pct", REPO, seed=1),
        resolve_file(varied_file, REPO, seed=1),
    ]
    checked = {"netem": 0, "tbf": 0}
    for resolved in scenarios:
        for argv in _all_commands(resolved):
            if "tbf" in argv:
                # No netem parent here: apply the same tbf as the root qdisc.
                dev = argv[argv.index("dev") + 1]
                root = ("tc", "qdisc", "replace", "dev", dev, "root", "handle", "10:")
                argv = root + argv[argv.index("tbf") :]
            else:
                # `change` needs an existing netem; `replace` parses the same arguments.
                argv = argv[:2] + ("replace",) + argv[3:]
            run = subprocess.run(
                ["ip", "netns", "exec", router_ns, *argv],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if "netem" in argv:
                parsed = run.returncode == 0 or "qdisc kind is unknown" in run.stderr
                assert parsed, f"{' '.join(argv)}\n{run.stderr}"
                checked["netem"] += 1
            else:
                assert run.returncode == 0, f"{' '.join(argv)}\n{run.stderr}"
                checked["tbf"] += 1
    assert checked["netem"] >= 200 and checked["tbf"] >= 30, checked
