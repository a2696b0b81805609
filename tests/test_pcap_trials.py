"""`run_trials.sh --pcap` end to end: a short lossy trial (scenario B1: 10 % loss on Wi-Fi)
for the user and the kernel transport, recorded with captures, then checked:

* one capture per path side (pcap/<path>-{client,server}-side.pcap), readable by tshark;
* per path and direction, packets in minus packets out of the router equal the emulator's
  drops (its link_totals plus the kernel's NFQUEUE drops), within 1 %;
* user transport: transport/wireshark/mptransport.lua decodes every UDP packet with no
  malformed-packet expert info, also when cut to the default snap length, and every field
  of every packet the transport logged (mpproxy --packet-log) is decoded equal;
* kernel transport: Wireshark's own dissector sees MP_CAPABLE, MP_JOIN and DSS options.

To stay fast the trial does not play video: `run_trial`'s `play` hook (what interactive mode
uses) fetches one 2 MB file through the transport with curl, and the content folder is a
stand-in (a manifest and that file) instead of the FFmpeg ladder. Captures are turned on as
`run_trials.sh --pcap` does, through TESTBED_PCAP.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from markers import MPPROXY, needs_built, needs_capture_tools, needs_root

from metrics import pcap as pcap_metrics
from testbed import capture
from testbed.spec import TrialSpec

REPO = Path(__file__).resolve().parent.parent
DISSECTOR = REPO / "transport" / "wireshark" / "mptransport.lua"
FETCH_BYTES = 2_000_000
TOLERANCE = 0.01

pytestmark = [
    pytest.mark.netns,
    needs_root,
    needs_built(MPPROXY),
    needs_capture_tools,
    pytest.mark.timeout(300),
]


def _tshark(*args: str) -> str:
    done = subprocess.run(["tshark", "-n", "-X", f"lua_script:{DISSECTOR}", *args],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Lua: Error" not in done.stderr, done.stderr[-2000:]
    return done.stdout


def _record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str, snaplen: int) -> Path:
    from testbed import trial as trial_module

    monkeypatch.setenv(capture.PCAP_ENV, capture.CaptureSettings(snaplen, 50.0).to_env())
    content = tmp_path / "content" / "stand-in"
    content.mkdir(parents=True)
    (content / "manifest.mpd").write_text("<MPD/>\n")
    (content / "blob.bin").write_bytes(os.urandom(FETCH_BYTES))
    monkeypatch.setattr("server.content.prepare", lambda *_a, **_k: content)
    cc, sched = ("cubic", "rr") if transport == "user" else ("cubic", "default")

    def fetch(ctx, endpoint, content_dir) -> None:
        url = f"http://{endpoint.host}:{endpoint.port}/content/{Path(content_dir).name}/blob.bin"
        proc = ctx.spawn("client", "fetch", ["curl", "-sS", "-o", "/dev/null", "--max-time", "60",
                                             "-w", "%{size_download}", url])  # fmt: skip
        assert proc.wait(90) == 0, proc.stderr_path.read_text()
        assert proc.stdout_path.read_text().strip() == str(FETCH_BYTES)

    spec = TrialSpec("B1", transport, cc, sched, "gstreamer", 12, 0, 1)
    trial_dir = tmp_path / "run" / "trials" / spec.trial_id()
    result = trial_module.run_trial(spec, trial_dir, REPO, play=fetch)
    assert result["status"] == "ok", result
    return trial_dir


def _check_files_and_counts(trial: Path) -> pcap_metrics.Captured:
    summary = json.loads((trial / "pcap" / "capture.json").read_text())
    plan = json.loads((trial / "trial.json").read_text())["address_plan"]
    names = sorted(f["file"] for f in summary["files"])
    assert names == sorted(f"{p}-{s}-side.pcap" for p in plan for s in ("client", "server"))
    assert isinstance(summary["started_t_ns"], int) and summary["clock"]["t0_unix_ns"] > 0
    assert not any(f["cap_hit"] for f in summary["files"])
    data = pcap_metrics.read_trial(trial)  # every file through tshark (it raises if it cannot)
    rows = pcap_metrics.counts(trial, data)
    dropped_somewhere = 0
    for row in (r for r in rows if "path" in r):  # B1 has no shared bottleneck
        assert row["emulator_in"] is not None, row
        allowed = max(1, TOLERANCE * row["capture_in"])
        emulator_dropped = row["emulator_dropped"] + row["kernel_dropped"]
        assert abs(row["capture_in"] - (row["emulator_in"] + row["kernel_dropped"])) <= allowed, row
        assert abs(row["capture_out"] - row["emulator_out"]) <= allowed, row
        assert abs(row["capture_dropped"] - emulator_dropped) <= allowed, row
        dropped_somewhere += row["capture_dropped"]
    assert dropped_somewhere > 0, rows  # B1's Wi-Fi loses 10 %: the check has drops to match
    return data


FRAME_FIELDS = {  # frame type -> (packet_log key, tshark field, parse) in log order
    0x01: ("HELLO", [("backup", "hello.backup", "bool"), ("name", "hello.name", "str")]),
    0x03: ("ACK", [("largest", "ack.largest", "int"), ("ack_delay_us", "ack.delay_us", "int")]),
    0x04: ("DATA_ACK", [("data_ack", "data_ack", "int"), ("window", "data_ack.window", "int")]),
    0x05: ("DATA", [("dsn", "data.dsn", "int"), ("len", "data.len", "int"),
                    ("fin", "data.fin", "bool")]),
    0x06: ("PING", []),
    0x07: ("CLOSE", [("code", "close.code", "int")]),
}  # fmt: skip
PARSE = {"int": int, "str": str, "bool": lambda v: v in ("1", "True")}


def _frames_by_packet(pcap: Path, sender: str) -> dict[tuple[int, int, int], list[dict]]:
    """(conn_id, subflow, pn) -> frames as the dissector decodes them (packet_log's shape),
    of every packet `sender` sent (each direction numbers its packets on its own); asserts
    that each one decodes, with no malformed-packet or warning expert info."""
    per_frame = [f for _, fs in FRAME_FIELDS.values() for _, f, _ in fs]
    fields = ["conn_id", "subflow", "pn", "frame", "ack.ranges", "ack.first", "ack.last"]
    fields = [f"mptransport.{f}" for f in [*fields, *per_frame]]
    fields += ["_ws.malformed", "_ws.expert.severity", "frame.number"]
    # ICMP errors (port unreachable once a proxy has exited) quote a cut copy of a packet.
    out = _tshark(
        "-r", str(pcap), "-Y", f"!icmp && ip.src == {sender}", "-T", "fields",
        "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=;",
        *(a for f in fields for a in ("-e", f)),
    )  # fmt: skip
    packets = {}
    for line in out.splitlines():
        values = [x.split(";") if x else [] for x in line.split("\t")]
        column = {name: iter(vals) for name, vals in zip(fields, values, strict=True)}
        where = f"{pcap.name} packet {values[-1]}"
        assert values[0], f"{where}: not decoded as mptransport"
        assert not values[-3] and not values[-2], f"{where}: expert info {values[-3:-1]}"
        frames = []
        for t in values[3]:
            kind, spec = FRAME_FIELDS[int(t, 0)]
            frame: dict = {"type": kind}
            for key, f, parse in spec:
                frame[key] = PARSE[parse](next(column[f"mptransport.{f}"]))
            if kind == "ACK":
                n = int(next(column["mptransport.ack.ranges"]))
                frame["ranges"] = [
                    [int(next(column["mptransport.ack.first"])),
                     int(next(column["mptransport.ack.last"]))]
                    for _ in range(n)
                ]  # fmt: skip
            frames.append(frame)
        packets[(int(values[0][0], 16), int(values[1][0]), int(values[2][0]))] = frames
    return packets


def test_user_transport_capture_counts_and_dissector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trial = _record(tmp_path, monkeypatch, "user", snaplen=2048)  # whole packets: every frame
    data = _check_files_and_counts(trial)
    plan = json.loads((trial / "trial.json").read_text())["address_plan"]
    kinds: set[str] = set()
    for role in ("server", "client"):  # each captured where its packets enter the router
        logged = {(ln["conn_id"], ln["subflow"], ln["pn"]): ln["frames"]
                  for ln in map(json.loads, (trial / f"packets-{role}.jsonl").open())}  # fmt: skip
        assert logged, role
        captured: dict[tuple[int, int, int], list[dict]] = {}
        for path in plan:
            pcap = trial / "pcap" / f"{path}-{role}-side.pcap"
            sent_here = _frames_by_packet(pcap, plan[path][role])
            assert sent_here and set(sent_here) <= set(logged), (role, path)
            captured.update(sent_here)
        assert len(captured) >= (1 - TOLERANCE) * len(logged), (role, len(captured), len(logged))
        mismatched = [k for k, frames in captured.items() if frames != logged[k]]
        assert not mismatched, (role, mismatched[:3], [logged[k] for k in mismatched[:3]])
        kinds |= {f["type"] for fs in captured.values() for f in fs}
    assert {"HELLO", "ACK", "DATA_ACK", "DATA"} <= kinds, kinds  # HELLO: the client's
    # Wi-Fi's 10 % loss leaves gaps: the receiver acknowledges several ranges at once.
    assert any(f["type"] == "ACK" and len(f["ranges"]) > 1 for fs in captured.values() for f in fs)
    # Cut to the default snap length (headers only), still nothing malformed.
    cut = tmp_path / "cut.pcap"
    wifi = trial / "pcap" / f"{next(iter(plan))}-server-side.pcap"
    subprocess.run(["editcap", "-s", str(capture.DEFAULT_SNAPLEN_BYTES), str(wifi), str(cut)],
                   check=True)  # fmt: skip
    bad = _tshark(
        "-r",
        str(cut),
        "-Y",
        "!icmp && (_ws.malformed || _ws.expert.severity >= warning || (udp && !mptransport))",
        "-T",
        "fields",
        "-e",
        "frame.number",
    )
    assert bad.strip() == "", bad.split()[:10]
    dsns = _tshark("-r", str(cut), "-Y", "mptransport.data.dsn", "-T", "fields", "-e",
                   "mptransport.data.dsn")  # fmt: skip
    assert len(dsns.split()) > 100
    png = pcap_metrics.plot(trial, tmp_path / "seq.png", data)
    assert png.stat().st_size > 10_000


def test_kernel_transport_capture_counts_and_mptcp_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from testbed.env import kernel_caps

    if not kernel_caps().get("mptcp", {}).get("enabled"):
        pytest.skip("this kernel has no MPTCP (net.mptcp.enabled)")
    trial = _record(tmp_path, monkeypatch, "kernel", snaplen=capture.DEFAULT_SNAPLEN_BYTES)
    _check_files_and_counts(trial)
    plan = json.loads((trial / "trial.json").read_text())["address_plan"]
    subtypes: set[str] = set()
    for path in plan:
        out = _tshark("-r", str(trial / "pcap" / f"{path}-server-side.pcap"), "-Y", "mptcp",
                      "-T", "fields", "-e", "tcp.options.mptcp.subtype")  # fmt: skip
        subtypes |= {s for line in out.split() for s in re.split(r"[,;]", line) if s}
    # 0 MP_CAPABLE, 1 MP_JOIN, 2 DSS (RFC 8684 section 3)
    assert {"0", "1", "2"} <= subtypes, subtypes
