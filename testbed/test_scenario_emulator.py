"""Every shipped scenario, resolved, is accepted by the emulator's own strict parser.

Runs `linkemu --validate` (built by scripts/setup.sh); skipped when the binary is absent.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testbed.scenario import list_scenarios, load_resolved

REPO = Path(__file__).resolve().parent.parent
LINKEMU = REPO / "emulator" / "target" / "release" / "linkemu"

pytestmark = pytest.mark.skipif(not LINKEMU.is_file(), reason=f"{LINKEMU} not built")


@pytest.mark.parametrize("name", list_scenarios(REPO))
def test_emulator_accepts_the_resolved_scenario(name: str, tmp_path: Path) -> None:
    resolved_file = tmp_path / "scenario.json"
    resolved_file.write_text(json.dumps(load_resolved(name, REPO, seed=3)))
    run = subprocess.run(
        [str(LINKEMU), "--scenario", str(resolved_file), "--validate"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "wifi/down" in run.stdout and "lte/up" in run.stdout
