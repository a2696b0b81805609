"""`touch <run>/STOP` (testbed/matrix.py STOP_FILE): the running trials finish, no new one
starts, the run stops as a Ctrl-C would (status 130) without cutting a trial short, and the
same command resumes with what is left."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testbed import matrix
from testbed.spec import TrialSpec

REPO = Path(__file__).resolve().parent.parent
# A stand-in for `python -m testbed.trial`: a moment of work, then its result.
FAKE_TRIAL = """
import json, sys, time
from pathlib import Path
time.sleep(0.3)
Path(sys.argv[1], "result.json").write_text(json.dumps(
    {"schema": 1, "trial_id": sys.argv[2], "status": "ok", "valid": True,
     "wall_duration_s": 0.3, "subflows_with_data": 2}))
"""


@pytest.fixture
def fake_trials(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Trials that start as processes and write a result; returns the ids started, in order.
    The first one started also asks the run to stop, as a person would while it runs."""
    started: list[str] = []

    def start(spec, trial_dir, repo, timeout_s, slot=0, jobs=1):  # noqa: ANN001, ANN202
        (trial_dir / "logs").mkdir(parents=True, exist_ok=True)
        if not started:
            (trial_dir.parent.parent / matrix.STOP_FILE).touch()
        started.append(spec.trial_id())
        argv = [sys.executable, "-c", FAKE_TRIAL, str(trial_dir), spec.trial_id()]
        popen = subprocess.Popen(argv)
        return matrix._Running(spec, trial_dir, popen, slot)

    monkeypatch.setattr(matrix, "_start_trial", start)
    monkeypatch.setattr(matrix, "prepare_content", lambda specs, repo: None)
    monkeypatch.setattr(matrix, "build_report", lambda run_dir: 0)
    monkeypatch.setattr(matrix, "sweep_stale", lambda: [])
    return started


def test_stop_file_lets_the_running_trial_finish_and_starts_no_other(
    tmp_path: Path, fake_trials: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    specs = [TrialSpec("A1", "user", "bbr", "lrf", "dashjs", 60, rep, rep + 1) for rep in range(3)]
    run_dir = tmp_path / "run"
    assert matrix.run_matrix(specs, run_dir, REPO, jobs=1, argv=["test"]) == 130
    out = capsys.readouterr()
    assert f"touch {run_dir / matrix.STOP_FILE}" in out.out
    assert "stop requested" in out.err and "none of the 2 left starts" in out.err
    # The running trial was not cut short: it finished ok; the other two never started.
    assert fake_trials == [specs[0].trial_id()]
    result = json.loads((run_dir / "trials" / specs[0].trial_id() / "result.json").read_text())
    assert result["status"] == "ok"
    assert not (run_dir / matrix.STOP_FILE).exists()
    # The same command resumes with the two left, and runs through.
    assert matrix.run_matrix(specs, run_dir, REPO, jobs=1, argv=["test"]) == 0
    assert fake_trials == [s.trial_id() for s in specs]
