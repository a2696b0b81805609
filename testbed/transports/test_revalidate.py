"""Tests of `python -m testbed.transports.revalidate` on small synthetic run folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testbed.transports import revalidate
from testbed.transports.test_user import subflow, write_stats

OLD_REASON = "user: only 1 of 2 subflows carried data (wifi=40890325 B, lte=0 B)"
OVERLOAD = "overloaded: frames dropped while the buffer was healthy"


def make_trial(run: Path, name: str, transport: str, result: dict) -> Path:
    trial = run / "trials" / name
    trial.mkdir(parents=True)
    plan = {"wifi": {"client": "10.1.1.2", "cross_client": []},
            "lte": {"client": "10.2.1.2", "cross_client": []}}  # fmt: skip
    meta = {"schema": 1, "spec": {"transport": transport}, "address_plan": plan}
    (trial / "trial.json").write_text(json.dumps(meta))
    base = {"schema": 1, "trial_id": name, "status": "ok", "reason": None,
            "wall_duration_s": 64.8, "subflows_with_data": 1}  # fmt: skip
    (trial / "result.json").write_text(json.dumps(base | result))
    return trial


def result_of(trial: Path) -> dict:
    return json.loads((trial / "result.json").read_text())


def test_a_sticky_trial_becomes_valid_and_other_reasons_stay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sticky_rows = [subflow(1, "wifi", 40_890_325), subflow(1, "lte", 0)]
    sticky = make_trial(
        tmp_path, "sticky", "user", {"valid": False, "invalid_reasons": [OLD_REASON]}
    )
    write_stats(sticky / "transport-client.jsonl", sticky_rows)
    both = {"valid": False, "invalid_reasons": [OLD_REASON, OVERLOAD]}
    overloaded = make_trial(tmp_path, "overloaded", "user", both)
    write_stats(overloaded / "transport-client.jsonl", sticky_rows)
    broken = make_trial(
        tmp_path, "broken", "user", {"valid": False, "invalid_reasons": [OLD_REASON]}
    )
    write_stats(broken / "transport-client.jsonl",
                [subflow(1, "wifi", 900), subflow(1, "lte", 0, established=False)])  # fmt: skip
    before = {t: result_of(t) for t in (sticky, overloaded, broken)}

    assert revalidate.main([str(tmp_path)]) == 0  # without --write: print only
    assert {t: result_of(t) for t in before} == before
    assert "sticky: valid False -> True" in capsys.readouterr().out

    assert revalidate.main([str(tmp_path), "--write"]) == 0
    assert result_of(sticky)["valid"] is True and result_of(sticky)["paths_unused"] == ["lte"]
    assert result_of(sticky)["revalidated"]["previous_invalid_reasons"] == [OLD_REASON]
    assert result_of(overloaded)["invalid_reasons"] == [OVERLOAD]
    assert result_of(overloaded)["valid"] is False
    assert result_of(broken)["valid"] is False
    assert "lte" in result_of(broken)["invalid_reasons"][0]
    assert "never established" in result_of(broken)["invalid_reasons"][0]
    capsys.readouterr()
    assert revalidate.main([str(tmp_path), "--write"]) == 0  # a second pass changes nothing
    assert capsys.readouterr().out.startswith("0 result.json rewritten")


def test_a_kernel_trial_is_judged_again_from_its_stored_inputs(tmp_path: Path) -> None:
    from kernel_config import verify
    from kernel_config.test_verify import GOOD_MIB, line, mib

    trial = make_trial(tmp_path, "kernel", "kernel", {"valid": False, "invalid_reasons": [
        "kernel MPTCP: 2 subflows configured but only 1 path(s) carried data (wifi; a path"
        " counts from 65536 bytes sent)"]})  # fmt: skip
    lines = [line("wifi", 9_000_000), line("lte", 0)]
    (trial / "kernel-subflows.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    stored = verify.verdict("kernel", mib(**GOOD_MIB), lines, [])
    old_reason = result_of(trial)["invalid_reasons"]
    stored |= {"valid": False, "invalid_reasons": old_reason, "spec": {"cc": "bbr"}}
    (trial / "kernel-mptcp.json").write_text(json.dumps(stored))
    assert revalidate.main([str(tmp_path), "--write"]) == 0
    assert result_of(trial)["valid"] is True and result_of(trial)["paths_unused"] == ["lte"]
    rewritten = json.loads((trial / "kernel-mptcp.json").read_text())
    assert rewritten["valid"] is True and rewritten["spec"] == {"cc": "bbr"}


def test_a_folder_that_is_not_a_run_exits_2(tmp_path: Path) -> None:
    assert revalidate.main([str(tmp_path)]) == 2
