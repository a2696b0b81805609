"""Capability probe: what this kernel can do for the testbed.

    python -m kernel_config.probe          # text: capabilities and what they mean
    python -m kernel_config.probe --json   # the dict the orchestrator uses (probe())
    python -m kernel_config.probe --raw    # the captured text, for a test fixture

`collect()` captures text only (sysctls, kernel config, BTF type names, tries in a scratch
network namespace); `kernel_config.capabilities.parse()` turns it into the dict, so that the
parsing is tested from fixtures of kernels we do not run (kernel-config/fixtures/).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from kernel_config.capabilities import parse

PROC_SYS = Path("/proc/sys")
# The sysctls the testbed reads: everything under net/mptcp, plus the TCP CC lists.
TCP_CC_SYSCTLS = [
    "net/ipv4/tcp_congestion_control",
    "net/ipv4/tcp_available_congestion_control",
    "net/ipv4/tcp_allowed_congestion_control",
]
CONFIG_SYMBOL_PREFIXES = (
    "CONFIG_MPTCP",
    "CONFIG_INET_MPTCP",
    "CONFIG_NET_SCH_",
    "CONFIG_TCP_CONG_",
    "CONFIG_DEFAULT_TCP_CONG",
    "CONFIG_BPF_SYSCALL",
    "CONFIG_BPF_JIT",
    "CONFIG_DEBUG_INFO_BTF",
    "CONFIG_TUN",
    "CONFIG_NETFILTER_NETLINK_QUEUE",
    "CONFIG_NETFILTER_XT_TARGET_NFQUEUE",
    "CONFIG_NETFILTER_XT_MATCH_STATISTIC",
    "CONFIG_VETH",
    "CONFIG_NET_NS",
)
BTF_STRUCT_OPS_TYPE = re.compile(r"STRUCT '(bpf_struct_ops_[A-Za-z0-9_]+)'")

# Each try runs in a fresh, unnamed network namespace (`unshare -n`), which vanishes with it.
SCRATCH_TRIES = {
    "sch_netem": "ip link set lo up && tc qdisc add dev lo root netem delay 1ms",
    "sch_fq": "ip link set lo up && tc qdisc add dev lo root fq",
    "sch_htb": "ip link set lo up && tc qdisc add dev lo root handle 1: htb",
    "sch_tbf": "ip link set lo up && tc qdisc add dev lo root tbf rate 1mbit burst 10k latency 9ms",
    "nfqueue": "iptables -t mangle -A OUTPUT -j NFQUEUE --queue-num 7 --queue-bypass",
    "xt_statistic": "iptables -A OUTPUT -m statistic --mode random --probability 0.5 -j ACCEPT",
}


def _read_sysctls() -> str:
    lines: list[str] = []
    mptcp_dir = PROC_SYS / "net" / "mptcp"
    names = sorted(p.relative_to(PROC_SYS).as_posix() for p in mptcp_dir.glob("*"))
    for name in names + TCP_CC_SYSCTLS:
        try:
            value = (PROC_SYS / name).read_text().strip()
        except OSError:
            continue
        lines.append(f"{name.replace('/', '.')} = {value}")
    return "\n".join(lines) + "\n"


def _read_config() -> tuple[str | None, str | None]:
    candidates = [Path("/proc/config.gz"), Path(f"/boot/config-{platform.release()}")]
    for path in candidates:
        try:
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except OSError:
            continue
        kept = [
            line
            for line in data.decode(errors="replace").splitlines()
            if line.lstrip("# ").startswith(CONFIG_SYMBOL_PREFIXES)
        ]
        return str(path), "\n".join(kept) + "\n"
    return None, None


def _btf_struct_types() -> list[str]:
    if not Path("/sys/kernel/btf/vmlinux").exists() or shutil.which("bpftool") is None:
        return []
    done = subprocess.run(
        ["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux", "format", "raw"],
        capture_output=True,
        text=True,
        check=False,
    )
    return sorted(set(BTF_STRUCT_OPS_TYPE.findall(done.stdout)))


def _bpftool_struct_ops() -> bool:
    if shutil.which("bpftool") is None:
        return False
    done = subprocess.run(
        ["bpftool", "struct_ops", "help"], capture_output=True, text=True, check=False
    )
    return "struct_ops" in (done.stdout + done.stderr) and "register" in (done.stdout + done.stderr)


def _scratch_tries() -> dict[str, bool]:
    """Try each feature in a throw-away network namespace (root only)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return {}
    results: dict[str, bool] = {}
    for name, command in SCRATCH_TRIES.items():
        done = subprocess.run(
            ["unshare", "-n", "sh", "-c", command], capture_output=True, check=False, timeout=20
        )
        results[name] = done.returncode == 0
    results["tun"] = Path("/dev/net/tun").exists()
    return results


def collect(*, try_features: bool = True) -> dict[str, Any]:
    """Capture the raw text the capability parser needs (keys documented in capabilities)."""
    config_source, config_text = _read_config()
    return {
        "kernel_release": platform.release(),
        "sysctl_text": _read_sysctls(),
        "config_source": config_source,
        "config_text": config_text,
        "btf_vmlinux": Path("/sys/kernel/btf/vmlinux").exists(),
        "btf_struct_types": _btf_struct_types(),
        "bpftool_struct_ops": _bpftool_struct_ops(),
        # The config decides when present; the tries are for kernels without /proc/config.gz.
        "tries": _scratch_tries() if try_features and config_text is None else {},
    }


@lru_cache(maxsize=1)
def _cached_probe() -> str:
    return json.dumps(parse(collect()))


def probe() -> dict[str, Any]:
    """The capability dict (cached per process; each caller gets its own copy)."""
    return json.loads(_cached_probe())


def format_text(caps: dict[str, Any]) -> str:
    mptcp = caps["mptcp"]
    cc = caps["tcp_cc"]
    lines = [
        f"kernel: {caps['kernel_release']}  situation: {caps['situation']}",
        f"MPTCP: present={mptcp['present']} enabled={mptcp['enabled']}"
        f" sysctl names={mptcp['sysctl_names']}",
        f"  path manager: {mptcp['path_manager']}"
        f" (available: {' '.join(mptcp['available_path_managers']) or '-'})",
        f"  scheduler: {mptcp['scheduler']}"
        f" (available: {' '.join(mptcp['available_schedulers']) or '-'})",
        f"  BPF scheduler struct_ops: {mptcp['bpf_scheduler_struct_ops']}",
        f"TCP CC: default={cc['default']} available: {' '.join(cc['available'])}"
        f"  allowed in namespaces: {' '.join(cc['allowed'])}",
        f"config source: {caps['config_source'] or 'none (features tried in a scratch netns)'}",
    ]
    for name, feature in caps["features"].items():
        lines.append(f"  {name:<14} {str(feature['present']):<6} ({feature['how']})")
    lines.append("what it means:")
    lines.extend(f"  - {meaning}" for meaning in caps["meanings"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kernel_config.probe", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="print the capability dict as JSON")
    parser.add_argument(
        "--raw", action="store_true", help="print the captured text (a test fixture) as JSON"
    )
    args = parser.parse_args(argv)
    if args.raw:
        print(json.dumps(collect(), indent=1))
    elif args.json:
        print(json.dumps(probe(), indent=1))
    else:
        print(format_text(probe()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
