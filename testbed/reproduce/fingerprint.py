"""What a reproduction page's simulated part was computed from, so that a page cannot describe
code that no longer exists.

Writing a page also writes `docs/reproductions/<seed>.inputs.json`: the SHA-256 of every file its
simulated part depends on (the simulator's and the network model's sources, the transport tests
the claims run, the page's own modules, and each page's scenario files and content ladder, as
its module's FINGERPRINT_INPUTS names them), and one digest over them, which the page shows.
`tests/test_reproduction_fingerprints.py` recomputes them from the checkout and fails naming
the files that changed since the page was written: regenerate it with
`./run_trials.sh --reproduce <seed>`.

Content, not commits: a page regenerated on a working tree with uncommitted changes records
those contents, and a commit that touches none of the inputs leaves every page current.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

# Inputs of every page's simulated part (paths relative to the repository; globs allowed).
COMMON_INPUTS = (
    "Cargo.lock",
    "Cargo.toml",
    "transport/Cargo.toml",
    "transport/core/Cargo.toml",
    "transport/core/src/**/*.rs",
    "transport/src/**/*.rs",
    "transport/tests/**/*.rs",
    "emulator/Cargo.toml",
    "emulator/src/**/*.rs",
    "testbed/reproduce/base.py",
    "testbed/reproduce/run.py",
)
SUFFIX = ".inputs.json"


def sidecar(docs_dir: Path, seed: str) -> Path:
    """The file beside a page that records its inputs."""
    return docs_dir / f"{seed}{SUFFIX}"


def input_files(repo: Path, patterns: Iterable[str], strict: bool = True) -> list[str]:
    """Every existing file the patterns name, as sorted repository-relative paths. When
    checking (`strict`), a pattern that names nothing is an error: a page must not silently
    lose an input to a rename."""
    found: set[str] = set()
    for pattern in patterns:
        matches = [p for p in repo.glob(pattern) if p.is_file() and "__pycache__" not in p.parts]
        if not matches and strict:
            raise ValueError(f"fingerprint input '{pattern}' names no file under {repo}")
        found.update(str(p.relative_to(repo)) for p in matches)
    return sorted(found)


def file_hashes(repo: Path, patterns: Iterable[str], strict: bool = True) -> dict[str, str]:
    return {
        rel: hashlib.sha256((repo / rel).read_bytes()).hexdigest()
        for rel in input_files(repo, patterns, strict)
    }


def digest(hashes: dict[str, str]) -> str:
    """One SHA-256 over the (path, hash) pairs, in path order."""
    h = hashlib.sha256()
    for rel in sorted(hashes):
        h.update(f"{rel}\0{hashes[rel]}\n".encode())
    return h.hexdigest()


def page_inputs(seed: str, module_patterns: Iterable[str]) -> tuple[str, ...]:
    """A page's inputs: the common ones, its own modules, and what its module declares."""
    own = f"testbed/reproduce/{seed}*.py"
    return (*COMMON_INPUTS, own, *module_patterns)


def record(repo: Path, docs_dir: Path, seed: str, patterns: Iterable[str]) -> str:
    """Write the page's sidecar; return the digest the page shows."""
    patterns = tuple(patterns)
    hashes = file_hashes(repo, patterns, strict=False)  # the check (stale_inputs) is strict
    value = digest(hashes)
    data = {"seed": seed, "digest": value, "patterns": list(patterns), "files": hashes}
    sidecar(docs_dir, seed).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return value


def stale_inputs(repo: Path, docs_dir: Path, seed: str, patterns: Iterable[str]) -> list[str]:
    """What changed since the page was written, for people; empty when it is current."""
    path = sidecar(docs_dir, seed)
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return [f"{path}: no readable record of the page's inputs ({exc})"]
    now = file_hashes(repo, patterns)
    was: dict[str, str] = recorded.get("files", {})
    changes = [f"changed: {rel}" for rel in sorted(now) if rel in was and was[rel] != now[rel]]
    changes += [f"new input: {rel}" for rel in sorted(set(now) - set(was))]
    changes += [f"input gone: {rel}" for rel in sorted(set(was) - set(now))]
    if not changes and recorded.get("digest") != digest(now):
        changes.append(f"{path}: digest does not match its own file list")
    return changes
