"""The scenario path's random-input harness (testbed/fuzz_scenarios.py) for a few seconds, and
the inputs it found crashing (fixed in testbed/scenario.py: default_queue, and a bound on a
noise window's samples): each is refused with a ScenarioError naming the field, not a
traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from markers import LINKEMU, needs_built

from testbed import fuzz_scenarios
from testbed.scenario import ScenarioError, resolve_file

REPO = Path(__file__).resolve().parent.parent

pytestmark = needs_built(LINKEMU)

FOUND = {
    # delay x rate overflowed to infinity in the default queue (OverflowError)
    "delay-1e308": ("[paths.wifi]\nrate = { bps = 100_000_000 }\ndelay_ms = 1e308\n",
                    "paths.wifi.delay_ms = 1e308"),
    # a rate of 0 times a round trip that overflowed (1e308 ms each way) is NaN (ValueError)
    "rate-0-delay-1e308": ("[paths.wifi]\nrate = { bps = 0 }\ndelay_ms = 1e308\n",
                           "paths.wifi."),
    # a noise window sampled every 1e-9 s expanded to 3e10 steps in memory (MemoryError)
    "noise-every-1e-9": ('[paths.wifi]\nrate = { bps = 20_000_000 }\ndelay_ms = 20.0\n'
                         '[paths.wifi.down]\nloss = { model = "bernoulli", p = 0.05 }\n'
                         'schedule = [{ t_s = 0.0, op = "noise", field = "loss_p", '
                         'until_s = 30.0, every_s = 1e-9, spread = 0.5 }]\n',
                         "paths.wifi.down.schedule[0].every_s = 1e-09"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(FOUND))
def test_found_crashes_are_refused_with_the_field(tmp_path: Path, name: str) -> None:
    body, field = FOUND[name]
    path = tmp_path / "s.toml"
    path.write_text(f'name = "x"\ndescription = "x"\nduration_s = 30.0\n{body}')
    with pytest.raises(ScenarioError) as refused:
        resolve_file(path, REPO, 1)
    assert field in str(refused.value), str(refused.value)


def test_the_harness_finds_no_crash_in_a_few_seconds() -> None:
    inputs, found = fuzz_scenarios.run(seconds=8, crashes=None, seed=3)
    assert inputs > 10
    assert not found, found[:3]
