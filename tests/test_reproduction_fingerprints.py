"""No reproduction page describes code that no longer exists: each page's recorded inputs
(docs/reproductions/<seed>.inputs.json, testbed/reproduce/fingerprint.py) match the checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testbed.reproduce import fingerprint
from testbed.reproduce.run import PAPERS, inputs_of

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "reproductions"


@pytest.mark.parametrize("seed", list(PAPERS))
def test_page_matches_the_code_it_was_computed_from(seed: str) -> None:
    changes = fingerprint.stale_inputs(REPO, DOCS, seed, inputs_of(seed))
    assert not changes, (
        f"docs/reproductions/{seed}.md was computed from other code; regenerate it with "
        f"./run_trials.sh --reproduce {seed}:\n  " + "\n  ".join(changes[:20])
    )
    recorded = json.loads(fingerprint.sidecar(DOCS, seed).read_text())
    assert f"`{recorded['digest'][:16]}…`" in (DOCS / f"{seed}.md").read_text()


def test_a_changed_missing_or_new_input_is_named(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.rs").write_text("fn a() {}\n")
    (tmp_path / "src" / "b.rs").write_text("fn b() {}\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    patterns = ("src/*.rs",)
    value = fingerprint.record(tmp_path, docs, "seedX", patterns)
    assert len(value) == 64
    assert fingerprint.stale_inputs(tmp_path, docs, "seedX", patterns) == []
    (tmp_path / "src" / "a.rs").write_text("fn a() { 1; }\n")
    (tmp_path / "src" / "c.rs").write_text("fn c() {}\n")
    (tmp_path / "src" / "b.rs").unlink()
    assert fingerprint.stale_inputs(tmp_path, docs, "seedX", patterns) == [
        "changed: src/a.rs",
        "new input: src/c.rs",
        "input gone: src/b.rs",
    ]
    assert "no readable record" in fingerprint.stale_inputs(tmp_path, docs, "seedY", patterns)[0]
    with pytest.raises(ValueError, match="names no file"):
        fingerprint.file_hashes(tmp_path, ("missing/*.py",))
