"""Per-trial CPU columns from cpu.jsonl (testbed/cpu_accounting.py) and trial.json.

Columns (CPU times in seconds of one CPU over the whole trial):

* `cpu_isolation`: `pinned (cgroup-v1)`, `pinned (affinity)` or `unpinned` (trial.json
  `cpu_isolation`; the reason is in trial.json);
* `cpu_player_s`, `cpu_testbed_s`: the two CPU sets' own accounting (cgroup), else the sum of
  their components from /proc;
* `cpu_player_<role>_s` for browser, renderer, gpu, network (Chromium's network service),
  node, gstreamer; `cpu_emulator_s`, `cpu_mpproxy_s` (both sides), `cpu_nginx_s`,
  `cpu_orchestrator_s` (the trial process, its helpers and this accounting);
* `loadavg_1m_start`, `loadavg_1m_max`: the machine's 1-minute load average at the first
  sample and its maximum during the trial (foreign load is visible here);
* `player_cpus_busy_mean`, `player_cpus_busy_max`: busy fraction of the player's CPUs per
  250 ms interval, whoever used them;
* `player_runq_wait_ms_per_s`: mean run-queue wait of the player's threads per second.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

PLAYER_ROLES = ["browser", "renderer", "gpu", "network", "node", "gstreamer"]
CPU_COLUMNS = [
    "cpu_isolation",
    "cpu_player_s",
    "cpu_testbed_s",
    *[f"cpu_player_{role}_s" for role in PLAYER_ROLES],
    "cpu_emulator_s",
    "cpu_mpproxy_s",
    "cpu_nginx_s",
    "cpu_orchestrator_s",
    "loadavg_1m_start",
    "loadavg_1m_max",
    "player_cpus_busy_mean",
    "player_cpus_busy_max",
    "player_runq_wait_ms_per_s",
]


def _isolation(meta: dict[str, Any]) -> str:
    iso = meta.get("cpu_isolation")
    if not isinstance(iso, dict):
        return "not recorded"
    return f"pinned ({iso.get('mechanism')})" if iso.get("pinned") else "unpinned"


def cpu_metrics(cpu: pd.DataFrame, meta: dict[str, Any]) -> dict[str, Any]:
    """The CPU columns of one trial (NaN where cpu.jsonl has nothing)."""
    row: dict[str, Any] = dict.fromkeys(CPU_COLUMNS, math.nan)
    row["cpu_isolation"] = _isolation(meta)
    if "event" not in cpu.columns or cpu.empty:
        return row
    samples = cpu[cpu["event"].isin(["cpu_sample", "cpu_totals"])]
    with_components = (
        samples[samples["components_cpu_s"].notna()]
        if "components_cpu_s" in samples.columns
        else samples.iloc[0:0]
    )
    components: dict[str, float] = (
        dict(with_components["components_cpu_s"].iloc[-1]) if len(with_components) else {}
    )
    groups: dict[str, float] = {}
    if "groups_cpu_s" in samples.columns:
        present = samples["groups_cpu_s"].dropna()
        if len(present):
            first, last = dict(present.iloc[0]), dict(present.iloc[-1])
            # The groups are created with the trial, so their counters start near 0; the
            # difference is still taken, for a group reused by a resumed trial.
            groups = {k: float(last[k]) - float(first.get(k, 0.0)) for k in last}

    def component_sum(test: Any) -> float:
        values = [v for k, v in components.items() if test(k)]
        return float(sum(values)) if values else math.nan

    player_components = component_sum(lambda k: k.startswith("player-"))
    row["cpu_player_s"] = groups.get("player", player_components)
    row["cpu_testbed_s"] = groups.get(
        "testbed", component_sum(lambda k: not k.startswith("player-"))
    )
    for role in PLAYER_ROLES:
        row[f"cpu_player_{role}_s"] = component_sum(
            lambda k, r=role: k.startswith("player-") and k.endswith(f"/{r}")
        )
    row["cpu_emulator_s"] = component_sum(lambda k: k == "emulator")
    row["cpu_mpproxy_s"] = component_sum(lambda k: k.startswith("mpproxy"))
    row["cpu_nginx_s"] = component_sum(lambda k: k == "nginx")
    row["cpu_orchestrator_s"] = component_sum(lambda k: k == "orchestrator")
    if "loadavg" in samples.columns:
        loads = [v[0] for v in samples["loadavg"].dropna() if isinstance(v, list) and v]
        if loads:
            row["loadavg_1m_start"] = float(loads[0])
            row["loadavg_1m_max"] = float(max(loads))
    if "player_set_busy" in samples.columns:
        busy = pd.to_numeric(samples["player_set_busy"], errors="coerce").dropna()
        if len(busy):
            row["player_cpus_busy_mean"] = float(busy.mean())
            row["player_cpus_busy_max"] = float(busy.max())
    if {"player_runq_wait_ms", "interval_s"} <= set(samples.columns):
        waits = pd.to_numeric(samples["player_runq_wait_ms"], errors="coerce")
        lengths = pd.to_numeric(samples["interval_s"], errors="coerce")
        ok = waits.notna() & lengths.notna()
        if ok.any() and lengths[ok].sum() > 0:
            row["player_runq_wait_ms_per_s"] = float(waits[ok].sum() / lengths[ok].sum())
    return row
