"""Open a report in headless Chromium: check that it renders, or take a screenshot.

Chromium runs with a fresh profile in a temporary folder and every network-touching
feature off, so the check also proves the report is self-contained. Console messages
are read from Chromium's own log (`--enable-logging=stderr`): each one appears as a
`CONSOLE` line. The report itself writes nothing to the console, so any console
message (an uncaught exception, a failed resource) counts as an error.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = Path(os.environ.get("TESTBED_CHROMIUM", "/usr/bin/chromium"))
# The flags every headless Chromium of the testbed gets (shared with player/headless.mjs).
CHROMIUM_FLAGS = [
    *json.loads(
        (Path(__file__).resolve().parent.parent / "player/chromium-flags.json").read_text()
    )["flags"],
    "--hide-scrollbars",
]
TIMEOUT_S = 120  # generous: 2 cores shared with many processes
CONSOLE_LINE = re.compile(r":CONSOLE(?::\d+)?\]\s*(.*)$")
DEFAULT_WIDTH_PX = 1280
DEFAULT_HEIGHT_PX = 3000
MAX_HEIGHT_PX = 16000  # Chromium's compositor gets unreliable beyond this


@dataclass
class RenderCheck:
    dom: str
    console_messages: list[str] = field(default_factory=list)
    images_ok: int | None = None  # from the report's data-images-ok (None: not a report)
    images_total: int | None = None
    page_height_px: int | None = None

    @property
    def ok(self) -> bool:
        images_fine = self.images_total is None or self.images_ok == self.images_total
        return not self.console_messages and images_fine and "<body" in self.dom


def _run_chromium(extra: list[str], html: Path) -> subprocess.CompletedProcess[str]:
    if not CHROMIUM.exists():
        raise FileNotFoundError(f"{CHROMIUM}: Chromium not found (set TESTBED_CHROMIUM)")
    html = Path(html).resolve()
    if not html.is_file():
        raise FileNotFoundError(f"{html}: no such report file")
    with tempfile.TemporaryDirectory(prefix="metrics-chromium-") as profile:
        argv = [
            str(CHROMIUM),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *extra,
            html.as_uri(),
        ]
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False, cwd=profile
        )


def check_render(html: Path) -> RenderCheck:
    """Load the page, let its load handlers run, and return the DOM and console output."""
    done = _run_chromium(["--dump-dom"], html)
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited with {done.returncode}: {done.stderr[-2000:]}")
    messages = [m.group(1) for m in map(CONSOLE_LINE.search, done.stderr.splitlines()) if m]
    return RenderCheck(
        dom=done.stdout,
        console_messages=messages,
        images_ok=_body_number(done.stdout, "data-images-ok"),
        images_total=_body_number(done.stdout, "data-images-total"),
        page_height_px=_body_number(done.stdout, "data-page-height"),
    )


def _body_number(dom: str, attribute: str) -> int | None:
    match = re.search(rf'<body[^>]*\b{attribute}="(\d+)"', dom)
    return int(match.group(1)) if match else None


def screenshot(html: Path, png: Path, width_px: int = DEFAULT_WIDTH_PX) -> RenderCheck:
    """A full-page PNG of the report (height from the page itself when it says it).

    Renders once to check it (console errors, images) and measure the page, then
    once more at that height. Returns the check so callers can refuse a broken page.
    """
    check = check_render(html)
    height = min(check.page_height_px or DEFAULT_HEIGHT_PX, MAX_HEIGHT_PX)
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    done = _run_chromium([f"--screenshot={png}", f"--window-size={width_px},{height}"], html)
    if done.returncode != 0 or not png.is_file():
        raise RuntimeError(f"chromium screenshot failed ({done.returncode}): {done.stderr[-2000:]}")
    return check
