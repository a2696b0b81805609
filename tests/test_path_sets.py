"""Any valid path set (1 to 8 paths, any names) with every transport: it runs, or the matrix
refuses it with exit 2 before anything starts (testbed/pathsets.py).

The refusals run everywhere (`--dry-run`, nothing is created). The real trials (root, real
namespaces) run a one-path and a four-path scenario with every transport that the path set
allows; the session is an HTTP fetch of the manifest and one media segment through the
transport's endpoint (the players are tested elsewhere; this test is about the paths)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from testbed.pathsets import runnable_transports, transport_problem
from testbed.registry import TRANSPORTS

REPO = Path(__file__).resolve().parent.parent
ONE_PATH = ["wifi"]
# lte first (it opens the kernel's connection and is the client's default route), wifi third
# (tcp-wifi then needs its host route), and two names the code has never seen.
FOUR_PATHS = ["lte", "fiveg", "wifi", "sat"]


def write_scenario(folder: Path, paths: list[str]) -> Path:
    lines = [f'name = "paths-{len(paths)}"', 'description = "path-set test"', "duration_s = 30.0"]
    for i, name in enumerate(paths):
        lines += [f"[paths.{name}]", f"rate = {{ bps = {20_000_000 - i * 1_000_000} }}",
                  f"delay_ms = {5.0 + i}"]  # fmt: skip
    file = folder / f"paths-{len(paths)}.toml"
    file.write_text("\n".join(lines) + "\n")
    return file


def run_trials(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(REPO / "run_trials.sh"), *args], capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def test_transport_problem_names_the_missing_path_and_what_would_run() -> None:
    why = transport_problem("tcp-lte", ["wifi"], "scenario x (x.toml)")
    assert why is not None
    assert "x.toml" in why and "'lte'" in why and "[paths.lte]" in why
    assert "valid transports for it: user, kernel, tcp-wifi, none" in why
    assert transport_problem("tcp-lte", FOUR_PATHS, "s") is None
    for transport in ("user", "kernel", "none"):
        assert transport_problem(transport, ["a"], "s") is None
    assert set(runnable_transports(FOUR_PATHS)) == set(TRANSPORTS)


@pytest.mark.parametrize(("paths", "transport"), [(ONE_PATH, "tcp-lte"), (["a", "b"], "tcp-wifi")])
def test_a_single_path_baseline_without_its_path_is_refused_up_front(
    tmp_path: Path, paths: list[str], transport: str
) -> None:
    scenario = write_scenario(tmp_path, paths)
    out = tmp_path / "run"
    done = run_trials("--scenario", str(scenario), "--transport", transport, "--player", "dashjs",
                      "--out", str(out), "--dry-run")  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert str(scenario) in done.stderr
    assert f"transport {transport}" in done.stderr
    assert f"[paths.{transport.removeprefix('tcp-')}]" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("paths", [ONE_PATH, FOUR_PATHS], ids=["1-path", "4-path"])
def test_every_runnable_transport_passes_the_matrix_checks(
    tmp_path: Path, paths: list[str]
) -> None:
    scenario = write_scenario(tmp_path, paths)
    for transport in runnable_transports(paths):
        player = "none" if not TRANSPORTS[transport].video else "dashjs"
        out = str(tmp_path / "run")
        done = run_trials("--scenario", str(scenario), "--transport", transport,
                          "--player", player, "--out", out, "--dry-run")  # fmt: skip
        if done.returncode == 2 and "is not built" in done.stderr + done.stdout:
            pytest.skip("mpproxy not built (scripts/setup.sh)")
        assert done.returncode == 0, (transport, done.stdout + done.stderr)
        assert "1 trials" in done.stdout, done.stdout


# --- real trials ------------------------------------------------------------------------


def fetch_manifest_and_a_segment(ctx, endpoint, content_dir: Path) -> None:  # noqa: ANN001
    """The session: curl the manifest and the largest media segment through the endpoint."""
    name = Path(content_dir).resolve().name
    segment = max((p for p in Path(content_dir).rglob("*.m4s")), key=lambda p: p.stat().st_size)
    base = f"http://{endpoint.host}:{endpoint.port}/content/{name}"
    for i, rel in enumerate(["manifest.mpd", segment.relative_to(content_dir).as_posix()]):
        proc = ctx.spawn("client", f"fetch-{i}", ["curl", "-sSf", "--max-time", "20",
                                                  "-o", "/dev/null", f"{base}/{rel}"])  # fmt: skip
        code = proc.wait(30)
        assert code == 0, f"curl {base}/{rel}: status {code}; see {proc.stderr_path}"


@pytest.mark.parametrize("paths", [ONE_PATH, FOUR_PATHS], ids=["1-path", "4-path"])
@pytest.mark.parametrize("transport", list(TRANSPORTS))
@pytest.mark.netns
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")
def test_a_real_trial_runs_over_any_path_set(
    tmp_path: Path, paths: list[str], transport: str
) -> None:
    from testbed.env import kernel_caps
    from testbed.spec import TrialSpec
    from testbed.topology import list_namespaces
    from testbed.trial import EMULATOR_BINARY, run_trial

    if not (REPO / EMULATOR_BINARY).is_file():
        pytest.skip("linkemu not built (scripts/setup.sh)")
    if transport not in runnable_transports(paths):
        pytest.skip(f"{transport} cannot run over {paths}: refused up front (tested above)")
    entry = TRANSPORTS[transport]
    if transport == "kernel" and not kernel_caps().get("mptcp", {}).get("available_schedulers"):
        pytest.skip("this kernel has no MPTCP")
    scenario = write_scenario(tmp_path, paths)
    spec = TrialSpec(
        scenario=str(scenario), transport=transport, cc=entry.default_cc,
        sched=entry.default_sched, player="dashjs" if entry.video else None,
        video_duration_s=4 if entry.video else 0, rep=0, seed=1,
    )  # fmt: skip
    before = set(list_namespaces())
    os.environ["TESTBED_CONTROL_TRANSFER_S"] = "0.5"
    try:
        result = run_trial(spec, tmp_path / "trial", REPO, timeout_s=120,
                           play=fetch_manifest_and_a_segment if entry.video else None)  # fmt: skip
    finally:
        os.environ.pop("TESTBED_CONTROL_TRANSFER_S", None)
    assert result["status"] == "ok", result
    assert set(list_namespaces()) <= before
    events = (tmp_path / "trial" / "testbed.jsonl").read_text()
    assert "Traceback" not in events
    if transport == "none":
        probed = [json.loads(x)["path"] for x in (tmp_path / "trial" / "control.jsonl").open()]
        assert sorted(set(probed)) == sorted(paths)
    if transport == "user":
        client = (tmp_path / "trial" / "transport-client.jsonl").read_text()
        for name in paths:
            assert f'"path":"{name}"' in client.replace(" ", ""), name
