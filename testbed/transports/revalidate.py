"""Re-apply the transports' subflow rule to trials that already ran (result.json in place).

    python -m testbed.transports.revalidate results/<run> [--write]

The `user` and `kernel` transports judge a trial's subflows in finish() (docs/ORCHESTRATOR.md,
"Validity"). When that rule changes, a run folder's result.json files still hold the old
verdict; this re-computes it from the logs the trial left (transport-{client,server}.jsonl;
for `kernel` kernel-subflows.jsonl, the counters stored in kernel-mptcp.json and
emulator.jsonl). Only the transport's own reasons are replaced; every other reason
(decode overload, a failed player, ...) is kept. Failed trials are left alone: their
finish() may not have run.

Without --write it prints what would change and writes nothing. With --write it rewrites
each changed result.json (and kernel-mptcp.json) and records the verdict it replaced under
`revalidated`. Then `./run_trials.sh --report results/<run>` rebuilds summary.csv and the
report from them. Exit 0, or 2 for a folder that is not a run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from common.files import write_json_atomically
from testbed.transports import user

USER_REASON_PREFIX = "user: "


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _path_names(meta: dict[str, Any]) -> list[str]:
    """The trial's configured paths, in scenario order (trial.json address_plan)."""
    plan = meta.get("address_plan")
    return list(plan) if isinstance(plan, dict) and plan else list(user.PATH_NAMES)


def _user_verdict(trial_dir: Path, meta: dict, result: dict) -> tuple[list[str], list[str], dict]:
    """(old transport reasons, new ones, new result fields) of a `user` trial."""
    old = [r for r in result.get("invalid_reasons", []) if r.startswith(USER_REASON_PREFIX)]
    try:
        new, with_data, unused = user.verdict(trial_dir, _path_names(meta))
    except ValueError as exc:
        return old, [f"{USER_REASON_PREFIX}{exc}"], {}
    return old, new, {"subflows_with_data": with_data, "paths_unused": unused}


def _kernel_verdict(
    trial_dir: Path, meta: dict, result: dict
) -> tuple[list[str], list[str], dict] | None:
    """The same for a `kernel` trial: kernel_config.verify.verdict on its stored inputs."""
    from kernel_config import verify

    stored = _read(trial_dir / "kernel-mptcp.json")
    if stored is None or "mib" not in stored:
        return None
    plan = meta.get("address_plan") or {}
    crossed = {name for name, p in plan.items() if isinstance(p, dict) and p.get("cross_client")}
    emulator = verify.emulator_lines_without_cross_traffic(trial_dir, crossed)
    fresh = verify.verdict(
        str(meta.get("spec", {}).get("transport", "kernel")),
        stored["mib"],
        verify.read_jsonl(trial_dir / "kernel-subflows.jsonl"),
        emulator,
        paths=tuple(_path_names(meta)),
    )
    fresh["settings"] = stored.get("settings")
    fresh["spec"] = stored.get("spec")
    fields = {
        "subflows_with_data": fresh["subflows_with_data"],
        "paths_unused": fresh["paths_unused"],
        "_kernel_mptcp": fresh,
    }
    return list(stored.get("invalid_reasons", [])), list(fresh["invalid_reasons"]), fields


def revalidate_trial(trial_dir: Path, write: bool) -> tuple[bool, str] | None:
    """One trial: (did the verdict change, a line saying what changed); None when nothing
    changed or the rule does not apply. A trial whose verdict stands may still gain fields
    (`paths_unused` in a run older than the column)."""
    result = _read(trial_dir / "result.json")
    meta = _read(trial_dir / "trial.json")
    if result is None or meta is None or result.get("status") != "ok":
        return None
    transport = meta.get("spec", {}).get("transport")
    if transport == "user":
        judged = _user_verdict(trial_dir, meta, result)
    elif transport == "kernel":
        judged = _kernel_verdict(trial_dir, meta, result)
    else:
        return None
    if judged is None:
        return False, f"{trial_dir.name}: kernel-mptcp.json missing or without `mib`; left alone"
    old, new, fields = judged
    kernel_mptcp = fields.pop("_kernel_mptcp", None)
    kept = [r for r in result.get("invalid_reasons", []) if r not in old]
    reasons = kept + [r for r in new if r not in kept]
    updated = dict(result, **fields, invalid_reasons=reasons, valid=not reasons)
    if updated == result:
        return None
    updated["revalidated"] = {
        "by": "python -m testbed.transports.revalidate",
        "previous_valid": result.get("valid"),
        "previous_invalid_reasons": result.get("invalid_reasons", []),
        "previous_paths_unused": result.get("paths_unused"),
    }
    if write:
        write_json_atomically(trial_dir / "result.json", updated)
        if kernel_mptcp is not None:
            write_json_atomically(trial_dir / "kernel-mptcp.json", kernel_mptcp)
    verdict_changed = (updated["valid"], reasons) != (
        result.get("valid"),
        result.get("invalid_reasons"),
    )
    return verdict_changed, (
        f"{trial_dir.name}: valid {result.get('valid')} -> {updated['valid']};"
        f" paths_unused {updated.get('paths_unused')}; reasons {'; '.join(reasons) or 'none'}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m testbed.transports.revalidate",
        description="Re-apply the user/kernel transports' subflow rule to a run's trials.",
    )
    parser.add_argument("run_dir", type=Path, help="results/<run> (holding trials/)")
    parser.add_argument(
        "--write", action="store_true", help="rewrite result.json (default: only print)"
    )
    args = parser.parse_args(argv)
    trials = args.run_dir / "trials"
    if not trials.is_dir():
        print(f"{args.run_dir}: not a run folder (no trials/ inside)", file=sys.stderr)
        return 2
    changed = [
        outcome
        for trial_dir in sorted(p for p in trials.iterdir() if p.is_dir())
        if (outcome := revalidate_trial(trial_dir, args.write)) is not None
    ]
    for verdict_changed, line in changed:
        if verdict_changed:
            print(line)
    n_verdicts = sum(1 for verdict_changed, _ in changed if verdict_changed)
    verb = "rewritten" if args.write else "to rewrite (run again with --write)"
    print(
        f"{len(changed)} result.json {verb}: {n_verdicts} with a new verdict (above),"
        f" {len(changed) - n_verdicts} only gaining fields (paths_unused, subflows_with_data);"
        f" then: ./run_trials.sh --report {args.run_dir}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
