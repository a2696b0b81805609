"""Make sure the Rust binaries a run uses are built from this checkout's sources.

Every trial records the checkout's commit (`trial.json` env.git_commit), but the engines
run whatever binaries are in `target/release/`. After a `git checkout` or an edit, those
are the previous sources' until someone rebuilds, and a run would then record a commit it
did not run. So before any trial, `ensure_built` runs the same `cargo build` as
`scripts/setup.sh` (incremental: about 0.1 s when nothing changed, a minute or two after a
change to the transport core). Found when a simulated study, started on a new commit in a
worktree that still held the previous commit's mpsim, ran its first 224 trials on the old
simulator.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

# The workspace build of scripts/setup.sh: every binary the engines start (mpsim, mpproxy,
# linkemu, linkemu-probe) comes from it.
CARGO_BUILD_ARGS = ["build", "--release", "--locked", "--workspace", "--quiet"]


def ensure_built(repo: Path) -> str | None:
    """Builds the workspace if its sources changed; None when the binaries are current, else
    why they could not be built (for the user, with what to do). A tree without the
    workspace's Cargo.toml (a test's stand-in repository of stub binaries) has no sources
    to be out of date with: nothing is built."""
    if not (Path(repo) / "Cargo.toml").is_file():
        return None
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if not Path(cargo).is_file():
        return "cargo not found: run ./scripts/setup.sh (it installs the Rust toolchain)"
    print(
        "run_trials.sh: building the Rust workspace if its sources changed "
        "(cargo build --release --locked)",
        file=sys.stderr,
        flush=True,
    )
    try:
        done = subprocess.run([cargo, *CARGO_BUILD_ARGS], cwd=repo)
    except OSError as exc:
        return f"cargo could not start: {exc}"
    if done.returncode != 0:
        return (
            f"cargo build failed (exit {done.returncode}); its errors are above. The run "
            "would use binaries built from other sources than the commit it records, so it "
            "does not start"
        )
    return None
