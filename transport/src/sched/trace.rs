//! Per-decision scheduler trace (`--sched-trace FILE` of mpproxy and mpsim): one record per
//! scheduler decision with its inputs, its outcome and the scheduler's own state, written as
//! one JSON line each (schema: docs/schemas/sched-trace.schema.json, described in
//! docs/CONTRACTS.md).
//!
//! The connection keeps records only after `enable_sched_trace`; when off, the cost is one
//! branch per decision. The runtime drains them (`drain_sched_trace`) and writes them with
//! [`SchedTraceWriter`].

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::{PathView, Selection, SendKind, WaitReason};
use crate::units::{Instant, PathMask};

/// One subflow's inputs to a decision.
#[derive(Clone, Debug, PartialEq)]
pub struct PathInputs {
    pub id: u8,
    pub srtt_us: u64,
    pub cwnd_bytes: u64,
    pub inflight_bytes: u64,
    pub queued_bytes: u64,
    /// The CC's bandwidth estimate, else its pacing rate, bits/s.
    pub rate_bps: Option<f64>,
    pub available: bool,
}

impl PathInputs {
    pub fn of(p: &PathView) -> PathInputs {
        PathInputs {
            id: p.id.0,
            srtt_us: p.srtt.as_micros() as u64,
            cwnd_bytes: p.cwnd_bytes,
            inflight_bytes: p.inflight_bytes,
            queued_bytes: p.queued_bytes,
            rate_bps: p.bw_estimate.or(p.pacing_rate).map(|b| b.bps()),
            available: p.is_available(),
        }
    }
}

/// One decision: what was asked, what was decided, what was placed.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionRecord {
    pub time: Instant,
    pub reinjection: bool,
    pub selection: Selection,
    /// First data sequence number placed and bytes placed (0 when nothing was placed).
    pub dsn: u64,
    pub placed_bytes: u64,
    pub paths: Vec<PathInputs>,
    pub state: Vec<(&'static str, f64)>,
}

impl DecisionRecord {
    pub fn new(
        time: Instant,
        kind: SendKind,
        selection: Selection,
        views: &[PathView],
        state: Vec<(&'static str, f64)>,
    ) -> DecisionRecord {
        DecisionRecord {
            time,
            reinjection: matches!(kind, SendKind::Reinject { .. }),
            selection,
            dsn: 0,
            placed_bytes: 0,
            paths: views.iter().map(PathInputs::of).collect(),
            state,
        }
    }

    /// The JSON line (without newline). `t_ns` is `time` minus `t0_ns`; `names` maps subflow
    /// ids to path names.
    pub fn to_json(&self, t0_ns: u64, names: &[String]) -> String {
        use serde_json::{Map, Value, json};
        let name = |id: u8| {
            names
                .get(id as usize)
                .cloned()
                .unwrap_or_else(|| format!("sf{id}"))
        };
        let mask_names = |m: PathMask| m.iter().map(|i| name(i.0)).collect::<Vec<_>>();
        let (decision, path, copies, wait_reason) = match self.selection {
            Selection::Send { path, copies, .. } => {
                ("send", Some(name(path.0)), mask_names(copies), None)
            }
            Selection::Wait { reason } => ("wait", None, Vec::new(), Some(wait_reason(reason))),
            Selection::None => ("none", None, Vec::new(), None),
        };
        let mut state = Map::new();
        for (k, v) in &self.state {
            state.insert(
                (*k).to_string(),
                if v.is_finite() { json!(v) } else { Value::Null },
            );
        }
        let paths: Vec<Value> = self
            .paths
            .iter()
            .map(|p| {
                json!({
                    "path": name(p.id), "srtt_us": p.srtt_us, "cwnd_bytes": p.cwnd_bytes,
                    "inflight_bytes": p.inflight_bytes, "queued_bytes": p.queued_bytes,
                    "rate_bps": p.rate_bps.map(|r| r.round()), "available": p.available,
                })
            })
            .collect();
        json!({
            "t_ns": self.time.as_nanos() as i64 - t0_ns as i64,
            "kind": if self.reinjection { "reinjection" } else { "fresh" },
            "decision": decision,
            "path": path,
            "copies": copies,
            "wait_reason": wait_reason,
            "dsn": self.dsn,
            "bytes": self.placed_bytes,
            "paths": paths,
            "state": state,
        })
        .to_string()
    }
}

fn wait_reason(r: WaitReason) -> String {
    match r {
        WaitReason::CurrentPathBusy => "current_path_busy".into(),
        WaitReason::FasterPathSoon => "faster_path_soon".into(),
        WaitReason::WindowBlocked => "window_blocked".into(),
        WaitReason::PreAssigned => "pre_assigned".into(),
        WaitReason::Other(s) => s.into(),
    }
}

/// Buffered JSON Lines writer for decision records.
pub struct SchedTraceWriter {
    out: BufWriter<File>,
    t0_ns: u64,
    pub lines_written: u64,
}

impl SchedTraceWriter {
    pub fn create(path: &Path, t0_ns: u64) -> io::Result<SchedTraceWriter> {
        let f = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create --sched-trace {}: {e}", path.display()),
            )
        })?;
        Ok(SchedTraceWriter {
            out: BufWriter::with_capacity(1 << 20, f),
            t0_ns,
            lines_written: 0,
        })
    }

    /// Writes `records` for connection `conn` (a log id, as in the stats file).
    pub fn write(
        &mut self,
        conn: u64,
        names: &[String],
        records: &[DecisionRecord],
    ) -> io::Result<()> {
        for r in records {
            let line = r.to_json(self.t0_ns, names);
            // Insert the connection id as the first field.
            self.out.write_all(b"{\"conn\":")?;
            self.out.write_all(conn.to_string().as_bytes())?;
            self.out.write_all(b",")?;
            self.out.write_all(&line.as_bytes()[1..])?;
            self.out.write_all(b"\n")?;
            self.lines_written += 1;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_path;
    use crate::units::SubflowId;

    #[test]
    fn a_record_serialises_with_inputs_outcome_and_state() {
        let views = [test_path(0, 20, 10, 4), test_path(1, 80, 10, 10)];
        let sel = Selection::Send {
            path: SubflowId(0),
            copies: PathMask::single(SubflowId(1)),
            burst_bytes: 2896,
        };
        let mut r = DecisionRecord::new(
            Instant::from_nanos(5_000_000),
            SendKind::Fresh,
            sel,
            &views,
            vec![("lambda", 1.2), ("nan", f64::NAN)],
        );
        r.dsn = 1000;
        r.placed_bytes = 2896;
        let names = ["wifi".to_string(), "lte".to_string()];
        let v: serde_json::Value = serde_json::from_str(&r.to_json(1_000_000, &names)).unwrap();
        assert_eq!(v["t_ns"], 4_000_000);
        assert_eq!(v["kind"], "fresh");
        assert_eq!(v["decision"], "send");
        assert_eq!(v["path"], "wifi");
        assert_eq!(v["copies"][0], "lte");
        assert_eq!(v["bytes"], 2896);
        assert_eq!(v["paths"][1]["available"], false);
        assert_eq!(v["paths"][0]["srtt_us"], 20_000);
        assert_eq!(v["state"]["lambda"], 1.2);
        assert!(v["state"]["nan"].is_null());
        let w = DecisionRecord::new(
            Instant::ZERO,
            SendKind::Reinject {
                already_on: PathMask::EMPTY,
            },
            Selection::Wait {
                reason: WaitReason::FasterPathSoon,
            },
            &views,
            Vec::new(),
        );
        let v: serde_json::Value = serde_json::from_str(&w.to_json(0, &names)).unwrap();
        assert_eq!(v["kind"], "reinjection");
        assert_eq!(v["wait_reason"], "faster_path_soon");
    }
}
