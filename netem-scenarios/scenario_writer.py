"""What the scenario generators of this folder share: the loss label of their file names and
the command line that writes their files (`--out DIR`, one line saying what was written).

Imported by generate_loss_grid.py and generate_seed002_sweep.py, which run as scripts (their
folder is then on the module path)."""

from __future__ import annotations

import argparse
from pathlib import Path


def percent_label(p: float) -> str:
    """A loss probability as a file-name part: 0.00001 -> '0.001pct', 0.1 -> '10pct'."""
    return f"{p * 100:g}pct"


def parser(description: str, default_folder: str) -> argparse.ArgumentParser:
    """The generators' command line: `--out DIR` (default netem-scenarios/<default_folder>)."""
    out = argparse.ArgumentParser(description=description)
    out.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / default_folder,
        help=f"folder to write into (default: netem-scenarios/{default_folder})",
    )
    return out


def write(out: Path, files: dict[str, str]) -> int:
    """Write file name -> contents into `out` (created if missing); exit status 0."""
    out.mkdir(parents=True, exist_ok=True)
    for file_name, text in files.items():
        (out / file_name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} scenario files to {out}")
    return 0
