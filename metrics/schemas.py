"""The log streams' JSON Schemas (docs/schemas/<stream>.v<N>.schema.json) and a fast line
checker built from them.

Each schema file is plain JSON Schema (draft 2020-12): a base (`t_ns`, `src`, `event`) and one
`$defs` entry per event, selected with if/then, so any standard validator (Python
`jsonschema`, JavaScript `ajv` in player/) reads it as is. Here the base and each event's
definition are compiled separately with `fastjsonschema` (generated Python code, about 100
times faster than `jsonschema` on a valid line, which matters at thousands of lines per
trial), so a line is checked against one small schema; only a line that fails is checked
again with `jsonschema`, whose errors name the field best.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "docs" / "schemas"

# Log file name -> stream (schema) name. transport-client.jsonl and transport-server.jsonl
# share one schema.
FILE_STREAMS = {
    "player.jsonl": "player",
    "emulator.jsonl": "emulator",
    "kernel-subflows.jsonl": "kernel-subflows",
    "testbed.jsonl": "testbed",
    "control.jsonl": "control",
    "nginx-access.jsonl": "nginx-access",
    "cross-traffic.jsonl": "cross-traffic",
    "cpu.jsonl": "cpu",
}
# Streams written once per side: transport-client.jsonl, sched-trace-server.jsonl, ...
SIDED_FILES = {
    re.compile(r"^transport-[a-z]+\.jsonl$"): "transport",
    re.compile(r"^sched-trace-[a-z]+\.jsonl$"): "sched-trace",
    re.compile(r"^packets-[a-z]+\.jsonl$"): "packets",
}


def stream_of(file_name: str) -> str | None:
    """The stream a trial file belongs to, or None when no schema covers it."""
    for pattern, stream in SIDED_FILES.items():
        if pattern.match(file_name):
            return stream
    return FILE_STREAMS.get(file_name)


def schema_path(stream: str) -> Path:
    """The newest version of a stream's schema file."""
    found = sorted(
        SCHEMA_DIR.glob(f"{stream}.v*.schema.json"),
        key=lambda p: int(p.name.removeprefix(f"{stream}.v").split(".")[0]),
    )
    if not found:
        raise FileNotFoundError(f"no schema for stream {stream!r} in {SCHEMA_DIR}")
    return found[-1]


def load_schema(stream: str) -> dict[str, Any]:
    schema = json.loads(schema_path(stream).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return schema


@dataclass(frozen=True)
class StreamChecker:
    """Checks one parsed line of a stream; `problem` returns None or 'field X: what'."""

    stream: str
    base: Draft202012Validator
    events: dict[str, Draft202012Validator]
    fast_base: Callable[[Any], Any]
    fast_events: dict[str, Callable[[Any], Any]]

    def problem(self, line: dict[str, Any]) -> str | None:
        event = line.get("event") if isinstance(line, dict) else None
        try:
            self.fast_base(line)
            fast = self.fast_events.get(event)  # type: ignore[arg-type]
            if fast is not None:
                fast(line)
            return None
        except fastjsonschema.JsonSchemaException:
            pass  # explained below, with jsonschema's field-level messages
        error = first_error(self.base, line)
        if error is None and event in self.events:
            error = first_error(self.events[event], line)  # type: ignore[index]
        if error is None:  # the two validators disagree: say so rather than pass the line
            return f"does not match the {self.stream} schema (event {event!r})"
        return describe(error, line)


@cache
def checker(stream: str) -> StreamChecker:
    schema = load_schema(stream)
    base = {k: v for k, v in schema.items() if k not in ("allOf", "$defs", "$schema", "$id")}
    defs = schema.get("$defs", {})
    return StreamChecker(
        stream,
        Draft202012Validator(base),
        {name: Draft202012Validator(d) for name, d in defs.items()},
        fastjsonschema.compile(base),
        {name: fastjsonschema.compile(d) for name, d in defs.items()},
    )


def first_error(validator: Draft202012Validator, line: dict[str, Any]) -> ValidationError | None:
    return jsonschema.exceptions.best_match(validator.iter_errors(line))


def describe(error: ValidationError, line: dict[str, Any]) -> str:
    """'field "x": ...' naming the field (the missing one for a required-property error)."""
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        missing = [f for f in error.validator_value if f not in error.instance]
        path.append(missing[0] if missing else "?")
        field = ".".join(path)
        return f'field "{field}" missing (event {line.get("event")!r})'
    if error.validator == "oneOf" and all("required" in alt for alt in error.validator_value):
        fields = " or ".join(f'"{alt["required"][0]}"' for alt in error.validator_value)
        return f"exactly one of the fields {fields} is required (event {line.get('event')!r})"
    field = ".".join(path) or "(line)"
    return f'field "{field}": {error.message} (event {line.get("event")!r})'


def check_file(path: Path, stream: str | None = None) -> list[str]:
    """Every problem of a log file, as 'file:line: ...' (empty: the file is valid)."""
    stream = stream or stream_of(path.name)
    if stream is None:
        raise ValueError(f"{path}: no schema covers this file name")
    check = checker(stream)
    problems = []
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        problems.append(f"{path}:{text.count(chr(10)) + 1}: truncated (no final newline)")
    for number, raw in enumerate(text.splitlines(), 1):
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: invalid JSON: {exc.msg} at column {exc.colno}")
            continue
        if not isinstance(line, dict):
            problems.append(f"{path}:{number}: expected a JSON object")
            continue
        found = check.problem(line)
        if found:
            problems.append(f"{path}:{number}: {found}")
    return problems
