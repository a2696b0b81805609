"""The repository stands alone: nothing tracked points at a file or document outside it.

A clone has no working-notes folder next to it, so a comment, doc, test or scenario file
that cites one (or cites its section numbers) sends the reader nowhere. Cite the project's
own pages (docs/algorithms/<page>.md), papers by title, RFCs or kernel file names instead.
Also checks that every relative link in a Markdown file resolves to a tracked file.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
THIS_FILE = Path(__file__).resolve().relative_to(REPO).as_posix()

# Each pattern names something that exists only outside the repository. The strings are
# split so that this file does not match itself.
OUTSIDE_REFERENCES: dict[str, re.Pattern[str]] = {
    "path to the shared notes folder": re.compile(
        r"\.\./" + r"shared\b|\bshared/(docs|seeds|traces)\b"
    ),
    "working-notes document": re.compile(
        r"\b(ALGORITHMS|DESIGN)" + r"\.md\b|STYLE-" + r"EXAMPLES|algorithm_test_" + r"vectors"
    ),
    "absolute path of a work machine": re.compile(r"/work/" + r"(notes|shared|wt|main)\b"),
    "section number of the notes (§A3, §0)": re.compile("\u00a7" + r"\s?([A-C]\d{1,2}|0)\b"),
    # A1, A2, B1, B2 are scenario names and C1, C2 link names in the seed papers: not matched.
    "section number of the notes (A3..A13, B3..B10)": re.compile(
        r"(?<![\w.+/-])(A(?:[3-9]|1[0-3])|B(?:[3-9]|10))(?![\w.+/-])"
    ),
    "tag of the notes ([GAP], [PROP])": re.compile(r"\[(GAP|PROP)" + r"\]"),
    "issue of the working notes": re.compile(r"\b[Ii]ssue[ _]" + r"#?\d+\b"),
}

# Files whose content is data, not prose (traces, lock files, images).
NOT_PROSE = re.compile(
    r"(\.(png|jpg|down|up|lock|csv|mp4|m4s)$|\.jsonl$|package-lock\.json$|Cargo\.lock$)"
)


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True
    ).stdout.decode()
    return [f for f in out.split("\0") if f]


def offenders() -> list[str]:
    found = []
    for name in tracked_files():
        path = REPO / name
        if name == THIS_FILE or NOT_PROSE.search(name) or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for what, pattern in OUTSIDE_REFERENCES.items():
                m = pattern.search(line)
                if m:
                    found.append(f"{name}:{lineno}: {what}: {m.group(0)!r}: {line.strip()[:100]}")
    return found


def test_no_tracked_file_points_outside_the_repository() -> None:
    found = offenders()
    assert not found, f"{len(found)} outside references:\n" + "\n".join(found)


def test_the_patterns_catch_what_they_are_for() -> None:
    samples = {
        "see ../" + "shared/docs/x": "path to the shared notes folder",
        "ALGORITHMS" + ".md B7": "working-notes document",
        "(\u00a7" + "A5)": "section number of the notes (§A3, §0)",
        "spec B7, seed 002": "section number of the notes (A3..A13, B3..B10)",
        "[PR" + "OP] ties": "tag of the notes ([GAP], [PROP])",
        "the flags of is" + "sue 3": "issue of the working notes",
    }
    for text, what in samples.items():
        assert OUTSIDE_REFERENCES[what].search(text), (text, what)
    # Scenario names, RFC sections and hex are not citations.
    for text in ["scenario B1 and A2", "RFC 9438 \u00a74.7", "0xB5", "A1-user-bbr", "b7_decision",
                 "links C1 and C2"]:  # fmt: skip
        assert not any(p.search(text) for p in OUTSIDE_REFERENCES.values()), text


MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_relative_markdown_links_resolve_to_tracked_files() -> None:
    tracked = set(tracked_files())
    broken = []
    for name in sorted(f for f in tracked if f.endswith(".md")):
        text = (REPO / name).read_text(encoding="utf-8")
        for lineno, line in enumerate(text.splitlines(), 1):
            for target in MD_LINK.findall(line):
                if re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue
                rel = target.split("#", 1)[0]
                resolved = (REPO / name).parent.joinpath(rel).resolve()
                try:
                    key = resolved.relative_to(REPO).as_posix()
                except ValueError:
                    broken.append(f"{name}:{lineno}: {target} leaves the repository")
                    continue
                if key not in tracked and not any(t.startswith(key + "/") for t in tracked):
                    broken.append(f"{name}:{lineno}: {target} is not a tracked file")
    assert not broken, "\n".join(broken)
