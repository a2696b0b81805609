"""CLI and matrix: stable trial ids, up-front rejection (exit 2, nothing created), help,
dry runs, failures that do not stop the matrix, and Ctrl-C then resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_topology_fakes import REPO, make_fake_repo, needs_root, stop_gently

from testbed.spec import TrialSpec

BAD_SCENARIO = """name = "bad"
duration_s = 10.0
[paths.wifi]
rate = { bps = -5 }
delay_ms = 20.0
[paths.lte]
rate = { bps = 15000000 }
delay_ms = 20.0
"""


def test_trial_id_is_stable_and_readable():
    spec = TrialSpec("A1", "user", "bbr", "lrf", "dashjs", 60, 0, 1)
    assert spec.trial_id() == "A1__user__bbr__lrf__dashjs__v60__r0__s1"
    control = TrialSpec("control", "none", None, None, None, 0, 2, 3)
    assert control.trial_id() == "control__none__-__-__none__v0__r2__s3"
    assert TrialSpec.from_dict(spec.to_dict()) == spec
    assert TrialSpec.from_dict(control.to_dict()) == control
    assert control.to_dict()["cc"] is None and control.to_dict()["player"] is None
    # trial.json files written before None replaced the "-"/"none" strings still read
    legacy = {**control.to_dict(), "cc": "-", "sched": "-", "player": "none"}
    assert TrialSpec.from_dict(legacy) == control
    with pytest.raises(ValueError, match="player 'vlc' is unknown"):
        TrialSpec.from_dict({**spec.to_dict(), "player": "vlc"})


def test_trial_id_is_filesystem_safe_and_distinguishes_paths():
    a = TrialSpec("/tmp/my dir/x_y.toml", "tcp-wifi", "cubic", None, "dashjs", 60, 0, 1)
    b = TrialSpec("/tmp/other/x_y.toml", "tcp-wifi", "cubic", None, "dashjs", 60, 0, 1)
    for spec in (a, b):
        trial_id = spec.trial_id()
        assert all(c.isalnum() or c in "._-=+" for c in trial_id), trial_id
        assert trial_id.count("__") == 7  # the separator stays unambiguous
    assert a.trial_id() != b.trial_id()
    assert a.trial_id().startswith("x-y-")


def test_spec_from_dict_names_bad_fields():
    data = TrialSpec("A1", "user", "bbr", "lrf", "dashjs", 60, 0, 1).to_dict()
    data["colour"] = "red"
    del data["seed"]
    with pytest.raises(ValueError, match=r"unknown fields \['colour'\], missing fields \['seed'\]"):
        TrialSpec.from_dict(data)


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "testbed", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--transport", "none", "--player", "dashjs"], "carries no video"),
        (["--transport", "tcp-wifi", "--player", "none"], "--player none goes only with"),
        (["--transport", "bogus"], "--transport bogus: unknown"),
        (["--player", "vlc"], "--player vlc: unknown"),
        (["--scenario", "nope"], 'no scenario named "nope"'),
        (["--scenario", "BAD"], "paths.wifi.rate.bps = -5:"),
        (["--transport", "none", "--cc", "bbr"], "has no cc to choose"),
        (["--transport", "none", "--sched", "lrf"], "has no sched to choose"),
        (["--transport", "kernel", "--player", "dashjs", "--cc", "nosuchcc"], "not supported"),
        (["--reps", "0"], "must be at least 1"),
        (["--jobs", "0"], "must be at least 1"),
        (["--video-duration", "ten"], "is not an integer"),
        (["--seed", "-1"], "must be in 0"),
        (["--cc-opt", "hystart"], "'hystart' is not KEY=VALUE"),
        (["--sched-opt", "=3"], "'=3' is not KEY=VALUE"),
        (
            ["--transport", "kernel", "--cc", "cubic", "--cc-opt", "beta=0.5"],
            "transport kernel takes no algorithm options",
        ),
        (
            ["--transport", "tcp-wifi", "--sched-opt", "num_segments=3"],
            "transport tcp-wifi takes no algorithm options",
        ),
    ],
)
def test_invalid_options_exit_2_and_create_nothing(tmp_path, args, message):
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD_SCENARIO)
    args = [str(bad) if a == "BAD" else a for a in args]
    results = REPO / "results"
    before = sorted(results.iterdir()) if results.is_dir() else []
    out = tmp_path / "run"
    done = _cli(*args, "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not out.exists()
    after = sorted(results.iterdir()) if results.is_dir() else []
    assert after == before


MPPROXY_BUILT = (REPO / "transport" / "target" / "release" / "mpproxy").is_file()
needs_mpproxy = pytest.mark.skipif(not MPPROXY_BUILT, reason="mpproxy not built")


@needs_mpproxy
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cc", "cubic", "--cc-opt", "nosuch=1"], "--cc-opt nosuch=1: cubic has no option"),
        (["--cc", "cubic", "--cc-opt", "beta=2"], "option beta=2 is not valid; expected"),
        (["--cc", "bbr,cubic", "--cc-opt", "hystart=false"], "bbr has no option 'hystart'"),
        (["--sched", "rr", "--sched-opt", "num_segments=zero"], "num_segments=zero"),
        (["--sched", "lrf", "--sched-opt", "num_segments=3"], "lrf has no option"),
    ],
)
def test_algorithm_options_mpproxy_refuses_exit_2(tmp_path, args, message):
    out = tmp_path / "run"
    done = _cli("--scenario", "control", *args, "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not out.exists()


def test_algorithm_options_are_part_of_the_spec_and_its_id():
    options = {"cc_opts": ("beta=0.5", "hystart=false"), "sched_opts": ("num_segments=3",)}
    spec = TrialSpec("A1", "user", "cubic", "rr", "dashjs", 60, 0, 1, **options)
    assert spec.trial_id() == (
        "A1__user__cubic__rr__dashjs__v60__ccopt-beta=0.5+hystart=false"
        "__schedopt-num-segments=3__r0__s1"
    )
    assert spec.option_argv() == ["--cc-opt", "beta=0.5", "--cc-opt", "hystart=false",
                                  "--sched-opt", "num_segments=3"]  # fmt: skip
    assert TrialSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert spec.problems() == []
    # specs written before the options existed read as having none
    older = {k: v for k, v in spec.to_dict().items() if k not in ("cc_opts", "sched_opts")}
    assert TrialSpec.from_dict(older).trial_id() == "A1__user__cubic__rr__dashjs__v60__r0__s1"
    kernel = TrialSpec("A1", "kernel", "cubic", "default", "dashjs", 60, 0, 1,
                       cc_opts=("beta=0.5",))  # fmt: skip
    assert any("takes no --cc-opt/--sched-opt" in r for r in kernel.problems())


def test_algorithm_options_reach_mpproxy_and_mpsim(tmp_path):
    from testbed import engine_sim
    from testbed.transports import user

    spec = TrialSpec("control", "user", "cubic", "rr", "dashjs", 10, 0, 1,
                     cc_opts=("hystart=false",), sched_opts=("num_segments=3",))  # fmt: skip

    class Ctx:
        repo, dir, t0_ns = REPO, tmp_path, 1

    Ctx.spec = spec
    expected = ["--cc-opt", "hystart=false", "--sched-opt", "num_segments=3"]
    (tmp_path / "manifest.mpd").write_text("<MPD/>")  # its size is a page request's
    sim = engine_sim._trial_argv(spec, tmp_path, REPO, tmp_path / "manifest.mpd")
    for argv in (user.mpproxy_argv(Ctx, "server"), user.mpproxy_argv(Ctx, "client"), sim):
        start = argv.index("--cc-opt")
        assert argv[start : start + 4] == expected


@needs_mpproxy
def test_dry_run_with_algorithm_options_names_each_cell_apart():
    common = ("--scenario", "control", "--cc", "cubic", "--sched", "rr", "--dry-run")
    done = _cli(*common, "--cc-opt", "hystart=false", "--cc-opt", "beta=0.5",
                "--sched-opt", "num_segments=3")  # fmt: skip
    assert done.returncode == 0, done.stderr
    ids = [line.strip() for line in done.stdout.splitlines()[1:]]
    assert ids == [
        "control__user__cubic__rr__dashjs__v60__ccopt-beta=0.5+hystart=false"
        "__schedopt-num-segments=3__r0__s1"
    ]
    plain = _cli(*common)
    assert plain.stdout.splitlines()[1:] == ["  control__user__cubic__rr__dashjs__v60__r0__s1"]
    assert plain.stdout.splitlines()[0] != done.stdout.splitlines()[0]  # another run folder


def test_help_explains_every_option():
    done = _cli("--help", env=dict(os.environ, COLUMNS="250"))
    assert done.returncode == 0
    options = "--scenario --transport --cc --sched --player --video-duration --reps --seed --jobs"
    options += " --cc-opt --sched-opt"
    for option in (options + " --out --timeout --report --list").split():
        assert option in done.stdout
    assert "SECONDS" in done.stdout and "default: control" in done.stdout


def test_list_names_scenarios_transports_and_their_algorithms():
    done = _cli("--list")
    assert done.returncode == 0, done.stderr
    assert "scenarios:" in done.stdout and " control " in done.stdout
    for transport in ("user", "kernel", "tcp-wifi", "tcp-lte", "none"):
        assert f"  {transport} " in done.stdout


def test_dry_run_expands_matrix_and_names_the_run_stably(tmp_path):
    args = ["--scenario", "control,A1", "--transport", "none", "--reps", "2", "--dry-run"]
    first, second = _cli(*args), _cli(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    lines = first.stdout.splitlines()
    assert lines[0].startswith("4 trials into ") and "/results/control-A1_none_" in lines[0]
    assert "  A1__none__-__-__none__v0__r1__s2" in lines


def test_no_options_mean_the_default_matrix_plus_a_control_trial():
    done = _cli("--dry-run")
    assert done.returncode == 0, done.stderr
    trials = [line.strip() for line in done.stdout.splitlines()[1:]]
    # bbr against cubic on B1, 9 repetitions paired by seed, one control trial; repetition
    # by repetition so that pairs complete early.
    pairs = [
        [f"B1__user__{cc}__lrf__dashjs__v20__r{rep}__s{rep + 1}" for cc in ("bbr", "cubic")]
        for rep in range(9)
    ]
    control = "control__user__cubic__lrf__dashjs__v20__r0__s1"
    assert trials == [*pairs[0], control, *(t for pair in pairs[1:] for t in pair)]


def test_reps_and_clip_given_replace_the_default_runs_but_the_control_stays_one_trial():
    done = _cli("--reps", "3", "--video-duration", "60", "--dry-run")
    assert done.returncode == 0, done.stderr
    trials = [line.strip() for line in done.stdout.splitlines()[1:]]
    assert len(trials) == 7 and all("__v60__" in t for t in trials)
    assert [t for t in trials if t.startswith("control")] == [
        "control__user__cubic__lrf__dashjs__v60__r0__s1"
    ]
    # A matrix option given: the general defaults (60 s, one repetition), not the default run's.
    one = _cli("--scenario", "B1", "--dry-run")
    assert one.returncode == 0, one.stderr
    assert one.stdout.splitlines()[1:] == ["  B1__user__cubic__lrf__dashjs__v60__r0__s1"]


def test_player_defaults_to_dashjs_for_streaming_and_none_for_the_control_transfer():
    streaming = _cli("--transport", "kernel", "--cc", "bbr", "--scenario", "control", "--dry-run")
    assert streaming.returncode == 0, streaming.stderr
    assert "control__kernel__bbr__default__dashjs__v60__r0__s1" in streaming.stdout
    control = _cli("--transport", "none", "--dry-run")
    assert control.returncode == 0, control.stderr
    assert "control__none__-__-__none__v0__r0__s1" in control.stdout


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--reps", "auto"], "--reps auto cannot go with --reproduce"),
        (["--reps", "auto", "--max-reps", "5"], "--reps auto, --max-reps cannot go with"),
        (["--time-budget", "60"], "--time-budget cannot go with --reproduce"),
        (["--reps", "auto", "--engine", "sim"], "--reps auto cannot go with --reproduce"),
    ],
)
def test_reps_auto_with_reproduce_exits_2_naming_the_options(tmp_path, args, named):
    results = REPO / "results"
    before = sorted(results.iterdir()) if results.is_dir() else []
    pages = sorted((REPO / "docs" / "reproductions").iterdir())
    done = _cli("--reproduce", "seed002", *args)
    assert done.returncode == 2, done.stderr
    assert named in done.stderr
    assert "goes with a matrix run" in done.stderr
    after = sorted(results.iterdir()) if results.is_dir() else []
    assert after == before
    assert sorted((REPO / "docs" / "reproductions").iterdir()) == pages


def test_report_of_a_non_run_folder_exits_2(tmp_path):
    done = _cli("--report", str(tmp_path))
    assert done.returncode == 2
    assert "not a run folder" in done.stderr


def _control_run(tmp_path: Path, transfer_s: str, **env: str) -> tuple[Path, dict, Path]:
    """A fake repository, the environment (control transfers of transfer_s seconds) and the
    run folder of a `--transport none` matrix."""
    env = dict(os.environ, TESTBED_CONTROL_TRANSFER_S=transfer_s, **env)
    return make_fake_repo(tmp_path), env, tmp_path / "run"


def _control_trial(run_dir: Path, rep: int) -> Path:
    return run_dir / "trials" / f"control__none__-__-__none__v0__r{rep}__s{rep + 1}"


def _matrix(repo: Path, *args: str, env: dict) -> subprocess.Popen:
    code = (
        "import sys; from pathlib import Path; from testbed.cli import main; "
        f"sys.exit(main(sys.argv[1:], repo=Path({str(repo)!r})))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.netns
@needs_root
def test_failing_trials_do_not_stop_the_matrix(tmp_path):
    repo, env, run_dir = _control_run(tmp_path, "5", STUB_EMULATOR_DIE_AFTER_S="0")
    proc = _matrix(repo, "--transport", "none", "--reps", "2", "--out", str(run_dir), env=env)
    _out, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, err
    results = [json.loads(p.read_text()) for p in sorted(run_dir.glob("trials/*/result.json"))]
    assert len(results) == 2
    assert all(r["status"] == "failed" and "emulator" in r["reason"] for r in results)
    assert "ok 0, failed 2" in err


@pytest.mark.netns
@needs_root
def test_ctrl_c_then_rerun_finishes_only_the_missing_trials(tmp_path):
    repo, env, run_dir = _control_run(tmp_path, "0.5")
    args = ("--transport", "none", "--reps", "2", "--out", str(run_dir))
    first, second = _control_trial(run_dir, 0), _control_trial(run_dir, 1)

    proc = _matrix(repo, *args, env=env)
    try:
        deadline = time.monotonic() + 120
        while not (first / "result.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (first / "result.json").exists()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=90)
    finally:
        stop_gently(proc)
    assert proc.returncode == 130, err
    assert "Re-run the same command to resume" in err
    assert not (second / "result.json").exists()
    first_result = (first / "result.json").read_text()

    proc = _matrix(repo, *args, env=env)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert "2 trials, 1 already finished, 1 to run" in out
    assert (first / "result.json").read_text() == first_result  # not redone
    assert json.loads((second / "result.json").read_text())["status"] == "ok"
    assert len((second / "control.jsonl").read_text().splitlines()) == 4
    manifest = json.loads((run_dir / "run.json").read_text())
    assert len(manifest["trials"]) == 2 and len(manifest["resumed_unix_s"]) == 1


def test_mixed_transport_list_gives_none_its_control_trial():
    done = _cli("--transport", "none,tcp-wifi", "--player", "dashjs", "--cc", "cubic", "--dry-run")
    assert done.returncode == 0, done.stderr
    ids = [line.strip() for line in done.stdout.splitlines()[1:]]
    assert ids == [
        "control__none__-__-__none__v0__r0__s1",
        "control__tcp-wifi__cubic__-__dashjs__v60__r0__s1",
    ]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2 :].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.netns
@needs_root
def test_trial_killed_mid_way_is_recorded_as_failed_and_cleaned_up(tmp_path):
    repo, env, run_dir = _control_run(tmp_path, "60")
    trial_dir = _control_trial(run_dir, 0)
    proc = _matrix(repo, "--transport", "none", "--out", str(run_dir), env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            log = trial_dir / "testbed.jsonl"
            events = log.read_text() if log.exists() else ""
            if "probe-server" in events:
                break
            time.sleep(0.1)
        names = set(json.loads((trial_dir / "trial.json").read_text())["namespaces"].values())
        (trial_pid,) = _children(proc.pid)
        os.kill(trial_pid, signal.SIGKILL)  # no chance to tear down
        _out, err = proc.communicate(timeout=60)
    finally:
        stop_gently(proc)
    assert proc.returncode == 1, err
    result = json.loads((trial_dir / "result.json").read_text())
    assert result["status"] == "failed" and "signal SIGKILL" in result["reason"]
    from test_topology_fakes import namespaces

    assert not names & namespaces()  # the matrix swept what the killed trial left


@pytest.mark.parametrize(
    "listing",
    [
        '{"cc": ["reno", "bbr"], "sched": ["lrf", "rr"], "sched_aliases": {"minrtt": "lrf"}}',
        "cc: reno, bbr\nsched: lrf rr\n",
    ],
)
def test_mpproxy_list_is_read_as_json_or_text(tmp_path, listing):
    from testbed.env import mpproxy_names

    fake = tmp_path / "mpproxy"
    fake.write_text(f"#!/bin/sh\ncat <<'END'\n{listing}\nEND\n")
    fake.chmod(0o755)
    assert mpproxy_names(fake) == (["reno", "bbr"], ["lrf", "rr"])
    assert mpproxy_names(tmp_path / "missing") is None


def test_transport_names_fall_back_to_kernel_lists():
    from testbed import transports

    caps = {"tcp_cc": {"available": ["reno", "cubic"]}, "mptcp": {"available_schedulers": ["x"]}}
    assert transports.names("none", REPO, caps) == (None, None)
    ccs, scheds = transports.names("tcp-lte", REPO, caps)
    assert ccs == ["reno", "cubic"] and scheds is None
    with pytest.raises(transports.TransportUnavailable, match="unknown transport 'quic'"):
        transports.get("quic")


def test_run_wide_settings_do_not_outlive_the_run(tmp_path, capsys):
    """--pcap and --sched-trace reach trials through the environment, for that run only: a
    later run in the same process (a test suite, a notebook) must not capture or trace."""
    from testbed import capture, cli, transports

    before = dict(os.environ)
    argv = ["--scenario", "control", "--transport", "none", "--dry-run", "--out", str(tmp_path)]
    assert cli.main([*argv, "--pcap", "--sched-trace"]) == 0
    assert capture.PCAP_ENV not in os.environ and transports.SCHED_TRACE_ENV not in os.environ
    assert dict(os.environ) == before
    assert cli.main([*argv, "--pcap", "--pcap-snaplen", "10"]) == 2
    assert "--pcap-snaplen 10" in capsys.readouterr().err
    assert dict(os.environ) == before


def test_sim_stats_interval_is_for_simulated_runs_only(tmp_path, capsys):
    """--sim-stats-interval-ms reaches mpsim through the environment for that run only, and
    an emulated run, whose transport logs every 100 ms anyway, is refused with exit 2."""
    from testbed import cli
    from testbed.engine_sim import SIM_STATS_INTERVAL_ENV

    before = dict(os.environ)
    argv = ["--scenario", "control", "--transport", "user", "--dry-run", "--out", str(tmp_path)]
    assert cli.main([*argv, "--engine", "sim", "--sim-stats-interval-ms", "100"]) == 0
    assert SIM_STATS_INTERVAL_ENV not in os.environ and dict(os.environ) == before
    assert cli.main([*argv, "--sim-stats-interval-ms", "100"]) == 2
    assert "applies to simulated trials" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        cli.main([*argv, "--engine", "sim", "--sim-stats-interval-ms", "0"])
    assert exited.value.code == 2


def test_reps_auto_rounds_get_the_run_wide_settings(tmp_path, monkeypatch):
    """--reps auto runs its rounds through testbed/reps_auto.py: --sched-trace (and --pcap,
    --sim-stats-interval-ms) must reach those trials too, and be gone afterwards. Before
    the fix the rounds ran without them, silently."""
    from testbed import cli, reps_auto, transports
    from testbed.engine_sim import SIM_STATS_INTERVAL_ENV

    seen = {}

    def fake_main(args, argv, repo, caps):
        seen.update(
            {k: os.environ.get(k) for k in (transports.SCHED_TRACE_ENV, SIM_STATS_INTERVAL_ENV)}
        )
        return 0

    monkeypatch.setattr(reps_auto, "main", fake_main)
    before = dict(os.environ)
    argv = ["--scenario", "control", "--transport", "user", "--engine", "sim", "--reps", "auto",
            "--out", str(tmp_path), "--sched-trace", "--sim-stats-interval-ms", "100"]  # fmt: skip
    assert cli.main(argv) == 0
    assert seen == {transports.SCHED_TRACE_ENV: "1", SIM_STATS_INTERVAL_ENV: "100"}
    assert dict(os.environ) == before
