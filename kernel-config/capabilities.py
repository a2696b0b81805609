"""Turn captured probe text into the capability dict the testbed decides with.

Everything here is pure: it reads the text that `kernel_config.probe.collect()` captured
(sysctl lines, a kernel config excerpt, BTF type names, results of tries in a scratch
namespace) so that the parsing is tested with fixtures from kernels we do not run.

Three kernel situations (kernel-config/README.md):
* ``upstream``: stock Linux >= 5.6, ``net.mptcp.enabled``, schedulers listed in
  ``net.mptcp.available_schedulers`` (only ``default`` upstream);
* ``mptcp-devel-bpf``: the MPTCP development tree, whose BTF has the struct_ops wrapper
  ``bpf_struct_ops_mptcp_sched_ops``, so BPF schedulers can be registered with bpftool
  (they then appear in ``net.mptcp.available_schedulers``);
* ``out-of-tree-0.9x``: multipath-tcp.org kernels (v0.9x), sysctls ``net.mptcp.mptcp_enabled``,
  ``mptcp_scheduler``, ``mptcp_path_manager``; schedulers and path managers are compiled in
  (CONFIG_MPTCP_*), not listed by sysctl.
"""

from __future__ import annotations

import re
from typing import Any

SCHEMA_VERSION = 1

# Kernel config symbols per feature the testbed can use; any one present ("y" or "m") is enough.
FEATURE_CONFIG_SYMBOLS: dict[str, list[str]] = {
    "sch_netem": ["CONFIG_NET_SCH_NETEM"],
    "sch_fq": ["CONFIG_NET_SCH_FQ"],
    "sch_htb": ["CONFIG_NET_SCH_HTB"],
    "sch_tbf": ["CONFIG_NET_SCH_TBF"],
    "tun": ["CONFIG_TUN"],
    "nfqueue": ["CONFIG_NETFILTER_XT_TARGET_NFQUEUE"],
    "xt_statistic": ["CONFIG_NETFILTER_XT_MATCH_STATISTIC"],
}

# Out-of-tree 0.9x: compiled-in schedulers and path managers, by config symbol.
OUT_OF_TREE_SCHEDULER_SYMBOLS = {
    "CONFIG_MPTCP_SCHED_ADVANCED": "default",
    "CONFIG_MPTCP_ROUNDROBIN": "roundrobin",
    "CONFIG_MPTCP_REDUNDANT": "redundant",
    "CONFIG_MPTCP_BLEST": "blest",
    "CONFIG_MPTCP_ECF": "ecf",
}
OUT_OF_TREE_PATH_MANAGER_SYMBOLS = {
    "CONFIG_MPTCP_PM_ADVANCED": "default",
    "CONFIG_MPTCP_FULLMESH": "fullmesh",
    "CONFIG_MPTCP_NDIFFPORTS": "ndiffports",
    "CONFIG_MPTCP_BINDER": "binder",
    "CONFIG_MPTCP_NETLINK": "netlink",
}

BPF_MPTCP_SCHED_STRUCT_OPS = "bpf_struct_ops_mptcp_sched_ops"
BPF_TCP_CC_STRUCT_OPS = "bpf_struct_ops_tcp_congestion_ops"

SYSCTL_LINE = re.compile(r"^\s*([A-Za-z0-9_.\-/]+)\s*=\s*(.*?)\s*$")
CONFIG_SET_LINE = re.compile(r"^(CONFIG_[A-Z0-9_]+)=(.*)$")
CONFIG_UNSET_LINE = re.compile(r"^# (CONFIG_[A-Z0-9_]+) is not set$")


def parse_sysctl_text(text: str) -> dict[str, str]:
    """Parse `sysctl -a` style lines ("name = value"); slashes in names become dots."""
    values: dict[str, str] = {}
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = SYSCTL_LINE.match(line)
        if match is None:
            raise ValueError(
                f"sysctl text line {line_number}: expected 'name = value', got {line!r}"
            )
        values[match.group(1).replace("/", ".")] = match.group(2)
    return values


def parse_kernel_config(text: str) -> dict[str, str | None]:
    """Parse a kernel .config (or an excerpt): symbol -> "y" / "m" / value, None if not set."""
    symbols: dict[str, str | None] = {}
    for line in text.splitlines():
        line = line.strip()
        set_match = CONFIG_SET_LINE.match(line)
        if set_match:
            symbols[set_match.group(1)] = set_match.group(2).strip('"')
            continue
        unset_match = CONFIG_UNSET_LINE.match(line)
        if unset_match:
            symbols[unset_match.group(1)] = None
    return symbols


def _words(value: str | None) -> list[str]:
    return value.split() if value else []


def _config_has(config: dict[str, str | None], symbol: str) -> bool | None:
    """True if built in or a module, False if the excerpt says unset, None if it says nothing."""
    if symbol not in config:
        return None
    return config[symbol] in ("y", "m")


def detect_situation(sysctls: dict[str, str], btf_types: list[str]) -> str:
    if "net.mptcp.mptcp_enabled" in sysctls:
        return "out-of-tree-0.9x"
    if "net.mptcp.enabled" in sysctls:
        if BPF_MPTCP_SCHED_STRUCT_OPS in btf_types:
            return "mptcp-devel-bpf"
        return "upstream"
    return "no-mptcp"


def _mptcp_section(
    situation: str, sysctls: dict[str, str], config: dict[str, str | None], btf_types: list[str]
) -> dict[str, Any]:
    if situation == "out-of-tree-0.9x":
        schedulers = [
            name for symbol, name in OUT_OF_TREE_SCHEDULER_SYMBOLS.items() if config.get(symbol)
        ]
        managers = [
            name for symbol, name in OUT_OF_TREE_PATH_MANAGER_SYMBOLS.items() if config.get(symbol)
        ]
        current_scheduler = sysctls.get("net.mptcp.mptcp_scheduler")
        current_manager = sysctls.get("net.mptcp.mptcp_path_manager")
        # Without a config excerpt, at least the schedulers in use are known to exist.
        if current_scheduler and current_scheduler not in schedulers:
            schedulers.append(current_scheduler)
        if current_manager and current_manager not in managers:
            managers.append(current_manager)
        return {
            "present": True,
            "enabled": sysctls.get("net.mptcp.mptcp_enabled") not in (None, "0"),
            "sysctl_names": "out-of-tree",
            "path_manager": current_manager,
            "available_path_managers": managers,
            "scheduler": current_scheduler,
            "available_schedulers": schedulers,
            "bpf_scheduler_struct_ops": False,
        }
    if situation == "no-mptcp":
        return {
            "present": False,
            "enabled": False,
            "sysctl_names": None,
            "path_manager": None,
            "available_path_managers": [],
            "scheduler": None,
            "available_schedulers": [],
            "bpf_scheduler_struct_ops": False,
        }
    # Upstream names. Kernels before 6.15 have no path_manager/available_path_managers
    # (only pm_type: 0 = kernel, 1 = userspace) and kernels before 6.6 no scheduler sysctls.
    path_manager = sysctls.get("net.mptcp.path_manager")
    if path_manager is None and "net.mptcp.pm_type" in sysctls:
        path_manager = {"0": "kernel", "1": "userspace"}.get(sysctls["net.mptcp.pm_type"])
    managers = _words(sysctls.get("net.mptcp.available_path_managers"))
    if not managers and "net.mptcp.pm_type" in sysctls:
        managers = ["kernel", "userspace"]
    schedulers = _words(sysctls.get("net.mptcp.available_schedulers"))
    scheduler = sysctls.get("net.mptcp.scheduler")
    if not schedulers:
        schedulers = ["default"]  # the built-in one, which older kernels do not name
        scheduler = scheduler or "default"
    return {
        "present": True,
        "enabled": sysctls.get("net.mptcp.enabled") != "0",
        "sysctl_names": "upstream",
        "path_manager": path_manager,
        "available_path_managers": managers,
        "scheduler": scheduler,
        "available_schedulers": schedulers,
        "bpf_scheduler_struct_ops": BPF_MPTCP_SCHED_STRUCT_OPS in btf_types,
    }


def _feature(config: dict[str, str | None], tries: dict[str, bool], name: str) -> dict[str, Any]:
    """A feature is decided by the config when it says something, else by a try, else unknown."""
    for symbol in FEATURE_CONFIG_SYMBOLS[name]:
        present = _config_has(config, symbol)
        if present is not None:
            return {"present": present, "how": f"kernel config {symbol}"}
    if name in tries:
        return {"present": tries[name], "how": "tried in a scratch network namespace"}
    return {"present": None, "how": "unknown (no kernel config and no try)"}


def _bpf_struct_ops(
    config: dict[str, str | None], btf_types: list[str], btf_vmlinux: bool, bpftool_ok: bool
) -> dict[str, Any]:
    present = btf_vmlinux and bpftool_ok and BPF_TCP_CC_STRUCT_OPS in btf_types
    if _config_has(config, "CONFIG_BPF_SYSCALL") is False:
        present = False
    return {
        "present": present,
        "how": "/sys/kernel/btf/vmlinux has bpf_struct_ops_tcp_congestion_ops"
        " and `bpftool struct_ops help` works",
        "btf_vmlinux": btf_vmlinux,
        "bpftool_struct_ops": bpftool_ok,
        "mptcp_sched_struct_ops": BPF_MPTCP_SCHED_STRUCT_OPS in btf_types,
    }


def meanings(caps: dict[str, Any]) -> list[str]:
    """What the capabilities mean for the testbed, one sentence each."""
    out: list[str] = []
    mptcp = caps["mptcp"]
    situation = caps["situation"]
    if situation == "no-mptcp":
        out.append("no MPTCP in this kernel: only the user-space transport and tcp-* can run")
    elif situation == "out-of-tree-0.9x":
        out.append(
            "out-of-tree MPTCP 0.9x (sysctl net.mptcp.mptcp_enabled): the kernel transport's"
            " per-trial set-up targets upstream MPTCP (ip mptcp, net.mptcp.enabled) and refuses"
            " to run here; tcp-* and the user-space transport work"
        )
    else:
        if not mptcp["enabled"]:
            out.append(
                "net.mptcp.enabled=0 on the host: trials set it to 1 in their own namespaces"
            )
        schedulers = " ".join(mptcp["available_schedulers"])
        out.append(f"kernel MPTCP schedulers: {schedulers} (--transport kernel --sched <one>)")
        if situation == "mptcp-devel-bpf":
            out.append(
                "MPTCP development tree with BPF schedulers: register one with"
                " `bpftool struct_ops register mptcp_bpf_<name>.bpf.o` and it is listed"
            )
        else:
            out.append(
                "stock upstream MPTCP: one scheduler; the seeds' schedulers need the"
                " user-space transport"
            )
    cc = caps["tcp_cc"]
    allowed = set(cc["allowed"])
    for name in cc["available"]:
        if name not in allowed:
            out.append(
                f"{name} is available but not allowed inside namespaces: the testbed adds it"
                " to net.ipv4.tcp_allowed_congestion_control for the trial and restores it"
            )
    features = caps["features"]
    if features["sch_netem"]["present"] is False:
        out.append("no netem: the user-space emulator will be used")
    elif features["sch_netem"]["present"]:
        out.append("netem present: tc netem could emulate the links (user-space emulator default)")
    if features["sch_fq"]["present"] is False:
        out.append("no sch_fq: TCP pacing (bbr) uses the kernel's internal pacing")
    if features["nfqueue"]["present"] is False:
        out.append("no NFQUEUE: the user-space emulator cannot hook the router; trials cannot run")
    if features["tun"]["present"] is False:
        out.append("no TUN device")
    if not features["bpf_struct_ops"]["present"]:
        out.append("no BPF struct_ops: BPF congestion controls cannot be registered")
    return out


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    """Build the capability dict from a raw capture (see probe.collect for the keys)."""
    sysctls = parse_sysctl_text(raw.get("sysctl_text", ""))
    config = parse_kernel_config(raw.get("config_text") or "")
    btf_types = list(raw.get("btf_struct_types", []))
    tries: dict[str, bool] = dict(raw.get("tries", {}))
    situation = detect_situation(sysctls, btf_types)
    caps: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "kernel_release": raw.get("kernel_release"),
        "situation": situation,
        "mptcp": _mptcp_section(situation, sysctls, config, btf_types),
        "tcp_cc": {
            "default": sysctls.get("net.ipv4.tcp_congestion_control"),
            "available": _words(sysctls.get("net.ipv4.tcp_available_congestion_control")),
            "allowed": _words(sysctls.get("net.ipv4.tcp_allowed_congestion_control")),
        },
        "features": {name: _feature(config, tries, name) for name in FEATURE_CONFIG_SYMBOLS},
        "config_source": raw.get("config_source"),
    }
    caps["features"]["bpf_struct_ops"] = _bpf_struct_ops(
        config, btf_types, bool(raw.get("btf_vmlinux")), bool(raw.get("bpftool_struct_ops"))
    )
    caps["meanings"] = meanings(caps)
    return caps
