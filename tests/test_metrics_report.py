"""metrics.report on the run-small fixture: summary.csv, report.html, CLI, Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from metrics import browser, tables
from metrics.report import NOT_STARTED_REASON, build

REPO = Path(__file__).resolve().parents[1]
RUN_SMALL = Path(__file__).parent / "fixtures" / "run-small"
FAILED = "A1__user__cubic__rr__dashjs__v10__r0__s1"
INCOMPLETE = "A1__user__bbr__rr__dashjs__v10__r1__s2"
INVALID = "A1__user__cubic__lrf__dashjs__v10__r1__s2"
NOT_STARTED = "A1__user__cubic__rr__dashjs__v10__r1__s2"
# one scenario: video figure + transmission figure + one trial over time
EXPECTED_IMAGES = 3


@pytest.fixture(scope="module")
def built_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = Path(shutil.copytree(RUN_SMALL, tmp_path_factory.mktemp("report") / "run-small"))
    build(run)
    return run


def test_summary_csv_has_every_trial_with_reasons(built_run: Path) -> None:
    summary = pd.read_csv(built_run / "summary.csv").set_index("trial_id")
    assert len(summary) == 8  # 7 trial folders + 1 planned in run.json, never started
    assert summary.loc[NOT_STARTED, "status"] == "incomplete"
    assert summary.loc[NOT_STARTED, "reason"] == NOT_STARTED_REASON
    assert (summary.loc[NOT_STARTED, "cc"], summary.loc[NOT_STARTED, "rep"]) == ("cubic", 1)
    assert summary.loc[FAILED, "status"] == "failed"
    assert summary.loc[FAILED, "reason"] == "player timeout after 120 s"
    assert summary.loc[INCOMPLETE, "status"] == "incomplete"
    assert summary.loc[INCOMPLETE, "reason"] == "no result.json: interrupted"
    # the killed trial's cut line is reported with file and line, not skipped
    assert re.search(r"player\.jsonl:\d+: invalid JSON", summary.loc[INCOMPLETE, "invalid_reason"])
    assert "overloaded" in summary.loc[INVALID, "invalid_reason"]
    assert not summary.loc[INVALID, "valid"]
    ok = summary.loc["A1__user__bbr__lrf__dashjs__v10__r1__s2"]
    assert (ok["stalls"], ok["stall_total_ms"], ok["dropped_frames"]) == (3, 1000.0, 20)
    assert (ok["pkts_down_wifi"], ok["pkts_down_lte"], ok["retrans_pkts_wifi"]) == (80, 40, 6)
    spec = {"scenario", "transport", "cc", "sched", "player", "video_duration_s", "rep", "seed"}
    assert spec | {"cc_opts", "sched_opts"} <= set(summary.columns)


def test_tidy_tables_are_written(built_run: Path) -> None:
    stalls = pd.read_csv(built_run / "tables" / "stalls.csv.gz")
    assert len(stalls) == 1 + 3 + 0 + 1 + 1 + 0 + 1  # the stalls of the 7 trial folders
    assert stalls["duration_ms"].sum() == 500 + 1000 + 1000 + 2000 + 750
    intervals = pd.read_csv(built_run / "tables" / "path_intervals.csv.gz")
    # trials x paths x 11 intervals: emulator lines end 0.1..1.0 s; transport samples,
    # stamped 1 ns after each 100 ms, fall into the intervals ending 0.2..1.1 s
    assert len(intervals) == 7 * 2 * 11
    assert intervals["cwnd_bytes"].isna().sum() == 7 * 2  # 0.1 s: no transport sample yet
    assert set(intervals["path"]) == {"wifi", "lte"}
    samples = pd.read_csv(built_run / "tables" / "samples.csv.gz")
    assert len(samples) == 7 * 16 - 1  # the killed trial's last sample line is cut: reported


def test_report_is_self_contained_and_lists_problems(built_run: Path) -> None:
    page = (built_run / "report.html").read_text()
    problems = page[page.index('id="problems"') : page.index("Run specification")]
    for trial_id in (FAILED, INCOMPLETE, INVALID, NOT_STARTED):
        assert trial_id in problems
    assert "./run_trials.sh --cc bbr,cubic --sched lrf,rr" in page  # from run.json
    assert "player timeout after 120 s" in problems and "no result.json: interrupted" in problems
    sources = re.findall(r'\b(?:src|href)="([^"]*)"', page)
    assert len(sources) == EXPECTED_IMAGES
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    assert "http://" not in page and "https://" not in page
    assert (built_run / "aggregate.csv").is_file()
    assert not list(built_run.glob("*.partial"))


def test_an_unused_path_is_shown_in_the_trial_table_and_counted(tmp_path: Path) -> None:
    run = Path(shutil.copytree(RUN_SMALL, tmp_path / "run-small"))
    flagged = "A1__user__bbr__lrf__dashjs__v10__r0__s1"
    result_path = run / "trials" / flagged / "result.json"
    result_path.write_text(result_path.read_text().replace("}", ', "paths_unused": ["lte"]}'))
    build(run)
    summary = pd.read_csv(run / "summary.csv").set_index("trial_id")
    assert summary.loc[flagged, "paths_unused"] == "lte" and summary.loc[flagged, "valid"]
    page = (run / "report.html").read_text()
    assert "1 counted trial(s) left a path unused" in page
    trials = page[page.index("<h2>All trials</h2>") :]
    header = re.findall(r"<th>([^<]*)</th>", trials[: trials.index("</thead>")])
    assert header[:4] == ["trial_id", "status", "valid", "paths_unused"]
    assert "<td>lte</td>" in trials[trials.index(flagged) :].split("</tr>")[0]


def test_cli_rejects_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "metrics", "report", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "not a run folder" in done.stderr and str(tmp_path) in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_cli_report_prints_the_report_path(tmp_path: Path) -> None:
    run = Path(shutil.copytree(RUN_SMALL, tmp_path / "run"))
    done = subprocess.run(
        [sys.executable, "-m", "metrics", "report", str(run)],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(run / "report.html")


needs_chromium = pytest.mark.skipif(not browser.CHROMIUM.exists(), reason="no Chromium")


@needs_chromium
def test_render_check_catches_console_errors_and_broken_images(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    script = (
        'window.addEventListener("load", () => { const i = Array.from(document.images);'
        " document.body.dataset.imagesOk = String(i.filter((x) => x.naturalWidth > 0).length);"
        " document.body.dataset.imagesTotal = String(i.length); });"
    )
    page.write_text(
        f"<!DOCTYPE html><html><head><script>{script}</script></head><body>"
        '<img alt="bad" src="data:image/png;base64,AAAA">'
        "<script>notDefined();</script></body></html>"
    )
    check = browser.check_render(page)
    assert any("notDefined" in m for m in check.console_messages)
    assert (check.images_ok, check.images_total) == (0, 1)
    assert not check.ok


@needs_chromium
def test_report_renders_in_chromium_without_console_errors_and_screenshots(
    built_run: Path, tmp_path: Path
) -> None:
    png = tmp_path / "report.png"
    check = browser.screenshot(built_run / "report.html", png)  # = check_render + a PNG
    assert check.console_messages == []
    assert check.images_total == EXPECTED_IMAGES
    assert check.images_ok == EXPECTED_IMAGES
    assert check.page_height_px and check.page_height_px > 1000
    assert check.ok
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 20_000


def test_folder_without_trial_json_gets_its_spec_from_run_json(tmp_path: Path) -> None:
    run = Path(shutil.copytree(RUN_SMALL, tmp_path / "run"))
    (run / "trials" / INCOMPLETE / "trial.json").unlink()
    build(run)
    row = pd.read_csv(run / "summary.csv").set_index("trial_id").loc[INCOMPLETE]
    assert (row["status"], row["reason"]) == ("incomplete", "no result.json: interrupted")
    assert (row["cc"], row["sched"], row["rep"]) == ("bbr", "rr", 1)
    assert "no trial.json" in row["invalid_reason"]


def test_scenario_with_only_invalid_trials_is_shown_with_a_warning(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN_SMALL / "trials" / INVALID, run / "trials" / INVALID)
    page = build(run).read_text()
    assert "No valid trial in this scenario" in page
    assert page.count("data:image/png;base64,") == EXPECTED_IMAGES
    assert pd.read_csv(run / "aggregate.csv").empty  # the numbers on file stay counted-only


def test_cli_timeseries_of_one_trial(tmp_path: Path) -> None:
    png = tmp_path / "trial.png"
    known = Path(__file__).parent / "fixtures" / "trial-known"
    done = subprocess.run(
        [sys.executable, "-m", "metrics", "timeseries", str(known), str(png)],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = subprocess.run(
        [sys.executable, "-m", "metrics", "timeseries", str(tmp_path / "none"), str(png)],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert missing.returncode == 2 and "no trial.json" in missing.stderr


def test_empty_run_still_gets_a_report(tmp_path: Path) -> None:
    (tmp_path / "run" / "trials").mkdir(parents=True)
    page = build(tmp_path / "run").read_text()
    assert "0 trial(s)" in page
    assert pd.read_csv(tmp_path / "run" / "summary.csv").empty


def test_a_line_off_schema_is_listed_with_file_line_and_field(tmp_path: Path) -> None:
    run = tmp_path / "run"
    odd = Path(
        shutil.copytree(Path(__file__).parent / "fixtures" / "trial-known", run / "trials" / "odd")
    )
    player = odd / "player.jsonl"
    player.write_text(player.read_text().replace('"duration_ms": 1500.0', '"duration_ms": "long"'))
    page = build(run).read_text()
    summary = pd.read_csv(run / "summary.csv").set_index("trial_id")
    odd_row = summary.loc["A1__user__bbr__lrf__dashjs__v60__r0__s1"]
    assert (odd_row["status"], odd_row["valid"]) == ("ok", False)
    assert 'player.jsonl:7: field "duration_ms"' in odd_row["invalid_reason"]
    assert "player.jsonl:7" in page


def test_a_trial_that_breaks_a_metric_is_listed_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN_SMALL / "trials", run / "trials")
    shutil.copytree(Path(__file__).parent / "fixtures" / "trial-known", run / "trials" / "odd")
    real_player_metrics = tables.player_metrics

    def breaks_on_the_odd_trial(trial: Any) -> dict:
        if trial.dir.name == "odd":
            raise ValueError("a metric that cannot be computed")
        return real_player_metrics(trial)

    monkeypatch.setattr(tables, "player_metrics", breaks_on_the_odd_trial)
    page = build(run).read_text()
    summary = pd.read_csv(run / "summary.csv").set_index("trial_id")
    assert len(summary) == 8  # the 7 folders of run-small (no run.json here) + the odd one
    odd_row = summary.loc["A1__user__bbr__lrf__dashjs__v60__r0__s1"]
    assert (odd_row["status"], odd_row["valid"]) == ("ok", False)
    assert odd_row["invalid_reason"].startswith("metrics could not process this trial: ValueError")
    assert "metrics could not process this trial" in page


def test_tables_are_rewritten_only_when_the_trials_or_the_code_changed(tmp_path: Path) -> None:
    run = Path(shutil.copytree(RUN_SMALL, tmp_path / "run"))
    for trial in (run / "trials").iterdir():
        if not (trial / "result.json").is_file():
            shutil.rmtree(trial)  # an unfinished trial may change: tables always rewritten
    build(run)
    written = {p.name: p.stat().st_mtime_ns for p in (run / "tables").glob("*.csv.gz")}
    assert len(written) == 5 and (run / "tables" / ".source-key").is_file()
    build(run)
    again = {p.name: p.stat().st_mtime_ns for p in (run / "tables").glob("*.csv.gz")}
    assert again == written  # same trials, same code: left as they were
    player = next((run / "trials").glob("*/player.jsonl"))
    player.write_text(player.read_text())  # same content, new time: the trial may differ
    build(run)
    third = {p.name: p.stat().st_mtime_ns for p in (run / "tables").glob("*.csv.gz")}
    assert all(third[name] > written[name] for name in written)
    stalls = pd.read_csv(run / "tables" / "stalls.csv.gz")
    assert set(stalls.columns) >= {"trial_id", "duration_ms"}


def test_statistics_beside_the_figures_give_the_same_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large run computes its statistics in a forked process while the figures are drawn;
    the page and the CSVs must be those of the run computed in one process."""
    from metrics import report

    if (os.cpu_count() or 1) < 2:
        pytest.skip("the statistics run beside the figures only with 2 CPUs or more")
    outputs = []
    for name, threshold in (("inline", 10**9), ("beside", 1)):
        run = Path(shutil.copytree(RUN_SMALL, tmp_path / name / "run-small"))
        monkeypatch.setattr(report, "PARALLEL_MIN_TRIALS", threshold)
        page = build(run).read_text()
        page = re.sub(r"Generated \S+ \S+ UTC", "", page)
        csvs = [(run / f).read_text() for f in ("comparisons.csv", "ranking.csv")]
        outputs.append((page.replace(str(run), "RUN"), csvs))
    assert outputs[0] == outputs[1]
    assert "What this run decided" in outputs[1][0]
