"""Resources running out (testbed/diskspace.py, docs/ORCHESTRATOR.md "Faults"):

- the run folder on a small filesystem (a tmpfs of 24 MB, mounted and removed by the test)
  that fills up mid-trial: that trial fails with a reason saying so, summary.csv holds the
  trials that finished, run_trials.sh exits 3, and once space is freed the same command
  resumes (the trial that ran out of space is redone);
- a run started on a filesystem without room is refused with 3 before anything starts;
- open files: RLIMIT_NOFILE lowered for the runner fails the trial with a reason, no
  traceback, and nothing is left.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from markers import LINKEMU, needs_built, needs_root

REPO = Path(__file__).resolve().parent.parent
SMALL_FS_MB = 24

pytestmark = [
    pytest.mark.netns,
    needs_root,
    needs_built(LINKEMU),
    pytest.mark.timeout(400),
]


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL_FS_MB}m", "tmpfs", str(mount)],
                   check=True)  # fmt: skip
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def control_matrix(run_dir: Path, reps: int) -> list[str]:
    return [str(REPO / "run_trials.sh"), "--scenario", "control", "--transport", "none",
            "--player", "none", "--reps", str(reps), "--jobs", "1",
            "--out", str(run_dir)]  # fmt: skip


def env() -> dict[str, str]:
    return {**os.environ, "TESTBED_CONTROL_TRANSFER_S": "0.5"}


def results(run_dir: Path) -> dict[int, dict]:
    found = {}
    for path in run_dir.glob("trials/*/result.json"):
        rep = int(path.parent.name.split("__r")[1].split("__")[0])
        found[rep] = json.loads(path.read_text())
    return found


def test_a_full_run_folder_stops_the_run_keeps_the_summary_and_resumes(small_fs: Path) -> None:
    run_dir = small_fs / "run"
    filler = small_fs / "filler"
    proc = subprocess.Popen(control_matrix(run_dir, 3), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env())  # fmt: skip
    # Once the first trial has finished and the second is under way, fill the filesystem.
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        second = list(run_dir.glob("trials/*__r1__*/testbed.jsonl"))
        if 0 in results(run_dir) and second and "running" in second[0].read_text():
            break
        time.sleep(0.1)
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * (1 << 20))
                out.flush()
        except OSError:
            pass  # ENOSPC: full
    out_text, err_text = proc.communicate(timeout=240)
    context = out_text[-3000:] + err_text[-3000:]
    assert proc.returncode == 3, context
    assert "filesystem is full" in err_text and "run the same command again" in err_text, context
    assert "Traceback" not in err_text, context
    done = results(run_dir)
    assert done[0]["status"] == "ok", done
    assert done[1]["status"] == "failed" and done[1].get("out_of_space") is True, done[1]
    assert "out of space" in done[1]["reason"], done[1]
    assert 2 not in done  # not started
    rows = list(csv.DictReader((run_dir / "summary.csv").open()))
    by_rep = {r["trial_id"].split("__r")[1].split("__")[0]: r["status"] for r in rows}
    assert by_rep["0"] == "ok" and by_rep["1"] == "failed", by_rep
    assert not (run_dir / ".space-reserve").exists()
    # Space freed: the same command resumes, redoing the trial that ran out of space.
    filler.unlink()
    again = subprocess.run(control_matrix(run_dir, 3), capture_output=True, text=True,
                           timeout=300, env=env())  # fmt: skip
    assert again.returncode in (0, 1), again.stdout[-3000:] + again.stderr[-3000:]
    assert "3 trials, 1 already finished, 2 to run" in again.stdout, again.stdout
    done = results(run_dir)
    assert sorted(done) == [0, 1, 2] and all(r["status"] == "ok" for r in done.values()), done
    rows = list(csv.DictReader((run_dir / "summary.csv").open()))
    assert sorted(r["status"] for r in rows) == ["ok", "ok", "ok"]


def test_a_run_without_room_is_refused_before_anything_starts(small_fs: Path) -> None:
    filler = small_fs / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=1M", f"count={SMALL_FS_MB - 4}"],
                   capture_output=True, check=True)  # fmt: skip
    run_dir = small_fs / "run"
    done = subprocess.run(control_matrix(run_dir, 1), capture_output=True, text=True,
                          timeout=120, env=env())  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "filesystem is full" in done.stderr and "MB free" in done.stderr
    assert not list(run_dir.glob("trials/*"))


def test_too_few_open_files_fails_the_trial_cleanly(tmp_path: Path) -> None:
    """RLIMIT_NOFILE of 48 (soft and hard) for the runner, and so for the trial and all it
    starts: the trial fails at once naming the limit (testbed/fdlimit.py), no traceback,
    nothing left; with only the soft limit low, the trial raises it and runs."""
    from testbed.fdlimit import MIN_OPEN_FILES
    from testbed.topology import list_namespaces

    for name, limits in (("hard", (48, 48)), ("soft", (48, MIN_OPEN_FILES))):
        run_dir = tmp_path / name
        done = subprocess.run(control_matrix(run_dir, 1), capture_output=True, text=True,
                              timeout=300, env=env(),
                              preexec_fn=lambda lim=limits: resource.setrlimit(
                                  resource.RLIMIT_NOFILE, lim))  # fmt: skip
        context = done.stdout[-3000:] + done.stderr[-3000:]
        assert "Traceback" not in done.stderr, context
        result = next(iter(results(run_dir).values()))
        if name == "hard":
            assert done.returncode == 1, context
            assert result["status"] == "failed", result
            assert "RLIMIT_NOFILE is 48 (hard limit 48)" in result["reason"], result
            assert f"ulimit -n {MIN_OPEN_FILES}" in result["reason"], result
        else:
            assert result["status"] == "ok", (result, context)
        trial = json.loads(next(run_dir.glob("trials/*/trial.json")).read_text())
        assert not set((trial.get("namespaces") or {}).values()) & set(list_namespaces())
