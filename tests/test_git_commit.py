"""A trial's commit: `-dirty` when tracked files differ from HEAD, and which ones."""

import shutil
import subprocess
from pathlib import Path

import pytest

from testbed.env import collect_env, git_commit, git_dirty_paths, short_commit
from testbed.matrix import dirty_checkout_note

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "studies").mkdir()
    (tmp_path / "studies" / "run.json").write_text("{}\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return tmp_path


def test_clean_checkout_records_its_commit_alone(repo: Path) -> None:
    (repo / "untracked.log").write_text("a log beside the code does not count\n")
    head = _git(repo, "rev-parse", "HEAD")
    assert git_dirty_paths(repo) == []
    assert git_commit(repo) == head


def test_changed_tracked_file_marks_the_commit_and_is_named(repo: Path) -> None:
    (repo / "studies" / "run.json").write_text('{"resumed": 1}\n')
    head = _git(repo, "rev-parse", "HEAD")
    assert git_dirty_paths(repo) == ["studies/run.json"]
    assert git_commit(repo) == head + "-dirty"
    env = collect_env(repo)
    assert env["git_commit"] == head + "-dirty"
    assert env["git_dirty_paths"] == ["studies/run.json"]


def test_outside_a_repository_nothing_is_claimed(tmp_path: Path) -> None:
    assert git_commit(tmp_path) is None
    assert git_dirty_paths(tmp_path) is None


def test_short_commit_keeps_the_dirty_mark() -> None:
    full = "c3be9f78cd5027e3139702ed7dbbcfcabfa22f9f"
    assert short_commit(full) == "c3be9f78cd50"
    assert short_commit(full + "-dirty") == "c3be9f78cd50-dirty"
    assert short_commit("not recorded") == "not recorded"


def test_a_run_on_a_dirty_checkout_says_so_before_it_starts(repo: Path) -> None:
    assert dirty_checkout_note(repo) is None
    (repo / "studies" / "run.json").write_text('{"resumed": 1}\n')
    (repo / "code.py").write_text("x = 2\n")
    note = dirty_checkout_note(repo)
    assert note is not None
    assert "2 tracked file(s) differ" in note and "code.py, studies/run.json" in note
