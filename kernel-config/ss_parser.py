"""Parse `ss -tinH` / `ss -tinEH` output (iproute2) into per-socket records.

Each socket is a header line (state, queues, local and peer address) followed by an
indented info line of tokens: bare words (the CC name), `key:value`, `key value`
(`send`, `pacing_rate`, `delivery_rate`) and, for MPTCP subflows,
`tcp-ulp-mptcp flags:Mec token:0000(id:0)/ba787b11(id:0) ...`. Sockets reported by
`ss -E` when they are destroyed carry the final counters but no CC name and no ULP info.

Only the fields the testbed logs are kept; everything else is ignored, so newer iproute2
versions that add tokens still parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Header: State Recv-Q Send-Q Local:Port Peer:Port (IPv6 in brackets, or a v4-mapped form).
HEADER = re.compile(
    r"^(?P<state>[A-Z][A-Z0-9\-]*)\s+(?P<recvq>\d+)\s+(?P<sendq>\d+)\s+"
    r"(?P<local>\S+):(?P<lport>\d+|\*)\s+(?P<peer>\S+):(?P<pport>\d+|\*)"
)
RATE = re.compile(r"^(?P<value>[0-9.]+)(?P<unit>[KMG]?)bps$")
RATE_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}
TOKEN = re.compile(r"token:(?P<first>[0-9a-f]+)\(id:\d+\)/(?P<second>[0-9a-f]+)\(id:\d+\)")
KNOWN_CCS = {"reno", "cubic", "bbr", "bbr2", "bbr3", "vegas", "westwood", "htcp", "bic", "dctcp"}
KNOWN_CCS |= {"lia", "olia", "balia", "wvegas", "hybla", "illinois", "yeah", "veno", "nv", "cdg"}
KEY_VALUE_WORDS = {"send", "pacing_rate", "delivery_rate", "pacing_rate_max"}
FLAG_WORDS = {"ts", "sack", "ecn", "ecnseen", "fastopen", "app_limited", "cong_alg", "nodelay"}

# Header bytes on the wire per segment the server sends, for comparing kernel byte counters
# (payload only) with the emulator's (whole IP packets): IPv4 20 + TCP 20 + timestamps 12,
# and for MPTCP a DSS option (64-bit data ACK + 64-bit DSN mapping = 28 bytes padded) on data
# segments, 12 bytes (data ACK only) on pure ACKs. Measured to within 0.01 %: docs/KERNEL.md.
TCP_HEADER_BYTES = 52
MPTCP_DATA_SEGMENT_HEADER_BYTES = 80
MPTCP_PURE_ACK_HEADER_BYTES = 64


def _strip_brackets(address: str) -> str:
    address = address.strip("[]")
    if address.startswith("::ffff:"):
        address = address[len("::ffff:") :]
    return address.split("%", 1)[0]


def parse_rate_bps(text: str) -> float | None:
    match = RATE.match(text)
    if match is None:
        return None
    return float(match.group("value")) * RATE_SCALE[match.group("unit")]


@dataclass
class SocketRecord:
    state: str
    local_addr: str
    local_port: int
    peer_addr: str
    peer_port: int
    info: dict[str, str] = field(default_factory=dict)
    cc: str | None = None
    mptcp_token: str | None = None  # set for MPTCP subflows (tcp-ulp-mptcp)
    mptcp_flags: str | None = None

    @property
    def four_tuple(self) -> str:
        return f"{self.local_addr}:{self.local_port}-{self.peer_addr}:{self.peer_port}"

    def number(self, key: str) -> float | None:
        value = self.info.get(key)
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            return None

    def integer(self, key: str, default: int = 0) -> int:
        value = self.number(key)
        return default if value is None else int(value)

    @property
    def srtt_ms(self) -> float | None:
        rtt = self.info.get("rtt")
        return float(rtt.split("/")[0]) if rtt else None

    @property
    def rttvar_ms(self) -> float | None:
        rtt = self.info.get("rtt")
        return float(rtt.split("/")[1]) if rtt and "/" in rtt else None

    @property
    def pkts_retrans_total(self) -> int:
        # "retrans:<currently retransmitted>/<total retransmits>" (tcpi_retrans/total_retrans)
        retrans = self.info.get("retrans")
        if not retrans:
            return 0
        return int(retrans.split("/")[-1])

    @property
    def is_mptcp_subflow(self) -> bool:
        return self.mptcp_flags is not None

    def wire_bytes_sent_estimate(self, *, mptcp: bool) -> int:
        """Bytes this socket put on the wire (IP packets): payload plus per-segment headers.

        `mptcp` is passed in because destroy events (`ss -E`) do not show the ULP."""
        bytes_sent = self.integer("bytes_sent")
        segs_out = self.integer("segs_out")
        data_segs_out = self.integer("data_segs_out")
        if not mptcp:
            return bytes_sent + segs_out * TCP_HEADER_BYTES
        pure_acks = max(segs_out - data_segs_out, 0)
        return (
            bytes_sent
            + data_segs_out * MPTCP_DATA_SEGMENT_HEADER_BYTES
            + pure_acks * MPTCP_PURE_ACK_HEADER_BYTES
        )


def _parse_info(line: str, record: SocketRecord) -> None:
    tokens = line.split()
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "tcp-ulp-mptcp":
            record.mptcp_flags = ""
        elif token.startswith("flags:") and record.mptcp_flags == "":
            record.mptcp_flags = token[len("flags:") :]
        elif token.startswith("token:"):
            match = TOKEN.match(token)
            if match:
                # One side shows 0000 (not yet known); the connection's token is the other.
                nonzero = [t for t in (match.group("first"), match.group("second")) if int(t, 16)]
                record.mptcp_token = nonzero[0] if nonzero else match.group("second")
        elif token in KEY_VALUE_WORDS and index + 1 < len(tokens):
            rate = parse_rate_bps(tokens[index + 1])
            if rate is not None:
                record.info[token] = str(rate)
            index += 1
        elif ":" in token and not token.startswith("("):
            key, value = token.split(":", 1)
            if key not in record.info:  # tcp-ulp-mptcp's seq:/sfseq: come later; keep TCP's
                record.info[key] = value
        elif token in KNOWN_CCS or (index == 0 and token.isalnum() and token not in FLAG_WORDS):
            record.cc = token
        index += 1


def parse_ss(text: str) -> list[SocketRecord]:
    """Parse `ss -tinH` (or `-tinEH`) output; raises ValueError naming the line it cannot read."""
    records: list[SocketRecord] = []
    current: SocketRecord | None = None
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if line[0].isspace():
            if current is None:
                raise ValueError(f"ss output line {line_number}: info line before any socket")
            _parse_info(line, current)
            continue
        if line.startswith("State "):
            continue  # a header row, when -H was not given
        match = HEADER.match(line)
        if match is None:
            raise ValueError(f"ss output line {line_number}: cannot read socket line {line!r}")
        current = SocketRecord(
            state=match.group("state"),
            local_addr=_strip_brackets(match.group("local")),
            local_port=int(match.group("lport")) if match.group("lport") != "*" else 0,
            peer_addr=_strip_brackets(match.group("peer")),
            peer_port=int(match.group("pport")) if match.group("pport") != "*" else 0,
        )
        records.append(current)
    return records
