"""Every congestion control and scheduler that `mpproxy --list` prints has a page in
docs/algorithms/ (the name→page table of docs/algorithms/README.md, else a page named after
the algorithm), and every page the table names exists and mentions the algorithm's name."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from testbed.transports import MPPROXY_BINARY

REPO = Path(__file__).resolve().parent.parent
PAGES = REPO / "docs/algorithms"
INDEX = PAGES / "README.md"
MPPROXY = REPO / MPPROXY_BINARY

# A table row of the index: | `name` (`alias`) | [text](page.md#anchor) | ...
ROW = re.compile(r"^\|\s*`([^`]+)`[^|]*\|\s*\[[^\]]*\]\(([^)#]+)(#[^)]*)?\)")


def index_map() -> dict[str, Path]:
    mapping = {}
    for line in INDEX.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            mapping[m.group(1)] = (PAGES / m.group(2)).resolve()
    return mapping


def page_for(name: str, mapping: dict[str, Path]) -> Path:
    return mapping.get(name, PAGES / f"{name}.md")


@pytest.mark.skipif(not MPPROXY.is_file(), reason=f"{MPPROXY_BINARY} not built")
def test_every_listed_algorithm_has_a_page() -> None:
    listed = json.loads(
        subprocess.run([MPPROXY, "--list"], check=True, capture_output=True, text=True).stdout
    )
    names = [*listed["cc"], *listed["sched"]]
    assert len(names) >= 2, listed
    mapping = index_map()
    missing = []
    for name in names:
        page = page_for(name, mapping)
        if not page.is_file():
            missing.append(f"{name}: no page (expected {page.relative_to(REPO)})")
        elif name not in page.read_text(encoding="utf-8"):
            missing.append(f"{name}: {page.relative_to(REPO)} does not mention it")
    assert not missing, "\n".join(missing)


def test_index_rows_point_at_existing_pages() -> None:
    mapping = index_map()
    assert "lrf" in mapping, "the index table was not parsed"
    for name, page in mapping.items():
        assert page.is_file(), f"docs/algorithms/README.md maps {name} to {page}, which is missing"
