"""A study's durable record: every finished trial's summary row, committed with the code.

A run folder under results/ holds each trial's raw logs (tens of MB for an emulated trial)
and is not versioned: a new checkout or a machine that was reset has none of it. A study
that spans sessions (seed 002's runs for days) therefore keeps, beside its run folders, an
archive in the repository (studies/<study>/<run>/): the summary row of each finished trial
(metrics/report.py's reduction, every column), its commit, the content it played, the
machine it ran on (kernel and tool versions) and a digest of its result.json, appended as
gzip-compressed CSV parts that are never rewritten (each commit of the archive adds only new
rows), and the run.json of the run that last added
to it (its engine, command and commit; not its per-trial lists). The study's runner skips
what its archive holds and appends what it ran; a page reads an archive folder as it reads a
run folder (`--from studies/<study>`).

An archive keeps every attempt of a trial in the order they were added. A trial's row is its
last attempt's; an earlier attempt (a trial re-run once after it failed or was invalid) stays
on record. Which archived trials are finished is the study's rule (finished_ids)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from testbed.matrix import finished_result

if TYPE_CHECKING:  # pandas is imported where it is used
    import pandas as pd

STUDIES_DIR = "studies"
PART_GLOB = "part-*.csv.gz"
COMMIT_COLUMN = "commit"  # the trial's git commit (trial.json env.git_commit)
DIGEST_COLUMN = "result_sha256"  # one attempt: the SHA-256 of its result.json
# The encoded video the trial played: its content cache folder (server/content.py names it by
# a hash of the encoding parameters and the FFmpeg version), from player.jsonl's start event.
CONTENT_COLUMN = "content_id"
# The machine the trial ran on, as trial.json's env recorded it (kernel, tool versions,
# Python, CPUs; JSON): a study that spans sessions can span machines, and its raw folders,
# which hold trial.json, are not kept.
ENV_COLUMN = "environment"
ENV_FIELDS = ("kernel", "tools", "python", "cpus")
NOT_RECORDED = "not recorded"
MANIFEST_LISTS = ("trials", "specs")  # run.json's per-trial lists, left out of the archive's copy


def is_archive(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob(PART_GLOB))


def parts(archive: Path) -> list[Path]:
    """The archive's parts in the order they were added (their names sort by time)."""
    return sorted(archive.glob(PART_GLOB))


def part_name(stamp: str, number: int) -> str:
    """part-<UTC time>-<NNNN>.csv.gz: NNNN counts the archive's parts from 1."""
    return f"part-{stamp}-{number:04d}.csv.gz"


def part_number(part: Path) -> int:
    """NNNN of a `part_name`."""
    return int(part.name.removesuffix(".csv.gz").rsplit("-", 1)[1])


def truthy(value: object) -> bool:
    """summary.csv's `valid` read back: a bool, or the strings True/False when NaN rows made
    the column an object column."""
    return value is True or str(value).strip().lower() in ("true", "1", "1.0")


def ok_and_valid(summary: pd.DataFrame) -> pd.DataFrame:
    """The ok and valid rows of a run's (or an archive's) per-trial table."""
    if "status" in summary.columns:
        summary = summary[summary["status"] == "ok"]
    if "valid" in summary.columns:
        summary = summary[summary["valid"].map(truthy)]
    return summary


def read_attempts(archive: Path) -> pd.DataFrame:
    """Every archived attempt, oldest first (an empty frame for an empty archive)."""
    import pandas as pd

    frames = [pd.read_csv(p) for p in parts(archive)]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=["trial_id", "status", "valid", COMMIT_COLUMN, DIGEST_COLUMN])
    return pd.concat(frames, ignore_index=True)


def last_attempts(attempts: pd.DataFrame) -> pd.DataFrame:
    """One row per trial of `read_attempts`' frame: its last attempt."""
    return attempts.drop_duplicates("trial_id", keep="last").reset_index(drop=True)


def attempt_counts(attempts: pd.DataFrame) -> dict[str, int]:
    """How many attempts `read_attempts`' frame holds per trial."""
    return {str(k): int(v) for k, v in attempts["trial_id"].astype(str).value_counts().items()}


def read_rows(archive: Path) -> pd.DataFrame:
    """One row per trial: its last archived attempt."""
    return last_attempts(read_attempts(archive))


def read_json(path: Path) -> dict:
    """A JSON object file's contents; {} when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def finished_trial_dirs(run_dir: Path) -> list[Path]:
    """The run's trial folders with a result (a trial stopped for want of space is redone
    by the runner, so it is not finished; one still running has no result yet)."""
    trials = run_dir / "trials"
    if not trials.is_dir():
        return []
    dirs = sorted(p for p in trials.iterdir() if p.is_dir())
    return [d for d in dirs if finished_result(d) is not None]


def content_id(trial_dir: Path) -> str:
    """The content folder a simulated player read (its start event's manifest path), or "not
    recorded" (an emulated player names a URL)."""
    try:
        with (trial_dir / "player.jsonl").open() as f:
            start = json.loads(f.readline())
    except (OSError, ValueError):
        return "not recorded"
    mpd = Path(str(start.get("mpd") or "")) if isinstance(start, dict) else Path()
    return mpd.parent.name if mpd.parent.parent.name == "content" else "not recorded"


def environment(trial_dir: Path) -> str:
    """The machine a trial ran on (`ENV_FIELDS` of its trial.json env, as JSON with sorted
    keys, so that one machine gives one string), or "not recorded"."""
    env = read_json(trial_dir / "trial.json").get("env") or {}
    kept = {k: env[k] for k in ENV_FIELDS if k in env}
    return json.dumps(kept, sort_keys=True) if kept else NOT_RECORDED


def environment_label(environment: str) -> str:
    """A short name for an `ENV_COLUMN` value: its kernel and its browser's version."""
    try:
        env = json.loads(environment)
    except (TypeError, ValueError):
        return NOT_RECORDED
    if not isinstance(env, dict):
        return NOT_RECORDED
    browser = str((env.get("tools") or {}).get("chromium") or "no Chromium")
    return f"{env.get('kernel') or 'kernel not recorded'}, {' '.join(browser.split()[:2])}"


def _digest(trial_dir: Path) -> str:
    return hashlib.sha256((trial_dir / "result.json").read_bytes()).hexdigest()


def add_new(run_dir: Path, archive: Path) -> int:
    """Appends one part with the run's finished trials whose attempt the archive does not
    hold yet (by result.json digest) and copies the run's run.json (without its lists);
    returns how many rows it added. Nothing is written when there is nothing new."""
    from metrics.report import reduce_trials

    held = set(read_attempts(archive)[DIGEST_COLUMN].astype(str)) if is_archive(archive) else set()
    new = [(d, sha) for d in finished_trial_dirs(run_dir) if (sha := _digest(d)) not in held]
    if not new:
        return 0
    summary, _, _ = reduce_trials([d for d, _ in new])  # one row per folder, in order
    if len(summary) != len(new):
        raise RuntimeError(f"{run_dir}: {len(new)} trial folders reduced to {len(summary)} rows")
    commits = [
        str((read_json(d / "trial.json").get("env") or {}).get("git_commit") or "not recorded")
        for d, _ in new
    ]
    rows = summary.assign(
        **{
            COMMIT_COLUMN: commits,
            CONTENT_COLUMN: [content_id(d) for d, _ in new],
            ENV_COLUMN: [environment(d) for d, _ in new],
            DIGEST_COLUMN: [sha for _, sha in new],
        }
    )
    archive.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    part = archive / part_name(stamp, len(parts(archive)) + 1)
    # mtime 0: the same rows give the same bytes. Written whole or not at all: a part cut
    # short (a crash, a kill) would make the whole archive unreadable.
    partial = part.with_name(f".{part.name}.tmp")
    rows.to_csv(partial, index=False, compression={"method": "gzip", "mtime": 0})
    os.replace(partial, part)
    manifest = read_json(run_dir / "run.json")
    if manifest:  # without the planned trials' list and specs (MBs; the rows hold the specs)
        kept = {k: v for k, v in manifest.items() if k not in MANIFEST_LISTS}
        (archive / "run.json").write_text(json.dumps(kept, indent=1) + "\n")
    return len(rows)


def discard_archived(run_dir: Path, archive: Path) -> tuple[int, int]:
    """Deletes the run's finished trial folders whose attempt the archive holds (by
    result.json digest), for a study that needs only its summary rows: one simulated
    setting of seed 002 leaves ~3.3 GB of raw logs. Returns how many folders and bytes went.
    A folder whose attempt is not archived, or that has no result, is kept. Each folder
    loses its result.json first, so one cut short by a crash reads as unfinished."""
    import shutil

    if not is_archive(archive):
        return 0, 0
    held = set(read_attempts(archive)[DIGEST_COLUMN].astype(str))
    folders, size = 0, 0
    for d in finished_trial_dirs(run_dir):
        if _digest(d) not in held:
            continue
        size += sum(f.stat().st_size for f in d.rglob("*") if f.is_file() and not f.is_symlink())
        (d / "result.json").unlink()
        shutil.rmtree(d)
        folders += 1
    return folders, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m testbed.reproduce.archive",
        description="Append a run folder's finished trials to a study archive (then commit "
        "the archive). A study's runner does this after each matrix; run it by hand to keep "
        "what a long matrix has finished so far.",
    )
    parser.add_argument("run", type=Path, help="a run folder (results/...)")
    parser.add_argument(
        "archive", type=Path, help=f"its archive folder ({STUDIES_DIR}/<study>/<run>)"
    )
    args = parser.parse_args(argv)
    if not (args.run / "trials").is_dir():
        print(
            f"archive: {args.run}: not a run folder (expected a trials/ sub-folder)",
            file=sys.stderr,
        )
        return 2
    added = add_new(args.run, args.archive)
    print(f"archive: {added} new trial attempt(s) from {args.run} in {args.archive}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
