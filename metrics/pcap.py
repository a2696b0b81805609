"""A trial's packet captures (`run_trials.sh --pcap`, testbed/capture.py) as counts and a
per-path sequence/time plot.

    python -m metrics.pcap RUN/trials/ID [--out FILE.png]

For each path, the packets the sender put on the link (the capture on the side where they
enter the router) are plotted by trial time against their sequence number: the data
sequence number of the user transport's DATA frames (decoded with
transport/wireshark/mptransport.lua), or the subflow's relative TCP sequence number for the
kernel and TCP transports. A packet that entered the router and never left it is an
emulator drop (red x); a retransmission (orange) is a DSN sent before (user transport) or
what Wireshark's TCP analysis flags. Beside it, the transport's own timeline: cumulative
bytes the sender put on each path according to the capture and according to the transport's
log (transport-server.jsonl `bytes_sent_total` for the user transport,
kernel-subflows.jsonl `wire_bytes_sent_total` for the kernel), so one can see the two agree.

Packets are read with tshark's fields output (Debian package tshark). In and out packets are
matched by IP source, destination, identification, length and transport checksum: the
router forwards a packet unchanged except for its TTL and IP checksum.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from metrics.read import json_lines  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DISSECTOR = REPO / "transport" / "wireshark" / "mptransport.lua"
CAPTURE_DIR = "pcap"
DIRECTIONS = ("up", "down")
# (tshark field, name): one line per packet, tab-separated, first occurrence (an ICMP error
# carries the offending packet's headers too; the outer ones count)
FIELDS = (
    ("frame.time_epoch", "t"), ("ip.src", "src"), ("ip.dst", "dst"), ("ip.id", "ip_id"),
    ("ip.len", "ip_len"), ("udp.checksum", "udp_ck"), ("tcp.checksum", "tcp_ck"),
    ("tcp.stream", "tcp_stream"), ("tcp.seq", "tcp_seq"), ("tcp.len", "tcp_len"),
    ("tcp.analysis.retransmission", "tcp_retrans"), ("mptransport.conn_id", "conn_id"),
    ("mptransport.subflow", "subflow"), ("mptransport.pn", "pn"),
    ("mptransport.data.dsn", "dsn"), ("mptransport.data.len", "data_len"), ("icmp.type", "icmp"),
)  # fmt: skip


@dataclass
class Packet:
    t_s: float  # trial time
    src: str
    dst: str
    key: tuple[str, ...]  # identifies the packet on both sides of the router
    size_bytes: int
    seq: int | None  # DSN (user transport) or relative TCP sequence number
    seq_len: int
    dsn: bool  # seq is a data sequence number
    flow: str  # user: conn_id; TCP: stream index
    tcp_retrans: bool


@dataclass
class PathDirection:
    """One path, one direction: packets into the router and out of it."""

    path: str
    direction: str
    into: list[Packet] = field(default_factory=list)
    out: list[Packet] = field(default_factory=list)

    def dropped(self) -> list[Packet]:
        left = Counter(p.key for p in self.out)
        gone = []
        for p in self.into:
            if left[p.key] > 0:
                left[p.key] -= 1
            else:
                gone.append(p)
        return gone


def tshark_rows(pcap: Path, extra_fields: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """Every packet of a capture as {name: text}, decoded with the transport's dissector."""
    names = [f for f, _ in FIELDS] + list(extra_fields)
    argv = ["tshark", "-n", "-r", str(pcap), "-X", f"lua_script:{DISSECTOR}", "-T", "fields",
            "-E", "separator=/t", "-E", "occurrence=f",
            *(a for f in names for a in ("-e", f))]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"tshark -r {pcap}: status {done.returncode}: {done.stderr[-800:]}")
    short = [n for _, n in FIELDS] + list(extra_fields)
    rows = []
    for line in done.stdout.splitlines():
        values = line.split("\t")
        rows.append(dict(zip(short, values + [""] * (len(short) - len(values)), strict=True)))
    return rows


def _first_int(text: str) -> int | None:
    head = text.split(",")[0]
    return int(head, 0) if head else None


def _packet(row: dict[str, str], t0_unix_s: float) -> Packet:
    quoted = bool(row["icmp"])  # an ICMP error: its transport fields are the quoted packet's
    dsn = None if quoted else _first_int(row["dsn"])
    tcp_seq = None if quoted else _first_int(row["tcp_seq"])
    key = (row["src"], row["dst"], row["ip_id"], row["ip_len"], row["udp_ck"] or row["tcp_ck"])
    return Packet(
        t_s=float(row["t"]) - t0_unix_s,
        src=row["src"],
        dst=row["dst"],
        key=key,
        size_bytes=int(row["ip_len"] or 0),
        seq=dsn if dsn is not None else tcp_seq,
        seq_len=_first_int(row["data_len"]) or _first_int(row["tcp_len"]) or 0,
        dsn=dsn is not None,
        flow=row["conn_id"] or row["tcp_stream"],
        tcp_retrans=bool(row["tcp_retrans"]),
    )


def _subnet(addr: str) -> str:
    return addr.rsplit(".", 1)[0]


def read_trial(trial: Path) -> dict[tuple[str, str], PathDirection]:
    """(path, direction) -> packets into and out of the router, from pcap/capture.json."""
    trial = Path(trial)
    summary = json.loads((trial / CAPTURE_DIR / "capture.json").read_text())
    plan = json.loads((trial / "trial.json").read_text())["address_plan"]
    t0_unix_s = summary["clock"]["t0_unix_ns"] / 1e9
    out: dict[tuple[str, str], PathDirection] = {}
    for path, addrs in plan.items():
        client_net = _subnet(addrs["client"])
        sides = {f["side"]: trial / CAPTURE_DIR / f["file"] for f in summary["files"]
                 if f["path"] == path}  # fmt: skip
        packets = {side: [_packet(r, t0_unix_s) for r in tshark_rows(pcap)]
                   for side, pcap in sides.items()}  # fmt: skip
        up = PathDirection(path, "up")
        down = PathDirection(path, "down")
        for side, pkts in packets.items():
            for p in pkts:
                is_up = _subnet(p.src) == client_net
                d = up if is_up else down
                entering = (side == "client") == is_up  # up enters on the client side
                (d.into if entering else d.out).append(p)
        out[(path, "up")] = up
        out[(path, "down")] = down
    return out


def emulator_totals(trial: Path) -> dict[tuple[str, str], dict]:
    """(path, direction) -> the emulator's link_totals, plus the kernel's NFQUEUE drops."""
    totals: dict[tuple[str, str], dict] = {}
    for line in json_lines(Path(trial) / "emulator.jsonl"):
        if line.get("event") == "link_totals" and "path" in line:
            totals[(line["path"], line["dir"])] = dict(line)
    for line in json_lines(Path(trial) / "emulator.jsonl"):
        if line.get("event") == "nfqueue_totals" and "path" in line:
            t = totals.setdefault((line["path"], line["dir"]), {})
            t["kernel_dropped_total"] = (
                line["kernel_queue_dropped_total"] + line["kernel_user_dropped_total"]
            )
    return totals


Captured = dict[tuple[str, str], PathDirection]


def counts(trial: Path, data: Captured | None = None) -> list[dict]:
    """Per path and direction: packets in, out and dropped, from the captures (`data`, read
    with read_trial when not given) and from the emulator's counters; then one row per shared
    bottleneck (its drops are counted per bottleneck, not per path)."""
    emu = emulator_totals(trial)
    rows = []
    for (path, direction), pd in sorted((data or read_trial(trial)).items()):
        e = emu.get((path, direction), {})
        rows.append({
            "path": path, "dir": direction,
            "capture_in": len(pd.into), "capture_out": len(pd.out),
            "capture_dropped": len(pd.dropped()),
            "emulator_in": e.get("pkts_in_total"), "emulator_out": e.get("pkts_out_total"),
            "emulator_dropped": (e["pkts_in_total"] - e["pkts_out_total"]) if e else None,
            "kernel_dropped": e.get("kernel_dropped_total", 0),
        })  # fmt: skip
    return rows + _bottleneck_rows(trial, rows)


def _bottleneck_rows(trial: Path, path_rows: list[dict]) -> list[dict]:
    """A shared bottleneck's drops are the emulator's per bottleneck, not per path: one row
    per bottleneck and direction, beside the sum of its paths' capture drops minus what the
    paths' own links dropped."""
    lines = list(json_lines(Path(trial) / "emulator.jsonl"))
    start = next((ln for ln in lines if ln.get("event") == "start"), {})
    members: dict[tuple[str, str], list[str]] = {}
    for link, name in (start.get("bottleneck_of") or {}).items():
        path, direction = link.split("/")
        members.setdefault((name, direction), []).append(path)
    rows = []
    for ln in lines:
        key = (ln.get("bottleneck"), ln.get("dir"))
        if ln.get("event") != "link_totals" or key not in members:
            continue
        of = [r for r in path_rows if r["dir"] == key[1] and r["path"] in members[key]]
        rows.append({
            "bottleneck": key[0], "dir": key[1], "paths": sorted(members[key]),
            "capture_dropped": sum(r["capture_dropped"] - (r["emulator_dropped"] or 0)
                                   for r in of),
            "emulator_in": ln["pkts_in_total"], "emulator_out": ln["pkts_out_total"],
            "emulator_dropped": ln["pkts_in_total"] - ln["pkts_out_total"],
        })  # fmt: skip
    return rows


def _transport_bytes(trial: Path) -> dict[str, list[tuple[float, int]]]:
    """The sender's own cumulative bytes on the wire per path: (trial s, bytes)."""
    user = trial / "transport-server.jsonl"
    kernel = trial / "kernel-subflows.jsonl"
    if user.is_file():
        by_conn: dict[tuple, list[tuple[float, int]]] = {}
        for ln in json_lines(user):
            if ln.get("event") == "subflow":
                by_conn.setdefault((ln["conn"], ln["path"]), []).append(
                    (ln["t_ns"] / 1e9, int(ln["bytes_sent_total"]))
                )
        return _sum_over_connections(by_conn)
    if kernel.is_file():
        by_sub: dict[tuple, list[tuple[float, int]]] = {}
        for ln in json_lines(kernel):
            if ln.get("wire_bytes_sent_total") is not None and ln.get("path"):
                key = (ln.get("conn"), ln.get("subflow"), ln["path"])
                by_sub.setdefault(key, []).append(
                    (ln["t_ns"] / 1e9, int(ln["wire_bytes_sent_total"]))
                )
        return _sum_over_connections(by_sub)
    return {}


def _sum_over_connections(
    by_key: dict[tuple, list[tuple[float, int]]],
) -> dict[str, list[tuple[float, int]]]:
    """Cumulative counters of several connections on one path, summed at each sample time."""
    out: dict[str, list[tuple[float, int]]] = {}
    paths = {k[-1] for k in by_key}
    for path in paths:
        keys = [k for k in by_key if k[-1] == path]
        times = sorted({t for k in keys for t, _ in by_key[k]})
        total = []
        for t in times:
            s = 0
            for k in keys:
                before = [b for tt, b in by_key[k] if tt <= t]
                s += before[-1] if before else 0
            total.append((t, s))
        out[path] = total
    return out


def plot(trial: Path, out_png: Path, data: Captured | None = None) -> Path:
    """Sequence/time per path with drops and retransmissions, and capture vs transport bytes."""
    trial = Path(trial)
    data = data or read_trial(trial)
    direction = "down"  # the media's direction: server to client
    paths = sorted({p for p, _ in data})
    fig = Figure(figsize=(10, 3.2 * (len(paths) + 1)))
    axes = fig.subplots(len(paths) + 1, 1, squeeze=False)[:, 0]
    own = _transport_bytes(trial)
    for ax, path in zip(axes, paths, strict=False):
        pd = data[(path, direction)]
        flows = Counter(p.flow for p in pd.into if p.seq is not None and p.seq_len > 0)
        flow = flows.most_common(1)[0][0] if flows else None
        sent = [p for p in pd.into if p.flow == flow and p.seq is not None and p.seq_len > 0]
        seen: set[int | None] = set()
        retrans = []
        for p in sent:
            if (p.dsn and p.seq in seen) or p.tcp_retrans:
                retrans.append(p)
            seen.add(p.seq)
        dropped = {id(p) for p in pd.dropped()}
        lost = [p for p in sent if id(p) in dropped]
        for group, style, colour, label in (
            (sent, ".", "tab:blue", f"sent ({len(sent)} packets)"),
            (retrans, "o", "tab:orange", f"retransmitted ({len(retrans)})"),
            (lost, "x", "tab:red", f"dropped by the emulator ({len(lost)})"),
        ):
            ax.plot([p.t_s for p in group], [(p.seq or 0) / 1e6 for p in group], style,
                    ms=2 if style == "." else 4, mfc="none" if style == "o" else colour,
                    color=colour, label=label)  # fmt: skip
        what = "data sequence number" if sent and sent[0].dsn else "subflow sequence number"
        ax.set_ylabel(f"{what} (MB)")
        ax.set_title(f"{path}, {direction}link, flow {flow}: capture on the router's entry side")
        ax.legend(loc="upper left", fontsize=8)
        ax.grid(alpha=0.3)
    ax = axes[-1]
    for i, path in enumerate(paths):
        colour = f"C{i}"
        pd = data[(path, direction)]
        total, xs, ys = 0, [], []
        for p in sorted(pd.into, key=lambda p: p.t_s):
            total += p.size_bytes
            xs.append(p.t_s)
            ys.append(total / 1e6)
        ax.plot(xs, ys, color=colour, label=f"{path}: capture (IP bytes)")
        if path in own:
            ax.plot([t for t, _ in own[path]], [b / 1e6 for _, b in own[path]], "--",
                    color=colour, label=f"{path}: transport's log")  # fmt: skip
    ax.set_xlabel("trial time (s)")
    ax.set_ylabel("bytes sent, cumulative (MB)")
    ax.set_title("capture vs the transport's own counters")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_png, dpi=80)
    return out_png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m metrics.pcap", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("trial", type=Path, help="a trial folder recorded with --pcap")
    parser.add_argument("--out", type=Path, default=None,
                        help="PNG to write (default: TRIAL/pcap/sequence.png)")  # fmt: skip
    args = parser.parse_args(argv)
    if not (args.trial / CAPTURE_DIR / "capture.json").is_file():
        print(f"{args.trial}: no {CAPTURE_DIR}/capture.json (record the trial with "
              "run_trials.sh --pcap)", file=sys.stderr)  # fmt: skip
        return 2
    data = read_trial(args.trial)
    for row in counts(args.trial, data):
        print(json.dumps(row))
    out = plot(args.trial, args.out or args.trial / CAPTURE_DIR / "sequence.png", data)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
