//! Writes the scheduler trace (`--sched-trace FILE` of mpproxy and mpsim): the records the
//! core built (`sched::trace::DecisionRecord`), one JSON line each (docs/CONTRACTS.md §5.7).
//! The file and the JSON text are the runtime's business, so the core never opens a file
//! and needs no JSON library.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::sched::trace::DecisionRecord;
use crate::sched::{Selection, WaitReason};

/// Buffered JSON Lines writer for decision records.
pub struct SchedTraceWriter {
    out: BufWriter<File>,
    t0_ns: u64,
    src: String,
    line: String,
    pub lines_written: u64,
}

impl SchedTraceWriter {
    /// `src`: the writer's name in every line (`mpproxy-server`, `mpsim`, ...).
    pub fn create(path: &Path, t0_ns: u64, src: &str) -> io::Result<SchedTraceWriter> {
        let f = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create --sched-trace {}: {e}", path.display()),
            )
        })?;
        Ok(SchedTraceWriter {
            out: BufWriter::with_capacity(1 << 20, f),
            t0_ns,
            src: src.to_string(),
            line: String::with_capacity(1024),
            lines_written: 0,
        })
    }

    /// Writes `records` of connection `conn` (a log id, as in the stats file).
    pub fn write(
        &mut self,
        conn: u64,
        names: &[String],
        records: &[DecisionRecord],
    ) -> io::Result<()> {
        for r in records {
            self.line.clear();
            write_json(r, &mut self.line, self.t0_ns, &self.src, conn, names);
            self.line.push('\n');
            self.out.write_all(self.line.as_bytes())?;
            self.lines_written += 1;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Appends the JSON line of `r` (without newline) to `out`. `t_ns` is `time` minus `t0_ns`;
/// `names` maps subflow ids to path names; `src` and `conn` identify the writer and
/// the connection (docs/CONTRACTS.md §5.7). Written by hand: this runs once per
/// decision while tracing.
pub fn write_json(
    r: &DecisionRecord,
    out: &mut String,
    t0_ns: u64,
    src: &str,
    conn: u64,
    names: &[String],
) {
    use std::fmt::Write as _;
    let name = |id: u8| -> &str { names.get(id as usize).map_or("?", |n| n.as_str()) };
    let t_ns = r.time.as_nanos() as i64 - t0_ns as i64;
    let kind = if r.reinjection {
        "reinjection"
    } else {
        "fresh"
    };
    let _ = write!(
        out,
        "{{\"t_ns\":{t_ns},\"src\":\"{}\",\"event\":\"sched_decision\",\"conn\":{conn},\"kind\":\"{kind}\",",
        json_escape(src)
    );
    match r.selection {
        Selection::Send { path, copies, .. } => {
            let _ = write!(
                out,
                "\"decision\":\"send\",\"path\":\"{}\",\"copies\":[",
                json_escape(name(path.0))
            );
            for (i, c) in copies.iter().enumerate() {
                let sep = if i > 0 { "," } else { "" };
                let _ = write!(out, "{sep}\"{}\"", json_escape(name(c.0)));
            }
            out.push_str("],\"wait_reason\":null,");
        }
        Selection::Wait { reason } => {
            let _ = write!(
                out,
                "\"decision\":\"wait\",\"path\":null,\"copies\":[],\"wait_reason\":\"{}\",",
                json_escape(&wait_reason(reason))
            );
        }
        Selection::None => {
            out.push_str("\"decision\":\"none\",\"path\":null,\"copies\":[],\"wait_reason\":null,");
        }
    }
    let _ = write!(
        out,
        "\"dsn\":{},\"bytes\":{},\"paths\":[",
        r.dsn, r.placed_bytes
    );
    for (i, p) in r.paths.iter().enumerate() {
        let sep = if i > 0 { "," } else { "" };
        let _ = write!(
            out,
            "{sep}{{\"path\":\"{}\",\"srtt_us\":{},\"cwnd_bytes\":{},\"inflight_bytes\":{},\"queued_bytes\":{},\"rate_bps\":",
            json_escape(name(p.id)),
            p.srtt_us,
            p.cwnd_bytes,
            p.inflight_bytes,
            p.queued_bytes
        );
        match p.rate_bps {
            Some(r) if r.is_finite() => {
                let _ = write!(out, "{}", r.round() as u64);
            }
            _ => out.push_str("null"),
        }
        let _ = write!(out, ",\"available\":{}}}", p.available);
    }
    out.push_str("],\"state\":{");
    for (i, (k, v)) in r.state.iter().enumerate() {
        let sep = if i > 0 { "," } else { "" };
        if v.is_finite() {
            let _ = write!(out, "{sep}\"{}\":{v}", json_escape(k));
        } else {
            let _ = write!(out, "{sep}\"{}\":null", json_escape(k));
        }
    }
    out.push_str("}}");
}

/// JSON string escaping for names (path names are configured by people).
fn json_escape(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().all(|c| c != '"' && c != '\\' && !c.is_control()) {
        return std::borrow::Cow::Borrowed(s);
    }
    let quoted = serde_json::to_string(s).unwrap_or_default();
    std::borrow::Cow::Owned(quoted[1..quoted.len() - 1].to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_path;
    use crate::sched::trace::DecisionRecord;
    use crate::sched::{Selection, SendKind, WaitReason};
    use crate::units::Instant;
    use crate::units::{PathMask, SubflowId};

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
        let names = ["wifi".to_string(), "l\"te".to_string()];
        let json = |r: &DecisionRecord, t0| {
            let mut line = String::new();
            write_json(r, &mut line, t0, "mpsim", 7, &names);
            serde_json::from_str::<serde_json::Value>(&line).expect("valid JSON")
        };
        let v = json(&r, 1_000_000);
        assert_eq!(v["src"], "mpsim");
        assert_eq!(v["event"], "sched_decision");
        assert_eq!(v["conn"], 7);
        assert_eq!(v["t_ns"], 4_000_000);
        assert_eq!(v["kind"], "fresh");
        assert_eq!(v["decision"], "send");
        assert_eq!(v["path"], "wifi");
        assert_eq!(v["copies"][0], "l\"te");
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
        let v = json(&w, 0);
        assert_eq!(v["kind"], "reinjection");
        assert_eq!(v["wait_reason"], "faster_path_soon");
    }
}
