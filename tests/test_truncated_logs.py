"""Logs of processes killed mid-line: the report still builds, and the trial is flagged with
the file and the line (metrics/read.py reads a run leniently; metrics/tables.py turns each
format error into `log_errors` and an invalid reason naming `file:line`).

A process killed mid-write leaves its last line without its end (every log); a log that
several processes append to (testbed.jsonl, cross-traffic.jsonl) or a process restarted
into the same file can hold such a cut line in the middle, followed by good lines."""

from __future__ import annotations

import csv
import random
import shutil
from pathlib import Path

import pytest

from metrics.read import JSONL_SOURCES, read_trial
from metrics.tables import summary_table

FIXTURES = Path(__file__).parent / "fixtures"
KNOWN = FIXTURES / "trial-known"  # a complete user-transport trial (README.md there)


def cut_last_line(path: Path, draw: random.Random) -> int:
    """Cut the file inside its last line, as a writer killed mid-line; returns that line's
    number."""
    lines = path.read_bytes().splitlines(keepends=True)
    last = lines[-1].rstrip(b"\n")
    lines[-1] = last[: draw.randrange(1, len(last))]
    path.write_bytes(b"".join(lines))
    return len(lines)


def cut_a_middle_line(path: Path, draw: random.Random) -> int:
    """A cut line followed by good ones; returns its number."""
    lines = path.read_bytes().splitlines(keepends=True)
    index = draw.randrange(1, len(lines) - 1)
    text = lines[index].rstrip(b"\n")
    lines[index] = text[: draw.randrange(1, len(text))] + b"\n"
    path.write_bytes(b"".join(lines))
    return index + 1


def logs(trial_dir: Path) -> list[Path]:
    names = set(JSONL_SOURCES.values())
    return sorted(p for p in trial_dir.glob("*.jsonl") if p.name in names or "transport-" in p.name)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_log_cut_mid_line_flags_the_trial_with_each_file_and_line(
    tmp_path: Path, seed: int
) -> None:
    draw = random.Random(seed)
    trial_dir = Path(shutil.copytree(KNOWN, tmp_path / "trial"))
    expected = {path.name: cut_last_line(path, draw) for path in logs(trial_dir)}
    assert len(expected) >= 5, expected  # player, emulator, nginx, testbed, both transports
    trial = read_trial(trial_dir, strict=False)
    for name, line in expected.items():
        assert any(f"{name}:{line}:" in e for e in trial.errors), (name, line, trial.errors)
    row = summary_table([trial]).iloc[0]
    assert row["log_errors"] == len(expected)
    assert not row["valid"] and "malformed log line" in row["invalid_reason"]
    assert row["status"] == "ok"  # it finished; its logs are damaged, its result is not


def test_the_report_builds_from_a_run_with_cut_logs(tmp_path: Path) -> None:
    from metrics.report import build

    draw = random.Random(7)
    run = tmp_path / "run"
    damaged = Path(shutil.copytree(KNOWN, run / "trials" / "damaged"))
    shutil.copytree(FIXTURES / "trial-control", run / "trials" / "intact")
    where = {}
    for path in logs(damaged):
        where[path.name] = cut_last_line(path, draw)
    middle = cut_a_middle_line(damaged / "testbed.jsonl", draw)
    report = build(run)
    assert report.is_file() and report.stat().st_size > 0
    rows = {r["trial_id"]: r for r in csv.DictReader((run / "summary.csv").open())}
    row = next(r for r in rows.values() if r["log_errors"] not in ("", "0"))
    assert int(row["log_errors"]) == len(where) + 1
    assert row["valid"] == "False"
    # The reason quotes the first error: one of the files, with its line.
    assert any(f"{name}:{line}" in row["invalid_reason"] for name, line in where.items()), row
    trial = read_trial(damaged, strict=False)
    assert any(f"testbed.jsonl:{middle}:" in e for e in trial.errors), trial.errors
    assert row["trial_id"] in report.read_text()
    assert len(rows) == 2
