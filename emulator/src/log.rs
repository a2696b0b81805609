//! JSON Lines log (CONTRACTS §5.1), written through a sink so the core never
//! touches files.

use crate::link::{Counters, DropReason, IntervalStats, PacketEvent};
use crate::schedule::AppliedChange;
use serde_json::{json, Value};
use std::io::Write;

pub trait LogSink {
    fn write_line(&mut self, line: &Value);
    fn flush(&mut self);
}

/// Writes lines to a file (buffered; flushed every stats interval).
pub struct FileSink {
    out: std::io::BufWriter<std::fs::File>,
    path: String,
}

impl FileSink {
    pub fn create(path: &std::path::Path) -> std::io::Result<FileSink> {
        Ok(FileSink {
            out: std::io::BufWriter::new(std::fs::File::create(path)?),
            path: path.display().to_string(),
        })
    }
}

impl LogSink for FileSink {
    fn write_line(&mut self, line: &Value) {
        let result = serde_json::to_writer(&mut self.out, line)
            .map_err(std::io::Error::from)
            .and_then(|_| self.out.write_all(b"\n"));
        if let Err(e) = result {
            eprintln!("linkemu: cannot write log {}: {e}", self.path);
        }
    }
    fn flush(&mut self) {
        if let Err(e) = self.out.flush() {
            eprintln!("linkemu: cannot write log {}: {e}", self.path);
        }
    }
}

/// Keeps lines in memory (tests).
#[derive(Default)]
pub struct MemorySink {
    pub lines: Vec<Value>,
}

impl LogSink for MemorySink {
    fn write_line(&mut self, line: &Value) {
        self.lines.push(line.clone());
    }
    fn flush(&mut self) {}
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

pub fn link_stats_line(
    t_ns: i64,
    path: &str,
    dir: &str,
    interval_ms: u64,
    s: &IntervalStats,
) -> Value {
    let c = &s.counters;
    let sojourn_mean_ms = if c.pkts_out > 0 {
        c.sojourn_sum_ns as f64 / c.pkts_out as f64 / 1e6
    } else {
        0.0
    };
    json!({
        "t_ns": t_ns, "src": "emulator", "event": "link_stats", "path": path, "dir": dir,
        "interval_ms": interval_ms,
        "pkts_in": c.pkts_in, "bytes_in": c.bytes_in,
        "pkts_out": c.pkts_out, "bytes_out": c.bytes_out,
        "drops_random": c.drops_random, "drops_queue": c.drops_queue,
        "drops_outage": c.drops_outage,
        "queue_pkts": s.queue_pkts, "queue_bytes": s.queue_bytes,
        "sojourn_mean_ms": round3(sojourn_mean_ms),
        "sojourn_max_ms": round3(c.sojourn_max_ns as f64 / 1e6),
        "rate_bps": s.params.rate_bps.map(|r| r.round()),
        "delay_ms": round3(s.params.delay_ms),
        "loss_p": s.params.loss_p,
    })
}

pub fn schedule_line(t_ns: i64, path: &str, dir: &str, change: &AppliedChange) -> Value {
    json!({
        "t_ns": t_ns, "src": "emulator", "event": "schedule", "path": path, "dir": dir,
        "op": change.op, "field": change.field, "value": change.value,
    })
}

pub fn totals_line(t_ns: i64, path: &str, dir: &str, c: &Counters) -> Value {
    json!({
        "t_ns": t_ns, "src": "emulator", "event": "link_totals", "path": path, "dir": dir,
        "pkts_in_total": c.pkts_in, "bytes_in_total": c.bytes_in,
        "pkts_out_total": c.pkts_out, "bytes_out_total": c.bytes_out,
        "drops_random_total": c.drops_random, "drops_queue_total": c.drops_queue,
        "drops_outage_total": c.drops_outage,
    })
}

/// One line of the per-packet log (`--packet-log`), Mahimahi-style, with the
/// time in ms on the trial clock (`trial_offset_ns` = link virtual 0 on it):
/// `<t_ms> <path>/<dir> + <bytes>` arrival, `- <bytes> <sojourn_ms>` departure,
/// `d <bytes> <random|queue|outage>` drop, `# <bytes>` delivery opportunity
/// (trace links).
pub fn packet_event_line(trial_offset_ns: i64, path: &str, dir: &str, ev: &PacketEvent) -> String {
    let ms = |t_ns: u64| (trial_offset_ns + t_ns as i64) as f64 / 1e6;
    match *ev {
        PacketEvent::Arrival { t_ns, bytes } => format!("{:.3} {path}/{dir} + {bytes}", ms(t_ns)),
        PacketEvent::Departure {
            t_ns,
            bytes,
            sojourn_ns,
        } => {
            format!(
                "{:.3} {path}/{dir} - {bytes} {:.3}",
                ms(t_ns),
                sojourn_ns as f64 / 1e6
            )
        }
        PacketEvent::Opportunity { t_ns, bytes } => {
            format!("{:.3} {path}/{dir} # {bytes}", ms(t_ns))
        }
        PacketEvent::Drop {
            t_ns,
            bytes,
            reason,
        } => {
            let reason = match reason {
                DropReason::Random => "random",
                DropReason::Queue => "queue",
                DropReason::Outage => "outage",
            };
            format!("{:.3} {path}/{dir} d {bytes} {reason}", ms(t_ns))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_lines_carry_trial_time_in_ms() {
        let cases = [
            (
                1_000_000_000,
                ("wifi", "up"),
                PacketEvent::Arrival {
                    t_ns: 1_500_000,
                    bytes: 1500,
                },
                "1001.500 wifi/up + 1500",
            ),
            (
                0,
                ("lte", "down"),
                PacketEvent::Departure {
                    t_ns: 2_000_000,
                    bytes: 52,
                    sojourn_ns: 25_120_000,
                },
                "2.000 lte/down - 52 25.120",
            ),
            (
                0,
                ("lte", "up"),
                PacketEvent::Drop {
                    t_ns: 0,
                    bytes: 40,
                    reason: DropReason::Queue,
                },
                "0.000 lte/up d 40 queue",
            ),
        ];
        for (origin_ns, (path, dir), event, expected) in cases {
            assert_eq!(packet_event_line(origin_ns, path, dir, &event), expected);
        }
    }

    #[test]
    fn stats_line_has_the_contract_fields() {
        let stats = IntervalStats {
            counters: Counters {
                pkts_out: 2,
                sojourn_sum_ns: 3_000_000,
                ..Default::default()
            },
            queue_pkts: 1,
            queue_bytes: 1500,
            params: crate::schedule::Params {
                rate_bps: None,
                delay_ms: 20.0,
                jitter_ms: 0.0,
                loss_p: None,
            },
        };
        let line = link_stats_line(5, "wifi", "down", 100, &stats);
        assert_eq!(line["sojourn_mean_ms"], 1.5);
        assert!(line["rate_bps"].is_null() && line["loss_p"].is_null());
        assert_eq!(line.as_object().unwrap().len(), 20);
    }
}
