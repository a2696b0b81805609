"""Done-when: 20 MB through mpproxy over the real emulator (two paths, 1 % / 2 % random loss,
20 / 40 ms one-way) arrive byte-exact, on both paths, for bbr+lrf and cubic+rr.

Uses the bulk harness (testbed/bulk.py) with the transport benchmark's `exact` links.
Needs root, built mpproxy and linkemu; creates its own tb-* namespaces and tears them down.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from metrics import schemas
from testbed import bulk
from testbed.transports import user

REPO = Path(__file__).resolve().parents[2]
BUILT = all(
    (REPO / p).is_file()
    for p in ("transport/target/release/mpproxy", "emulator/target/release/linkemu")
)

pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for namespaces"),
    pytest.mark.skipif(not BUILT, reason="mpproxy or linkemu not built"),
]


# transport/bench/bench.py's `exact` case: 50 Mbit/s, 20 ms, 1 % and 20 Mbit/s, 40 ms, 2 %.
EXACT_LINKS = (bulk.link(50_000_000, 20.0, 0.01), bulk.link(20_000_000, 40.0, 0.02))


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("cc", "sched"), [("bbr", "lrf"), ("cubic", "rr")])
def test_20_mb_byte_exact_through_mpproxy_over_lossy_emulated_paths(
    cc: str, sched: str, tmp_path: Path
) -> None:
    with bulk.emulated("exact", 1, EXACT_LINKS) as (topo, workdir, t0):
        row = bulk.run_user(topo, workdir, t0, cc, sched, ["wifi", "lte"], 20_000_000, "t")
        for side in ("client", "server"):  # mpproxy's real stats follow docs/schemas/transport
            assert schemas.check_file(workdir / f"t-{side}.jsonl", "transport") == [], side
            shutil.copy(workdir / f"t-{side}.jsonl", tmp_path / f"transport-{side}.jsonl")
    # finish()'s subflow rule on real logs: both paths established and used.
    assert user.verdict(tmp_path, ["wifi", "lte"]) == ([], 2, [])
    assert all(e.established for e in user.path_evidence(tmp_path).values())
    assert row["bytes"] == 20_000_000
    assert row["sha_ok"], row
    assert all(row["path_bytes"].get(p, 0) > 0 for p in ("wifi", "lte")), row
