//! Writes the scheduler trace (`--sched-trace FILE` of mpproxy and mpsim): the records the
//! core built (`sched::trace::DecisionRecord`), one JSON line each (docs/CONTRACTS.md §5.7).
//! The file is the runtime's business, so the core never opens one.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::sched::trace::DecisionRecord;

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
            r.write_json(&mut self.line, self.t0_ns, &self.src, conn, names);
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
