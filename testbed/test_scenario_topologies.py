"""N named paths, shared bottlenecks, cross traffic, and the one owner of the rules.

* Every scenario shipped before these features resolves to the same JSON as before:
  tests/fixtures/resolved-before-topologies.json holds the SHA-256 of each one's resolved
  JSON (seeds 0 and 7, the repository root replaced by `<repo>`), computed with
  testbed/scenario.py as it was before N paths existed (commit 0bb9a09).
* Malformed files of the new fields are in tests/fixtures/bad-scenarios/ (run by
  test_scenario_bad_files.py); non-UTF-8 input is made here.
* Python (the generated resolved.schema.json, through jsonschema) and Rust (linkemu
  --validate) agree on a corpus of resolved documents: what the schema refuses, linkemu
  refuses; what linkemu accepts, the schema accepts; the semantic cases (cross-references,
  magnitudes) are refused by linkemu only, and are listed as such.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from testbed.scenario import LINKEMU_BINARY, ScenarioError, list_scenarios, load_resolved, main

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "fixtures" / "resolved-before-topologies.json"
RESOLVED_SCHEMA = REPO / "netem-scenarios" / "resolved.schema.json"
NEW_SCENARIOS = ["three-path", "shared-bottleneck", "seed000-table1-0.01pct",
                 "seed000-table1-0.1pct"]  # fmt: skip


def _digest(resolved: dict) -> str:
    text = json.dumps(resolved, indent=2).replace(str(REPO.resolve()), "<repo>")
    return hashlib.sha256(text.encode()).hexdigest()


def test_every_scenario_shipped_before_resolves_to_the_same_json() -> None:
    golden = json.loads(GOLDEN.read_text())
    assert len(golden) >= 100
    changed = []
    for key, digest in sorted(golden.items()):
        name, seed = key.rsplit("@", 1)
        if _digest(load_resolved(name, REPO, int(seed))) != digest:
            changed.append(key)
    assert changed == []


def test_every_shipped_scenario_validates() -> None:
    names = list_scenarios(REPO)
    assert set(NEW_SCENARIOS) <= set(names)
    assert main(["validate", *names]) == 0


def test_three_paths_in_file_order_and_a_shared_bottleneck() -> None:
    three = load_resolved("three-path", REPO, 1)
    assert list(three["paths"]) == ["wifi", "lte", "fiveg"]
    assert three["paths"]["fiveg"]["down"]["loss"]["kind"] == "gilbert_elliott"
    shared = load_resolved("shared-bottleneck", REPO, 1)
    core = shared["bottlenecks"]["core"]
    assert core["paths"] == ["wifi", "lte"] and "up" not in core
    assert core["down"]["rate"] == {"kind": "constant", "bps": 20_000_000}
    # Default queue: one BDP of the shared link over its own RTT plus the longest
    # member path's (5 + 5 + 2 x 20 ms = 50 ms at 20 Mbit/s = 83.3 packets).
    assert core["down"]["queue"] == {"kind": "packets", "limit": 84}
    assert shared["cross_traffic"] == [
        {"kind": "tcp_bulk", "path": "wifi", "direction": "down", "count": 1,
         "start_s": 0.0, "stop_s": 180.0, "cc": "cubic"}
    ]  # fmt: skip
    table1 = load_resolved("seed000-table1-0.1pct", REPO, 1)
    assert [(c["path"], c["count"], c["cc"]) for c in table1["cross_traffic"]] == [
        ("wifi", 2, "match"), ("lte", 2, "match")]  # fmt: skip


def test_emulator_chains_the_member_paths_into_the_bottleneck(tmp_path: Path) -> None:
    resolved = load_resolved("shared-bottleneck", REPO, 1)
    file = tmp_path / "s.json"
    file.write_text(json.dumps(resolved))
    done = subprocess.run([str(REPO / LINKEMU_BINARY), "--validate", "--scenario", str(file)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "wifi/up", "wifi/down", "lte/up", "lte/down",
        "bottleneck core/down"]  # fmt: skip
    assert lines[1].endswith("-> bottleneck core") and lines[3].endswith("-> bottleneck core")
    assert "bottleneck" not in lines[0] and "bottleneck" not in lines[2]


def test_non_utf8_input_exits_2_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"# caf\xe9\nduration_s = 60.0\n[paths.wifi]\nrate = { bps = 1e6 }\n")
    run = subprocess.run([sys.executable, "-m", "testbed.scenario", "validate", str(bad)],
                         cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 2
    assert str(bad) in run.stderr
    assert "not UTF-8" in run.stderr and "0xe9" in run.stderr and "line 1" in run.stderr
    assert "Traceback" not in run.stderr
    with pytest.raises(ScenarioError) as info:
        load_resolved(str(bad), REPO, 0)
    assert info.value.exit_status == 2


# --- Python and Rust agree ------------------------------------------------------------


def _linkemu_accepts(doc: dict, tmp_path: Path) -> bool:
    file = tmp_path / "doc.json"
    file.write_text(json.dumps(doc))
    done = subprocess.run([str(REPO / LINKEMU_BINARY), "--validate", "--scenario", str(file)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    return done.returncode == 0


def _corpus() -> list[tuple[str, dict, str]]:
    """(label, resolved document, expected): 'valid', 'structure' (both refuse) or
    'semantic' (the schema cannot say it; linkemu refuses)."""
    base = load_resolved("shared-bottleneck", REPO, 3)
    out: list[tuple[str, dict, str]] = []
    for name in ["control", "A1-lte-trace", "B1", "seed000-path-break", *NEW_SCENARIOS]:
        out.append((name, load_resolved(name, REPO, 3), "valid"))

    def mutated(label: str, expected: str, change) -> None:  # type: ignore[no-untyped-def]
        doc = copy.deepcopy(base)
        change(doc)
        out.append((label, doc, expected))

    link = base["paths"]["wifi"]["up"]
    mutated("unknown top field", "structure", lambda d: d.update(extra=1))
    mutated("unknown link field", "structure", lambda d: d["paths"]["wifi"]["up"].update(x=1))
    mutated(
        "rate kind", "structure", lambda d: d["paths"]["lte"]["down"].update(rate={"kind": "fast"})
    )
    mutated("delay as text", "structure", lambda d: d["paths"]["lte"]["down"].update(delay_ms="5"))
    mutated("missing down", "structure", lambda d: d["paths"]["lte"].pop("down"))
    mutated(
        "bottleneck without paths", "structure", lambda d: d["bottlenecks"]["core"].pop("paths")
    )
    mutated("cross kind", "structure", lambda d: d["cross_traffic"][0].update(kind="quic"))
    mutated("cross missing cc", "structure", lambda d: d["cross_traffic"][0].pop("cc"))
    mutated("cbr field on tcp", "structure", lambda d: d["cross_traffic"][0].update(rate_bps=1))
    mutated(
        "queue limit negative",
        "structure",
        lambda d: d["paths"]["wifi"]["up"].update(queue={"kind": "packets", "limit": -1}),
    )
    mutated(
        "zero paths",
        "semantic",
        lambda d: (d.update(paths={}), d.pop("bottlenecks"), d.pop("cross_traffic")),
    )
    mutated(
        "nine paths",
        "semantic",
        lambda d: d.update(paths={f"p{i}": {"up": link, "down": link} for i in range(9)}),
    )
    mutated(
        "bottleneck unknown path",
        "semantic",
        lambda d: d["bottlenecks"]["core"]["paths"].append("sat"),
    )
    mutated(
        "path in two bottlenecks",
        "semantic",
        lambda d: d["bottlenecks"].update(
            edge={"paths": ["lte"], "down": d["bottlenecks"]["core"]["down"]}
        ),
    )
    mutated("cross unknown path", "semantic", lambda d: d["cross_traffic"][0].update(path="x"))
    mutated(
        "rate 1e30",
        "semantic",
        lambda d: d["paths"]["wifi"]["up"].update(rate={"kind": "constant", "bps": 1e30}),
    )
    mutated("count 0", "semantic", lambda d: d["cross_traffic"][0].update(count=0))
    mutated("stop after end", "semantic", lambda d: d["cross_traffic"][0].update(stop_s=1e9))
    mutated(
        "valid: 8 paths",
        "valid",
        lambda d: d.update(
            paths={f"p{i}": {"up": link, "down": link} for i in range(8)},
            bottlenecks={},
            cross_traffic=[],
        ),
    )
    return out


def test_python_schema_and_rust_validation_agree(tmp_path: Path) -> None:
    schema = json.loads(RESOLVED_SCHEMA.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    corpus = _corpus()
    assert sum(1 for _, _, e in corpus if e != "valid") >= 15
    disagreements = []
    for label, doc, expected in corpus:
        schema_ok = validator.is_valid(doc)
        rust_ok = _linkemu_accepts(doc, tmp_path)
        want = {"valid": (True, True), "structure": (False, False), "semantic": (True, False)}
        if (schema_ok, rust_ok) != want[expected]:
            disagreements.append(f"{label}: schema {schema_ok}, linkemu {rust_ok}, want {expected}")
    assert disagreements == []


NEW_FIELD_FIXTURES = [
    "bottleneck-unknown-path",
    "bottleneck-path-in-two",
    "cross-traffic-unknown-path",
    "zero-paths",
    "nine-paths",
    "magnitude-rate-1e30",
    "magnitude-cbr-rate",
]


@pytest.mark.parametrize("name", [*NEW_FIELD_FIXTURES, "non-utf8"])
def test_run_trials_refuses_before_anything_starts(name: str, tmp_path: Path) -> None:
    """`./run_trials.sh --scenario BAD` exits 2 naming the field; no run folder, no trial."""
    if name == "non-utf8":
        bad = tmp_path / "latin1.toml"
        bad.write_bytes(b"duration_s = 60.0 # \xff\n")
        field = "not UTF-8"
    else:
        bad = REPO / "tests" / "fixtures" / "bad-scenarios" / f"{name}.toml"
        field = next(
            line.split(":", 1)[1].strip()
            for line in bad.read_text().splitlines()
            if line.startswith("# expect-field:")
        )
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "testbed", "--scenario", str(bad), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert field in done.stderr and bad.name in done.stderr
    assert not out.exists()
