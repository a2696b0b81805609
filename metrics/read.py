"""Reading trial folders (docs/CONTRACTS.md §2, §5) into long, tidy pandas DataFrames.

Every line of every log is checked against its stream's JSON Schema (docs/schemas/,
metrics/schemas.py): a line that does not follow it is a format error naming the file, the
line number and the field.

One DataFrame per log source, one row per log line, one column per field, plus
`trial_id` and `t_s` (seconds on the trial clock). Nothing here computes a metric;
that is metrics/tables.py. A malformed or truncated line is never skipped silently:
`read_jsonl` raises `LogFormatError` naming the file and line number, and
`read_trial(..., strict=False)` keeps the good lines and records every error in
`Trial.errors`, so the report can show them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from metrics import schemas

NS_PER_S = 1_000_000_000

# Files of a trial folder (CONTRACTS §2). Only trial.json is needed to call a folder a
# trial; every log is optional (a trial that failed early has few of them).
TRIAL_JSON = "trial.json"
RESULT_JSON = "result.json"
SCENARIO_JSON = "scenario.json"
KERNEL_MPTCP_JSON = "kernel-mptcp.json"
JSONL_SOURCES = {
    "player": "player.jsonl",
    "emulator": "emulator.jsonl",
    "kernel_subflows": "kernel-subflows.jsonl",
    "nginx": "nginx-access.jsonl",
    "control": "control.jsonl",
    "testbed": "testbed.jsonl",
    "cpu": "cpu.jsonl",  # testbed/cpu_accounting.py
    "cross": "cross-traffic.jsonl",
}
# transport-<side>.jsonl: the side (client, server) becomes a column.
TRANSPORT_GLOB = "transport-*.jsonl"
# nginx cannot read CLOCK_MONOTONIC (CONTRACTS §5.5): its lines carry t_unix_s instead.
FILES_WITHOUT_T_NS = {"nginx-access.jsonl"}

INTERRUPTED_REASON = "no result.json: interrupted"


class LogFormatError(ValueError):
    """A trial file that does not follow CONTRACTS.md; the message names file and line."""

    def __init__(self, path: Path, line_number: int | None, problem: str) -> None:
        self.path = path
        self.line_number = line_number
        self.problem = problem
        where = f"{path}:{line_number}" if line_number is not None else str(path)
        super().__init__(f"{where}: {problem}")


@dataclass
class Trial:
    """Everything one trial folder holds, parsed but not interpreted."""

    dir: Path
    trial_id: str
    meta: dict[str, Any]  # trial.json ({} if missing)
    result: dict[str, Any] | None  # result.json (None: the trial never finished)
    scenario: dict[str, Any] | None
    kernel_mptcp: dict[str, Any] | None
    player: pd.DataFrame
    emulator: pd.DataFrame
    transport: pd.DataFrame  # both sides, column `side`
    kernel_subflows: pd.DataFrame
    nginx: pd.DataFrame
    control: pd.DataFrame
    testbed: pd.DataFrame
    errors: list[str] = field(default_factory=list)  # format errors found (strict=False)
    cpu: pd.DataFrame = field(default_factory=pd.DataFrame)  # cpu.jsonl (older trials: empty)
    # cross-traffic.jsonl (testbed/crosstraffic.py); empty when the scenario has none.
    cross: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"event": []}))
    # player.jsonl's rows as dicts, made once: the summary, the drop attribution and the QoE
    # each read them (three to_dict calls were a fifth of a trial's reduction).
    _player_records: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self.meta.get("spec", {}))

    def player_records(self) -> list[dict[str, Any]]:
        """The player table's rows as dicts (one per player.jsonl line); [] without one."""
        if self._player_records is None:
            p = self.player
            has_lines = "event" in p.columns and not p.empty
            self._player_records = p.to_dict("records") if has_lines else []
        return self._player_records


def json_lines(path: Path, *, last_line_may_be_cut: bool = False) -> list[Any]:
    """The values of a JSON Lines file, blank lines skipped, without read_jsonl's contract
    checks: for logs the testbed reads while a trial runs or right after (the player's log,
    the transport's counters, the scheduler trace). A line that is not JSON is a ValueError
    naming file and line; with last_line_may_be_cut, a last line without its newline (a
    writer stopped mid-line) is dropped instead."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    values = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            values.append(json.loads(text))
        except ValueError as exc:
            if last_line_may_be_cut and number == len(lines):  # no newline after it
                break
            raise ValueError(f"{path}:{number}: malformed JSON line ({exc})") from None
    return values


def read_jsonl(path: Path, *, require_t_ns: bool = True) -> list[dict[str, Any]]:
    """Parse a JSON Lines file strictly: every line one object with a string `event`, valid
    against its stream's schema when the file name has one (metrics/schemas.py).

    Raises LogFormatError on the first bad line: empty line, invalid JSON, a last line
    without its newline (truncated write), not an object, missing `event`/`t_ns`, or a field
    the schema does not accept (the message names the field).
    """
    lines, errors = _parse_jsonl(path, require_t_ns=require_t_ns)
    if errors:
        raise errors[0]
    return lines


def _parse_jsonl(path: Path, *, require_t_ns: bool) -> tuple[list[dict], list[LogFormatError]]:
    data = path.read_bytes()
    stream = schemas.stream_of(path.name)
    check = schemas.checker(stream) if stream else None
    records: list[dict] = []
    errors: list[LogFormatError] = []
    if not data:
        return records, errors
    raw_lines = data.split(b"\n")
    ends_with_newline = raw_lines[-1] == b""
    if ends_with_newline:
        raw_lines.pop()
    for index, raw in enumerate(raw_lines):
        line_number = index + 1
        is_last = index == len(raw_lines) - 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            errors.append(LogFormatError(path, line_number, f"not UTF-8 ({exc.reason})"))
            continue
        if not text.strip():
            errors.append(
                LogFormatError(path, line_number, "empty line (expected one JSON object)")
            )
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            truncated = (
                " (truncated: last line, no newline)" if is_last and not ends_with_newline else ""
            )
            errors.append(
                LogFormatError(
                    path, line_number, f"invalid JSON{truncated}: {exc.msg} at column {exc.colno}"
                )
            )
            continue
        if is_last and not ends_with_newline:
            errors.append(
                LogFormatError(
                    path, line_number, "truncated: the last line has no terminating newline"
                )
            )
            continue
        if not isinstance(obj, dict):
            errors.append(
                LogFormatError(
                    path, line_number, f"expected a JSON object, got {type(obj).__name__}"
                )
            )
            continue
        if not isinstance(obj.get("event"), str):
            errors.append(
                LogFormatError(path, line_number, 'field "event" missing or not a string')
            )
            continue
        if require_t_ns and (
            not isinstance(obj.get("t_ns"), int) or isinstance(obj.get("t_ns"), bool)
        ):
            errors.append(
                LogFormatError(
                    path, line_number, f'field "t_ns" must be an integer, got {obj.get("t_ns")!r}'
                )
            )
            continue
        problem = check.problem(obj) if check else None
        if problem:
            errors.append(LogFormatError(path, line_number, problem))
            continue
        records.append(obj)
    return records, errors


def read_json(path: Path) -> dict[str, Any]:
    """Read a single JSON object file (trial.json, result.json, ...)."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LogFormatError(
            path, exc.lineno, f"invalid JSON: {exc.msg} at column {exc.colno}"
        ) from exc
    except UnicodeDecodeError as exc:
        raise LogFormatError(path, None, f"not UTF-8 ({exc.reason})") from exc
    if not isinstance(obj, dict):
        raise LogFormatError(path, 1, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def is_trial_dir(path: Path) -> bool:
    return path.is_dir() and (path / TRIAL_JSON).is_file()


def read_trial(trial_dir: Path, *, strict: bool = True) -> Trial:
    """Read one trial folder. strict=True raises on the first format error;
    strict=False keeps every well-formed line and lists the errors in Trial.errors."""
    trial_dir = Path(trial_dir)
    if not trial_dir.is_dir():
        raise FileNotFoundError(f"{trial_dir}: not a directory (expected a trial folder)")
    errors: list[LogFormatError] = []

    def optional_json(name: str) -> dict[str, Any] | None:
        path = trial_dir / name
        if not path.is_file():
            return None
        try:
            return read_json(path)
        except LogFormatError as exc:
            if strict:
                raise
            errors.append(exc)
            return None

    meta = optional_json(TRIAL_JSON) or {}
    result = optional_json(RESULT_JSON)
    t0_unix_ns = meta.get("clock", {}).get("t0_unix_ns")
    trial_id = str(meta.get("trial_id") or trial_dir.name)

    def frame(path: Path, **extra: Any) -> pd.DataFrame:
        if not path.is_file():
            return pd.DataFrame(
                {"trial_id": pd.Series(dtype="str"), "event": pd.Series(dtype="str")}
            )
        records, found = _parse_jsonl(path, require_t_ns=path.name not in FILES_WITHOUT_T_NS)
        if found and strict:
            raise found[0]
        errors.extend(found)
        df = pd.DataFrame.from_records(records) if records else pd.DataFrame({"event": []})
        # Added columns win over same-named log fields (testbed.jsonl's phase lines carry
        # trial_id too): the folder's trial.json is the authority.
        for column, value in {**extra, "trial_id": trial_id}.items():
            if column in df.columns:
                df = df.drop(columns=column)
            df.insert(0, column, value)
        if "t_ns" in df.columns:
            df["t_s"] = df["t_ns"] / NS_PER_S
        elif "t_unix_s" in df.columns and t0_unix_ns is not None:
            # CONTRACTS §5.5: wall clock converted with the trial's clock origins.
            df["t_s"] = df["t_unix_s"] - t0_unix_ns / NS_PER_S
        return df

    sources = {name: frame(trial_dir / file) for name, file in JSONL_SOURCES.items()}
    transport_frames = [
        frame(path, side=path.stem.removeprefix("transport-"))
        for path in sorted(trial_dir.glob(TRANSPORT_GLOB))
    ]
    transport = (
        pd.concat(transport_frames, ignore_index=True)
        if transport_frames
        else frame(trial_dir / "transport-none.jsonl")
    )
    return Trial(
        dir=trial_dir,
        trial_id=trial_id,
        meta=meta,
        result=result,
        scenario=optional_json(SCENARIO_JSON),
        kernel_mptcp=optional_json(KERNEL_MPTCP_JSON),
        transport=transport,
        errors=[str(e) for e in errors],
        **sources,
    )


def trial_dirs(run_dir: Path) -> list[Path]:
    """Every folder under <run_dir>/trials/, sorted by name.

    A sub-folder without trial.json is included (it reads as incomplete), because the
    orchestrator may have been interrupted before writing it.
    """
    trials_dir = Path(run_dir) / "trials"
    if not trials_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: not a run folder (expected a trials/ sub-folder)")
    return [d for d in sorted(trials_dir.iterdir()) if d.is_dir()]


def read_run(run_dir: Path, *, strict: bool = False) -> list[Trial]:
    """Read every trial folder of a run (all in memory: fine for tests and small runs;
    metrics/report.py reads one trial at a time)."""
    return [read_trial(d, strict=strict) for d in trial_dirs(run_dir)]
