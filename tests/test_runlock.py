"""One run per folder (testbed/runlock.py): a second run into a busy folder is refused naming
the first one's PID and command; `--report` on a folder whose run is still going says the
report is partial; a dead holder's lock does not block a resume."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from testbed import matrix, runlock

REPO = Path(__file__).resolve().parent.parent
FIXTURE_RUN = REPO / "tests" / "fixtures" / "run-small"

HOLDER = """
import sys, time
from pathlib import Path
from testbed import matrix, runlock
lock = runlock.acquire(Path(sys.argv[1]), ["--scenario", "B1", "--out", sys.argv[1]])
print("held", flush=True)
time.sleep(600)
"""


def hold(run_dir: Path) -> subprocess.Popen:
    """A process that holds the run folder's lock, as a running matrix does."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def holder(tmp_path: Path):  # noqa: ANN201
    run_dir = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, run_dir)
    proc = hold(run_dir)
    yield run_dir, proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_a_busy_folder_is_refused_naming_the_other_runs_pid_and_command(holder) -> None:  # noqa: ANN001
    run_dir, proc = holder
    with pytest.raises(runlock.RunBusy) as refused:
        runlock.acquire(run_dir)
    message = str(refused.value)
    assert f"PID {proc.pid}" in message
    assert f"run_trials.sh --scenario B1 --out {run_dir}" in message
    assert str(run_dir) in message
    assert (
        runlock.holder(run_dir)
        == f"PID {proc.pid}, command: run_trials.sh --scenario B1 --out {run_dir}"
    )


def test_a_dead_holders_lock_does_not_block_and_is_rewritten(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = hold(run_dir)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert runlock.holder(run_dir) is None  # the kernel dropped the lock with the process
    lock = runlock.acquire(run_dir, ["--out", "x"])
    try:
        assert (run_dir / runlock.LOCK_NAME).read_text() == (
            f"PID {os.getpid()}, command: run_trials.sh --out x\n"
        )
    finally:
        lock.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (run_trials.sh refuses a matrix without)")
def test_run_trials_into_a_busy_folder_exits_2_naming_the_holder(holder) -> None:  # noqa: ANN001
    run_dir, proc = holder
    done = subprocess.run(
        [str(REPO / "run_trials.sh"), "--scenario", "control", "--transport", "none",
         "--player", "none", "--out", str(run_dir)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"PID {proc.pid}, command: run_trials.sh --scenario B1" in done.stderr
    assert not list(run_dir.glob("trials/control__*"))


def test_report_while_the_run_goes_on_says_it_is_partial(
    holder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],  # noqa: ANN001
) -> None:
    """`run_trials.sh --report DIR` is matrix.rebuild_report (the report itself, built the
    same either way, is metrics/'s and tested there: not built here, it takes a minute)."""
    run_dir, proc = holder
    built = []
    monkeypatch.setattr(matrix, "build_report", lambda folder: built.append(folder) or 0)
    assert matrix.rebuild_report(run_dir) == 0
    err = capsys.readouterr().err
    assert "the run is still going" in err and "this report is partial" in err, err
    assert f"PID {proc.pid}, command: run_trials.sh --scenario B1" in err
    finished = len(list(run_dir.glob("trials/*/result.json")))
    assert finished > 0 and f"{finished} trials have finished so far" in err
    assert built == [run_dir]  # partial, but built
    # Once the run has ended, the same rebuild says nothing of the kind.
    proc.kill()
    proc.wait()
    assert matrix.rebuild_report(run_dir) == 0
    assert "partial" not in capsys.readouterr().err
