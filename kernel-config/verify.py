"""Did the trial's traffic really go over MPTCP, on how many subflows? (kernel-mptcp.json)

Inputs, all captured text or parsed logs, so the verdict is tested without a kernel:
* MIB counters (`/proc/net/netstat`, MPTcpExt and TcpExt) read in the client and server
  namespaces before and after the session;
* the sampler's kernel-subflows.jsonl (per-socket counters, the last line per socket wins);
* the emulator's emulator.jsonl (link_totals, or the sum of link_stats while it still runs).

A trial is invalid (ctx.mark_invalid) when MPTCP was asked for and
* no MP_CAPABLE connection reached the server, or the client sent no MP_CAPABLE SYN;
* any connection fell back to plain TCP (MIB fallback counters), or a plain TCP socket
  served the player next to the MPTCP ones;
* a configured path was never established: no socket on it (sampled in the server
  namespace) with a completed handshake, i.e. in a state past SYN-RECV and with an RTT
  sample (the kernel creates the full socket on the handshake's last ACK, and for a
  passive open measures the SYN-ACK's round trip then, so even a subflow that never sends
  data shows `rtt`/`minrtt`).
A path that was established but carried no data (under DATA_MIN_BYTES sent) is a
scheduler's choice, not a broken set-up: the trial stays valid and the path is listed in
`paths_unused` (docs/ORCHESTRATOR.md, "Validity").
For tcp-* trials the check is the mirror image: one path only, no MPTCP.
Kernel and emulator bytes per path are compared (server->client direction); a mismatch
over BYTES_TOLERANCE is reported and makes the trial invalid too (the logs would not agree).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.paths import DEFAULT_PATH_NAMES
from kernel_config.ss_parser import (
    MPTCP_DATA_SEGMENT_HEADER_BYTES,
    MPTCP_PURE_ACK_HEADER_BYTES,
    TCP_HEADER_BYTES,
)

DATA_MIN_BYTES = 65536  # a path "carries data" from 64 KiB on: more than handshakes and DATA_FIN
# ss states of a socket whose handshake has not completed (request sockets, active opens).
HANDSHAKE_STATES = ("SYN-SENT", "SYN-RECV")
BYTES_TOLERANCE = 0.05
PATHS = DEFAULT_PATH_NAMES
FALLBACK_COUNTERS = (
    "MPTcpExtMPCapableFallbackACK",
    "MPTcpExtMPCapableFallbackSYNACK",
    "MPTcpExtMPCapableDataFallback",
    "MPTcpExtDssFallback",
    "MPTcpExtSimultConnectFallback",
    "MPTcpExtMD5SigFallback",
    "MPTcpExtFallbackFailed",
    "MPTcpExtDSSCorruptionFallback",
    "MPTcpExtInfiniteMapTx",
    "MPTcpExtInfiniteMapRx",
)
KEY_COUNTERS = (
    "MPTcpExtMPCapableSYNTX",
    "MPTcpExtMPCapableSYNRX",
    "MPTcpExtMPCapableACKRX",
    "MPTcpExtMPJoinSynTx",
    "MPTcpExtMPJoinSynRx",
    "MPTcpExtMPJoinAckRx",
    "MPTcpExtMPJoinRejected",
    "MPTcpExtMPTCPRetrans",
    "TcpExtTCPLostRetransmit",
) + FALLBACK_COUNTERS


def parse_netstat(text: str) -> dict[str, int]:
    """/proc/net/netstat: pairs of 'Prefix: names...' / 'Prefix: values...' lines."""
    counters: dict[str, int] = {}
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) % 2:
        raise ValueError(f"/proc/net/netstat: odd number of lines ({len(lines)})")
    for names_line, values_line in zip(lines[::2], lines[1::2], strict=True):
        prefix, names = names_line.split(":", 1)
        value_prefix, values = values_line.split(":", 1)
        if prefix != value_prefix or len(names.split()) != len(values.split()):
            raise ValueError(f"/proc/net/netstat: {prefix!r} names and values do not pair up")
        for name, value in zip(names.split(), values.split(), strict=True):
            counters[prefix + name] = int(value)
    return counters


def mib_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: after.get(name, 0) - before.get(name, 0) for name in KEY_COUNTERS}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line must parse; a bad line is reported by file and line number (CONTRACTS §1)."""
    lines: list[dict[str, Any]] = []
    if not path.exists():
        return lines
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            if not text.endswith("\n"):
                raise ValueError(f"{path}:{number}: truncated line (no newline)")
            try:
                lines.append(json.loads(text))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error})") from error
    return lines


def wire_bytes(line: dict[str, Any], mptcp: bool) -> int:
    data_segs = int(line.get("data_segs_out_total") or 0)
    segs = int(line.get("segs_out_total") or 0)
    sent = int(line.get("bytes_sent_total") or 0)
    if not mptcp:
        return sent + segs * TCP_HEADER_BYTES
    return (
        sent
        + data_segs * MPTCP_DATA_SEGMENT_HEADER_BYTES
        + max(segs - data_segs, 0) * MPTCP_PURE_ACK_HEADER_BYTES
    )


def emulator_lines_without_cross_traffic(
    trial_dir: Path, crossed: set[str]
) -> list[dict[str, Any]]:
    """emulator.jsonl's lines of the paths not in `crossed` (those carrying cross traffic):
    on those the link counts the cross flows' bytes too, so kernel and emulator bytes cannot
    agree."""
    return [
        line for line in read_jsonl(trial_dir / "emulator.jsonl") if line.get("path") not in crossed
    ]


def summarise_subflows(
    lines: list[dict[str, Any]], mptcp_expected: bool, paths: tuple[str, ...] = PATHS
) -> dict[str, Any]:
    """Per socket the line with the most bytes sent (counters only grow), then per path sums."""
    best: dict[str, dict[str, Any]] = {}
    known_mptcp: dict[str, bool] = {}
    established: set[str] = set()
    for line in lines:
        if line.get("event") != "subflow":
            continue
        if handshake_completed(line):
            established.add(str(line["path"]))
        key = line["subflow"]
        if line.get("mptcp") is not None:
            known_mptcp[key] = bool(line["mptcp"])
        if key not in best or line["bytes_sent_total"] >= best[key]["bytes_sent_total"]:
            best[key] = line
    per_path: dict[str, dict[str, int]] = {}
    mptcp_conns: set[str] = set()
    plain_tcp_sockets: list[str] = []
    for key, line in best.items():
        mptcp = known_mptcp.get(key, mptcp_expected)
        if mptcp:
            mptcp_conns.add(str(line["conn"]))
        else:
            plain_tcp_sockets.append(key)
        totals = per_path.setdefault(
            line["path"],
            {
                "sockets": 0,
                "bytes_sent": 0,
                "bytes_acked": 0,
                "bytes_retrans": 0,
                "pkts_retrans": 0,
                "wire_bytes_sent": 0,
            },
        )
        totals["sockets"] += 1
        totals["bytes_sent"] += int(line["bytes_sent_total"])
        totals["bytes_acked"] += int(line["bytes_acked_total"])
        totals["bytes_retrans"] += int(line["bytes_retrans_total"])
        totals["pkts_retrans"] += int(line["pkts_retrans_total"])
        totals["wire_bytes_sent"] += wire_bytes(line, mptcp)
    paths_with_data = sorted(
        path
        for path, totals in per_path.items()
        if path in paths and totals["bytes_sent"] >= DATA_MIN_BYTES
    )
    return {
        "per_path": per_path,
        "paths_established": sorted(
            path for path in paths if path in established or path in paths_with_data
        ),
        "mptcp_connections": len(mptcp_conns),
        "plain_tcp_sockets": sorted(plain_tcp_sockets),
        "paths_with_data": paths_with_data,
    }


def handshake_completed(line: dict[str, Any]) -> bool:
    """A sampled socket past its handshake: not SYN-SENT/SYN-RECV, and an RTT sample."""
    rtt_ms = line.get("srtt_ms") or line.get("min_rtt_ms")
    return line.get("state") not in HANDSHAKE_STATES and rtt_ms is not None and rtt_ms > 0


def emulator_down_bytes(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Server->client bytes per path from emulator.jsonl: link_totals, else summed link_stats."""
    totals: dict[str, dict[str, Any]] = {}
    summed: dict[str, dict[str, Any]] = {}
    for line in lines:
        if line.get("dir") != "down" or "path" not in line:
            continue  # bottleneck lines name no path
        if line.get("event") == "link_totals":
            totals[line["path"]] = {
                "bytes_in": int(line["bytes_in_total"]),
                "bytes_out": int(line["bytes_out_total"]),
                "source": "link_totals",
            }
        elif line.get("event") == "link_stats":
            entry = summed.setdefault(
                line["path"], {"bytes_in": 0, "bytes_out": 0, "source": "link_stats"}
            )
            entry["bytes_in"] += int(line["bytes_in"])
            entry["bytes_out"] += int(line["bytes_out"])
    return {**summed, **totals}


def compare_bytes(
    per_path: dict[str, dict[str, int]],
    emulator: dict[str, dict[str, Any]],
    paths: tuple[str, ...] = PATHS,
) -> dict[str, Any]:
    """Kernel wire bytes sent vs the emulator's arrivals (bytes_in) and departures (bytes_out)."""
    out: dict[str, Any] = {}
    for path in paths:
        kernel = per_path.get(path, {}).get("wire_bytes_sent", 0)
        emu = emulator.get(path)
        if emu is None:
            out[path] = {"kernel_wire_bytes": kernel, "emulator": None, "within_tolerance": None}
            continue
        in_ratio = kernel / emu["bytes_in"] if emu["bytes_in"] else None
        out_ratio = kernel / emu["bytes_out"] if emu["bytes_out"] else None
        if emu["bytes_in"] == 0 and kernel == 0:
            within = True
        else:
            within = in_ratio is not None and abs(in_ratio - 1) <= BYTES_TOLERANCE
        out[path] = {
            "kernel_wire_bytes": kernel,
            "emulator_bytes_in": emu["bytes_in"],
            "emulator_bytes_out": emu["bytes_out"],
            "emulator_source": emu["source"],
            "kernel_over_emulator_in": in_ratio,
            "kernel_over_emulator_out": out_ratio,
            "within_tolerance": within,
        }
    return out


def verdict(
    transport: str,
    mib: dict[str, dict[str, dict[str, int]]],
    subflow_lines: list[dict[str, Any]],
    emulator_lines: list[dict[str, Any]],
    paths: tuple[str, ...] = PATHS,
) -> dict[str, Any]:
    """The kernel-mptcp.json body: counters, per-path bytes, comparison, reasons if invalid.

    `mib` is {"client"|"server": {"before"|"after": counters}}; `paths` the trial's paths."""
    mptcp_expected = transport == "kernel"
    deltas = {role: mib_delta(mib[role]["before"], mib[role]["after"]) for role in mib}
    subflows = summarise_subflows(subflow_lines, mptcp_expected, paths)
    emulator = emulator_down_bytes(emulator_lines)
    comparison = compare_bytes(subflows["per_path"], emulator, paths) if emulator else None
    reasons: list[str] = []
    server = deltas.get("server", {})
    client = deltas.get("client", {})
    fallbacks = {
        f"{role}:{name}": value
        for role, delta in deltas.items()
        for name, value in delta.items()
        if name in FALLBACK_COUNTERS and value
    }
    paths_with_data = subflows["paths_with_data"]
    if mptcp_expected:
        if client.get("MPTcpExtMPCapableSYNTX", 0) == 0:
            reasons.append(
                "kernel MPTCP: the client sent no MP_CAPABLE SYN (the player's sockets were not"
                " MPTCP: is it run under mptcpize?)"
            )
        if server.get("MPTcpExtMPCapableSYNRX", 0) == 0:
            reasons.append("kernel MPTCP: no MP_CAPABLE connection reached the server")
        if fallbacks:
            listed = ", ".join(f"{name}={value}" for name, value in sorted(fallbacks.items()))
            reasons.append(f"kernel MPTCP: connections fell back to plain TCP ({listed})")
        if subflows["plain_tcp_sockets"]:
            reasons.append(
                f"kernel MPTCP: {len(subflows['plain_tcp_sockets'])} plain TCP socket(s) served"
                f" the player: {', '.join(subflows['plain_tcp_sockets'][:4])}"
            )
        never = [path for path in paths if path not in subflows["paths_established"]]
        if never:
            reasons.append(
                f"kernel MPTCP: {len(paths)} subflows configured but {', '.join(never)} never"
                " established (no socket on it past SYN-RECV with an RTT sample in"
                " kernel-subflows.jsonl)"
            )
    else:
        expected_path = transport.removeprefix("tcp-")
        if subflows["mptcp_connections"] or server.get("MPTcpExtMPCapableSYNRX", 0):
            reasons.append(f"{transport}: MPTCP connections seen in a plain TCP trial")
        if paths_with_data != [expected_path]:
            reasons.append(
                f"{transport}: expected data on {expected_path} only, got"
                f" {', '.join(paths_with_data) or 'no path'}"
            )
    if comparison:
        for path, entry in comparison.items():
            if entry["within_tolerance"] is False:
                reasons.append(
                    f"{path}: kernel wire bytes {entry['kernel_wire_bytes']} and emulator bytes_in"
                    f" {entry['emulator_bytes_in']} differ by more than {BYTES_TOLERANCE:.0%}"
                )
    return {
        "schema": 1,
        "transport": transport,
        "mptcp_used": mptcp_expected
        and server.get("MPTcpExtMPCapableSYNRX", 0) > 0
        and not fallbacks
        and not subflows["plain_tcp_sockets"],
        "subflows_with_data": len(paths_with_data),
        "paths_with_data": paths_with_data,
        "paths_established": subflows["paths_established"],
        # Established but under DATA_MIN_BYTES sent: valid, flagged (MPTCP trials only).
        "paths_unused": [
            path
            for path in paths
            if path in subflows["paths_established"] and path not in paths_with_data
        ]
        if mptcp_expected
        else None,
        "mptcp_connections": subflows["mptcp_connections"],
        "plain_tcp_sockets": subflows["plain_tcp_sockets"],
        "per_path": subflows["per_path"],
        "bytes_vs_emulator": comparison,
        "mib_delta": deltas,
        "mib": mib,
        "valid": not reasons,
        "invalid_reasons": reasons,
    }


def format_summary(result: dict[str, Any]) -> str:
    """A short table of one kernel-mptcp.json, for people and docs."""
    lines = [
        f"transport={result['transport']} cc={result.get('spec', {}).get('cc')}"
        f" sched={result.get('spec', {}).get('sched')} mptcp_used={result['mptcp_used']}"
        f" subflows_with_data={result['subflows_with_data']}"
        f" paths_unused={','.join(result.get('paths_unused') or []) or '-'}"
        f" mptcp_connections={result['mptcp_connections']}"
        f" kernel_verdict_valid={result['valid']}",
        f"{'path':<5} {'bytes_sent':>12} {'kernel_wire':>12} {'emu_in':>12} {'kernel/emu_in':>13}"
        f" {'pkts_retrans':>12} {'bytes_retrans':>13}",
    ]
    comparison = result.get("bytes_vs_emulator") or {}
    for path in PATHS:
        totals = result["per_path"].get(path, {})
        emu = comparison.get(path) or {}
        ratio = emu.get("kernel_over_emulator_in")
        lines.append(
            f"{path:<5} {totals.get('bytes_sent', 0):>12} {totals.get('wire_bytes_sent', 0):>12}"
            f" {emu.get('emulator_bytes_in', '-'):>12}"
            f" {(f'{ratio:.5f}' if ratio is not None else '-'):>13}"
            f" {totals.get('pkts_retrans', 0):>12} {totals.get('bytes_retrans', 0):>13}"
        )
    lines.extend(f"invalid: {reason}" for reason in result["invalid_reasons"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m kernel_config.verify",
        description="Print the kernel verdict of trial folders (their kernel-mptcp.json).",
    )
    parser.add_argument("trial_dirs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    status = 0
    for trial_dir in args.trial_dirs:
        path = trial_dir / "kernel-mptcp.json"
        if not path.is_file():
            print(
                f"{path}: missing (not a kernel/tcp-* trial, or it did not finish)", file=sys.stderr
            )
            status = 2
            continue
        print(f"== {trial_dir.name}")
        print(format_summary(json.loads(path.read_text())))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
