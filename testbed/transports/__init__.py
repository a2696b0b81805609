"""Transport plug-ins, looked up by name (CONTRACTS §7).

Each plug-in is a module with three functions:

    preflight(spec: TrialSpec, caps: dict) -> list[str]  # reasons it cannot run; [] = ok
    start(ctx: TrialContext) -> Endpoint                   # where the player connects (client ns)
    finish(ctx: TrialContext) -> None                      # collect/verify after the player

and may offer `names(repo: Path, caps: dict) -> tuple[list[str], list[str]]`, the CC and
scheduler names it supports (what `--cc all` / `--sched all` expand to). Without it the
registry's defaults below apply.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from testbed.env import mpproxy_names
from testbed.spec import NOT_APPLICABLE

# transport name -> module. tcp-wifi and tcp-lte share one module (spec.transport says which).
REGISTRY: dict[str, str] = {
    "user": "testbed.transports.user",
    "kernel": "testbed.transports.kernel",
    "tcp-wifi": "testbed.transports.tcp",
    "tcp-lte": "testbed.transports.tcp",
    "none": "testbed.transports.none",
}
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
    if name not in REGISTRY:
        raise TransportUnavailable(f"unknown transport '{name}'; valid: {', '.join(REGISTRY)}")
    module_name = REGISTRY[name]
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


def names(name: str, repo: Path, caps: dict) -> tuple[list[str], list[str]]:
    """(CC names, scheduler names) a transport supports; ["-"] where it has none.

    `user`: `mpproxy --list`; `kernel`: the kernel's CC list and MPTCP schedulers;
    `tcp-*`: the kernel's CC list, no scheduler; `none`: neither.
    """
    if name == "none":
        return [NOT_APPLICABLE], [NOT_APPLICABLE]
    try:
        module = get(name)
        if hasattr(module, "names"):
            ccs, scheds = module.names(repo, caps)
            return list(ccs), list(scheds)
    except TransportUnavailable:
        pass
    kernel_ccs = list(caps.get("tcp_cc", {}).get("available", []))
    if name == "kernel":
        return kernel_ccs, list(caps.get("mptcp", {}).get("available_schedulers", []))
    if name in ("tcp-wifi", "tcp-lte"):
        return kernel_ccs, [NOT_APPLICABLE]
    if name == "user":
        listed = mpproxy_names(repo / MPPROXY_BINARY)
        return listed if listed is not None else ([], [])
    raise TransportUnavailable(f"unknown transport '{name}'; valid: {', '.join(REGISTRY)}")
