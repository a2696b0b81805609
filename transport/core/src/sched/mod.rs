//! Packet schedulers: the interface between the connection core and the algorithms, and
//! the registry (`--sched lrf`, alias `minrtt`).
//!
//! # Contract
//! `select` is pure with respect to the connection: a snapshot in ([`ConnView`] and one
//! [`PathView`] per subflow), a decision out. A stateful scheduler (sticky current path, RR
//! quotas, BLEST λ, ECF waiting bit, AR&P sets) keeps its state in its own object and may
//! update it in `select` and `on_event`.
//!
//! # How the core uses the decision
//! * The core asks when there is data to place: the head of the reinjection queue first
//!   (`SendKind::Reinject`, carrying the subflows that already carried it), else fresh data
//!   (`SendKind::Fresh`). It asks again after it has placed what the last decision covered,
//!   and after every ACK, loss or timer while data is waiting, so every [`Selection::Wait`]
//!   is one counted decision (`sched_waits_total`), not a spin.
//! * [`Selection::Send`]`{ path, copies, burst_bytes }`: whole chunks are assigned to
//!   `path`'s send queue while the wire bytes assigned (datagram bytes, the unit of cwnd,
//!   inflight and `queued_bytes`) are below `burst_bytes` — at least one, and none starting
//!   beyond the burst — and the same chunks to each subflow in `copies` (redundant copies;
//!   counted in `redundant_bytes_total`). [`Selection::send_on`] is a per-packet decision,
//!   [`Selection::send_burst_on`] a burst of the free window. A subflow sends from its queue
//!   when its cwnd and pacer allow (data it lost is retransmitted on it first, outside the
//!   scheduler). Assigning to a subflow that is not available is allowed (pre-assignment, as
//!   AR&P does); those bytes show as `queued_bytes` in the next views. The core stops asking
//!   while the bytes queued on all subflows exceed the sum of their congestion windows plus
//!   one burst (bounded queues).
//! * [`Selection::Wait`] — deliberately send nothing although a subflow is free (STY, BLEST,
//!   ECF, AR&P); counted. [`Selection::None`] — nothing is available; not counted.
//!
//! # Adding a scheduler
//! One file `sched/<name>.rs` with its config + Default, a comment that states the rule and
//! its source, and one entry in [`REGISTRY`] (names and aliases unique).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::cc::{CcPhase, RegistryError};
use crate::units::{Bandwidth, Instant, PathMask, SubflowId};

// The registry (names and aliases -> constructors) lives beside this interface, in registry.rs.
pub use registry::{REGISTRY, SchedEntry, all_names, build, canonical, names};

// Algorithm modules: one line each (H-algos adds theirs here).
pub mod arp;
pub mod blest;
pub mod default_oot;
pub mod default_upstream;
pub mod ecf;
pub mod gr_sty;
pub mod let_;
pub mod lpc;
pub mod lrf;
pub mod redundant;
pub mod registry;
pub mod rr;
pub mod tp_sty;
pub mod tr_sty;
pub mod trace;

/// Read-only snapshot of one subflow at decision time.
#[derive(Clone, Debug, PartialEq)]
pub struct PathView {
    pub id: SubflowId,
    /// Configured path name, e.g. "wifi".
    pub name: String,
    /// Handshake done (the subflow can carry data).
    pub established: bool,
    pub backup: bool,
    /// `pf`: an RTO fired and no ACK has arrived on it since (the out-of-tree kernel's `tp->pf`).
    pub potentially_failed: bool,
    /// RTO-Loss state (cwnd collapsed after a timeout): not available.
    pub in_rto_loss: bool,
    /// SRTT; the initial RTT guess (333 ms as RFC 9002) before the first sample.
    pub srtt: Duration,
    pub rttvar: Duration,
    /// Zero before the first RTT sample.
    pub min_rtt: Duration,
    /// Whether `srtt` comes from a real sample.
    pub has_rtt_sample: bool,
    pub cwnd_bytes: u64,
    pub inflight_bytes: u64,
    pub mss: u64,
    pub pacing_rate: Option<Bandwidth>,
    pub bw_estimate: Option<Bandwidth>,
    pub cc_phase: CcPhase,
    /// Assigned to this subflow (or lost on it and awaiting retransmission) but not yet
    /// sent, in wire bytes.
    pub queued_bytes: u64,
    pub ssthresh_bytes: Option<u64>,
    /// Smallest and largest SRTT seen (BLEST), zero before the first sample.
    pub srtt_min_seen: Duration,
    pub srtt_max_seen: Duration,
    /// In a fast-recovery episode.
    pub in_recovery: bool,
    /// RTT variation as Linux keeps `rttvar_us` in `tcp_rtt_estimator` (the smoothed mean
    /// deviation, at least the RTO floor's quarter, decayed once per RTT towards `mdev_max`),
    /// which the kernel variant of ECF reads.
    pub rttvar_kernel: Duration,
    /// Latest delivery-rate sample of the subflow.
    pub delivery_rate: Option<Bandwidth>,
    /// Bytes sent on the subflow, retransmissions included.
    pub sent_bytes_total: u64,
    /// Bytes declared lost on the subflow.
    pub lost_bytes_total: u64,
    /// Receive window the peer offers (data-level, shared by every subflow), free part.
    pub peer_rwnd_bytes: u64,
}

impl PathView {
    /// cwnd − inflight − queued, saturating (room for newly assigned bytes).
    pub fn free_bytes(&self) -> u64 {
        self.cwnd_bytes
            .saturating_sub(self.inflight_bytes + self.queued_bytes)
    }

    /// Available: established, not in RTO-Loss, inflight (plus what is already queued
    /// on it) below cwnd.
    pub fn is_available(&self) -> bool {
        self.established
            && !self.in_rto_loss
            && self.inflight_bytes + self.queued_bytes < self.cwnd_bytes
    }

    /// Delivery-rate proxy in packets per second: cwnd/SRTT (LET, TP/TR-STY).
    pub fn cwnd_rate_pkts_per_s(&self) -> f64 {
        let srtt = self.srtt.as_secs_f64().max(1e-6);
        (self.cwnd_bytes as f64 / self.mss.max(1) as f64) / srtt
    }
}

/// Read-only snapshot of the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnView {
    /// Application bytes not yet assigned to any subflow.
    pub unsent_bytes: u64,
    /// Bytes waiting in the reinjection queue.
    pub reinject_queue_bytes: u64,
    /// Bytes sent but not yet data-acked.
    pub unacked_bytes: u64,
    /// Receive window the peer still offers (data-level).
    pub peer_window_free_bytes: u64,
    /// Total send window the peer advertised.
    pub send_window_bytes: u64,
    /// Bytes assigned to subflow queues but not yet sent, all subflows.
    pub queued_bytes: u64,
}

/// What is being placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendKind {
    Fresh,
    /// A retransmission of data already sent on `already_on`.
    Reinject {
        already_on: PathMask,
    },
}

/// What the connection carries out when the peer's window blocks new data (the out-of-tree
/// kernel's `mptcp_rcv_buf_optimization`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RcvBufAction {
    /// Resend the oldest undelivered chunk on this subflow.
    pub resend_on: Option<SubflowId>,
    /// Halve the congestion window of these subflows (the slower carriers of that chunk).
    pub penalise: PathMask,
}

/// Why a scheduler deliberately sends nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitReason {
    /// Sticky schedulers wait for their current path.
    CurrentPathBusy,
    /// BLEST/ECF: a faster path will free up soon enough.
    FasterPathSoon,
    /// BLEST: sending on the slow path would block the connection window.
    WindowBlocked,
    /// AR&P: the segment's pre-assigned queue is not ready.
    PreAssigned,
    Other(&'static str),
}

/// A decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    Send {
        path: SubflowId,
        copies: PathMask,
        burst_bytes: u64,
    },
    Wait {
        reason: WaitReason,
    },
    /// Nothing can take data now (wait for an ACK or timer); not counted as a wait.
    None,
}

/// Events a stateful scheduler may want (all optional).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedEvent {
    Acked {
        path: SubflowId,
        bytes: u64,
        now: Instant,
    },
    Lost {
        path: SubflowId,
        bytes: u64,
        now: Instant,
    },
    Rto {
        path: SubflowId,
        now: Instant,
    },
    /// The subflow can no longer carry data (closed or failed).
    PathDown {
        path: SubflowId,
        now: Instant,
    },
    PathUp {
        path: SubflowId,
        now: Instant,
    },
    /// New data waits only because the peer's receive window is full (the out-of-tree
    /// kernel's opportunistic-retransmission trigger; BLEST's λ rises on it).
    WindowBlocked {
        now: Instant,
    },
}

/// Everything one decision sees: the time, what is being placed, the connection and one
/// view per subflow.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'a> {
    pub now: Instant,
    pub kind: SendKind,
    pub conn: ConnView,
    pub paths: &'a [PathView],
}

impl<'a> Snapshot<'a> {
    pub fn new(now: Instant, kind: SendKind, conn: ConnView, paths: &'a [PathView]) -> Self {
        Snapshot {
            now,
            kind,
            conn,
            paths,
        }
    }

    /// A snapshot with an empty [`ConnView`] (tests, and schedulers that ignore it).
    pub fn of(now: Instant, kind: SendKind, paths: &'a [PathView]) -> Snapshot<'a> {
        Snapshot {
            now,
            kind,
            conn: ConnView::default(),
            paths,
        }
    }
}

impl SendKind {
    /// The subflows that already carried the data (none for fresh data).
    pub fn carriers(self) -> PathMask {
        match self {
            SendKind::Fresh => PathMask::EMPTY,
            SendKind::Reinject { already_on } => already_on,
        }
    }

    pub fn is_fresh(self) -> bool {
        matches!(self, SendKind::Fresh)
    }
}

pub trait Scheduler: Send {
    fn name(&self) -> &'static str;
    fn select(&mut self, s: &Snapshot<'_>) -> Selection;
    fn on_event(&mut self, _ev: &SchedEvent) {}
    /// New data is blocked by the peer's window: what to do about the oldest undelivered
    /// chunk (carried by `head_carriers`), as the out-of-tree kernel's
    /// `mptcp_rcv_buf_optimization` decides (docs/algorithms/default-schedulers.md). Default,
    /// for the schedulers with [`Scheduler::rcv_buf_optimization`]: as the kernel's
    /// `mptcp_next_segment`, first pick the subflow for the blocked new data with `select`
    /// (`snap` is a fresh-data snapshot); nothing when it picks none (BLEST or ECF waiting),
    /// else the optimisation with that subflow as the current one. Nothing without it.
    fn opportunistic_retransmit(
        &mut self,
        snap: &Snapshot<'_>,
        head_carriers: PathMask,
    ) -> RcvBufAction {
        if self.rcv_buf_optimization().is_none() {
            return RcvBufAction::default();
        }
        let Selection::Send { path, .. } = self.select(snap) else {
            return RcvBufAction::default();
        };
        let current = snap.paths.iter().find(|p| p.id == path);
        match (current, self.rcv_buf_optimization()) {
            (Some(current), Some(o)) => o.decide(snap.now, current, head_carriers, snap.paths),
            _ => RcvBufAction::default(),
        }
    }
    /// The state of the out-of-tree kernel's receive-buffer optimisation, for the schedulers
    /// of that kernel that run it (default, BLEST, ECF). Default: none.
    fn rcv_buf_optimization(&mut self) -> Option<&mut default_oot::Opportunistic> {
        None
    }
    /// The scheduler's own state after its last decision, for the per-decision trace
    /// (`--sched-trace`): name and value pairs, e.g. BLEST's λ. Only called when tracing.
    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Settings shared by schedulers plus free-form options (`--sched-opt switch_on=loss`).
#[derive(Clone, Debug, PartialEq)]
pub struct SchedConfig {
    /// Default burst budget per pick (Linux MPTCP_SEND_BURST_SIZE).
    pub burst_bytes: u64,
    pub seed: u64,
    pub options: BTreeMap<String, String>,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            burst_bytes: 65_428,
            seed: 1,
            options: BTreeMap::new(),
        }
    }
}

impl SchedConfig {
    /// Boolean option `key`, `default` when absent.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, RegistryError> {
        crate::cc::CcConfig {
            options: self.options.clone(),
            ..Default::default()
        }
        .flag(key, default)
    }
    /// Option `key` that must be one of `valid`, `default` when absent.
    pub fn choice(
        &self,
        key: &str,
        valid: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str, RegistryError> {
        match self.options.get(key) {
            None => Ok(default),
            Some(v) => {
                valid
                    .iter()
                    .copied()
                    .find(|c| c == v)
                    .ok_or_else(|| RegistryError::BadOption {
                        key: key.to_string(),
                        value: v.clone(),
                        valid: valid.join("|"),
                    })
            }
        }
    }
}

/// The best *available* subflow by `order` (the least in that order), for the schedulers
/// that only rank subflows (LRF, LPC, LET). A reinjection prefers the best subflow that has
/// not carried the data yet and falls back to the best at all (the kernel's reinjection: any subflow may take it, one that has not carried it first).
pub fn best_available(
    paths: &[PathView],
    kind: SendKind,
    order: impl Fn(&PathView, &PathView) -> Ordering,
) -> Option<&PathView> {
    let best = |keep: &dyn Fn(&PathView) -> bool| {
        paths
            .iter()
            .filter(|p| p.is_available() && keep(p))
            .min_by(|a, b| order(a, b))
    };
    match kind {
        SendKind::Fresh => best(&|_| true),
        SendKind::Reinject { already_on } => {
            best(&|p| !already_on.contains(p.id)).or_else(|| best(&|_| true))
        }
    }
}

/// A scheduler that only ranks subflows (LRF, LPC, LET): one packet on the best available
/// subflow by its order ([`best_available`]), nothing when none is available.
pub struct Ranked {
    name: &'static str,
    order: fn(&PathView, &PathView) -> Ordering,
}

impl Ranked {
    pub fn boxed(name: &'static str, order: fn(&PathView, &PathView) -> Ordering) -> Box<Ranked> {
        Box::new(Ranked { name, order })
    }
}

impl Scheduler for Ranked {
    fn name(&self) -> &'static str {
        self.name
    }

    fn select(&mut self, s: &Snapshot<'_>) -> Selection {
        best_available(s.paths, s.kind, self.order).map_or(Selection::None, Selection::send_on)
    }
}

/// LRF's order: lower SRTT first, ties to the lower id (a choice: the sources do not say).
pub fn by_srtt(a: &PathView, b: &PathView) -> Ordering {
    (a.srtt, a.id).cmp(&(b.srtt, b.id))
}

impl Selection {
    /// Send one packet on `p` alone: a per-packet decision, as the out-of-tree MPTCP kernel's
    /// schedulers make one (`mptcp_next_segment` per segment) — the next packet is decided
    /// with views that include this one.
    pub fn send_on(p: &PathView) -> Selection {
        Selection::Send {
            path: p.id,
            copies: PathMask::EMPTY,
            burst_bytes: p.mss,
        }
    }

    /// Send on `p` alone as much as its free window takes, capped by `burst_cap_bytes` (at
    /// least one packet: a pre-assigned burst waits in the subflow's queue). For schedulers
    /// that declare a burst, as the upstream kernel's default does (`MPTCP_SEND_BURST_SIZE`).
    pub fn send_burst_on(p: &PathView, burst_cap_bytes: u64) -> Selection {
        Selection::Send {
            path: p.id,
            copies: PathMask::EMPTY,
            burst_bytes: p.free_bytes().min(burst_cap_bytes).max(p.mss),
        }
    }
}

/// Lowest SRTT among `paths` passing `keep`; ties go to the lower id (a choice: the sources do not say).
pub fn lowest_srtt(paths: &[PathView], keep: impl Fn(&PathView) -> bool) -> Option<&PathView> {
    paths
        .iter()
        .filter(|p| keep(p))
        .min_by_key(|p| (p.srtt, p.id))
}

/// Test helper: the path a freshly built scheduler (by registry name, default options)
/// sends on for this snapshot, or None if it sends nothing.
#[cfg(test)]
pub fn test_pick(name: &str, paths: &[PathView], kind: SendKind) -> Option<u8> {
    let mut s = build(name, &SchedConfig::default()).unwrap();
    sent_on(decide(s.as_mut(), kind, paths))
}

/// Test helper: one decision at time zero with an empty [`ConnView`].
#[cfg(test)]
pub fn decide(s: &mut dyn Scheduler, kind: SendKind, paths: &[PathView]) -> Selection {
    s.select(&Snapshot::of(Instant::ZERO, kind, paths))
}

/// Test helper: the subflow a decision sends on, None if it sends nothing.
#[cfg(test)]
pub fn sent_on(sel: Selection) -> Option<u8> {
    match sel {
        Selection::Send { path, .. } => Some(path.0),
        _ => None,
    }
}

/// Test helper: a plain established path view.
pub fn test_path(id: u8, srtt_ms: u64, cwnd_pkts: u64, inflight_pkts: u64) -> PathView {
    let mss = 1448;
    PathView {
        id: SubflowId(id),
        name: format!("p{id}"),
        established: true,
        backup: false,
        potentially_failed: false,
        in_rto_loss: false,
        srtt: Duration::from_millis(srtt_ms),
        rttvar: Duration::from_millis(srtt_ms / 4),
        min_rtt: Duration::from_millis(srtt_ms),
        has_rtt_sample: true,
        cwnd_bytes: cwnd_pkts * mss,
        inflight_bytes: inflight_pkts * mss,
        mss,
        pacing_rate: None,
        bw_estimate: None,
        cc_phase: CcPhase::CongestionAvoidance,
        queued_bytes: 0,
        ssthresh_bytes: None,
        srtt_min_seen: Duration::from_millis(srtt_ms),
        srtt_max_seen: Duration::from_millis(srtt_ms),
        in_recovery: false,
        rttvar_kernel: Duration::from_millis(srtt_ms / 4).max(Duration::from_millis(50)),
        delivery_rate: None,
        sent_bytes_total: 0,
        lost_bytes_total: 0,
        peer_rwnd_bytes: u64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranked_reinjection_prefers_a_subflow_that_did_not_carry_it() {
        // A = (40 ms, cwnd 10, inflight 8), B = (80 ms, cwnd 30, inflight 20): both available.
        let paths = [test_path(0, 40, 10, 8), test_path(1, 80, 30, 20)];
        let a_full = [test_path(0, 40, 10, 10), test_path(1, 80, 30, 20)];
        let on = |id| SendKind::Reinject {
            already_on: PathMask::single(SubflowId(id)),
        };
        for name in ["lrf", "lpc", "let"] {
            assert_eq!(test_pick(name, &paths, on(1)), Some(0), "{name}");
            assert_eq!(test_pick(name, &paths, on(0)), Some(1), "{name}");
            // The only available subflow carried it already: it takes it again.
            assert_eq!(test_pick(name, &a_full, on(1)), Some(1), "{name}");
        }
    }

    #[test]
    fn availability_follows_section_0() {
        let mut p = test_path(0, 40, 10, 9);
        assert!(p.is_available());
        assert_eq!(p.free_bytes(), 1448);
        p.inflight_bytes = p.cwnd_bytes;
        assert!(!p.is_available());
        let mut q = test_path(1, 40, 10, 0);
        q.in_rto_loss = true;
        assert!(!q.is_available());
        q.in_rto_loss = false;
        q.established = false;
        assert!(!q.is_available());
    }

    #[test]
    fn choice_options_are_validated() {
        let mut cfg = SchedConfig::default();
        cfg.options.insert("switch_on".into(), "sometimes".into());
        assert!(
            cfg.choice("switch_on", &["cwnd_full", "loss"], "cwnd_full")
                .is_err()
        );
    }
}
