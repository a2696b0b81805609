"""Random-input harness for the scenario path: TOML text -> testbed.scenario.resolve_file
(schema, resolution) -> `linkemu --validate` (the emulator's own rules). Runs under stable
Python, no cargo-fuzz needed, because two of the three stages are Python.

Half the inputs are TOML, mutations of the shipped scenarios (netem-scenarios/**/*.toml):
numbers replaced by edge values (0, negatives, NaN, infinities, 2^64, tiny and huge floats),
lines deleted or duplicated, extra paths with odd names (up to and past the 8-path limit),
random bytes. Every input must end in one of two ways: resolved and accepted, or refused with a
ScenarioError (exit 2 at the CLI). A crash is anything else: another exception (a
traceback would reach the user) or linkemu panicking or dying on a signal. The other half go
to `linkemu --validate` directly: resolved scenarios (JSON) of the shipped files with values
replaced by edge values or other types and keys dropped, which the Python side would never
write; linkemu must answer 0 or 2, never panic (101) or die on a signal. Crashing inputs are
written to --crashes.

    nice -n 19 .venv/bin/python -m testbed.fuzz_scenarios --seconds 600 --crashes /tmp/crashes
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from testbed.scenario import LINKEMU_BINARY, ScenarioError, resolve_file

REPO = Path(__file__).resolve().parent.parent

EDGE_NUMBERS = ["0", "-1", "1", "0.0", "-0.0", "nan", "inf", "-inf", "1e308", "1e-308",
                "18446744073709551616", "9223372036854775807", "-9223372036854775808",
                "4294967296", "0.5", "1e-9", "100000000000", "3"]  # fmt: skip
ODD_NAMES = ["a", "x" * 16, "x" * 40, "Wifi", "w-1", "_", "lo", "eth0", "c-wifi", "1"]
NUMBER = re.compile(r"(?<![\w.])-?\d[\d_]*(\.\d+)?([eE][-+]?\d+)?(?![\w.])")
# What says linkemu crashed rather than refused (a Rust panic, a signal).
CRASH_WORDS = ("panicked", "RUST_BACKTRACE", "signal", "status 101", "SIGSEGV", "SIGABRT")


def mutate(text: str, draw: random.Random) -> str:
    for _ in range(draw.randint(1, 4)):
        kind = draw.randrange(6)
        lines = text.splitlines()
        if kind == 0 and (found := list(NUMBER.finditer(text))):
            hit = draw.choice(found)
            text = text[: hit.start()] + draw.choice(EDGE_NUMBERS) + text[hit.end() :]
        elif kind == 1 and lines:
            del lines[draw.randrange(len(lines))]
            text = "\n".join(lines) + "\n"
        elif kind == 2 and lines:
            i = draw.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines) + "\n"
        elif kind == 3:
            for _ in range(draw.randint(1, 9)):
                name = draw.choice(ODD_NAMES) + str(draw.randrange(100))
                rate = draw.choice(EDGE_NUMBERS)
                delay = draw.choice(EDGE_NUMBERS)
                text += f"\n[paths.{name}]\nrate = {{ bps = {rate} }}\ndelay_ms = {delay}\n"
        elif kind == 4 and text:
            data = bytearray(text.encode())
            for _ in range(draw.randint(1, 8)):
                data[draw.randrange(len(data))] = draw.randrange(32, 127)
            text = data.decode(errors="replace")
        elif kind == 5 and lines:
            i = draw.randrange(len(lines))
            lines[i] = lines[i].replace("=", "= [", 1) if draw.random() < 0.5 else lines[i][::-1]
            text = "\n".join(lines) + "\n"
    return text


def check(text: str, folder: Path, seed: int) -> str | None:
    """None when the input is accepted or refused cleanly, else what went wrong."""
    path = folder / "fuzz.toml"
    path.write_text(text, encoding="utf-8", errors="replace")
    try:
        resolve_file(path, REPO, seed)
    except ScenarioError as exc:
        message = str(exc)
        if any(word in message for word in CRASH_WORDS):
            return f"linkemu crashed: {message}"
        return None
    except Exception:  # noqa: BLE001 (anything else is the finding)
        return traceback.format_exc()
    return None


EDGE_VALUES: list[object] = [0, -1, 1, 0.5, 1e308, -1e308, 2**64, 2**63, -(2**63), 1e-300,
                              "", "x", None, True, [], {}, [1, 2], {"kind": "x"}]  # fmt: skip


def mutate_json(value: object, draw: random.Random) -> object:
    """A copy of a resolved scenario with a few values replaced or keys dropped."""
    doc = json.loads(json.dumps(value))
    for _ in range(draw.randint(1, 4)):
        parent, key = None, None
        node = doc
        while isinstance(node, dict | list) and node and draw.random() < 0.8:
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            parent, key = node, draw.choice(keys)
            node = node[key]
        if parent is None:
            continue
        if isinstance(parent, dict) and draw.random() < 0.2:
            del parent[key]
        else:
            parent[key] = json.loads(json.dumps(draw.choice(EDGE_VALUES)))  # a fresh copy
    return doc


def check_linkemu(doc: object, folder: Path) -> str | None:
    path = folder / "resolved.json"
    path.write_text(json.dumps(doc))
    done = subprocess.run([str(REPO / LINKEMU_BINARY), "--validate", "--scenario", str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    if done.returncode in (0, 2):
        return None
    return f"linkemu --validate exited {done.returncode}: {done.stderr[-2000:]}"


def resolved_corpus(folder: Path) -> list[dict]:
    docs = []
    for path in sorted((REPO / "netem-scenarios").glob("*.toml")):
        try:
            docs.append(resolve_file(path, REPO, 1))
        except ScenarioError:
            continue
    return docs


def run(seconds: float, crashes: Path | None, seed: int) -> tuple[int, list[str]]:
    draw = random.Random(seed)
    corpus = [p.read_text() for p in sorted((REPO / "netem-scenarios").rglob("*.toml"))]
    found: list[str] = []
    inputs = 0
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory(prefix="tbx-fuzz-") as tmp:
        resolved = resolved_corpus(Path(tmp))
        while time.monotonic() < deadline:
            inputs += 1
            if inputs % 2 == 0 and resolved:
                doc = mutate_json(draw.choice(resolved), draw)
                text = json.dumps(doc)
                why = check_linkemu(doc, Path(tmp))
            else:
                text = mutate(draw.choice(corpus), draw)
                why = check(text, Path(tmp), draw.randrange(1 << 32))
            if why is not None:
                found.append(why)
                if crashes is not None:
                    crashes.mkdir(parents=True, exist_ok=True)
                    (crashes / f"crash-{len(found)}.toml").write_text(text)
                    (crashes / f"crash-{len(found)}.txt").write_text(why)
    return inputs, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--crashes", type=Path, default=None, help="folder for crashing inputs")
    args = parser.parse_args(argv)
    inputs, found = run(args.seconds, args.crashes, args.seed)
    print(f"{inputs} inputs in {args.seconds:g} s, {len(found)} crashes")
    for why in found[:5]:
        print(why)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
