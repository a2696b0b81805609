"""Asking linkemu, the one owner of the rules of a valid resolved scenario.

`linkemu --validate` checks every value, range and cross-reference of a resolved scenario
(docs/CONTRACTS.md section 4) and names the field at fault; this module runs it and turns
its refusal into a `ScenarioError` naming the field as the TOML file wrote it. The only
number read here, the smallest rate, comes from linkemu's generated schema. testbed/
scenario.py (parse, merge, resolve) calls it; it imports nothing of the testbed.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path

SCENARIO_DIR = "netem-scenarios"
RESOLVED_SCHEMA_FILE = "resolved.schema.json"
# The emulator binary that validates resolved scenarios (built by scripts/setup.sh).
LINKEMU_BINARY = Path("emulator/target/release/linkemu")
LINKEMU_VALIDATE_TIMEOUT_S = 60
# The queue of the probe scenario that checks a trace (any valid limit).
PROBE_QUEUE_PACKETS = 1000


def min_rate_bps(repo: Path) -> float:
    """The smallest rate linkemu accepts (the floor of a noise sample), as its generated
    schema publishes it (emulator/src/scenario.rs MIN_RATE_BPS)."""
    with open(repo / SCENARIO_DIR / RESOLVED_SCHEMA_FILE, encoding="utf-8") as f:
        kinds = json.load(f)["$defs"]["RateSpec"]["oneOf"]
    constant = next(k for k in kinds if k["properties"]["kind"].get("const") == "constant")
    return float(constant["properties"]["bps"]["x-minimum"])


class ScenarioError(Exception):
    """An invalid scenario file or name. The message names the file, field, value and rule."""

    exit_status = 2

    def __init__(self, file: str, problems: list[str]):
        self.file = file
        self.problems = problems
        lines = [f"{file}: invalid scenario"] + [f"  {p}" for p in problems]
        super().__init__("\n".join(lines))


def trace_problem(trace_file: Path, packet_bytes: int, repo: Path) -> str | None:
    """What linkemu finds wrong with a trace (as the rate of a one-path scenario), or None."""
    link = {
        "rate": {"kind": "trace", "file": str(trace_file.resolve()), "packet_bytes": packet_bytes},
        "delay_ms": 0.0,
        "jitter_ms": 0.0,
        "loss": {"kind": "none"},
        "queue": {"kind": "packets", "limit": PROBE_QUEUE_PACKETS},
        "schedule": [],
    }
    probe = {
        "schema": 1,
        "name": "trace-stats",
        "source": str(trace_file),
        "duration_s": 1.0,
        "paths": {"trace": {"up": link, "down": link}},
    }
    try:
        validate_with_emulator(probe, str(trace_file), repo, {"paths.trace.up.rate": "trace"})
    except ScenarioError as exc:
        return exc.problems[0]
    return None


def _as_written(field: str, written_at: dict[str, str]) -> str:
    best = max(
        (k for k in written_at if field == k or field.startswith(k + ".")), key=len, default=None
    )
    return field if best is None else written_at[best] + field[len(best) :]


_LINKEMU_ERROR = re.compile(r"field `(?P<field>[^`]*)`: (?P<message>.*)", re.S)


def validate_with_emulator(
    resolved: dict, shown: str, repo: Path, written_at: dict[str, str] | None = None
) -> None:
    """Ask `linkemu --validate` (the owner of the rules) about a resolved scenario.

    Raises ScenarioError naming the scenario file and the field on a refusal: the field as
    the file wrote it when `written_at` knows it, else the resolved field.
    """
    binary = repo / LINKEMU_BINARY
    if not binary.is_file():
        raise ScenarioError(
            shown,
            [
                f"cannot validate: {LINKEMU_BINARY} not found; build it with scripts/setup.sh "
                "(or `cd emulator && cargo build --release`)"
            ],  # fmt: skip
        )
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="scenario-") as tmp:
        json.dump(resolved, tmp)
        tmp.flush()
        try:
            done = subprocess.run(
                [str(binary), "--validate", "--scenario", tmp.name],
                capture_output=True,
                text=True,
                timeout=LINKEMU_VALIDATE_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ScenarioError(shown, [f"cannot validate with {LINKEMU_BINARY}: {exc}"]) from None
    if done.returncode == 0:
        return
    text = done.stderr.strip().replace(tmp.name, shown)
    found = _LINKEMU_ERROR.search(text)
    if found:
        field = _as_written(found["field"], written_at or {})
        message = found["message"].strip()
        value_and_rule = re.fullmatch(r"is (\S+), (must .*)", message, re.S)
        if value_and_rule:  # "is -5, must be ..." -> "FIELD = -5: must be ..."
            problem = f"{field} = {value_and_rule[1]}: {value_and_rule[2]}"
        else:
            problem = f"{field}: {message}"
    else:
        problem = text.removeprefix("linkemu: ").removeprefix(f"scenario {shown}: ")
    raise ScenarioError(shown, [f"{problem} (checked by linkemu --validate)"])
