"""netem-scenarios/generate_loss_grid.py reproduces the committed seed001-grid/ files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "netem-scenarios" / "generate_loss_grid.py"
COMMITTED = REPO / "netem-scenarios" / "seed001-grid"


def _files(folder: Path) -> dict[str, str]:
    return {f.name: f.read_text() for f in sorted(folder.glob("*.toml"))}


def test_generator_reproduces_the_committed_grid(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    generated = _files(tmp_path)
    assert len(generated) == 49
    assert generated == _files(COMMITTED)


def test_other_delay_reading_changes_only_the_delay(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(tmp_path), "--one-way-delay-ms", "25"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "wifi-0.1pct_lte-10pct.toml").read_text()
    assert text.count("delay_ms = 25.0") == 2
    assert 'loss = { model = "bernoulli", p = 0.001 }' in text
    assert 'loss = { model = "bernoulli", p = 0.1 }' in text


def test_negative_delay_is_refused_with_status_2(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(tmp_path), "--one-way-delay-ms", "-1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "--one-way-delay-ms" in run.stderr
    assert list(tmp_path.iterdir()) == []
