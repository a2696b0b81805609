"""--engine sim: which trials it takes, and the logs it writes in the emulated formats."""

import json
from pathlib import Path

from testbed.engine_sim import _write_transport_logs, unsupported
from testbed.spec import TrialSpec


def _spec(transport: str = "user") -> TrialSpec:
    return TrialSpec(
        scenario="B1",
        transport=transport,
        cc="cubic",
        sched="lrf",
        player="dashjs",
        video_duration_s=60,
        rep=0,
        seed=1,
    )


def test_only_the_user_transport_is_simulated() -> None:
    assert unsupported([_spec()]) == []
    (reason,) = unsupported([_spec(), _spec("kernel")])
    assert "kernel" in reason and "--engine emulate" in reason


def test_link_and_subflow_totals_are_written_in_the_emulated_formats(tmp_path: Path) -> None:
    sim = {
        "virtual_s": 60.5,
        "links": {"wifi": {"down": {"pkts_out_total": 10, "bytes_out_total": 14000}}},
    }
    _write_transport_logs(tmp_path, _spec(), sim)
    emulator = [json.loads(x) for x in (tmp_path / "emulator.jsonl").read_text().splitlines()]
    assert emulator[0]["event"] == "start"
    assert emulator[1] == {
        "t_ns": 60_500_000_000,
        "src": "emulator",
        "event": "link_totals",
        "path": "wifi",
        "dir": "down",
        "pkts_out_total": 10,
        "bytes_out_total": 14000,
    }
    assert not (tmp_path / "transport-server.jsonl").exists()  # mpsim writes those
