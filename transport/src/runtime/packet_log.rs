//! Opt-in per-packet log (`mpproxy --packet-log FILE`): one JSON line per datagram sent,
//! decoded from the bytes handed to the socket, so that a packet capture can be checked
//! against what the transport says it sent (transport/wireshark/mptransport.lua decodes
//! the same fields; tests/test_pcap_trials.py compares them).
//!
//! ```text
//! {"t_ns":..,"src":"mpproxy-server","event":"packet_sent","conn":1,"conn_id":..,"path":"wifi",
//!  "subflow":0,"pn":17,"bytes":1432,"frames":[{"type":"DATA","dsn":..,"len":..,"fin":false},
//!  {"type":"DATA_ACK","data_ack":..,"window":..}]}
//! ```
//! Frame objects: HELLO {backup, name}, ACK {largest, ack_delay_us, ranges: [[first, last]]},
//! DATA_ACK {data_ack, window}, DATA {dsn, len, fin}, PING {}, CLOSE {code}.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::wire::{self, Frame};

pub struct PacketLogWriter {
    out: BufWriter<File>,
    t0_ns: u64,
    src: String,
    pub lines_written: u64,
}

/// The frames of a datagram as JSON objects; None if the datagram does not parse (the
/// transport never sends one that does not; the caller logs nothing then).
pub fn frames_json(datagram: &[u8]) -> Option<(wire::Header, Vec<Value>)> {
    let (h, rest) = wire::parse_header(datagram).ok()?;
    let mut out = Vec::new();
    for f in wire::frames(rest) {
        out.push(match f.ok()? {
            Frame::Hello { backup, name } => {
                json!({"type": "HELLO", "backup": backup, "name": name})
            }
            Frame::Ack(a) => json!({"type": "ACK", "largest": a.largest,
                "ack_delay_us": a.ack_delay_us,
                "ranges": a.ranges().map(|(f, l)| [f, l]).collect::<Vec<_>>()}),
            Frame::DataAck { data_ack, window } => {
                json!({"type": "DATA_ACK", "data_ack": data_ack, "window": window})
            }
            Frame::Data { dsn, fin, payload } => {
                json!({"type": "DATA", "dsn": dsn, "len": payload.len(), "fin": fin})
            }
            Frame::Ping => json!({"type": "PING"}),
            Frame::Close { code } => json!({"type": "CLOSE", "code": code}),
        });
    }
    Some((h, out))
}

impl PacketLogWriter {
    /// `src`: the writer's name in every line (`mpproxy-server`, `mpproxy-client`).
    pub fn create(path: &Path, t0_ns: u64, src: &str) -> io::Result<PacketLogWriter> {
        let f = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create --packet-log {}: {e}", path.display()),
            )
        })?;
        Ok(PacketLogWriter {
            out: BufWriter::with_capacity(1 << 20, f),
            t0_ns,
            src: src.to_string(),
            lines_written: 0,
        })
    }

    /// One `packet_sent` line for a datagram of connection `conn` (a log id) on `path`.
    pub fn sent(&mut self, now_ns: u64, conn: u64, path: &str, datagram: &[u8]) -> io::Result<()> {
        let Some((h, frames)) = frames_json(datagram) else {
            return Ok(());
        };
        let line = json!({
            "t_ns": now_ns.saturating_sub(self.t0_ns), "src": self.src, "event": "packet_sent",
            "conn": conn, "conn_id": h.conn_id, "path": path, "subflow": h.subflow, "pn": h.pn,
            "bytes": datagram.len(), "frames": frames,
        });
        serde_json::to_writer(&mut self.out, &line)?;
        self.out.write_all(b"\n")?;
        self.lines_written += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Header, Writer};

    #[test]
    fn every_frame_type_is_logged_with_its_fields() {
        let mut buf = vec![0u8; 1472];
        let h = Header {
            conn_id: 9,
            subflow: 1,
            pn: 5,
        };
        let mut w = Writer::new(&mut buf, h);
        assert!(w.push_hello(true, "lte"));
        assert!(w.push_ack(10, 250, [(8, 10), (2, 5)].into_iter()));
        assert!(w.push_data_ack(1000, 65536));
        assert!(w.push_data(500, true, b"hello"));
        assert!(w.push_ping());
        assert!(w.push_close(1));
        let n = w.len();
        let (got, frames) = frames_json(&buf[..n]).unwrap();
        assert_eq!(got, h);
        assert_eq!(
            Value::Array(frames),
            json!([
                {"type": "HELLO", "backup": true, "name": "lte"},
                {"type": "ACK", "largest": 10, "ack_delay_us": 250, "ranges": [[8, 10], [2, 5]]},
                {"type": "DATA_ACK", "data_ack": 1000, "window": 65536},
                {"type": "DATA", "dsn": 500, "len": 5, "fin": true},
                {"type": "PING"},
                {"type": "CLOSE", "code": 1},
            ])
        );
        assert!(frames_json(&buf[..3]).is_none());
    }
}
