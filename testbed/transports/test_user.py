"""Tests of the `user` transport plug-in (testbed/transports/user.py) without namespaces."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from testbed.spec import TrialSpec
from testbed.transports import MPPROXY_BINARY, SCHED_TRACE_ENV, user

REPO = Path(__file__).resolve().parents[2]
BUILT = (REPO / MPPROXY_BINARY).is_file()


def spec(cc: str = "bbr", sched: str = "lrf", player: str | None = "dashjs") -> TrialSpec:
    return TrialSpec(scenario="control", transport="user", cc=cc, sched=sched, player=player,
                     video_duration_s=20, rep=0, seed=1)  # fmt: skip


@dataclass
class FakeCtx:
    dir: Path
    spec: TrialSpec = field(default_factory=spec)
    repo: Path = REPO
    t0_ns: int = 123
    invalid_reasons: list[str] = field(default_factory=list)
    subflows_with_data: int | None = None
    paths_unused: list[str] | None = None

    def mark_invalid(self, reason: str) -> None:
        self.invalid_reasons.append(reason)


def write_stats(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def subflow(conn: int, name: str, received: int, *, established: bool = True,
            acked: int = 25) -> dict:  # fmt: skip
    """One `subflow` line; by default of an established subflow whose HELLO was acknowledged."""
    return {"t_ns": 1, "src": "mpproxy-client", "event": "subflow", "conn": conn, "path": name,
            "established": established, "bytes_acked_total": acked if established else 0,
            "data_bytes_received_total": received}  # fmt: skip


def test_preflight_without_binary_says_how_to_build(tmp_path: Path) -> None:
    reasons = user.preflight(spec(), {}, repo=tmp_path)
    assert len(reasons) == 1 and "cargo build --release" in reasons[0]


@pytest.mark.skipif(not BUILT, reason="mpproxy not built")
def test_preflight_checks_names_with_mpproxy_list() -> None:
    assert user.preflight(spec("bbr", "lrf"), {}) == []
    assert user.preflight(spec("cubic", "minrtt"), {}) == []  # alias
    reasons = user.preflight(spec("vegas", "fastest"), {})
    assert any("vegas" in r and "reno" in r for r in reasons)
    assert any("fastest" in r and "lrf" in r for r in reasons)
    # The registry's rules (a video transport needs a player) are the spec's own check.
    assert user.preflight(spec(player=None), {}) == []
    assert any("carries video; player must be" in r for r in spec(player=None).problems())


@pytest.mark.skipif(not BUILT, reason="mpproxy not built")
def test_names_come_from_the_registry() -> None:
    ccs, scheds = user.names(REPO, {})
    assert {"reno", "cubic", "bbr"} <= set(ccs)
    assert "lrf" in scheds and "minrtt" not in scheds


def test_argv_follows_contracts_section_6(tmp_path: Path) -> None:
    ctx = FakeCtx(tmp_path)
    server = user.mpproxy_argv(ctx, "server")
    assert server[1:5] == ["server", "--listen", "10.1.2.2:4433,10.2.2.2:4433", "--forward"]
    assert server[5] == "127.0.0.1:8080"
    client = user.mpproxy_argv(ctx, "client")
    assert client[1:4] == ["client", "--listen", "127.0.0.1:8080"]
    assert "wifi=10.1.1.2:10.1.2.2:4433" in client and "lte=10.2.1.2:10.2.2.2:4433" in client
    for argv in (server, client):
        i = argv.index("--t0-ns")
        assert argv[i + 1] == "123"
        assert argv[argv.index("--cc") + 1] == "bbr"
        assert argv[argv.index("--sched") + 1] == "lrf"


def test_finish_counts_paths_that_carried_data(tmp_path: Path) -> None:
    write_stats(tmp_path / "transport-client.jsonl",
                [subflow(1, "wifi", 10), subflow(1, "lte", 0), subflow(1, "wifi", 500),
                 subflow(2, "lte", 700), subflow(1, "lte", 0)])  # fmt: skip
    ctx = FakeCtx(tmp_path)
    user.finish(ctx)
    assert ctx.subflows_with_data == 2
    assert ctx.invalid_reasons == [] and ctx.paths_unused == []
    assert user.data_bytes_per_path(tmp_path) == {"wifi": 500, "lte": 700}


def test_established_path_without_data_is_valid_and_flagged(tmp_path: Path) -> None:
    # What a sticky scheduler does (seed 002's A2 bbr x tp-sty): lte's HELLO was acknowledged
    # on both connections, then every byte went over wifi.
    rows = [subflow(1, "wifi", 0, established=False), subflow(1, "lte", 0, established=False),
            subflow(1, "wifi", 40_890_325), subflow(1, "lte", 0), subflow(2, "lte", 0)]  # fmt: skip
    write_stats(tmp_path / "transport-client.jsonl", rows)
    ctx = FakeCtx(tmp_path)
    user.finish(ctx)
    assert ctx.invalid_reasons == []
    assert ctx.subflows_with_data == 1
    assert ctx.paths_unused == ["lte"]


def test_path_never_established_marks_the_trial_invalid(tmp_path: Path) -> None:
    # A broken set-up: lte's HELLO was never answered (its lines stay established=false).
    write_stats(tmp_path / "transport-client.jsonl",
                [subflow(1, "wifi", 10), subflow(1, "lte", 0, established=False),
                 subflow(1, "lte", 0, established=False)])  # fmt: skip
    ctx = FakeCtx(tmp_path)
    user.finish(ctx)
    assert ctx.subflows_with_data == 1
    assert ctx.paths_unused == []
    assert len(ctx.invalid_reasons) == 1
    reason = ctx.invalid_reasons[0]
    assert "1 of 2 subflows never established (lte:" in reason and "lte=0 B" in reason


def test_established_but_never_acknowledged_is_not_established(tmp_path: Path) -> None:
    # The server side marks a subflow established on the HELLO it receives; without an
    # acknowledged byte the path has not been shown to work both ways.
    write_stats(tmp_path / "transport-server.jsonl",
                [subflow(1, "wifi", 900), subflow(1, "lte", 0, acked=0)])  # fmt: skip
    reasons, with_data, unused = user.verdict(tmp_path, ["wifi", "lte"])
    assert with_data == 1 and unused == []
    assert len(reasons) == 1 and "never established (lte:" in reasons[0]


def test_a_configured_path_with_no_line_at_all_is_never_established(tmp_path: Path) -> None:
    write_stats(tmp_path / "transport-client.jsonl", [subflow(1, "wifi", 900)])
    reasons, with_data, unused = user.verdict(tmp_path, ["wifi", "lte"])
    assert (with_data, unused) == (1, [])
    assert "never established (lte:" in reasons[0]


def test_finish_reports_a_malformed_line_with_file_and_number(tmp_path: Path) -> None:
    stats = tmp_path / "transport-client.jsonl"
    stats.write_text(json.dumps(subflow(1, "wifi", 10)) + "\n{broken\n")
    ctx = FakeCtx(tmp_path)
    user.finish(ctx)
    assert len(ctx.invalid_reasons) == 1
    assert f"{stats}:2" in ctx.invalid_reasons[0]


def test_sched_trace_is_asked_for_only_when_the_run_turns_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = FakeCtx(tmp_path)
    monkeypatch.delenv(SCHED_TRACE_ENV, raising=False)
    assert "--sched-trace" not in user.mpproxy_argv(ctx, "server")
    monkeypatch.setenv(SCHED_TRACE_ENV, "1")  # what run_trials.sh --sched-trace sets
    for role in ("server", "client"):
        argv = user.mpproxy_argv(ctx, role)
        assert argv[argv.index("--sched-trace") + 1] == str(tmp_path / f"sched-trace-{role}.jsonl")
