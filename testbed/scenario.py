"""Scenario files: validate the human-facing TOML and resolve it into the emulator's JSON.

The TOML format is documented in netem-scenarios/README.md. This module keeps only what
is specific to the TOML layer: its structure (netem-scenarios/scenario.schema.json, JSON
Schema 2020-12), merging the both-direction fields with the up/down ones, defaults, the
order and overlap of the schedule events as written (their indices are the file's), the
`noise` windows (which only this layer knows) and their expansion, and trace resolution.
It holds no value range of its own: `linkemu --validate` is the one owner of the rules of
a valid resolved scenario (value ranges, trace files, magnitudes the emulator can
represent, 1-8 paths and their names, bottlenecks and cross traffic referring to known
paths). It is asked twice: first about the links as written (noise windows left out, so
every value the file wrote is checked at the file's own field), then about the resolved
form (docs/CONTRACTS.md section 4; absolute trace paths, both directions explicit,
defaults filled in, schedule as time-sorted events, every `noise` event expanded into
seeded `step` events). Nothing runs on a file it refuses.

CLI (exit status 2 on any invalid file; the message goes to stderr and nothing is written):
    python -m testbed.scenario validate FILE_OR_NAME...
    python -m testbed.scenario resolve FILE_OR_NAME --seed N
    python -m testbed.scenario list
    python -m testbed.scenario trace-stats TRACE...   # length and mean rate of Mahimahi traces
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from testbed.scenario_check import LINKEMU_BINARY as LINKEMU_BINARY
from testbed.scenario_check import (
    ScenarioError,
    min_rate_bps,
    trace_problem,
    validate_with_emulator,
)

SCENARIO_DIR = "netem-scenarios"
SCHEMA_FILE = "scenario.schema.json"
DIRECTIONS = ("up", "down")
DEFAULT_CROSS_CC = "cubic"
DEFAULT_CBR_PACKET_BYTES = 1200
LINK_FIELDS = ("rate", "delay_ms", "jitter_ms", "loss", "queue", "schedule")
# Mahimahi's traces give one delivery opportunity per line for an MTU-sized packet.
DEFAULT_TRACE_PACKET_BYTES = 1500
# The default drop-tail limit is one bandwidth-delay product in MTU-sized packets, but
# never below this: a few-packet queue would starve TCP on short, slow paths.
DEFAULT_QUEUE_MIN_PACKETS = 10
# Samples one noise window may expand to (one step each; the expansion is in memory).
MAX_NOISE_STEPS = 100_000
# An unlimited-rate link never builds a queue; the limit only bounds memory.
UNLIMITED_RATE_QUEUE_PACKETS = 1000
QUEUE_PACKET_BYTES = 1500
MAX_SEED = 2**64 - 1
MAX_EXACT_JSON_INTEGER = 2**53


def field_path(parts: list[Any] | tuple[Any, ...]) -> str:
    """['paths', 'wifi', 'down', 'schedule', 2, 'value'] -> 'paths.wifi.down.schedule[2].value'."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return json.dumps(value) if isinstance(value, str) else repr(value)


# ---------------------------------------------------------------- structure (schema) ----


_TYPE_WORDS = {
    "number": "a number",
    "integer": "an integer",
    "string": "a string",
    "object": "a table",
    "array": "an array",
    "boolean": "true or false",
}


def _schema_problem(err: jsonschema.ValidationError) -> tuple[str, str]:
    """(field path, human message) for one JSON Schema error."""
    where = list(err.absolute_path)
    kind = err.validator
    rule = err.validator_value
    inst = err.instance
    if kind is None or err.message.startswith("False schema"):
        return field_path(where), "is not valid here (not a field of this kind)"
    if kind == "required":
        missing = [f for f in rule if not (isinstance(inst, dict) and f in inst)]
        name = missing[0] if missing else "?"
        return field_path(where + [name]), "missing required field"
    if kind == "additionalProperties":
        allowed = sorted((err.schema.get("properties") or {}).keys())
        extras = [k for k in inst if k not in allowed] if isinstance(inst, dict) else []
        name = extras[0] if extras else "?"
        return field_path(where + [name]), f"unknown field; valid here: {', '.join(allowed)}"
    if kind == "type":
        wanted = rule if isinstance(rule, str) else " or ".join(rule)
        return field_path(where), f"= {_show(inst)}: must be {_TYPE_WORDS.get(wanted, wanted)}"
    if kind in ("oneOf", "minProperties") and isinstance(inst, dict):
        options = []
        for sub in err.schema.get("oneOf", []):
            options.extend(sub.get("required", []))
        given = [k for k in options if k in inst]
        shown = ", ".join(given) if given else "none"
        return field_path(where), f"give exactly one of {', '.join(options)} (given: {shown})"
    if kind == "dependentRequired":
        given = [k for k in rule if k in inst]
        needs = ", ".join(f for k in given for f in rule[k])
        return field_path(where + given[:1]), f"only valid together with {needs}"
    if kind == "enum":
        return field_path(where), f"= {_show(inst)}: valid values are {', '.join(map(str, rule))}"
    if kind == "const":
        return field_path(where), f"= {_show(inst)}: the only valid value is {_show(rule)}"
    bounds = {
        "minimum": ">=",
        "exclusiveMinimum": ">",
        "maximum": "<=",
        "exclusiveMaximum": "<",
    }
    if kind in bounds:
        return field_path(where), f"= {_show(inst)}: must be {bounds[kind]} {rule}"
    if kind == "minLength":
        return field_path(where), "must not be empty"
    if kind == "pattern":
        return field_path(where), f"= {_show(inst)}: must match {rule}"
    return field_path(where), err.message


def _non_finite_numbers(node: Any, where: list[Any]) -> list[str]:
    if isinstance(node, float) and not math.isfinite(node):
        return [f"{field_path(where)} = {node}: must be a finite number"]
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _non_finite_numbers(v, where + [k])]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _non_finite_numbers(v, where + [i])]
    return []


def _load_schema(repo: Path) -> dict:
    schema_path = repo / SCENARIO_DIR / SCHEMA_FILE
    with open(schema_path, encoding="utf-8") as f:
        return json.load(f)


def structure_problems(doc: dict, schema: dict) -> list[str]:
    problems = _non_finite_numbers(doc, [])
    if problems:
        return problems
    validator = jsonschema.Draft202012Validator(schema)
    seen: dict[str, str] = {}
    for err in validator.iter_errors(doc):
        where, message = _schema_problem(err)
        seen.setdefault(where, message)  # one message per field is enough for a person
    return [
        f"{where} {message}" if message.startswith("= ") else f"{where}: {message}"
        for where, message in sorted(seen.items())
    ]


# ---------------------------------------------------------------- semantic checks ----


@dataclass
class _Field:
    value: Any
    origin: list[Any]  # where the value was written, e.g. ['paths', 'wifi'] for both directions


def _merge_directions(
    path_doc: dict, path_name: str, table: str = "paths"
) -> dict[str, dict[str, _Field]]:
    """Both-direction fields of [paths.X], overridden field by field by [paths.X.up|down].

    The same for [bottlenecks.X] (table = "bottlenecks").
    """
    merged: dict[str, dict[str, _Field]] = {}
    for direction in DIRECTIONS:
        link: dict[str, _Field] = {}
        for key in LINK_FIELDS:
            if key in path_doc:
                link[key] = _Field(path_doc[key], [table, path_name])
        for key, value in path_doc.get(direction, {}).items():
            link[key] = _Field(value, [table, path_name, direction])
        merged[direction] = link
    return merged


def trace_stats(trace_file: Path) -> tuple[int, int] | None:
    """(delivery opportunities, last timestamp ms) of a Mahimahi trace, for its mean rate;
    None if it cannot be read as one. Whether a trace is valid is linkemu's rule (it names
    the line at fault); this only counts."""
    try:
        lines = trace_file.read_text(encoding="ascii", errors="replace").split()
        stamps = [int(text) for text in lines]
    except (OSError, ValueError):
        return None
    if not stamps or stamps[-1] <= 0:
        return None
    return len(stamps), stamps[-1]


def _check_schedule(
    events: list[dict], where: list[Any], link: dict[str, _Field], duration_s: float
) -> list[str]:
    problems: list[str] = []
    rate = link["rate"].value if "rate" in link else {}
    loss = link["loss"].value if "loss" in link else {"model": "none"}
    last_by_field: dict[str, tuple[int, dict]] = {}
    last_outage: tuple[int, dict] | None = None
    noise_windows: dict[str, list[tuple[int, dict]]] = {}

    for i, ev in enumerate(events):
        here = where + [i]
        op, t_s = ev["op"], float(ev["t_s"])
        field = ev.get("field")
        if op == "noise":
            # A noise window is expanded here (linkemu never sees it), so its window and field
            # are checked here; a step's or ramp's times, values and field are linkemu's.
            problems.extend(_noise_problems(ev, here, duration_s, rate, loss))
        if op in ("step", "ramp"):
            previous = last_by_field.get(field)
            if previous is not None:
                j, prev = previous
                prev_t = float(prev["t_s"])
                if t_s < prev_t:
                    problems.append(
                        f"{field_path(here + ['t_s'])} = {ev['t_s']}: events changing {field} "
                        f"must be listed in time order; schedule[{j}] starts later, at {prev_t}"
                    )
                elif prev["op"] == "ramp" and t_s < float(prev["until_s"]):
                    problems.append(
                        f"{field_path(here + ['t_s'])} = {ev['t_s']}: overlaps the ramp of "
                        f"{field} in schedule[{j}] ({prev_t} to {prev['until_s']} s); "
                        "changes of one field must not overlap"
                    )
                elif t_s == prev_t:
                    problems.append(
                        f"{field_path(here + ['t_s'])} = {ev['t_s']}: schedule[{j}] already "
                        f"changes {field} at {prev_t} s; changes of one field must not overlap"
                    )
            last_by_field[field] = (i, ev)
        if op == "outage":
            if last_outage is not None:
                j, prev = last_outage
                if t_s < float(prev["t_s"]):
                    problems.append(
                        f"{field_path(here + ['t_s'])} = {ev['t_s']}: outages must be listed in "
                        f"time order; schedule[{j}] starts later, at {prev['t_s']}"
                    )
                elif t_s < float(prev["until_s"]):
                    problems.append(
                        f"{field_path(here + ['t_s'])} = {ev['t_s']}: overlaps the outage in "
                        f"schedule[{j}] ({prev['t_s']} to {prev['until_s']} s)"
                    )
            last_outage = (i, ev)
        if op == "noise":
            windows = noise_windows.setdefault(field, [])
            for j, other in windows:
                if t_s < float(other["until_s"]) and float(other["t_s"]) < float(ev["until_s"]):
                    problems.append(
                        f"{field_path(here)}: noise on {field} overlaps the noise in "
                        f"schedule[{j}]; noise windows of one field must not overlap"
                    )
            windows.append((i, ev))

    # A ramp must lie wholly inside or wholly outside a noise window of its field, so the
    # expansion can replace it by samples without cutting it in two.
    for field, windows in noise_windows.items():
        for i, ev in enumerate(events):
            if ev["op"] != "ramp" or ev.get("field") != field:
                continue
            a, b = float(ev["t_s"]), float(ev["until_s"])
            for j, win in windows:
                lo, hi = float(win["t_s"]), float(win["until_s"])
                inside = lo <= a and b <= hi
                outside = b <= lo or a >= hi
                if not (inside or outside):
                    problems.append(
                        f"{field_path(where + [i])}: ramp of {field} ({a} to {b} s) straddles the "
                        f"noise window schedule[{j}] ({lo} to {hi} s); put it wholly inside "
                        "or outside"
                    )
    return problems


def _noise_problems(
    ev: dict, here: list[Any], duration_s: float, rate: dict, loss: dict
) -> list[str]:
    problems = []
    t_s, until_s, field = float(ev["t_s"]), float(ev["until_s"]), ev["field"]
    if t_s >= duration_s:
        problems.append(
            f"{field_path(here + ['t_s'])} = {ev['t_s']}: must be < duration_s ({duration_s})"
        )
    if until_s <= t_s:
        problems.append(
            f"{field_path(here + ['until_s'])} = {ev['until_s']}: must be > t_s ({t_s})"
        )
    if until_s > duration_s:
        problems.append(
            f"{field_path(here + ['until_s'])} = {ev['until_s']}: "
            f"must be <= duration_s ({duration_s})"
        )
    # The expansion makes one step per every_s: bound it before it runs (every_s = 1e-9 over
    # 180 s would be 1.8e11 steps and exhaust memory; found by testbed/fuzz_scenarios.py).
    every_s = float(ev["every_s"])
    steps = (min(until_s, duration_s) - t_s) / every_s if every_s > 0 else float("inf")
    if steps > MAX_NOISE_STEPS:
        problems.append(
            f"{field_path(here + ['every_s'])} = {ev['every_s']}: makes {steps:.3g} noise samples "
            f"between t_s and until_s; at most {MAX_NOISE_STEPS} (every_s >= "
            f"{max(until_s - t_s, 0.0) / MAX_NOISE_STEPS:.3g} s for this window)"
        )
    if field == "rate_bps" and rate and "bps" not in rate:
        problems.append(
            f'{field_path(here + ["field"])} = "rate_bps": only valid on a constant-rate '
            "link (rate = { bps = ... }); this link's rate is a trace or unlimited"
        )
    if field == "loss_p" and loss.get("model") != "bernoulli":
        problems.append(
            f'{field_path(here + ["field"])} = "loss_p": only valid with '
            f'loss model "bernoulli" (this link\'s model is "{loss.get("model")}"); '
            'use loss = { model = "bernoulli", p = 0.0 } for a lossless start'
        )
    return problems


def _initial_value(field: str, link: dict) -> float:
    if field == "rate_bps":
        return float(link["rate"]["bps"])
    if field == "loss_p":
        return float(link["loss"]["p"])
    return float(link[field])


def _value_at(t_s: float, initial: float, events: list[dict]) -> float:
    """The value a field has at t_s under its step/ramp events (sorted, non-overlapping)."""
    value = initial
    for ev in events:
        start = ev["t_s"]
        if start > t_s:
            break
        if ev["op"] == "step":
            value = ev["value"]
        else:  # ramp: linear from the value in force at its start to its target at until_s
            end = ev["until_s"]
            if t_s >= end:
                value = ev["value"]
            else:
                value = value + (ev["value"] - value) * (t_s - start) / (end - start)
    return value


def _typed(field: str, value: float) -> float | int:
    """A value as written, in the resolved form's type (linkemu checks its range)."""
    return int(round(value)) if field == "rate_bps" else float(value)


def _noise_sample(field: str, value: float, rate_floor_bps: float) -> float | int:
    """A noise sample, kept within what linkemu accepts: a rate at least `rate_floor_bps`
    (linkemu's minimum), a probability in [0, 1]."""
    if field == "rate_bps":
        return max(int(rate_floor_bps), int(round(value)))
    if field == "loss_p":
        return min(1.0, max(0.0, float(value)))
    return float(value)


def _expand_schedule(
    events: list[dict],
    link: dict,
    duration_s: float,
    seed: int,
    label: str,
    rate_floor_bps: float,
) -> list[dict]:
    """Resolved, time-sorted events; each noise window becomes seeded steps.

    A noise event multiplies, every `every_s` seconds from t_s until until_s, the value the
    field would have under its steps and ramps by a factor drawn uniformly from
    [1 - spread, 1 + spread]. The steps/ramps inside the window are replaced by those
    samples, and a step back to the unperturbed value follows at until_s.
    """
    plain: list[tuple[float, int, dict]] = []
    noise: list[tuple[int, dict]] = []
    for index, ev in enumerate(events):
        op = ev["op"]
        t_s = float(ev["t_s"])
        if op == "noise":
            noise.append((index, ev))
            continue
        out: dict[str, Any] = {"t_s": t_s, "op": op}
        if op in ("step", "ramp"):
            out["field"] = ev["field"]
            out["value"] = _typed(ev["field"], ev["value"])
        if op in ("ramp", "outage"):
            out["until_s"] = float(ev["until_s"])
        plain.append((t_s, index, out))

    for window_no, (index, ev) in enumerate(noise):
        field = ev["field"]
        lo, hi = float(ev["t_s"]), float(ev["until_s"])
        every_s, spread = float(ev["every_s"]), float(ev["spread"])
        base_events = sorted(
            (e for _, _, e in plain if e.get("field") == field), key=lambda e: e["t_s"]
        )
        initial = _initial_value(field, link)
        # Seeded from a string: random.Random hashes it with SHA-512, stable across runs.
        rng = random.Random(f"{seed}/{label}/{field}/{window_no}")
        samples: list[tuple[float, int, dict]] = []
        k = 0
        while True:
            t_s = lo + k * every_s
            if t_s >= hi - 1e-9 or t_s >= duration_s:
                break
            base = _value_at(t_s, initial, base_events)
            factor = rng.uniform(1.0 - spread, 1.0 + spread)
            step = {"t_s": round(t_s, 9), "op": "step", "field": field}
            step["value"] = _noise_sample(field, base * factor, rate_floor_bps)
            samples.append((step["t_s"], index, step))
            k += 1
        resumes_at_hi = any(e.get("field") == field and t == hi for t, _, e in plain)
        if hi < duration_s and not resumes_at_hi:
            restore = {"t_s": hi, "op": "step", "field": field}
            restore["value"] = _noise_sample(
                field, _value_at(hi, initial, base_events), rate_floor_bps
            )
            samples.append((hi, index, restore))
        plain = [
            item for item in plain if not (item[2].get("field") == field and lo <= item[0] < hi)
        ] + samples

    plain.sort(key=lambda item: (item[0], item[1]))
    return [event for _, _, event in plain]


# ---------------------------------------------------------------- resolution ----


def _resolve_rate(rate: dict, trace_root: Path) -> tuple[dict, float | None]:
    """(resolved rate, mean rate in bit/s or None when unlimited or an unreadable trace,
    which linkemu then refuses at the trace's field)."""
    if "bps" in rate:
        bps = int(round(rate["bps"]))
        return {"kind": "constant", "bps": bps}, float(bps)
    if "trace" in rate:
        packet_bytes = int(rate.get("packet_bytes", DEFAULT_TRACE_PACKET_BYTES))
        trace_file = (trace_root / rate["trace"]).resolve()
        stats = trace_stats(trace_file)
        mean_bps = None if stats is None else stats[0] * packet_bytes * 8 / (stats[1] / 1000.0)
        return {"kind": "trace", "file": str(trace_file), "packet_bytes": packet_bytes}, mean_bps
    return {"kind": "unlimited"}, None


def _resolve_loss(loss: dict) -> dict:
    model = loss["model"]
    if model == "bernoulli":
        return {"kind": "bernoulli", "p": float(loss["p"])}
    if model == "gilbert_elliott":
        return {
            "kind": "gilbert_elliott",
            "p_good_to_bad": float(loss["p_good_to_bad"]),
            "p_bad_to_good": float(loss["p_bad_to_good"]),
            "loss_in_good": float(loss.get("loss_in_good", 0.0)),
            "loss_in_bad": float(loss.get("loss_in_bad", 1.0)),
        }
    return {"kind": "none"}


def default_queue(mean_rate_bps: float | None, base_rtt_ms: float) -> dict:
    """One bandwidth-delay product in 1500-byte packets (at least DEFAULT_QUEUE_MIN_PACKETS)."""
    if mean_rate_bps is None:
        return {"kind": "packets", "limit": UNLIMITED_RATE_QUEUE_PACKETS}
    bdp = mean_rate_bps * base_rtt_ms / 1000.0 / 8 / QUEUE_PACKET_BYTES
    # Kept an integer JSON can carry exactly, so that an absurd rate or delay is reported
    # by linkemu --validate at its own field, not as an unparsable derived queue; the same
    # for a product that overflows (a delay of 1e308 ms) or is undefined (inf x 0).
    bdp_packets = math.ceil(bdp) if math.isfinite(bdp) else MAX_EXACT_JSON_INTEGER
    bdp_packets = min(bdp_packets, MAX_EXACT_JSON_INTEGER)
    return {"kind": "packets", "limit": max(DEFAULT_QUEUE_MIN_PACKETS, bdp_packets)}


def _resolve_queue(queue: dict) -> dict:
    if "packets" in queue:
        return {"kind": "packets", "limit": int(queue["packets"])}
    if "bytes" in queue:
        return {"kind": "bytes", "limit": int(queue["bytes"])}
    return {"kind": "ms", "limit": float(queue["ms"])}


def _display_path(file: Path, repo: Path) -> str:
    try:
        return str(file.resolve().relative_to(repo.resolve()))
    except ValueError:
        return str(file.resolve())


def resolve_file(file: Path, repo: Path, seed: int) -> dict:
    """Validate one scenario file and return its resolved form (CONTRACTS.md section 4)."""
    shown = _display_path(file, repo)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ScenarioError(shown, [f"seed = {seed!r}: must be an integer in [0, 2^64 - 1]"])
    doc = _read_toml(file, shown)
    problems = structure_problems(doc, _load_schema(repo))
    if problems:
        raise ScenarioError(shown, problems)

    duration_s = float(doc["duration_s"])
    scenario_dir = file.resolve().parent
    trace_root = scenario_dir / doc["traces"] if "traces" in doc else scenario_dir
    path_names = list(doc["paths"])
    bottleneck_docs = doc.get("bottlenecks", {})
    groups = _link_groups(doc)
    problems = _merged_link_problems(groups, duration_s)
    if problems:
        raise ScenarioError(shown, _unique(problems))
    resolved, mean_rates = _resolve_links(groups, trace_root)

    def resolved_form(noise_floor_bps: float | None) -> dict[str, Any]:
        _add_queues_and_schedules(
            groups, resolved, mean_rates, bottleneck_docs, duration_s, seed, noise_floor_bps
        )
        result: dict[str, Any] = {
            "schema": 1,
            "name": doc.get("name", file.stem),
            "source": shown,
            "duration_s": duration_s,
            "paths": {p: {d: resolved[("paths", p)][d] for d in DIRECTIONS} for p in path_names},
        }
        if bottleneck_docs:
            result["bottlenecks"] = {
                name: {"paths": list(b_doc.get("paths", [])), **resolved[("bottlenecks", name)]}
                for name, b_doc in bottleneck_docs.items()
            }
        if "cross_traffic" in doc:
            result["cross_traffic"] = [
                _resolve_cross_traffic(item, duration_s) for item in doc["cross_traffic"]
            ]
        return result

    # linkemu judges every value as the file wrote it (noise left out, errors at the file's
    # fields), then the resolved form with the noise expanded.
    validate_with_emulator(resolved_form(None), shown, repo, _written_at(groups))
    result = resolved_form(min_rate_bps(repo))
    validate_with_emulator(result, shown, repo, _written_at(groups, with_schedule=False))
    return result


_LinkGroups = dict[tuple[str, str], dict[str, dict[str, _Field]]]


def _read_toml(file: Path, shown: str) -> dict:
    """The file as a TOML document; unreadable, non-UTF-8 or invalid TOML is a ScenarioError."""
    try:
        with open(file, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise ScenarioError(shown, ["file not found"]) from None
    except OSError as exc:
        raise ScenarioError(shown, [f"cannot read: {exc.strerror}"]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ScenarioError(
            shown,
            [
                f"not valid TOML: byte 0x{raw[exc.start]:02x} at offset {exc.start} (line "
                f"{line}) is not UTF-8; TOML files must be UTF-8 text"
            ],
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(shown, [f"not valid TOML: {exc}"]) from None


def _link_groups(doc: dict) -> _LinkGroups:
    """Links to resolve: (table, name) -> direction -> merged fields. A bottleneck has only
    the directions it lists (default both)."""
    groups: _LinkGroups = {}
    for name in doc["paths"]:
        groups[("paths", name)] = _merge_directions(doc["paths"][name], name)
    for name, b_doc in doc.get("bottlenecks", {}).items():
        merged = _merge_directions(b_doc, name, "bottlenecks")
        wanted = b_doc.get("directions", list(DIRECTIONS))
        groups[("bottlenecks", name)] = {d: merged[d] for d in DIRECTIONS if d in wanted}
    return groups


def _merged_link_problems(groups: _LinkGroups, duration_s: float) -> list[str]:
    """Fields required after merging, and the checks of the schedules as written."""
    problems: list[str] = []
    for (table, name), by_direction in groups.items():
        for direction, link in by_direction.items():
            base = [table, name, direction]
            for key in ("rate", "delay_ms"):
                if key not in link:
                    problems.append(
                        f"{field_path(base + [key])}: missing required field; give it in "
                        f"[{table}.{name}] (both directions) or [{table}.{name}.{direction}]"
                    )
            if "schedule" in link:
                origin = link["schedule"].origin + ["schedule"]
                problems.extend(_check_schedule(link["schedule"].value, origin, link, duration_s))
    return problems


def _resolve_links(
    groups: _LinkGroups, trace_root: Path
) -> tuple[dict[tuple[str, str], dict[str, dict]], dict[tuple[str, str, str], float | None]]:
    """Each link's rate (trace resolved), delay, jitter and loss; and the mean rates (for
    the default queues)."""
    resolved: dict[tuple[str, str], dict[str, dict]] = {}
    mean_rates: dict[tuple[str, str, str], float | None] = {}
    for (table, name), by_direction in groups.items():
        resolved[(table, name)] = {}
        for direction, link in by_direction.items():
            rate, mean_bps = _resolve_rate(link["rate"].value, trace_root)
            mean_rates[(table, name, direction)] = mean_bps
            resolved[(table, name)][direction] = {
                "rate": rate,
                "delay_ms": float(link["delay_ms"].value),
                "jitter_ms": float(link["jitter_ms"].value) if "jitter_ms" in link else 0.0,
                "loss": _resolve_loss(link["loss"].value if "loss" in link else {"model": "none"}),
            }
    return resolved, mean_rates


def _add_queues_and_schedules(
    groups: _LinkGroups,
    resolved: dict[tuple[str, str], dict[str, dict]],
    mean_rates: dict[tuple[str, str, str], float | None],
    bottleneck_docs: dict,
    duration_s: float,
    seed: int,
    noise_floor_bps: float | None,
) -> None:
    """Each resolved link's queue (given, or one BDP by default) and schedule: with its
    noise windows expanded (samples at least `noise_floor_bps`), or, when that is None, as
    written without them."""

    def path_rtt_ms(name: str) -> float:
        links = resolved.get(("paths", name), {})
        return sum(links[d]["delay_ms"] for d in DIRECTIONS if d in links)

    for (table, name), by_direction in groups.items():
        for direction, link in by_direction.items():
            out = resolved[(table, name)][direction]
            reverse_dir = "down" if direction == "up" else "up"
            reverse = resolved[(table, name)].get(reverse_dir, out)
            if "queue" in link:
                out["queue"] = _resolve_queue(link["queue"].value)
            else:
                base_rtt_ms = out["delay_ms"] + reverse["delay_ms"]
                if table == "bottlenecks":
                    # A shared link's packets also crossed their own path: the longest
                    # member path's RTT is part of the BDP the queue must hold.
                    members = bottleneck_docs[name].get("paths", [])
                    base_rtt_ms += max((path_rtt_ms(m) for m in members), default=0.0)
                out["queue"] = default_queue(mean_rates[(table, name, direction)], base_rtt_ms)
            initial = {
                "rate": link["rate"].value,
                "loss": link["loss"].value if "loss" in link else {"model": "none"},
                "delay_ms": out["delay_ms"],
                "jitter_ms": out["jitter_ms"],
            }
            events = link["schedule"].value if "schedule" in link else []
            if noise_floor_bps is None:
                events = [ev for ev in events if ev["op"] != "noise"]
            # Paths keep their old noise label ("wifi/down"), so their noise is unchanged.
            label = f"{name}/{direction}" if table == "paths" else f"{table}/{name}/{direction}"
            out["schedule"] = _expand_schedule(
                events, initial, duration_s, seed, label, noise_floor_bps or 0.0
            )


def _written_at(
    groups: dict[tuple[str, str], dict[str, dict[str, _Field]]], with_schedule: bool = True
) -> dict[str, str]:
    """Resolved field -> where the file wrote it, so that linkemu's errors name the
    file's field: `paths.lte.up.rate` -> `paths.lte.rate` when [paths.lte] gave the rate
    for both directions; `...queue.limit` -> `...queue.packets` (or bytes, ms)."""
    out: dict[str, str] = {}
    for (table, name), by_direction in groups.items():
        for direction, link in by_direction.items():
            for key, written in link.items():
                resolved = f"{table}.{name}.{direction}.{key}"
                if key == "schedule" and not with_schedule:
                    continue  # noise expanded: the resolved indices are not the file's
                if key == "schedule":
                    # Resolved event k is the file's event i (the links as written: noise
                    # left out, the others sorted by time).
                    for k, i in enumerate(_written_order(written.value)):
                        out[f"{resolved}[{k}]"] = field_path(written.origin + [key, i])
                    continue
                out[resolved] = field_path(written.origin + [key])
                if key == "queue" and isinstance(written.value, dict) and written.value:
                    kind = next(iter(written.value))
                    out[f"{resolved}.limit"] = field_path(written.origin + [key, kind])
                if key == "rate" and isinstance(written.value, dict):
                    out[f"{resolved}.file"] = field_path(written.origin + [key, "trace"])
    return out


def _written_order(events: list[dict]) -> list[int]:
    """The file's indices of its step, ramp and outage events in resolved (time) order."""
    plain = [(float(ev["t_s"]), i) for i, ev in enumerate(events) if ev["op"] != "noise"]
    return [i for _, i in sorted(plain)]


def _resolve_cross_traffic(item: dict, duration_s: float) -> dict:
    """Defaults of a [[cross_traffic]] entry: direction down, 1 flow, the whole scenario."""
    kind = item["kind"]
    out: dict[str, Any] = {
        "kind": kind,
        "path": item["path"],
        "direction": item.get("direction", "down"),
        "count": item.get("count", 1),
        "start_s": float(item.get("start_s", 0.0)),
        "stop_s": float(item.get("stop_s", duration_s)),
    }
    if kind in ("tcp_bulk", "tcp_onoff"):
        out["cc"] = item.get("cc", DEFAULT_CROSS_CC)
    if kind == "tcp_onoff":
        out["on_s"] = float(item["on_s"])
        out["off_s"] = float(item["off_s"])
    if kind == "udp_cbr":
        out["rate_bps"] = float(item["rate_bps"])
        out["packet_bytes"] = item.get("packet_bytes", DEFAULT_CBR_PACKET_BYTES)
    return out


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# ---------------------------------------------------------------- names and files ----


def list_scenarios(repo: Path) -> list[str]:
    """Names of the shipped scenarios: paths under netem-scenarios/ without '.toml'."""
    root = repo / SCENARIO_DIR
    return sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.toml"))


def scenario_file(name_or_path: str, repo: Path) -> Path:
    """A scenario name ('A1', 'seed001-grid/...') or a path to a .toml file."""
    candidate = Path(name_or_path)
    if name_or_path.endswith(".toml"):
        if candidate.is_absolute() or candidate.exists():
            return candidate
        return repo / candidate  # a path relative to the repository, e.g. from trial.json
    named = repo / SCENARIO_DIR / f"{name_or_path}.toml"
    if named.is_file():
        return named
    if candidate.is_file():
        return candidate  # a scenario file without the .toml suffix
    names = list_scenarios(repo)
    top = [n for n in names if "/" not in n]
    raise ScenarioError(
        name_or_path,
        [
            f"no scenario named {json.dumps(name_or_path)} (looked for {named}); "
            f"valid names: {', '.join(top)} (and {len(names) - len(top)} in subfolders, "
            "see `python -m testbed.scenario list`), or a path to a .toml file"
        ],
    )


def load_resolved(name_or_path: str, repo: Path, seed: int) -> dict:
    """The resolved scenario (docs/CONTRACTS.md section 4) for a name or a .toml path.

    Raises ScenarioError (exit_status 2) naming the file, field, value and rule.
    """
    return resolve_file(scenario_file(name_or_path, repo), repo, seed)


# ---------------------------------------------------------------- CLI ----


def _repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m testbed.scenario",
        description="Validate, resolve and list network scenarios (netem-scenarios/README.md).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_validate = sub.add_parser("validate", help="check files; exit 2 if any is invalid")
    p_validate.add_argument("files", nargs="+", metavar="FILE_OR_NAME")
    p_resolve = sub.add_parser("resolve", help="print the resolved JSON (CONTRACTS.md 4)")
    p_resolve.add_argument("file", metavar="FILE_OR_NAME")
    p_resolve.add_argument(
        "--seed", type=int, required=True, help="seed for noise expansion (integer >= 0)"
    )
    sub.add_parser("list", help="print the names of the shipped scenarios")
    p_trace = sub.add_parser(
        "trace-stats", help="check Mahimahi traces; print length and mean rate"
    )
    p_trace.add_argument("traces", nargs="+", type=Path, metavar="TRACE")
    p_trace.add_argument("--packet-bytes", type=int, default=DEFAULT_TRACE_PACKET_BYTES)
    args = parser.parse_args(argv)
    repo = _repo_root()

    if args.command == "list":
        print("\n".join(list_scenarios(repo)))
        return 0
    if args.command == "trace-stats":
        status = 0
        for trace in args.traces:
            problem = trace_problem(trace, args.packet_bytes, repo)
            stats = trace_stats(trace)
            if problem is not None or stats is None:
                print(f"{trace}: {problem}", file=sys.stderr)
                status = ScenarioError.exit_status
                continue
            count, length_ms = stats
            mean_bps = count * args.packet_bytes * 8 / (length_ms / 1000.0)
            print(
                f"{trace}: {count} packets in {length_ms / 1000:.1f} s, {mean_bps / 1e6:.2f} Mbit/s"
            )
        return status
    if args.command == "resolve":
        try:
            resolved = load_resolved(args.file, repo, args.seed)
        except ScenarioError as exc:
            print(exc, file=sys.stderr)
            return exc.exit_status
        print(json.dumps(resolved, indent=2))
        return 0
    status = 0
    for name in args.files:
        try:
            resolved = load_resolved(name, repo, seed=0)
        except ScenarioError as exc:
            print(exc, file=sys.stderr)
            status = ScenarioError.exit_status
            continue
        print(f"ok {resolved['source']}")
    return status


if __name__ == "__main__":
    sys.exit(main())
