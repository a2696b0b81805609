"""Transports `tcp-wifi` and `tcp-lte`: plain TCP over one path, the single-path baselines.

nginx (no mptcpize) listens on the server address of the chosen path (CONTRACTS §3:
10.1.2.2:8080 for wifi, 10.2.2.2:8080 for lte) and the player connects there. For tcp-lte a
client host route sends traffic to 10.2.2.2 out of `lte` from 10.2.1.2; the router's
`iif c-lte` rule keeps it on the LTE path. The CC is set in both namespaces (the host's
allowed list is extended for the trial when needed). kernel-subflows.jsonl is sampled as for
`kernel`; finish() marks the trial invalid if data went over any other path or over MPTCP.
"""

from __future__ import annotations

# The kernel's TCP and MPTCP sessions are set up, checked and torn down by the same code
# (testbed/transports/kernel_session.py); only the CC/scheduler lists differ.
from testbed.transports.kernel import finish, preflight, start

__all__ = ["finish", "names", "preflight", "start"]


def names(repo: object, caps: dict) -> tuple[list[str], list[str]]:
    return list(caps["tcp_cc"]["available"]), []  # no scheduler (registry default None)
