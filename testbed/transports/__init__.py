"""Transport plug-ins, looked up by name (CONTRACTS §7).

Each plug-in is a module with three functions:

    preflight(spec: TrialSpec, caps: dict) -> list[str]  # reasons it cannot run; [] = ok
    start(ctx: TrialContext) -> Endpoint                   # where the player connects (client ns)
    finish(ctx: TrialContext) -> None                      # collect/verify after the player

and may offer `names(repo: Path, caps: dict) -> tuple[list[str], list[str]]`, the CC and
scheduler names it supports (what `--cc all` / `--sched all` expand to). Which module serves
which name, and each transport's defaults, are in testbed/registry.py.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from testbed.env import mpproxy_names
from testbed.registry import TRANSPORTS

MPPROXY_BINARY = Path("transport/target/release/mpproxy")
# Set to "1" by `run_trials.sh --sched-trace`: mpproxy then writes sched-trace-<role>.jsonl.
SCHED_TRACE_ENV = "TESTBED_SCHED_TRACE"


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


class TransportUnavailable(Exception):
    pass


def get(name: str) -> ModuleType:
    """The plug-in module for a transport name; TransportUnavailable says why not."""
    if name not in TRANSPORTS:
        raise TransportUnavailable(f"unknown transport '{name}'; valid: {', '.join(TRANSPORTS)}")
    module_name = TRANSPORTS[name].module
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            file = module_name.replace(".", "/") + ".py"
            raise TransportUnavailable(
                f"transport '{name}' is not available yet ({file} does not exist)"
            ) from exc
        raise
    missing = [f for f in ("preflight", "start", "finish") if not hasattr(module, f)]
    if missing:
        raise TransportUnavailable(
            f"transport module {module_name} lacks {', '.join(missing)} (CONTRACTS §7)"
        )
    return module


def names(name: str, repo: Path, caps: dict) -> tuple[list[str] | None, list[str] | None]:
    """(CC names, scheduler names) a transport supports; None where it has no such choice
    (registry default None), [] where the list cannot be had (binary not built).

    `user`: `mpproxy --list`; `kernel`: the kernel's CC list and MPTCP schedulers;
    `tcp-*`: the kernel's CC list, no scheduler; `none`: neither.
    """
    if name not in TRANSPORTS:
        raise TransportUnavailable(f"unknown transport '{name}'; valid: {', '.join(TRANSPORTS)}")
    entry = TRANSPORTS[name]
    ccs: list[str] = []
    scheds: list[str] = []
    try:
        module = get(name)
        if hasattr(module, "names"):
            ccs, scheds = (list(x) for x in module.names(repo, caps))
    except TransportUnavailable:
        kernel_ccs = list(caps.get("tcp_cc", {}).get("available", []))
        if name == "user":
            ccs, scheds = mpproxy_names(repo / MPPROXY_BINARY) or ([], [])
        elif entry.video:
            ccs = kernel_ccs
            scheds = list(caps.get("mptcp", {}).get("available_schedulers", []))
    return (
        ccs if entry.default_cc is not None else None,
        scheds if entry.default_sched is not None else None,
    )
