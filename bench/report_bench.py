"""Time the report of one run folder, side by side for this checkout and an older commit.

    .venv/bin/python bench/report_bench.py RUN_DIR [--baseline-commit COMMIT] [--repeat N]

For each version (the older commit first, checked out with `git worktree add --detach` into a
temporary folder and removed afterwards; then this checkout) it runs
`python -m testbed --report RUN_DIR` (what `./run_trials.sh --report RUN_DIR` runs) with this
checkout's .venv and that version's code, twice or more: **cold**, with no per-trial cache
entry for the run's trials (metrics/report.py keeps reductions in the checkout's
`cache/metrics/`; for the older commit the whole cache of its temporary worktree), then
**warm**, with the entries the cold run wrote. Before the first run every file of the run
folder is read once, so that every version finds the same files in the page cache.

Prints, per version and cache state, the wall time and the CPU time (user + system of the
report process and its workers), and at the end one JSON line with the figures. Every report
writes into RUN_DIR (summary.csv, aggregate.csv, comparisons.csv, ranking.csv, tables/,
report.html): the last one written is this checkout's. Exit status 2 on a bad argument.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"


def prewarm(run_dir: Path) -> int:
    """Read every file of the run folder once (the page cache, not the report's cache)."""
    total = 0
    for path in run_dir.rglob("*"):
        if path.is_file():
            with path.open("rb") as f:
                while chunk := f.read(1 << 20):
                    total += len(chunk)
    return total


def forget_cached_trials(checkout: Path, run_dir: Path) -> int:
    """Remove the per-trial cache entries of the run's trials from `checkout`'s cache/metrics
    (named as metrics/report.py names them: a hash of the trial folder's resolved path)."""
    removed = 0
    cache = checkout / "cache" / "metrics"
    for trial_dir in sorted((run_dir / "trials").iterdir()):
        name = hashlib.sha256(str(trial_dir.resolve()).encode()).hexdigest()[:24]
        entry = cache / f"{name}.pkl"
        if entry.is_file():
            entry.unlink()
            removed += 1
    return removed


def timed_report(checkout: Path, run_dir: Path) -> dict[str, float]:
    """Wall and CPU seconds of `python -m testbed --report RUN_DIR` run from `checkout`."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [str(PYTHON), "-m", "testbed", "--report", str(run_dir)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(
            f"{checkout}: --report exited {done.returncode}: {done.stderr.strip()[-2000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}


def code_of(checkout: Path) -> str:
    """Where `import metrics` resolves from `checkout` (must be that checkout)."""
    done = subprocess.run(
        [str(PYTHON), "-c", "import metrics; print(metrics.__file__)"],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def bench_version(label: str, checkout: Path, run_dir: Path, repeat: int) -> list[dict]:
    imported = code_of(checkout)
    if not imported.startswith(str(checkout)):
        raise RuntimeError(f"{label}: metrics imported from {imported}, not from {checkout}")
    rows = []
    forget_cached_trials(checkout, run_dir)
    for attempt in range(repeat):
        cache = "cold" if attempt == 0 else "warm"
        figures = timed_report(checkout, run_dir)
        row = {"version": label, "cache": cache, **figures}
        print(f"{label:<24} {cache:<5} wall {figures['wall_s']:>7.1f} s   "
              f"CPU {figures['cpu_s']:>7.1f} s", flush=True)  # fmt: skip
        rows.append(row)
    return rows


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/report_bench.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", type=Path, help="a run folder (with trials/)")
    parser.add_argument(
        "--baseline-commit",
        default=None,
        help="an older commit to time first, from a temporary worktree (default: none)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="reports per version: the first cold, the others warm (default: 2)",
    )
    args = parser.parse_args(argv)
    run_dir = args.run_dir.resolve()
    if not (run_dir / "trials").is_dir():
        print(f"report_bench: {run_dir}: not a run folder (no trials/ inside)", file=sys.stderr)
        return 2
    if args.repeat < 1:
        print(f"report_bench: --repeat {args.repeat}: must be at least 1", file=sys.stderr)
        return 2
    baseline = None
    if args.baseline_commit is not None:
        try:
            baseline = git("rev-parse", "--verify", f"{args.baseline_commit}^{{commit}}")
        except subprocess.CalledProcessError:
            print(f"report_bench: --baseline-commit {args.baseline_commit}: not a commit of "
                  f"{REPO}", file=sys.stderr)  # fmt: skip
            return 2
    trials = sum(1 for d in (run_dir / "trials").iterdir() if d.is_dir())
    current = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    print(f"run {run_dir}: {trials} trial folders, {prewarm(run_dir) / 1e6:.0f} MB read once; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    rows: list[dict] = []
    if baseline is not None:
        workdir = Path(tempfile.mkdtemp(prefix="report-bench-"))
        tree = workdir / "baseline"
        git("worktree", "add", "--detach", str(tree), baseline)
        try:
            rows += bench_version(f"baseline {baseline[:7]}", tree, run_dir, args.repeat)
        finally:
            git("worktree", "remove", "--force", str(tree))
            shutil.rmtree(workdir, ignore_errors=True)
    label = f"current {current[:7]}{' (modified)' if dirty else ''}"
    rows += bench_version(label, REPO, run_dir, args.repeat)
    print(json.dumps({"run": str(run_dir), "trials": trials, "results": rows,
                      "load_average_end": os.getloadavg()[0]}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
