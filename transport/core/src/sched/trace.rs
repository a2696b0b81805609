//! Per-decision scheduler trace (`--sched-trace FILE` of mpproxy and mpsim): one record per
//! scheduler decision with its inputs, its outcome and the scheduler's own state, written as
//! one JSON line each (docs/CONTRACTS.md §5.7).
//!
//! The connection keeps records only after `enable_sched_trace`; when off, the cost is one
//! branch per decision. This file builds the records; the runtime drains them
//! (`drain_sched_trace`) and writes them as JSON (`mptransport::runtime::sched_trace`).

use super::{PathView, Selection, SendKind};
use crate::units::Instant;

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
}
