"""Refuse, before anything starts, a kernel or tcp-* trial this kernel cannot run.

`reasons(transport, cc, sched, caps)` returns one sentence per problem (empty: it can run);
`caps` is `kernel_config.probe.probe()`. The orchestrator prints them and exits 2.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

KERNEL_TRANSPORTS = ("kernel", "tcp-wifi", "tcp-lte")
NO_SCHEDULER = ("-", "", None)


def reasons(
    transport: str,
    cc: str,
    sched: str | None,
    caps: dict[str, Any],
    *,
    is_root: bool | None = None,
    have_mptcpize: bool | None = None,
) -> list[str]:
    if transport not in KERNEL_TRANSPORTS:
        raise ValueError(
            f"transport {transport!r}: this check is for {', '.join(KERNEL_TRANSPORTS)}"
        )
    is_root = os.geteuid() == 0 if is_root is None else is_root
    have_mptcpize = shutil.which("mptcpize") is not None if have_mptcpize is None else have_mptcpize
    found: list[str] = []
    # caps may be the orchestrator's minimal fallback dict (testbed.env.kernel_caps) when the
    # probe itself failed: read it defensively.
    tcp_cc = caps.get("tcp_cc", {})
    available_cc = tcp_cc.get("available", [])
    if cc not in available_cc:
        found.append(
            f"--transport {transport} --cc {cc}: this kernel offers congestion controls:"
            f" {' '.join(available_cc) or 'none'}"
        )
    elif cc not in tcp_cc.get("allowed", available_cc) and not is_root:
        found.append(
            f"--transport {transport} --cc {cc}: {cc} is not on"
            f" net.ipv4.tcp_allowed_congestion_control ({' '.join(tcp_cc.get('allowed', []))})"
            " and only"
            " root can add it for the trial"
        )
    if transport != "kernel":
        if sched not in NO_SCHEDULER:
            found.append(
                f"--transport {transport} --sched {sched}: single-path TCP has no scheduler;"
                " use --sched -"
            )
        return found
    mptcp = caps.get("mptcp", {})
    situation = caps.get("situation") or ("upstream" if mptcp.get("present") else "no-mptcp")
    if situation == "no-mptcp":
        found.append("--transport kernel: this kernel has no MPTCP (no net.mptcp sysctls)")
        return found
    if situation == "out-of-tree-0.9x":
        found.append(
            "--transport kernel: out-of-tree MPTCP 0.9x kernel (net.mptcp.mptcp_enabled);"
            " the per-trial set-up uses upstream MPTCP (ip mptcp, net.mptcp.scheduler)."
            f" Its schedulers are {' '.join(mptcp.get('available_schedulers', [])) or 'unknown'};"
            " see kernel-config/README.md"
        )
        return found
    available_sched = mptcp.get("available_schedulers", [])
    if sched in NO_SCHEDULER:
        found.append(
            f"--transport kernel needs --sched; this kernel offers schedulers:"
            f" {' '.join(available_sched)}"
        )
    elif sched not in available_sched:
        hint = ""
        if mptcp.get("bpf_scheduler_struct_ops"):
            hint = " (register a BPF scheduler with bpftool struct_ops register to add one)"
        found.append(
            f"--transport kernel --sched {sched}: this kernel offers schedulers:"
            f" {' '.join(available_sched)}{hint}"
        )
    if not have_mptcpize:
        found.append("--transport kernel: mptcpize is not installed (apt-get install mptcpize)")
    if not is_root:
        found.append("--transport kernel: the per-trial MPTCP set-up needs root")
    return found
