"""A study archive holds every finished attempt once, reads back as the run's own table,
and is what a new checkout resumes from: the study's runner skips what it holds."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from testbed.reproduce import archive, seed002_study
from testbed.reproduce.seed002_emulated import collect
from testbed.reproduce.seed002_study import run_summary

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "run-small"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    copy = tmp_path / "results" / "emulate-S0"
    shutil.copytree(FIXTURE, copy)
    return copy


def test_an_archive_reads_back_as_the_runs_own_table(run: Path, tmp_path: Path) -> None:
    store = tmp_path / "studies" / "emulate-S0"
    # The fixture has 7 trial folders, one of them unfinished (no result.json).
    assert archive.add_new(run, store) == 6
    assert len(archive.parts(store)) == 1
    kept = json.loads((store / "run.json").read_text())
    assert kept["git_commit"] == "fixture" and "trials" not in kept and "specs" not in kept
    rows, source = run_summary(store)
    direct, _ = run_summary(run)
    # As the run's summary.csv reads back (a CSV has no empty string: it reads as NaN).
    direct = direct[direct["trial_id"].isin(rows["trial_id"])]
    direct = pd.read_csv(io.StringIO(direct.to_csv(index=False)))
    assert source == "its archive (1 parts)"
    assert list(rows["trial_id"]) == list(direct["trial_id"]) and len(rows) == 6
    columns = [c for c in direct.columns if c in rows.columns]
    assert len(columns) == len(direct.columns)
    pd.testing.assert_frame_equal(
        rows[columns].reset_index(drop=True),
        direct[columns].reset_index(drop=True),
        check_dtype=False,
    )
    assert set(rows[archive.COMMIT_COLUMN]) == {"fixture"}


def test_a_part_cut_short_leaves_the_archive_as_it_was(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill while a part is written must not leave half a gzip among the parts (every later
    read of the archive would fail); the trials stay in the run folder for the next add."""
    store = tmp_path / "studies" / "emulate-S0"
    retried = run / "trials" / "A1__user__bbr__lrf__dashjs__v10__r0__s1" / "result.json"
    first = retried.read_text()
    retried.unlink()  # unfinished in the first add
    assert archive.add_new(run, store) == 5
    retried.write_text(first)
    real_to_csv = pd.DataFrame.to_csv

    def cut_short(frame: pd.DataFrame, path, *args, **kwargs):
        real_to_csv(frame.head(1), path, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", cut_short)
    with pytest.raises(KeyboardInterrupt):
        archive.add_new(run, store)
    monkeypatch.undo()
    assert len(archive.parts(store)) == 1 and len(archive.read_attempts(store)) == 5
    assert archive.add_new(run, store) == 1 and len(archive.read_attempts(store)) == 6


def test_adding_again_adds_nothing_and_a_retry_is_a_second_attempt(
    run: Path, tmp_path: Path
) -> None:
    store = tmp_path / "studies" / "emulate-S0"
    archive.add_new(run, store)
    assert archive.add_new(run, store) == 0 and len(archive.parts(store)) == 1
    retried = run / "trials" / "A1__user__bbr__lrf__dashjs__v10__r0__s1" / "result.json"
    result = json.loads(retried.read_text())
    retried.write_text(json.dumps(result | {"valid": False, "wall_duration_s": 13.0}))
    assert archive.add_new(run, store) == 1 and len(archive.parts(store)) == 2
    assert (
        archive.attempt_counts(archive.read_attempts(store))[
            "A1__user__bbr__lrf__dashjs__v10__r0__s1"
        ]
        == 2
    )
    last = (
        archive.read_rows(store)
        .set_index("trial_id")
        .loc["A1__user__bbr__lrf__dashjs__v10__r0__s1"]
    )
    assert last["wall_duration_s"] == 13.0 and not seed002_study.truthy(last["valid"])
    # The page says which trials it read a later attempt of.
    assert run_summary(store)[1] == "its archive (2 parts; 1 trial re-run, its last attempt read)"


def test_unfinished_and_out_of_space_trials_are_not_archived(run: Path, tmp_path: Path) -> None:
    trials = sorted((run / "trials").iterdir())
    (trials[0] / "result.json").unlink()
    result = json.loads((trials[1] / "result.json").read_text())
    (trials[1] / "result.json").write_text(json.dumps(result | {"out_of_space": True}))
    assert archive.add_new(run, tmp_path / "store") == 4


def test_the_study_resumes_from_its_archive(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new checkout has no run folder: the runner gets only the trials the archive lacks,
    and what they finish is appended."""
    from testbed import plan

    matrix = seed002_study.emulated_matrices(root=str(tmp_path / "results"))[0]
    store = seed002_study.archive_of(matrix, tmp_path)
    archive.add_new(run, store)
    held = set(archive.read_rows(store)["trial_id"])
    fake_ids = [*sorted(held)[:3], "B1__new__r0__s1", "B1__new__r1__s2"]

    class Spec:
        def __init__(self, trial_id: str) -> None:
            self.id = trial_id

        def trial_id(self) -> str:
            return self.id

    given: list[str] = []

    def fake_run_plan(specs, run_dir, **_):
        given.extend(s.trial_id() for s in specs)
        return 0

    monkeypatch.setattr(plan, "specs_for", lambda *a: [Spec(t) for t in fake_ids])
    monkeypatch.setattr(plan, "run_plan", fake_run_plan)
    monkeypatch.setattr(seed002_study, "set_aside_for_retry", lambda run_dir: [])
    assert seed002_study.run_study_matrix(matrix, tmp_path) == 0
    assert given == ["B1__new__r0__s1", "B1__new__r1__s2"]


def test_which_archived_trials_are_finished(run: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = run / "trials" / "A1__user__bbr__rr__dashjs__v10__r0__s1" / "result.json"
    result = json.loads(first.read_text())
    first.write_text(json.dumps(result | {"valid": False}))
    archive.add_new(run, store)
    every = set(archive.read_rows(store)["trial_id"])
    # Simulated: deterministic, nothing is run again. Emulated: an invalid first attempt is
    # re-run once (pre-registration §5), and after its re-run it is finished whatever it gave.
    assert seed002_study.finished_ids(store, "sim") == every
    emulated = seed002_study.finished_ids(store, "emulate")
    # The fixture's own not-ok trials (one invalid, one failed) and the one made invalid here.
    assert every - emulated == {
        "A1__user__bbr__rr__dashjs__v10__r0__s1",
        "A1__user__cubic__lrf__dashjs__v10__r1__s2",
        "A1__user__cubic__rr__dashjs__v10__r0__s1",
    }
    first.write_text(json.dumps(result | {"valid": False, "wall_duration_s": 14.0}))
    archive.add_new(run, store)
    assert every - seed002_study.finished_ids(store, "emulate") == {
        "A1__user__cubic__lrf__dashjs__v10__r1__s2",
        "A1__user__cubic__rr__dashjs__v10__r0__s1",
    }
    assert seed002_study.finished_ids(tmp_path / "none", "sim") == set()


def test_a_page_reads_each_trials_commit_from_the_archive(run: Path, tmp_path: Path) -> None:
    store = tmp_path / "studies" / "emulate-S0"
    archive.add_new(run, store)
    _, sources = collect([store], "emulate")
    assert len(sources) == 1 and sources[0].summary_from == "its archive (1 parts)"


def test_the_cli_refuses_what_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert archive.main([str(tmp_path / "nothing"), str(tmp_path / "store")]) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert not (tmp_path / "store").exists()


def test_each_step_of_the_rule_decides_on_its_own_seeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archive may hold more seeds than a step of §5's rule (a setting run at its cap
    before): each step reads only repetitions below its own count, and adds a block while
    a claim is undecided, up to the cap."""
    reps_run: list[int] = []
    seen: list[list[int]] = []
    held = pd.DataFrame({"trial_id": [f"t{r}" for r in range(30)], "rep": range(30),
                         "status": "ok", "valid": True})  # fmt: skip
    monkeypatch.setattr(
        seed002_study, "run_study_matrix", lambda m, repo: reps_run.append(m.reps) or 0
    )
    monkeypatch.setattr(seed002_study.archive, "read_rows", lambda folder: held)
    monkeypatch.setattr(seed002_study, "decide_all", lambda rows, engine: rows)
    monkeypatch.setattr(
        seed002_study, "undecided", lambda rows: seen.append(sorted(rows["rep"])) or ["P1"]
    )
    assert seed002_study.run_study("sim", [seed002_study.SETTINGS[0]], None, tmp_path) == 0
    assert reps_run == [10, 15, 20, 25, 30]
    assert seen == [list(range(n)) for n in (10, 15, 20, 25)]


def test_each_row_names_the_content_its_player_read(run: Path, tmp_path: Path) -> None:
    """A simulated player's first line names the content folder (whose name hashes FFmpeg's
    version): the rows keep it, so that two runs of the same code can be told apart by the
    video they played. An emulated player names a URL: not recorded."""
    sim = run / "trials" / "A1__user__bbr__lrf__dashjs__v10__r0__s1" / "player.jsonl"
    lines = sim.read_text().splitlines(keepends=True)
    start = {"event": "start", "mpd": "/x/cache/content/ab12cd34ef567890/manifest.mpd"}
    sim.write_text(json.dumps(start) + "\n" + "".join(lines[1:]))
    store = tmp_path / "store"
    archive.add_new(run, store)
    rows = archive.read_rows(store).set_index("trial_id")[archive.CONTENT_COLUMN]
    assert rows["A1__user__bbr__lrf__dashjs__v10__r0__s1"] == "ab12cd34ef567890"
    assert rows["A1__user__bbr__lrf__dashjs__v10__r1__s2"] == "not recorded"
    _, sources = collect([store], "emulate")
    assert "ab12cd34ef567890" in sources[0].contents


def test_each_row_names_the_machine_it_ran_on(run: Path, tmp_path: Path) -> None:
    """A study can outlive its machine (and its raw folders, which hold trial.json): each
    row keeps the kernel and tool versions its trial ran with, and a page counts the
    trials per machine. A trial.json without an env is "not recorded"."""
    trials = run / "trials"
    moved = trials / "A1__user__bbr__lrf__dashjs__v10__r1__s2" / "trial.json"
    spec = json.loads(moved.read_text())
    spec["env"] = {**spec["env"], "kernel": "6.18.99", "loadavg_1m": 1.5,
                   "tools": {"chromium": "Chromium 156.0.8078.108 built on Debian"}}  # fmt: skip
    moved.write_text(json.dumps(spec))
    bare = trials / "A1__user__bbr__rr__dashjs__v10__r0__s1" / "trial.json"
    bare.write_text(
        json.dumps({k: v for k, v in json.loads(bare.read_text()).items() if k != "env"})
    )
    store = tmp_path / "store"
    archive.add_new(run, store)
    rows = archive.read_rows(store).set_index("trial_id")[archive.ENV_COLUMN]
    # Kernel, tools, Python and CPUs only: not the commit (its own column), the host's name
    # or the load.
    assert json.loads(rows["A1__user__bbr__lrf__dashjs__v10__r1__s2"]) == {
        "cpus": 2,
        "kernel": "6.18.99",
        "tools": {"chromium": "Chromium 156.0.8078.108 built on Debian"},
    }
    assert rows["A1__user__bbr__rr__dashjs__v10__r0__s1"] == archive.NOT_RECORDED
    _, sources = collect([store], "emulate")
    assert sources[0].machines == (
        ("6.18.44, no Chromium", 4),
        ("6.18.99, Chromium 156.0.8078.108", 1),
        (archive.NOT_RECORDED, 1),
    )


def test_a_pages_own_run_neither_reads_nor_writes_the_studys_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--reproduce seed002` without --from runs a preview into a fresh folder: the study's
    archive must not make it skip its trials, and it must not add to that archive."""
    from testbed import plan
    from testbed.reproduce.base import Options
    from testbed.reproduce.seed002_matrix import seed002_matrix

    m = seed002_matrix(Options(), tmp_path / "page" / "sim", emulated=False)
    assert m.archive is None and seed002_study.sim_matrix(seed002_study.MAIN).archive
    given: list[str] = []
    monkeypatch.setattr(
        plan, "specs_for", lambda *a: [type("S", (), {"trial_id": lambda s: "t1"})()]
    )
    monkeypatch.setattr(
        plan, "run_plan", lambda specs, run_dir, **_: given.extend(s.trial_id() for s in specs) or 0
    )
    assert seed002_study.run_study_matrix(m, tmp_path) == 0
    assert given == ["t1"] and not (tmp_path / "studies").exists()


def test_discard_deletes_only_the_folders_the_archive_holds(run: Path, tmp_path: Path) -> None:
    """--discard-raw: a finished trial whose attempt the archive holds loses its folder; one
    finished after the archive was written (a new digest) and the unfinished one stay."""
    store = tmp_path / "store"
    assert archive.discard_archived(run, store) == (0, 0)  # no archive: nothing goes
    archive.add_new(run, store)
    trials = sorted(p for p in (run / "trials").iterdir())
    unfinished = [p.name for p in trials if not (p / "result.json").exists()]
    later = trials[0] / "result.json"
    later.write_text(json.dumps(json.loads(later.read_text()) | {"wall_duration_s": 99.0}))
    folders, size = archive.discard_archived(run, store)
    assert folders == 5 and size > 0
    assert sorted(p.name for p in (run / "trials").iterdir()) == sorted(
        [trials[0].name, *unfinished]
    )
    assert len(unfinished) == 1


def test_the_study_discards_raw_logs_only_when_asked_and_still_resumes(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from testbed import plan

    matrix = seed002_study.emulated_matrices(root=str(tmp_path / "results"))[0]
    assert Path(matrix.out) == run
    store = seed002_study.archive_of(matrix, tmp_path)
    given: list[list[str]] = []
    ids = sorted(p.name for p in (run / "trials").iterdir())

    class Spec:
        def __init__(self, trial_id: str) -> None:
            self.id = trial_id

        def trial_id(self) -> str:
            return self.id

    monkeypatch.setattr(plan, "specs_for", lambda *a: [Spec(t) for t in ids])
    monkeypatch.setattr(
        plan,
        "run_plan",
        lambda specs, run_dir, **_: given.append([s.trial_id() for s in specs]) or 0,
    )
    monkeypatch.setattr(seed002_study, "set_aside_for_retry", lambda run_dir: [])
    assert seed002_study.run_study_matrix(matrix, tmp_path) == 0
    assert len(list((run / "trials").iterdir())) == 7  # by default the raw logs stay
    assert seed002_study.run_study_matrix(replace(matrix, discard_raw=True), tmp_path) == 0
    assert len(list((run / "trials").iterdir())) == 1  # the unfinished one
    assert len(archive.read_rows(store)) == 6
    # What the next run is given does not depend on the folders: the archive decides.
    assert seed002_study.run_study_matrix(matrix, tmp_path) == 0
    assert given[1] == given[2]


def test_the_cli_passes_discard_raw_to_the_study(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(
        seed002_study, "run_study", lambda *a, discard_raw=False: seen.append(discard_raw) or 0
    )
    assert seed002_study.main(["--settings", "S6", "--discard-raw"]) == 0
    assert seed002_study.main(["--settings", "S6"]) == 0
    assert seen == [True, False]
