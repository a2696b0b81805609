"""Tests of testbed/scenario.py: shipped scenarios, resolution rules, seeded noise."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from testbed.scenario import (
    ScenarioError,
    list_scenarios,
    load_resolved,
    main,
    resolve_file,
)

REPO = Path(__file__).resolve().parent.parent
RESOLVED_SCHEMA = json.loads((REPO / "netem-scenarios" / "resolved.schema.json").read_text())
SHIPPED = list_scenarios(REPO)


def test_the_scenarios_the_brief_asks_for_are_shipped() -> None:
    wanted = {
        "control",
        "A1",
        "A2",
        "B1",
        "B2",
        "A1-lte-trace",
        "seed000-lossy",
        "seed000-asymmetric-rtt",
        "seed000-path-break",
    }
    assert wanted <= set(SHIPPED)
    assert len([n for n in SHIPPED if n.startswith("seed001-grid/")]) == 49


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_scenario_validates_and_resolves(name: str) -> None:
    resolved = load_resolved(name, REPO, seed=1)
    jsonschema.Draft202012Validator(RESOLVED_SCHEMA).validate(resolved)
    assert resolved["source"] == f"netem-scenarios/{name}.toml"
    for path_name in ("wifi", "lte"):
        for direction in ("up", "down"):
            link = resolved["paths"][path_name][direction]
            times = [event["t_s"] for event in link["schedule"]]
            assert times == sorted(times), f"{name} {path_name} {direction} schedule unsorted"
            assert all(t < resolved["duration_s"] for t in times)
            if link["rate"]["kind"] == "trace":
                assert Path(link["rate"]["file"]).is_absolute()
                assert Path(link["rate"]["file"]).is_file()
    # Resolution is a pure function of (file, seed).
    assert load_resolved(name, REPO, seed=1) == resolved


def test_control_has_no_impairment_at_all() -> None:
    resolved = load_resolved("control", REPO, seed=1)
    assert resolved["name"] == "control"
    for path_name, bps, delay_ms in (("wifi", 20_000_000, 20.0), ("lte", 15_000_000, 40.0)):
        for direction in ("up", "down"):
            link = resolved["paths"][path_name][direction]
            assert link["rate"] == {"kind": "constant", "bps": bps}
            assert link["delay_ms"] == delay_ms
            assert link["jitter_ms"] == 0.0
            assert link["loss"] == {"kind": "none"}
            assert link["schedule"] == []
    # Default queue = one BDP in 1500-byte packets: 20 Mbit/s x 40 ms = 66.7 -> 67;
    # 15 Mbit/s x 80 ms = 100.
    assert resolved["paths"]["wifi"]["down"]["queue"] == {"kind": "packets", "limit": 67}
    assert resolved["paths"]["lte"]["up"]["queue"] == {"kind": "packets", "limit": 100}


def test_a1_loss_is_on_wifi_down_only_with_four_ramp_pairs() -> None:
    resolved = load_resolved("A1", REPO, seed=1)
    wifi = resolved["paths"]["wifi"]
    assert wifi["up"]["loss"] == {"kind": "none"}
    assert wifi["up"]["schedule"] == []
    assert wifi["down"]["loss"] == {"kind": "bernoulli", "p": 0.0}
    assert wifi["down"]["delay_ms"] == 20.0 and wifi["up"]["delay_ms"] == 20.0
    ramps = wifi["down"]["schedule"]
    assert [e["t_s"] for e in ramps] == [30, 40, 75, 85, 120, 130, 165, 175]
    assert [e["value"] for e in ramps] == [0.05, 0.0] * 4
    assert all(e["op"] == "ramp" and e["until_s"] == e["t_s"] + 5 for e in ramps)
    assert resolved["paths"]["lte"]["down"]["loss"] == {"kind": "none"}
    assert load_resolved("A2", REPO, seed=1)["paths"]["wifi"]["up"]["delay_ms"] == 30.0


def _b1_wifi_down(seed: int) -> list[dict]:
    return load_resolved("B1", REPO, seed=seed)["paths"]["wifi"]["down"]["schedule"]


def test_pattern_b_noise_becomes_one_seeded_step_per_second() -> None:
    steps = _b1_wifi_down(seed=7)
    assert [e["t_s"] for e in steps] == [float(t) for t in range(180)]
    assert all(e["op"] == "step" and e["field"] == "loss_p" for e in steps)

    def base(t: float) -> float:  # the pattern without noise: 10 %, ramp 60..150 s to 1 %
        if t <= 60:
            return 0.10
        if t >= 150:
            return 0.01
        return 0.10 + (0.01 - 0.10) * (t - 60) / 90

    ratios = [e["value"] / base(e["t_s"]) for e in steps]
    assert all(0.5 - 1e-9 <= r <= 1.5 + 1e-9 for r in ratios)
    # The factors are spread over the whole +-50 % range, not stuck at one value.
    assert min(ratios) < 0.6 and max(ratios) > 1.4


def test_same_seed_same_events_other_seed_other_events() -> None:
    assert _b1_wifi_down(seed=7) == _b1_wifi_down(seed=7)
    assert _b1_wifi_down(seed=7) != _b1_wifi_down(seed=8)
    # Scenarios without noise do not depend on the seed.
    assert load_resolved("A1", REPO, seed=1) == load_resolved("A1", REPO, seed=99)


def test_trace_paths_are_absolute_and_relative_to_the_traces_root() -> None:
    lte = load_resolved("A1-lte-trace", REPO, seed=1)["paths"]["lte"]
    expected = (REPO / "netem-scenarios" / "traces" / "TMobile-LTE-short.down").resolve()
    assert lte["down"]["rate"] == {"kind": "trace", "file": str(expected), "packet_bytes": 1500}
    assert lte["up"]["rate"] == {"kind": "constant", "bps": 15_000_000}
    # Default queue for a trace: one BDP at the trace's mean rate (16.7 Mbit/s x 80 ms).
    assert lte["down"]["queue"] == {"kind": "packets", "limit": 112}


def test_path_break_is_an_outage_of_both_lte_directions() -> None:
    resolved = load_resolved("seed000-path-break", REPO, seed=1)
    outage = [{"t_s": 15.0, "op": "outage", "until_s": 60.0}]
    assert resolved["paths"]["lte"]["up"]["schedule"] == outage
    assert resolved["paths"]["lte"]["down"]["schedule"] == outage
    assert resolved["paths"]["wifi"]["down"]["schedule"] == []


def _write(tmp_path: Path, text: str) -> Path:
    file = tmp_path / "case.toml"
    file.write_text(text)
    return file


LINKS = """
[paths.wifi]
rate = { bps = 10_000_000 }
delay_ms = 10.0
[paths.lte]
rate = { bps = 10_000_000 }
delay_ms = 10.0
"""


def test_noise_window_ends_with_a_step_back_to_the_unperturbed_value(tmp_path: Path) -> None:
    text = (
        "duration_s = 30.0\n"
        + LINKS
        + (
            "schedule = [\n"
            '  { t_s = 2.0, op = "ramp", field = "rate_bps", value = 2e7, until_s = 4.0 },\n'
            '  { t_s = 1.0, op = "noise", field = "rate_bps", until_s = 5.5, every_s = 2.0,'
            " spread = 0.1 },\n"
            '  { t_s = 5.5, op = "ramp", field = "rate_bps", value = 1e6, until_s = 10.0 },\n'
            "]\n"
        )
    )
    link = resolve_file(_write(tmp_path, text), REPO, seed=3)["paths"]["lte"]["up"]
    events = link["schedule"]
    # Samples at 1, 3, 5 s; the ramp inside the window is replaced by them; the ramp that
    # starts when the window ends is kept (so no restore step is needed at 5.5 s).
    assert [(e["t_s"], e["op"]) for e in events] == [
        (1.0, "step"),
        (3.0, "step"),
        (5.0, "step"),
        (5.5, "ramp"),
    ]
    assert all(isinstance(e["value"], int) for e in events)  # rate_bps stays integer
    assert 0.9 * 10_000_000 <= events[0]["value"] <= 1.1 * 10_000_000
    assert 0.9 * 15_000_000 <= events[1]["value"] <= 1.1 * 15_000_000  # mid-ramp base
    assert 0.9 * 20_000_000 <= events[2]["value"] <= 1.1 * 20_000_000


def test_noise_window_restores_the_base_value_when_nothing_follows(tmp_path: Path) -> None:
    text = (
        "duration_s = 30.0\n"
        + LINKS
        + (
            '[paths.lte.down]\nschedule = [{ t_s = 0.0, op = "noise", field = "delay_ms",'
            " until_s = 3.0, every_s = 1.0, spread = 0.5 }]\n"
        )
    )
    resolved = resolve_file(_write(tmp_path, text), REPO, seed=3)
    events = resolved["paths"]["lte"]["down"]["schedule"]
    assert [e["t_s"] for e in events] == [0.0, 1.0, 2.0, 3.0]
    assert events[-1] == {"t_s": 3.0, "op": "step", "field": "delay_ms", "value": 10.0}
    assert resolved["paths"]["lte"]["up"]["schedule"] == []


def test_direction_fields_override_both_direction_fields(tmp_path: Path) -> None:
    text = (
        "duration_s = 30.0\n"
        + LINKS
        + (
            "queue = { ms = 50.0 }\n"
            'loss = { model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3 }\n'
            "[paths.lte.down]\nrate = { unlimited = true }\nqueue = { bytes = 30000 }\n"
        )
    )
    lte = resolve_file(_write(tmp_path, text), REPO, seed=0)["paths"]["lte"]
    assert lte["up"]["rate"] == {"kind": "constant", "bps": 10_000_000}
    assert lte["down"]["rate"] == {"kind": "unlimited"}
    assert lte["up"]["queue"] == {"kind": "ms", "limit": 50.0}
    assert lte["down"]["queue"] == {"kind": "bytes", "limit": 30000}
    expected_loss = {
        "kind": "gilbert_elliott",
        "p_good_to_bad": 0.01,
        "p_bad_to_good": 0.3,
        "loss_in_good": 0.0,
        "loss_in_bad": 1.0,
    }
    assert lte["up"]["loss"] == expected_loss and lte["down"]["loss"] == expected_loss


def test_default_queue_has_a_floor_of_ten_packets(tmp_path: Path) -> None:
    text = "duration_s = 30.0\n" + LINKS.replace("delay_ms = 10.0", "delay_ms = 0.0")
    resolved = resolve_file(_write(tmp_path, text), REPO, seed=0)
    assert resolved["paths"]["wifi"]["up"]["queue"] == {"kind": "packets", "limit": 10}


def test_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(ScenarioError) as info:
        load_resolved("no-such-scenario", REPO, seed=1)
    assert info.value.exit_status == 2
    assert "no-such-scenario" in str(info.value) and "control" in str(info.value)


def test_seed_out_of_range_is_an_error() -> None:
    with pytest.raises(ScenarioError, match="seed"):
        load_resolved("control", REPO, seed=-1)


def test_cli_resolve_prints_the_resolved_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["resolve", "B2", "--seed", "5"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == load_resolved("B2", REPO, seed=5)


def test_cli_list_and_validate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    assert capsys.readouterr().out.split() == SHIPPED
    assert main(["validate", "control", "netem-scenarios/A1.toml"]) == 0
    out = capsys.readouterr().out
    assert "ok netem-scenarios/control.toml" in out and "ok netem-scenarios/A1.toml" in out


def test_trace_stats_gives_the_mean_rates_quoted_in_the_readme(
    capsys: pytest.CaptureFixture[str],
) -> None:
    trace = REPO / "netem-scenarios" / "traces" / "TMobile-LTE-short.down"
    assert main(["trace-stats", str(trace)]) == 0
    assert "194846 packets in 140.0 s, 16.70 Mbit/s" in capsys.readouterr().out
    empty = REPO / "tests" / "fixtures" / "bad-scenarios" / "traces" / "empty.down"
    assert main(["trace-stats", str(empty)]) == 2
    assert "is empty" in capsys.readouterr().err


def test_noise_expansion_is_the_same_in_separate_processes() -> None:
    import os
    import subprocess
    import sys

    outputs = []
    for hash_seed in ("1", "2"):
        run = subprocess.run(
            [sys.executable, "-m", "testbed.scenario", "resolve", "B1", "--seed", "9"],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0]) == load_resolved("B1", REPO, seed=9)


def test_b1_and_b2_share_the_noise_factors_for_one_seed() -> None:
    b1 = load_resolved("B1", REPO, seed=11)["paths"]["wifi"]["down"]["schedule"]
    b2 = load_resolved("B2", REPO, seed=11)["paths"]["wifi"]["down"]["schedule"]
    assert b1 == b2  # same loss pattern; the files differ only in the Wi-Fi delay
