//! `--sched-trace`: the sender's scheduler decisions, taken from the pair as the run goes and
//! written by `SchedTraceWriter` (docs/CONTRACTS.md section 5.7).

use mptransport::runtime::sched_trace::SchedTraceWriter;
use mptransport::sim::Pair;

/// `--sched-trace`: the sender's (the server's) scheduler decisions so far, written; recording
/// starts at the server's first step. The first write error is kept in `error`.
pub fn take_trace(
    trace: &mut Option<SchedTraceWriter>,
    pair: &mut Pair,
    error: &mut Option<std::io::Error>,
) {
    if let (Some(w), Some(s)) = (trace.as_mut(), pair.server.as_mut()) {
        s.enable_sched_trace();
        let records = s.drain_sched_trace();
        if !records.is_empty()
            && let Err(e) = w.write(1, &s.path_names(), &records)
        {
            error.get_or_insert(e);
        }
    }
}

/// The end of a run with `--sched-trace`: the first error `take_trace` kept, or else the
/// sender's last scheduler decisions written and the trace flushed (the first error of
/// those). Nothing to do without a trace.
pub fn finish_trace(
    trace: &mut Option<SchedTraceWriter>,
    pair: &mut Pair,
    earlier: Option<std::io::Error>,
) -> std::io::Result<()> {
    let Some(w) = trace.as_mut() else {
        return Ok(());
    };
    if let Some(e) = earlier {
        return Err(e);
    }
    let mut result = Ok(());
    if let Some(s) = pair.server.as_mut() {
        let records = s.drain_sched_trace();
        result = w.write(1, &s.path_names(), &records);
    }
    let flushed = w.flush();
    result.and(flushed)
}
