# ruff: noqa: E501  (the claim texts and docs-page prose are long string literals)
"""README's table of verdicts, generated from the pages in docs/reproductions/."""

from __future__ import annotations

import re
from pathlib import Path

from testbed.reproduce.base import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_RUN,
    PAPER_TABLE_HEADER,
    PARTLY,
    REPRODUCED,
)

# --- README's table of verdicts, generated from the pages ------------------------------------

README_BEGIN = "<!-- reproductions table: generated from docs/reproductions/*.md by testbed/reproduce/readme.py (readme_table); do not edit by hand -->"
README_END = "<!-- end of the reproductions table -->"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE, NOT_RUN)


def _verdict_rows(text: str, header: str) -> list[str]:
    """The verdicts of the markdown table that starts with `header` (its last column)."""
    lines = text.splitlines()
    if header not in lines:
        return []
    out = []
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        out.append(line.rstrip(" |").rsplit("|", 1)[-1].strip().strip("*"))
    return out


def _counts(verdicts: list[str]) -> str:
    return ", ".join(f"{verdicts.count(v)} {v}" for v in VERDICTS if verdicts.count(v))


def page_summary(text: str) -> dict[str, str]:
    """What README's table shows of one page: title, verdict counts, the emulated part, time."""

    title = text.splitlines()[0].removeprefix("# Reproduction: ")
    main = _verdict_rows(text, PAPER_TABLE_HEADER)  # paper claims only
    emulated = _verdict_rows(text, "| claim (emulated cells only) | emulated | verdict |")
    agreement = re.search(r"Agreement \(ours[^)]*\): (\d+ of \d+) cells", text)
    subset_time = re.search(
        r"the subset's (\d+) trials one at a time take ([^(]+?) \(its (\d+) used", text
    )
    if emulated:
        emu = "claims on the emulated cells: " + _counts(emulated)
        if subset_time:
            total, took, used = subset_time.groups()
            emu += f"; {used} of the subset's {total} trials used, all {total} take {took} one at a time (measured)"
    elif agreement:
        emu = f"simulated within ±15 % of emulated in {agreement.group(1)} cells"
    elif "**Not run" in text:
        emu = "not run"
    else:
        emu = "none"
    wall = re.search(r"Wall time on this machine: (\d+) s", text)
    cpu = re.search(r"CPU time \(user \+ sys[^)]*\): (\d+) s", text)
    return {
        "title": title,
        **{v: str(main.count(v)) for v in VERDICTS},
        "emulated": emu,
        "time": f"{wall.group(1) if wall else '–'} s / {cpu.group(1) if cpu else '–'} s",
    }


def readme_table(docs_dir: Path) -> str:
    """README's table of the reproduction pages, one row per page, from the pages alone."""
    rows = [
        README_BEGIN,
        "",
        "| paper | page | reproduced | partly | not reproduced | inconclusive | not yet run | emulated part | wall / CPU time of the page's command |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for page in sorted(docs_dir.glob("seed*.md")):
        p = page_summary(page.read_text())
        rows.append(f"| {p['title']} | [{page.stem}](docs/reproductions/{page.name}) | "
                    + " | ".join(p[v] for v in VERDICTS) + f" | {p['emulated']} | {p['time']} |")  # fmt: skip
    return "\n".join([*rows, "", README_END])


def update_readme(repo: Path) -> bool:
    """Rewrites README's generated table from the pages; False if README has no table."""
    readme = repo / "README.md"
    text = readme.read_text() if readme.is_file() else ""
    if README_BEGIN not in text or README_END not in text:
        return False
    head, rest = text.split(README_BEGIN, 1)
    tail = rest.split(README_END, 1)[1]
    readme.write_text(head + readme_table(repo / "docs" / "reproductions") + tail)
    return True
