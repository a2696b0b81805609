"""The Wireshark dissector (transport/wireshark/mptransport.lua) against the wire format it
decodes, without root: its version and port follow the transport's, and a hand-made capture
with every frame type (built here from wire.rs's layout) decodes field by field; a datagram
of another version gets the expert warning, and one cut by a snap length is not malformed.
The end-to-end check on a real trial's capture is tests/test_pcap_trials.py. Also the parts
of testbed/capture.py that need no namespace."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from testbed import capture
from testbed.transports.user import MPPROXY_PORT

REPO = Path(__file__).resolve().parent.parent
LUA = REPO / "transport" / "wireshark" / "mptransport.lua"
WIRE = REPO / "transport" / "core" / "src" / "wire.rs"


def test_dissector_version_and_port_follow_the_transport() -> None:
    lua = LUA.read_text()
    rust = WIRE.read_text()
    rust_version = re.search(r"pub const VERSION: u8 = (\d+);", rust)
    lua_version = re.search(r"local WIRE_VERSION = (\d+)", lua)
    assert rust_version and lua_version
    assert lua_version[1] == rust_version[1]
    lua_port = re.search(r"local UDP_PORT = (\d+)", lua)
    assert lua_port and int(lua_port[1]) == MPPROXY_PORT
    frame_types = set(re.findall(r"const FRAME_\w+: u8 = (0x[0-9a-f]{2});", rust))
    assert frame_types == set(re.findall(r"\[(0x[0-9a-f]{2})\] = \"", lua))


def _datagram(version: int, pn: int, frames: bytes) -> bytes:
    return b"M" + bytes([version]) + struct.pack(">QBQ", 0xABCDEF, 1, pn) + frames


def _frames() -> bytes:
    hello = bytes([0x01, 1, 3]) + b"lte"
    ack = bytes([0x03]) + struct.pack(">QIB", 10, 250, 2) + struct.pack(">QQQQ", 8, 10, 2, 5)
    data_ack = bytes([0x04]) + struct.pack(">QQ", 1000, 65536)
    data = bytes([0x05]) + struct.pack(">QHB", 500, 5, 1) + b"hello"
    return hello + ack + data_ack + data + bytes([0x06]) + bytes([0x07, 1])


def _pcap(path: Path, payloads: list[bytes]) -> None:
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, payload in enumerate(payloads):
        udp = struct.pack(">HHHH", 40000, 4433, 8 + len(payload), 0) + payload
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i, 0x4000, 64, 17, 0,
                         bytes([10, 2, 2, 2]), bytes([10, 2, 1, 2])) + udp  # fmt: skip
        frame = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip
        out.append(struct.pack("<IIII", 1, i, len(frame), len(frame)) + frame)
    path.write_bytes(b"".join(out))


needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark")


def _fields(pcap: Path, *fields: str) -> list[list[str]]:
    argv = ["tshark", "-n", "-X", f"lua_script:{LUA}", "-r", str(pcap), "-T", "fields",
            "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=;",
            *(a for f in fields for a in ("-e", f))]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert "Lua: Error" not in done.stderr, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]


@needs_tshark
def test_every_frame_type_decodes_field_by_field(tmp_path: Path) -> None:
    pcap = tmp_path / "frames.pcap"
    _pcap(pcap, [_datagram(1, 42, _frames()), _datagram(9, 43, _frames())])
    rows = _fields(
        pcap,
        "mptransport.conn_id",
        "mptransport.subflow",
        "mptransport.pn",
        "mptransport.frame",
        "mptransport.hello.name",
        "mptransport.hello.backup",
        "mptransport.ack.largest",
        "mptransport.ack.delay_us",
        "mptransport.ack.first",
        "mptransport.ack.last",
        "mptransport.data_ack",
        "mptransport.data_ack.window",
        "mptransport.data.dsn",
        "mptransport.data.len",
        "mptransport.data.fin",
        "mptransport.close.code",
        "_ws.expert.message",
    )
    good, other_version = rows
    assert good[:16] == [
        "0x0000000000abcdef",
        "1",
        "42",
        "0x01;0x03;0x04;0x05;0x06;0x07",
        "lte",
        "1",
        "10",
        "250",
        "8;2",
        "10;5",
        "1000",
        "65536",
        "500",
        "5",
        "1",
        "1",
    ]
    assert good[16] == ""  # no expert info
    assert other_version[3] == ""  # frames of version 9 are left alone ...
    assert "this dissector decodes version 1" in other_version[16]  # ... with the warning


@needs_tshark
def test_a_datagram_cut_by_the_snap_length_is_not_malformed(tmp_path: Path) -> None:
    full = tmp_path / "full.pcap"
    payload = _datagram(1, 7, bytes([0x05]) + struct.pack(">QHB", 900, 1200, 0) + bytes(1200)
                        + bytes([0x04]) + struct.pack(">QQ", 2100, 4096))  # fmt: skip
    _pcap(full, [payload])
    cut = tmp_path / "cut.pcap"
    subprocess.run(["editcap", "-s", str(capture.DEFAULT_SNAPLEN_BYTES), str(full), str(cut)],
                   check=True, capture_output=True)  # fmt: skip
    (row,) = _fields(
        cut,
        "mptransport.data.dsn",
        "mptransport.data.len",
        "mptransport.not_captured",
        "_ws.malformed",
        "_ws.expert.severity",
    )
    assert row[:2] == ["900", "1200"]
    assert int(row[2]) > 1000  # the rest of the DATA payload and the DATA_ACK
    assert row[3:] == ["", ""]


def test_capture_settings_are_checked_and_reach_trials_through_the_environment() -> None:
    assert capture.settings_from_env({}) is None
    env, problems = capture.run_environment(10, 5.0, simulated=False)
    assert env == {} and problems[0].startswith("--pcap-snaplen 10")
    assert "simulator" in capture.run_environment(128, 5.0, simulated=True)[1][0]
    env, problems = capture.run_environment(128, 0, simulated=False)
    assert env == {} and problems[0].startswith("--pcap-max-mb 0")
    before = dict(os.environ)
    env, problems = capture.run_environment(256, 7.5, simulated=False)
    assert problems == [] and dict(os.environ) == before  # the caller scopes it to the run
    assert capture.settings_from_env(env) == capture.CaptureSettings(256, 7.5)


def test_capture_filter_argv_and_dumpcap_counts() -> None:
    bpf = capture.capture_filter(["10.1.1.1", "10.1.2.1"])
    assert bpf == "ip and not host 10.1.1.1 and not host 10.1.2.1"
    argv = capture.dumpcap_argv("c-wifi", Path("/t/x.pcap"), capture.CaptureSettings(128, 2), bpf)
    assert argv[argv.index("-a") + 1] == "filesize:2000"  # kB
    assert argv[argv.index("-s") + 1] == "128"
    line = "Packets received/dropped on interface 'c-wifi': 5756/3 (pcap:0/dumpcap:0/flushed:0)"
    assert capture.dumpcap_counts("Capturing on 'c-wifi'\n" + line) == (5756, 3)
    assert capture.dumpcap_counts("") == (None, None)


def test_cli_refuses_pcap_with_the_simulator() -> None:
    done = subprocess.run(
        [str(REPO / ".venv/bin/python"), "-m", "testbed", "--pcap", "--engine", "sim",
         "--scenario", "A1", "--cc", "bbr", "--sched", "rr", "--dry-run"],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "--pcap" in done.stderr and "simulator" in done.stderr
