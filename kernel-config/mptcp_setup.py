"""Per-trial kernel set-up in the trial's client and server namespaces.

Kernel MPTCP (`kernel` transport), CONTRACTS §3 addresses:
* both ends: `net.mptcp.enabled=1`, `ip mptcp limits set subflows 2 add_addr_accepted 2`,
  the scheduler (`net.mptcp.scheduler`) and the CC (`net.ipv4.tcp_congestion_control`);
* client: the initial subflow leaves from 10.1.1.2 (main default route: wifi); one `subflow`
  endpoint `10.2.1.2 dev lte` makes the path manager open the second subflow from the LTE
  address to the same server address; the client's source routing sends it out of `lte`
  and the router's `iif c-lte` rule keeps it on the LTE path;
* server: no `signal` endpoint, so the server announces nothing and exactly two subflows
  form (one per client address).

Plain TCP (`tcp-wifi`, `tcp-lte`): the CC at both ends; for `tcp-lte` a host route sends
the client's traffic to 10.2.2.2 out of `lte` from 10.2.1.2 (otherwise the main default
route would carry it over wifi).

`run(role, argv)` runs a command in the role's namespace and raises on failure
(testbed.topology.Topology.run with check=True).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass

Runner = Callable[[str, list[str]], subprocess.CompletedProcess]

CLIENT_LTE_ADDR = "10.2.1.2"
ROUTER_CLIENT_LTE_ADDR = "10.2.1.1"
SERVER_LTE_ADDR = "10.2.2.2"
MAX_SUBFLOWS = 2


@dataclass(frozen=True)
class KernelSettings:
    cc: str
    sched: str | None  # None: plain TCP, no MPTCP settings


def _sysctl(run: Runner, role: str, name: str, value: str) -> None:
    run(role, ["sysctl", "-q", "-w", f"{name}={value}"])


def read_sysctl(run: Runner, role: str, name: str) -> str:
    return run(role, ["sysctl", "-n", name]).stdout.strip()


def setup_cc(run: Runner, cc: str) -> None:
    for role in ("server", "client"):
        _sysctl(run, role, "net.ipv4.tcp_congestion_control", cc)
        actual = read_sysctl(run, role, "net.ipv4.tcp_congestion_control")
        if actual != cc:
            raise RuntimeError(f"{role} namespace: tcp_congestion_control is {actual}, not {cc}")


def setup_mptcp(
    run: Runner,
    settings: KernelSettings,
    subflow_endpoints: list[tuple[str, str]] | None = None,
) -> None:
    """subflow_endpoints: (client address, interface) of every path but the first; the
    default is the two-path plan's LTE address. Limits allow one subflow per path."""
    if settings.sched is None:
        raise ValueError("setup_mptcp needs a scheduler name")
    endpoints = [(CLIENT_LTE_ADDR, "lte")] if subflow_endpoints is None else subflow_endpoints
    limit = max(MAX_SUBFLOWS, len(endpoints) + 1)
    for role in ("server", "client"):
        _sysctl(run, role, "net.mptcp.enabled", "1")
        _sysctl(run, role, "net.mptcp.scheduler", settings.sched)
        run(role, ["ip", "mptcp", "endpoint", "flush"])
        run(
            role,
            [
                "ip", "mptcp", "limits", "set",
                "subflows", str(limit), "add_addr_accepted", str(limit),
            ],
        )  # fmt: skip
    for addr, dev in endpoints:
        run("client", ["ip", "mptcp", "endpoint", "add", addr, "dev", dev, "subflow"])
    setup_cc(run, settings.cc)


def setup_tcp(run: Runner, cc: str, path: str) -> None:
    """The two-path plan: the CC at both ends, and for `lte` the host route."""
    setup_cc(run, cc)
    if path == "lte":
        add_host_route(run, SERVER_LTE_ADDR, ROUTER_CLIENT_LTE_ADDR, "lte", CLIENT_LTE_ADDR)
    elif path != "wifi":
        raise ValueError(f"setup_tcp: path {path!r}: valid is wifi, lte")


def add_host_route(run: Runner, server_addr: str, via: str, dev: str, src: str) -> None:
    """A client host route to one server address out of one path (a path other than the
    first, whose subnet the client's main default route serves)."""
    run("client", ["ip", "route", "replace", f"{server_addr}/32", "via", via, "dev", dev,
                   "src", src])  # fmt: skip


def _output_or_none(run: Runner, role: str, argv: list[str]) -> str | None:
    try:
        return run(role, argv).stdout.strip()
    except (subprocess.CalledProcessError, OSError):
        return None  # e.g. a sysctl this kernel does not have


def describe(run: Runner) -> dict[str, dict[str, str | None]]:
    """What is in force, for kernel-mptcp.json (reads, never changes)."""
    commands = {
        "mptcp_enabled": ["sysctl", "-n", "net.mptcp.enabled"],
        "scheduler": ["sysctl", "-n", "net.mptcp.scheduler"],
        "path_manager": ["sysctl", "-n", "net.mptcp.path_manager"],
        "tcp_congestion_control": ["sysctl", "-n", "net.ipv4.tcp_congestion_control"],
        "limits": ["ip", "mptcp", "limits", "show"],
        "endpoints": ["ip", "mptcp", "endpoint", "show"],
    }
    return {
        role: {key: _output_or_none(run, role, argv) for key, argv in commands.items()}
        for role in ("client", "server")
    }
