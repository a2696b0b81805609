"""Runs build the Rust binaries from the checkout first (testbed/rust_build.py): a trial
records the checkout's commit, so it must not run a binary built from other sources."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testbed import engine_sim, plan, rust_build
from testbed.spec import TrialSpec

REPO = Path(__file__).resolve().parents[1]


def _spec() -> TrialSpec:
    return TrialSpec(
        scenario="netem-scenarios/A1.toml", transport="user", cc="lia", sched="lrf",
        player="dashjs", video_duration_s=60, rep=0, seed=1,
    )  # fmt: skip


def test_a_current_checkout_builds_nothing_and_passes() -> None:
    assert rust_build.ensure_built(REPO) is None


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (scripts/setup.sh)")
def test_a_build_that_fails_is_reported(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "broken"\nversion = "0.1.0"\nedition = "2021"\n\n[workspace]\n'
    )
    (tmp_path / "src" / "main.rs").write_text("fn main() { this is not rust }\n")
    problem = rust_build.ensure_built(tmp_path)
    assert problem is not None and "cargo build failed" in problem


def test_a_tree_without_the_workspace_builds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stub binaries only (the netns tests' stand-in repository): cargo is not even looked for.
    monkeypatch.setattr(rust_build.shutil, "which", lambda _: pytest.fail("cargo looked for"))
    assert rust_build.ensure_built(tmp_path) is None


def test_without_cargo_the_reason_names_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rust_build.shutil, "which", lambda _: None)
    monkeypatch.setattr(rust_build.Path, "home", lambda: tmp_path)
    problem = rust_build.ensure_built(REPO)
    assert problem is not None and "scripts/setup.sh" in problem


def _record(monkeypatch: pytest.MonkeyPatch, built: str | None) -> list[str]:
    calls: list[str] = []

    def build(repo: Path) -> str | None:
        calls.append("build")
        return built

    def run(*_args, **_kwargs) -> int:
        calls.append("run")
        return 0

    monkeypatch.setattr(rust_build, "ensure_built", build)
    monkeypatch.setattr(engine_sim, "run_sim_matrix", run)
    monkeypatch.delenv(engine_sim.MPSIM_ENV, raising=False)
    return calls


def test_a_simulated_run_builds_before_its_first_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _record(monkeypatch, built=None)
    assert plan.run_plan([_spec()], tmp_path / "run", engine="sim", repo=REPO) == 0
    assert calls == ["build", "run"]


def test_a_failed_build_runs_nothing_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _record(monkeypatch, built="cargo build failed (exit 101)")
    assert plan.run_plan([_spec()], tmp_path / "run", engine="sim", repo=REPO) == 2
    assert calls == ["build"]
    assert "cargo build failed" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_named_mpsim_build_is_run_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _record(monkeypatch, built="would fail")
    monkeypatch.setenv(engine_sim.MPSIM_ENV, "/elsewhere/mpsim")
    assert plan.run_plan([_spec()], tmp_path / "run", engine="sim", repo=REPO) == 0
    assert calls == ["run"]
