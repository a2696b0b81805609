"""The scenario generators of netem-scenarios/ reproduce their committed files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "netem-scenarios" / "generate_loss_grid.py"
COMMITTED = REPO / "netem-scenarios" / "seed001-grid"
SWEEP_GENERATOR = REPO / "netem-scenarios" / "generate_seed002_sweep.py"
SWEEP = REPO / "netem-scenarios" / "seed002-sweep"
FAMILIES_GENERATOR = REPO / "netem-scenarios" / "generate_seed002_families.py"
FAMILIES = REPO / "netem-scenarios" / "seed002-families"


def _files(folder: Path) -> dict[str, str]:
    return {f.name: f.read_text() for f in sorted(folder.glob("*.toml"))}


def _generate(generator: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(generator), "--out", str(out), *args],
                          capture_output=True, text=True, timeout=60)  # fmt: skip


@pytest.mark.parametrize(
    ("generator", "committed", "count"),
    [(GENERATOR, COMMITTED, 49), (SWEEP_GENERATOR, SWEEP, 12), (FAMILIES_GENERATOR, FAMILIES, 60)],
    ids=["seed001-grid", "seed002-sweep", "seed002-families"],
)
def test_generator_reproduces_the_committed_files(
    tmp_path: Path, generator: Path, committed: Path, count: int
) -> None:
    run = _generate(generator, tmp_path)
    assert run.returncode == 0, run.stderr
    generated = _files(tmp_path)
    assert len(generated) == count
    assert generated == _files(committed)


def test_other_delay_reading_changes_only_the_delay(tmp_path: Path) -> None:
    run = _generate(GENERATOR, tmp_path, "--one-way-delay-ms", "25")
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "wifi-0.1pct_lte-10pct.toml").read_text()
    assert text.count("delay_ms = 25.0") == 2
    assert 'loss = { model = "bernoulli", p = 0.001 }' in text
    assert 'loss = { model = "bernoulli", p = 0.1 }' in text


def test_negative_delay_is_refused_with_status_2(tmp_path: Path) -> None:
    run = _generate(GENERATOR, tmp_path, "--one-way-delay-ms", "-1")
    assert run.returncode == 2
    assert "--one-way-delay-ms" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_sweep_points_at_the_default_values_equal_the_hand_written_scenarios() -> None:
    from testbed.scenario import load_resolved

    pairs = {"A1": "A1-peak5pct", "A2": "A2-peak5pct", "B1": "B1-start10pct", "B2": "B2-start10pct"}
    for shipped, sweep_point in pairs.items():
        hand = load_resolved(shipped, REPO, seed=5)
        generated = load_resolved(f"seed002-sweep/{sweep_point}", REPO, seed=5)
        assert hand["paths"] == generated["paths"], shipped
        assert hand["duration_s"] == generated["duration_s"]
    peak10 = load_resolved("seed002-sweep/A2-peak10pct", REPO, seed=5)
    assert max(e["value"] for e in peak10["paths"]["wifi"]["down"]["schedule"]) == 0.10


def test_family_points_differ_from_the_main_setting_only_in_their_parameter() -> None:
    from testbed.scenario import load_resolved

    for base in ("A1", "A2", "B1", "B2"):
        # At 15 Mbit/s the capacity family is the shipped scenario.
        hand = load_resolved(base, REPO, seed=5)
        at15 = load_resolved(f"seed002-families/{base}-lte15mbps", REPO, seed=5)
        assert hand["paths"] == at15["paths"], base
        main = load_resolved(f"seed002-families/{base}-main", REPO, seed=5)
        assert main["paths"]["wifi"] == hand["paths"]["wifi"], base
        lte_down = main["paths"]["lte"]["down"]
        # 1 BDP at 5 Mbit/s x 80 ms of 1500-byte packets: ceil(33.3) = 34.
        assert lte_down["rate"] == {"kind": "constant", "bps": 5_000_000}
        assert lte_down["queue"] == {"kind": "packets", "limit": 34}
        bloated = load_resolved(f"seed002-families/{base}-lteq500ms", REPO, seed=5)
        assert bloated["paths"]["lte"]["down"]["queue"] == {"kind": "ms", "limit": 500.0}
        assert bloated["paths"]["wifi"] == main["paths"]["wifi"]


def test_gilbert_elliott_points_keep_the_main_patterns_mean_loss() -> None:
    from testbed.scenario import load_resolved

    # Pattern A's time average: 4 events x 5 % x (2.5 + 5 + 2.5) s / 180 s; B's: 6.25 %.
    for base, mean in (("A1", 4 * 0.05 * 10 / 180), ("B2", 0.0625)):
        for burst in (3, 10):
            loss = load_resolved(f"seed002-families/{base}-ge-burst{burst}", REPO, seed=5)["paths"][
                "wifi"
            ]["down"]["loss"]
            g, b = loss["p_good_to_bad"], loss["p_bad_to_good"]
            assert abs(g / (g + b) - mean) < 1e-5, (base, burst, loss)
            assert abs(1 / b - burst) < 1e-4
