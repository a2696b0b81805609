# ruff: noqa: E501  (trial ids are long string literals)
"""--ladder and --recv-window-bytes: part of the spec and its id, recorded in trial.json and
summary.csv, passed to mpproxy, mpsim and the content preparation; bad values exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from test_topology_fakes import REPO

from metrics.aggregate import GROUP_COLUMNS, with_option_columns
from metrics.tables import spec_values
from testbed import plan
from testbed.env import kernel_caps
from testbed.spec import TrialSpec


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "testbed", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_ladder_and_window_are_part_of_the_spec_and_its_id():
    spec = TrialSpec("A1", "user", "bbr", "lrf", "dashjs", 180, 0, 1,
                     ladder="720p-top-only", recv_window_bytes=131072)  # fmt: skip
    assert (
        spec.trial_id()
        == "A1__user__bbr__lrf__dashjs__v180__ladder-720p-top-only__rwnd131072__r0__s1"
    )
    assert spec.option_argv() == ["--recv-window-bytes", "131072"]
    assert TrialSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert spec.problems() == []
    # specs written before the options existed: the default ladder, an autotuned window
    older = {k: v for k, v in spec.to_dict().items() if k not in ("ladder", "recv_window_bytes")}
    plain = TrialSpec.from_dict(older)
    assert (plain.ladder, plain.recv_window_bytes) == ("720p", None)
    assert plain.trial_id() == "A1__user__bbr__lrf__dashjs__v180__r0__s1"
    assert plain.option_argv() == []


def test_spec_problems_name_what_cannot_take_the_options():
    tcp = TrialSpec("A1", "tcp-lte", None, None, "dashjs", 60, 0, 1, recv_window_bytes=131072)
    assert any("takes no --recv-window-bytes" in r for r in tcp.problems())
    control = TrialSpec("control", "none", None, None, None, 0, 0, 1, ladder="720p-top-only")
    assert any("plays no video" in r for r in control.problems())


def test_the_plan_carries_both_options_to_every_video_trial():
    args = plan.request(scenario=["control"], transport=["user"], cc=["bbr"], sched=["lrf"],
                        ladder="720p-top-only", recv_window_bytes=16 * 2**20, reps=2)  # fmt: skip
    validated = plan.validate(args, REPO, kernel_caps())
    specs = plan.expand(validated)
    assert len(specs) == 2
    assert {(s.ladder, s.recv_window_bytes) for s in specs} == {("720p-top-only", 16 * 2**20)}


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("ladder", "4k", "--ladder 4k: unknown; valid: 720p, 1080p, 720p-top-only"),
        (
            "recv_window_bytes",
            1000,
            "--recv-window-bytes 1000: must be an integer number of bytes >= 65536",
        ),
    ],
)
def test_plan_refuses_bad_values_naming_the_option(option, value, message):
    args = plan.request(scenario=["control"], transport=["user"], cc=["bbr"], sched=["lrf"],
                        **{option: value})  # fmt: skip
    with pytest.raises(plan.UsageError, match=message):
        plan.validate(args, REPO, kernel_caps())


def test_plan_refuses_a_window_for_a_transport_that_takes_none():
    args = plan.request(scenario=["control"], transport=["tcp-lte"], recv_window_bytes=131072)
    with pytest.raises(plan.UsageError, match="transport tcp-lte takes none"):
        plan.validate(args, REPO, kernel_caps())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--recv-window-bytes", "1000"], "--recv-window-bytes: 1000 must be >= 65536 bytes"),
        (["--recv-window-bytes", "big"], "'big' is not an integer number of bytes or auto"),
        (["--ladder", "4k"], "argument --ladder: invalid choice: '4k'"),
    ],
)
def test_cli_bad_values_exit_2_naming_the_option(tmp_path, args, message):
    out = tmp_path / "run"
    done = _cli("--scenario", "control", *args, "--out", str(out), "--dry-run")
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not out.exists()


def test_cli_dry_run_names_cells_that_differ_only_in_the_options_apart():
    common = ("--scenario", "control", "--cc", "cubic", "--sched", "lrf", "--dry-run")
    done = _cli(*common, "--ladder", "720p-top-only", "--recv-window-bytes", "131072")
    assert done.returncode == 0, done.stderr
    ids = [line.strip() for line in done.stdout.splitlines()[1:]]
    assert ids == [
        "control__user__cubic__lrf__dashjs__v60__ladder-720p-top-only__rwnd131072__r0__s1"
    ]
    auto = _cli(*common, "--recv-window-bytes", "auto")
    assert [x.strip() for x in auto.stdout.splitlines()[1:]] == [
        "control__user__cubic__lrf__dashjs__v60__r0__s1"
    ]


def test_the_window_reaches_mpproxy_and_mpsim(tmp_path):
    from testbed import engine_sim
    from testbed.transports import user

    spec = TrialSpec(
        "control", "user", "cubic", "lrf", "dashjs", 10, 0, 1, recv_window_bytes=131072
    )

    class Ctx:
        repo, dir, t0_ns = REPO, tmp_path, 1

    Ctx.spec = spec
    (tmp_path / "manifest.mpd").write_text("<MPD/>")
    sim = engine_sim._trial_argv(spec, tmp_path, REPO, tmp_path / "manifest.mpd")
    for argv in (user.mpproxy_argv(Ctx, "server"), user.mpproxy_argv(Ctx, "client"), sim):
        at = argv.index("--recv-window-bytes")
        assert argv[at + 1] == "131072"


def test_summary_columns_record_the_options_and_keep_cells_apart():
    import pandas as pd

    spec = TrialSpec("A1", "user", "bbr", "lrf", "dashjs", 60, 0, 1,
                     ladder="720p-top-only", recv_window_bytes=131072).to_dict()  # fmt: skip
    row = spec_values(spec)
    assert (row["ladder"], row["recv_window_bytes"]) == ("720p-top-only", "131072")
    older = {k: v for k, v in spec.items() if k not in ("ladder", "recv_window_bytes")}
    row = spec_values(older)
    assert (row["ladder"], row["recv_window_bytes"]) == ("720p", "auto")
    assert {"ladder", "recv_window_bytes"} <= set(GROUP_COLUMNS)
    old_summary = pd.DataFrame({"cc": ["bbr"]})  # a summary.csv from before the columns
    filled = with_option_columns(old_summary)
    assert filled.loc[0, "ladder"] == "720p" and filled.loc[0, "recv_window_bytes"] == "auto"


def test_sim_engine_prepares_the_content_of_each_ladder(tmp_path, monkeypatch):
    """run_sim_matrix encodes one content folder per (clip, ladder) and gives each trial its
    own ladder's MPD."""
    from server import content
    from testbed import engine_sim

    prepared = []

    def fake_prepare(duration_s, input_file=None, *, cache, ladder):
        prepared.append((duration_s, len(ladder)))
        folder = tmp_path / f"content-{duration_s}-{len(ladder)}"
        folder.mkdir(exist_ok=True)
        return folder

    seen = {}

    def fake_run(spec, trial_dir, run_dir, repo, mpd, commit):
        seen[spec.ladder] = mpd
        return {"status": "ok", "wall_duration_s": 0.0}

    monkeypatch.setattr(content, "prepare", fake_prepare)
    monkeypatch.setattr(engine_sim, "_run_trial", fake_run)
    specs = [TrialSpec("control", "user", "cubic", "lrf", "dashjs", 10, 0, 1, ladder=name)
             for name in ("720p", "720p-top-only")]  # fmt: skip
    if not (REPO / engine_sim.MPSIM_BINARY).is_file():
        pytest.skip("mpsim not built")
    status = engine_sim.run_sim_matrix(specs, tmp_path / "run", REPO, jobs=1, argv=[], report=False)
    assert status == 0
    assert sorted(prepared) == [(10, 1), (10, 4)]
    assert seen["720p"].parent.name == "content-10-4"
    assert seen["720p-top-only"].parent.name == "content-10-1"
