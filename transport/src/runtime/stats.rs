//! JSON Lines writer for `transport-*.jsonl` (CONTRACTS §5.2): every line carries `t_ns`
//! on the trial clock (CLOCK_MONOTONIC − t0), `src` and `event`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::connection::{Connection, SubflowStats};
use crate::units::Bandwidth;

pub struct StatsLog {
    out: Option<BufWriter<File>>,
    src: &'static str,
    t0_ns: u64,
}

fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

fn bps(b: Option<Bandwidth>) -> Value {
    b.map_or(Value::Null, |b| json!(b.bps().round() as u64))
}

impl StatsLog {
    pub fn open(path: Option<&Path>, src: &'static str, t0_ns: u64) -> io::Result<StatsLog> {
        let out = match path {
            Some(p) => Some(BufWriter::with_capacity(1 << 16, File::create(p)?)),
            None => None,
        };
        Ok(StatsLog { out, src, t0_ns })
    }

    pub fn t_ns(&self, now_ns: u64) -> i64 {
        now_ns as i64 - self.t0_ns as i64
    }

    /// Writes one line: `fields` plus t_ns, src, event.
    pub fn line(&mut self, now_ns: u64, event: &str, fields: Value) {
        let Some(out) = self.out.as_mut() else { return };
        let mut m = Map::new();
        m.insert("t_ns".into(), json!(now_ns as i64 - self.t0_ns as i64));
        m.insert("src".into(), json!(self.src));
        m.insert("event".into(), json!(event));
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        // Serialise the whole line first: the buffer then only ever reaches the file in whole
        // lines, so a reader never sees half a line while we run.
        let mut line = serde_json::to_vec(&Value::Object(m)).unwrap_or_default();
        line.push(b'\n');
        let _ = out.write_all(&line);
    }

    pub fn flush(&mut self) {
        if let Some(out) = self.out.as_mut() {
            let _ = out.flush();
        }
    }

    pub fn subflow(&mut self, now_ns: u64, conn: u64, s: &SubflowStats) {
        let c = &s.counters;
        self.line(
            now_ns,
            "subflow",
            json!({
                "conn": conn, "path": s.name, "established": s.established,
                "cwnd_bytes": s.cwnd_bytes, "inflight_bytes": s.inflight_bytes,
                "srtt_ms": ms(s.srtt), "rttvar_ms": ms(s.rttvar), "min_rtt_ms": ms(s.min_rtt),
                "pacing_rate_bps": bps(s.pacing_rate), "bw_est_bps": bps(s.bw_estimate),
                "delivery_rate_bps": bps(s.delivery_rate), "cc_state": s.cc_phase.as_str(),
                "ssthresh_bytes": s.cc_snapshot.ssthresh_bytes,
                "bytes_sent_total": c.bytes_sent_total, "bytes_acked_total": c.bytes_acked_total,
                "bytes_retrans_total": c.bytes_retrans_total, "pkts_sent_total": c.pkts_sent_total,
                "pkts_lost_total": c.pkts_lost_total, "pkts_retrans_total": c.pkts_retrans_total,
                "sched_picks_total": c.sched_picks_total,
                "data_bytes_sent_total": c.data_bytes_sent_total,
                "data_bytes_received_total": c.data_bytes_received_total,
                "rto_total": c.rto_total, "tlp_total": c.tlp_total,
                "recoveries_total": c.recoveries_total,
                // Algorithm state (LIA's α, OLIA's sets, wVegas' diff, ...): why cwnd moved.
                "cc_extra": s.cc_snapshot.extra.iter()
                    .map(|(k, v)| ((*k).to_string(), json!(v)))
                    .collect::<Map<String, Value>>(),
            }),
        );
    }

    pub fn conn(&mut self, now_ns: u64, conn_log_id: u64, c: &Connection) {
        let k = c.counters();
        self.line(
            now_ns,
            "conn",
            json!({
                "conn": conn_log_id, "conn_id": format!("{:016x}", c.conn_id()),
                "cc": c.cc_name(), "sched": c.sched_name(),
                "ofo_queue_bytes": k.ofo_queue_bytes, "ofo_queue_max_bytes": k.ofo_queue_max_bytes,
                "bytes_delivered_total": k.bytes_delivered_total,
                "bytes_written_total": k.bytes_written_total,
                "reinjected_bytes_total": k.reinjected_bytes_total,
                "redundant_bytes_total": k.redundant_bytes_total,
                "sched_waits_total": k.sched_waits_total,
                "sched_decisions_total": k.sched_decisions_total,
                "malformed_datagrams_total": k.malformed_datagrams_total,
            }),
        );
    }

    /// Subflow lines then the conn line of one connection.
    pub fn snapshot(&mut self, now_ns: u64, conn_log_id: u64, c: &Connection) {
        for s in c.subflow_stats() {
            self.subflow(now_ns, conn_log_id, &s);
        }
        self.conn(now_ns, conn_log_id, c);
    }
}
