"""docs/schemas/: every log stream has a valid, versioned schema; real logs pass it; metrics
rejects a line that breaks it, naming file, line and field."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from metrics import schemas
from metrics.read import LogFormatError, read_trial

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
STREAMS = sorted({*schemas.FILE_STREAMS.values(), *schemas.SIDED_FILES.values()})


def test_every_schema_file_is_a_known_stream() -> None:
    on_disk = {p.name.split(".v")[0] for p in schemas.SCHEMA_DIR.glob("*.schema.json")}
    assert on_disk == set(STREAMS)


def fixture_logs() -> list[Path]:
    # run-small's incomplete trial has a player.jsonl cut mid-line on purpose.
    cut = FIXTURES / "run-small/trials/A1__user__bbr__rr__dashjs__v10__r1__s2/player.jsonl"
    return [p for p in sorted(FIXTURES.glob("**/*.jsonl")) if p != cut]


@pytest.mark.parametrize("stream", STREAMS)
def test_every_stream_has_a_valid_versioned_schema(stream: str) -> None:
    path = schemas.schema_path(stream)
    schema = json.loads(path.read_text())
    Draft202012Validator.check_schema(schema)
    version = re.fullmatch(rf"{stream}\.v(\d+)\.schema\.json", path.name)
    assert version, path.name
    assert schema["$id"] == f"urn:mptcp-video-testbed:log:{stream}:v{version.group(1)}"
    assert set(schema["properties"]["event"]["enum"]) == set(schema["$defs"])


@pytest.mark.parametrize("log", fixture_logs(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_logs_follow_their_schema(log: Path) -> None:
    assert schemas.check_file(log) == []


@pytest.mark.parametrize("log", fixture_logs(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_dropping_any_required_field_is_caught(log: Path) -> None:
    """Both validators (fastjsonschema first, jsonschema for the message) see every
    required field of every event in the fixtures."""
    check = schemas.checker(schemas.stream_of(log.name))
    schema = json.loads(schemas.schema_path(check.stream).read_text())
    seen = set()
    for line in map(json.loads, log.read_text().splitlines()):
        if line["event"] in seen:
            continue
        seen.add(line["event"])
        required = schema["required"] + schema["$defs"][line["event"]]["required"]
        for field in required:
            broken = {k: v for k, v in line.items() if k != field}
            problem = check.problem(broken)
            assert problem and f'"{field}"' in problem, (line["event"], field, problem)


def test_metrics_names_file_line_and_field_of_a_bad_line(tmp_path: Path) -> None:
    trial = Path(shutil.copytree(FIXTURES / "trial-known", tmp_path / "trial"))
    player = trial / "player.jsonl"
    lines = player.read_text().splitlines()
    stall = next(i for i, line in enumerate(lines) if '"event": "stall"' in line)
    bad = json.loads(lines[stall])
    bad["duration_ms"] = "long"
    lines[stall] = json.dumps(bad)
    player.write_text("\n".join(lines) + "\n")
    with pytest.raises(LogFormatError) as caught:
        read_trial(trial)
    message = str(caught.value)
    assert f"player.jsonl:{stall + 1}:" in message
    assert 'field "duration_ms"' in message and "'long' is not of type 'number'" in message
    # strict=False keeps the good lines and records the error for the report
    lenient = read_trial(trial, strict=False)
    assert len(lenient.errors) == 1 and len(lenient.player) == len(lines) - 1


def test_unknown_event_and_missing_field_are_named(tmp_path: Path) -> None:
    log = tmp_path / "emulator.jsonl"
    log.write_text(
        '{"t_ns": 1, "src": "emulator", "event": "start", "scenario": "x", "seed": 1,'
        ' "backend": "nfqueue"}\n'
        '{"t_ns": 2, "src": "emulator", "event": "link_stat"}\n'
        '{"t_ns": 3, "src": "emulator", "event": "link_totals", "path": "wifi", "dir": "up"}\n'
    )
    problems = schemas.check_file(log)
    assert problems[0].startswith(f"{log}:2: field \"event\": 'link_stat' is not one of")
    assert problems[1].startswith(f'{log}:3: field "pkts_in_total" missing')
    assert len(problems) == 2
