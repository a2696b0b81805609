"""Malformed scenario files (tests/fixtures/bad-scenarios/): exit 2, message names the field.

Each fixture says on its second line which field the message must name
(`# expect-field: paths.wifi.down.loss.p`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testbed.scenario import ScenarioError, load_resolved, main

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "bad-scenarios"
BAD_FILES = sorted(FIXTURES.glob("*.toml"))


def expected_field(file: Path) -> str:
    for line in file.read_text().splitlines():
        if line.startswith("# expect-field:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{file} has no '# expect-field:' line")


def test_every_kind_of_malformed_file_has_a_fixture() -> None:
    names = {f.stem for f in BAD_FILES}
    kinds = [
        "wrong-type",
        "unknown-field",
        "negative-rate",
        "ramps-out-of-order",
        "overlapping-ramps",
        "missing-trace",
        "malformed-trace",
        "probability-above-one",
        "missing-required",
    ]
    for kind in kinds:
        assert any(n.startswith(kind) for n in names), f"no fixture for {kind}"


@pytest.mark.parametrize("file", BAD_FILES, ids=[f.stem for f in BAD_FILES])
def test_bad_file_exits_2_naming_the_field(file: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["validate", str(file)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert str(file.relative_to(REPO)) in captured.err
    assert expected_field(file) in captured.err

    with pytest.raises(ScenarioError) as info:
        load_resolved(str(file), REPO, seed=1)
    assert info.value.exit_status == 2
    assert expected_field(file) in str(info.value)


def test_resolve_of_a_bad_file_prints_nothing_and_exits_2() -> None:
    bad = FIXTURES / "negative-rate.toml"
    run = subprocess.run(
        [sys.executable, "-m", "testbed.scenario", "resolve", str(bad), "--seed", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stdout == ""
    assert "paths.lte.rate.bps = -15000000: must be in [1000, " in run.stderr


def test_validate_reports_every_bad_file_and_still_exits_2(
    capsys: pytest.CaptureFixture,
) -> None:
    status = main(["validate", "control", str(FIXTURES / "wrong-type.toml")])
    captured = capsys.readouterr()
    assert status == 2
    assert "ok netem-scenarios/control.toml" in captured.out
    assert "paths.wifi.delay_ms" in captured.err
