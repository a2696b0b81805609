//! Out-of-tree default scheduler (`default` of the multipath-tcp/mptcp kernel, v0.9x:
//! `get_available_subflow` and `mptcp_rcv_buf_optimization` in `net/mptcp/mptcp_sched.c`),
//! the scheduler the MPTCP video studies of that kernel ran.
//!
//! # Subflow for a segment (`get_subflow_from_selectors`)
//! * A subflow is *available* when it is established, not in RTO-Loss, its inflight plus what
//!   is already queued on it is below its cwnd, and its `pf` (potentially failed: an RTO
//!   fired and no ACK came since) flag is clear (`mptcp_is_def_unavailable`,
//!   `mptcp_is_temp_unavailable`).
//! * Active (non-backup) subflows first: among available subflows that have not carried the
//!   segment yet ("unused"), the lowest SRTT (ties to the lower id).
//! * If none is available but an unused active subflow is only cwnd-blocked (established,
//!   not `pf`, not in RTO-Loss), return nothing: backups are not tried while an active
//!   subflow will free up.
//! * Otherwise the backups, the same way.
//! * If that fails, forget which subflows carried the segment and retry once: net effect, the
//!   lowest-SRTT available subflow, even one that already carried it.
//!
//! One packet per decision: the kernel asks per segment (`mptcp_next_segment`).
//!
//! # Opportunistic retransmission and penalisation (`mptcp_rcv_buf_optimization`)
//! When the peer's receive window blocks new data, the kernel takes the oldest unacked
//! segment H and (1) at most once per SRTT of the current subflow halves the cwnd of each
//! slower subflow that carried H and is in CA_Open (and its ssthresh unless in slow start),
//! (2) resends H on the current subflow if H was not sent there and the scan of H's carriers
//! says so. [`opportunistic_retransmit`] is that decision as a pure function. The connection
//! tells the scheduler when the window blocks new data ([`SchedEvent::WindowBlocked`]); the
//! scheduler counts those episodes (`window_blocked_episodes` in its trace state), and BLEST
//! raises its λ on them. The scheduler returns the decision as an [`RcvBufAction`]; the
//! connection queues H on the named subflow and asks the CC to halve each penalised
//! subflow's window (`CongestionController::penalise_cwnd`: the window machine does it as the
//! kernel, in whole packets; BBR and the other rate-based CCs decline, their cwnd being an
//! output of their model).

use std::time::Duration;

use super::{
    PathView, RcvBufAction, SchedConfig, SchedEvent, Scheduler, Selection, SendKind, Snapshot,
};
use crate::cc::{CcPhase, RegistryError};
use crate::units::{Instant, PathMask, SubflowId};

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    Ok(Box::new(DefaultOot {
        window_blocked_episodes: 0,
        opportunistic: Opportunistic::from_config(cfg)?,
    }))
}

/// The out-of-tree default: stateless apart from a counter for the trace.
pub struct DefaultOot {
    window_blocked_episodes: u64,
    opportunistic: Opportunistic,
}

/// Availability as the out-of-tree kernel tests it: section "Subflow for a segment" above.
pub fn oot_available(p: &PathView) -> bool {
    p.is_available() && !p.potentially_failed
}

/// Temporarily unavailable as `mptcp_is_temp_unavailable` says: usable in principle
/// (established, not potentially failed) but in the RTO-loss state (`TCP_CA_Loss`), or its
/// cwnd (or what is queued on it) is full.
fn temp_unavailable(p: &PathView) -> bool {
    p.established && !p.potentially_failed && !p.is_available()
}

/// One pass of `get_subflow_from_selectors` over active or backup subflows: the lowest-SRTT
/// available subflow that has not carried the segment, else the lowest-SRTT available one
/// that has; `force` is true when an unused one was found, or when none is available but an
/// unused one is temporarily unavailable (then the answer is "nothing, wait for it").
fn from_selectors(paths: &[PathView], backup: bool, mask: PathMask) -> (Option<&PathView>, bool) {
    let class = || paths.iter().filter(move |p| p.backup == backup);
    let lowest = |unused: bool| {
        class()
            .filter(|p| oot_available(p) && mask.contains(p.id) != unused)
            .min_by_key(|p| (p.srtt, p.id))
    };
    if let Some(p) = lowest(true) {
        return (Some(p), true);
    }
    let used = lowest(false);
    let unused_blocked = class().any(|p| !mask.contains(p.id) && temp_unavailable(p));
    (used, used.is_none() && unused_blocked)
}

/// The out-of-tree default's choice for a segment already carried by `already_on` (empty for
/// new data), or `None` when it returns no subflow (`get_available_subflow`: active
/// subflows, then backups, then once more with the carriers forgotten).
pub fn oot_choice(paths: &[PathView], already_on: PathMask) -> Option<&PathView> {
    let mut mask = already_on;
    let mut looping = false;
    loop {
        let (sk, force) = from_selectors(paths, false, mask);
        if force {
            return sk;
        }
        let (sk, force) = from_selectors(paths, true, mask);
        if !force && !looping {
            mask = PathMask::EMPTY;
            looping = true;
            continue;
        }
        return sk;
    }
}

/// Where BLEST and ECF, both built on the out-of-tree default, stand before their own test.
pub enum SlowerChoice<'a> {
    /// Nothing to test: send nothing, or send on the default's choice.
    Decided(Selection),
    /// Fresh data for which the default chose `slow`, which is not the lowest-SRTT
    /// established subflow `fast` (whose cwnd is ignored): the scheduler may skip `slow`.
    Test {
        fast: &'a PathView,
        slow: &'a PathView,
    },
}

/// The first step of BLEST and ECF (`blest_get_available_subflow`, `ecf_get_available_subflow`):
/// the default's choice, and the fastest subflow to compare it with. A reinjection is never
/// held back: in the kernel the subflow's own TCP retransmits a lost segment and the
/// meta-level reinjection is an extra copy, while here the reinjection is the only resend, so
/// a wait on it (typically: the segment was on `fast`, so `slow` is the unused slow subflow)
/// could wait for an ACK that never comes.
pub fn slower_choice(kind: SendKind, paths: &[PathView]) -> SlowerChoice<'_> {
    let Some(best) = oot_choice(paths, kind.carriers()) else {
        return SlowerChoice::Decided(Selection::None);
    };
    let fastest = paths
        .iter()
        .filter(|p| p.established && p.has_rtt_sample)
        .min_by_key(|p| (p.srtt, p.id));
    match fastest.filter(|f| f.id != best.id) {
        Some(fast) if kind.is_fresh() => SlowerChoice::Test { fast, slow: best },
        _ => SlowerChoice::Decided(Selection::send_on(best)),
    }
}

impl Scheduler for DefaultOot {
    fn name(&self) -> &'static str {
        "default-oot"
    }

    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        oot_choice(snap.paths, snap.kind.carriers()).map_or(Selection::None, Selection::send_on)
    }

    fn on_event(&mut self, ev: &SchedEvent) {
        if let SchedEvent::WindowBlocked { .. } = ev {
            self.window_blocked_episodes += 1;
        }
    }

    fn rcv_buf_optimization(&mut self) -> Option<&mut Opportunistic> {
        Some(&mut self.opportunistic)
    }

    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            (
                "window_blocked_episodes",
                self.window_blocked_episodes as f64,
            ),
            ("opportunistic_resends", self.opportunistic.resends as f64),
            (
                "penalties_decided",
                self.opportunistic.penalties_decided as f64,
            ),
        ]
    }
}

/// What `mptcp_rcv_buf_optimization` decides for the oldest unacked segment H when the peer
/// window blocks new data and `current` is the subflow the scheduler picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpportunisticDecision {
    /// Subflows whose cwnd (and ssthresh unless in slow start) to halve.
    pub penalise: PathMask,
    /// Resend H on `current`.
    pub resend_on_current: bool,
}

/// The opportunistic retransmission and penalisation decision (see the module comment).
/// `head_carriers`: subflows that carried H; `since_last_penalty`: time since `current` last
/// penalised (None: never). Carriers are scanned in id order (the kernel's list order).
pub fn opportunistic_retransmit(
    current: &PathView,
    paths: &[PathView],
    head_carriers: PathMask,
    since_last_penalty: Option<Duration>,
) -> OpportunisticDecision {
    let mut penalise = PathMask::EMPTY;
    let may_penalise = since_last_penalty.is_none_or(|d| d >= current.srtt);
    if may_penalise {
        for p in paths {
            let open = matches!(
                p.cc_phase,
                CcPhase::SlowStart | CcPhase::CongestionAvoidance
            );
            if p.id != current.id && head_carriers.contains(p.id) && current.srtt < p.srtt && open {
                penalise = penalise.with(p.id);
            }
        }
    }
    let mut resend = false;
    if !head_carriers.contains(current.id) {
        let mut carriers: Vec<&PathView> = paths
            .iter()
            .filter(|p| p.id != current.id && head_carriers.contains(p.id))
            .collect();
        carriers.sort_by_key(|p| p.id);
        for p in carriers {
            if p.cwnd_bytes <= 4 * p.mss {
                resend = true;
                break;
            }
            if current.srtt.saturating_mul(4) >= p.srtt {
                resend = false;
                break;
            }
            resend = true;
        }
        resend &= oot_available(current);
    }
    OpportunisticDecision {
        penalise,
        resend_on_current: resend,
    }
}

/// State of the opportunistic retransmission shared by the out-of-tree family (default,
/// BLEST and ECF run the same `mptcp_rcv_buf_optimization`): when each subflow last
/// penalised, and counters for the trace.
#[derive(Clone, Debug, Default)]
pub struct Opportunistic {
    /// Option `rcv_buf_penalty=off`: decide the resend only, never a penalty (default on, as
    /// the kernel).
    no_penalty: bool,
    last_penalty: [Option<Instant>; crate::units::MAX_SUBFLOWS],
    pub resends: u64,
    pub penalties_decided: u64,
}

impl Opportunistic {
    /// The state with the scheduler's `rcv_buf_penalty` option (default on).
    pub fn from_config(cfg: &SchedConfig) -> Result<Opportunistic, RegistryError> {
        Ok(Opportunistic {
            no_penalty: !cfg.flag("rcv_buf_penalty", true)?,
            ..Opportunistic::default()
        })
    }

    /// The action for the oldest undelivered chunk: resend it on `current` (the subflow the
    /// scheduler picked for the blocked new data) and penalise its slower carriers, when
    /// [`opportunistic_retransmit`] says so.
    pub fn decide(
        &mut self,
        now: Instant,
        current: &PathView,
        head_carriers: PathMask,
        paths: &[PathView],
    ) -> RcvBufAction {
        let slot = &mut self.last_penalty[current.id.index()];
        let since = slot.map(|t| now.saturating_duration_since(t));
        let mut d = opportunistic_retransmit(current, paths, head_carriers, since);
        if self.no_penalty {
            d.penalise = PathMask::EMPTY;
        }
        if !d.penalise.is_empty() {
            *slot = Some(now);
            self.penalties_decided += 1;
        }
        if d.resend_on_current {
            self.resends += 1;
        }
        RcvBufAction {
            resend_on: d.resend_on_current.then_some(current.id),
            penalise: d.penalise,
        }
    }
}

/// Subflow ids in `mask`, for tests and traces.
pub fn ids(mask: PathMask) -> Vec<SubflowId> {
    mask.iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_path;
    use crate::units::Instant;

    fn pick(paths: &[PathView], kind: SendKind) -> Option<u8> {
        let mut s = build(&SchedConfig::default()).unwrap();
        match s.select(&Snapshot::of(Instant::ZERO, kind, paths)) {
            Selection::Send { path, copies, .. } => {
                assert!(copies.is_empty());
                Some(path.0)
            }
            Selection::None => None,
            other => panic!("the default never waits deliberately: {other:?}"),
        }
    }

    fn on(id: u8) -> SendKind {
        SendKind::Reinject {
            already_on: PathMask::single(SubflowId(id)),
        }
    }

    #[test]
    fn segment_on_a_goes_to_unused_b_else_back_to_a() {
        let a = test_path(0, 20, 10, 0);
        let b = test_path(1, 50, 10, 0);
        assert_eq!(pick(&[a.clone(), b], on(0)), Some(1));
        let b_full = test_path(1, 50, 10, 10);
        assert_eq!(pick(&[a, b_full], on(0)), Some(0));
    }

    #[test]
    fn new_data_with_full_actives_does_not_use_a_free_backup() {
        let mut c = test_path(2, 10, 10, 0);
        c.backup = true;
        let full = [
            test_path(0, 20, 10, 10),
            test_path(1, 50, 10, 10),
            c.clone(),
        ];
        assert_eq!(pick(&full, SendKind::Fresh), None);
        // With every active subflow potentially failed, the backup takes the data.
        let mut a = test_path(0, 20, 10, 0);
        a.potentially_failed = true;
        assert_eq!(pick(&[a, c], SendKind::Fresh), Some(2));
    }

    #[test]
    fn an_rto_loss_active_subflow_holds_new_data_back_from_a_free_backup() {
        // `mptcp_is_temp_unavailable`: TCP_CA_Loss (pf already cleared by an ACK) is only
        // temporarily unavailable, so the unused active subflow forces "nothing" and the
        // backup is not tried; once it is potentially failed, it is skipped and the backup
        // takes the data.
        let mut a = test_path(0, 20, 10, 0);
        a.in_rto_loss = true;
        let mut c = test_path(2, 10, 10, 0);
        c.backup = true;
        assert_eq!(pick(&[a.clone(), c.clone()], SendKind::Fresh), None);
        a.potentially_failed = true;
        assert_eq!(pick(&[a, c], SendKind::Fresh), Some(2));
    }

    #[test]
    fn lowest_srtt_first_and_pf_is_unavailable() {
        let mut a = test_path(0, 20, 10, 0);
        let b = test_path(1, 50, 10, 0);
        assert_eq!(pick(&[b.clone(), a.clone()], SendKind::Fresh), Some(0));
        a.potentially_failed = true;
        assert_eq!(pick(&[a, b], SendKind::Fresh), Some(1));
    }

    #[test]
    fn opportunistic_state_resends_on_the_new_data_choice_and_times_penalties() {
        let fast = test_path(0, 20, 10, 0);
        let slow = test_path(1, 100, 20, 20);
        let paths = [fast, slow];
        let on_slow = PathMask::single(SubflowId(1));
        let mut o = Opportunistic::default();
        let t0 = Instant::from_nanos(1_000_000_000);
        let resend_and_penalise = RcvBufAction {
            resend_on: Some(SubflowId(0)),
            penalise: on_slow,
        };
        assert_eq!(
            o.decide(t0, &paths[0], on_slow, &paths),
            resend_and_penalise
        );
        assert_eq!((o.resends, o.penalties_decided), (1, 1));
        // 10 ms later, within the fast subflow's 20 ms SRTT: resend again, no new penalty.
        let t1 = Instant::from_nanos(1_010_000_000);
        let resend_only = RcvBufAction {
            resend_on: Some(SubflowId(0)),
            penalise: PathMask::EMPTY,
        };
        assert_eq!(o.decide(t1, &paths[0], on_slow, &paths), resend_only);
        assert_eq!(o.penalties_decided, 1);
        // Already on the fast one: nothing.
        let t2 = Instant::from_nanos(1_050_000_000);
        let penalise_only = RcvBufAction {
            resend_on: None,
            penalise: on_slow,
        };
        assert_eq!(
            o.decide(t2, &paths[0], on_slow.with(SubflowId(0)), &paths),
            penalise_only
        );
        assert_eq!(o.penalties_decided, 2, "a penalty again after one SRTT");
    }

    #[test]
    fn opportunistic_retransmission_penalises_slower_carriers_once_per_srtt() {
        let fast = test_path(0, 20, 10, 0);
        let slow = test_path(1, 100, 20, 20);
        let paths = [fast.clone(), slow.clone()];
        let head_on_slow = PathMask::single(SubflowId(1));
        let d = opportunistic_retransmit(&fast, &paths, head_on_slow, None);
        assert_eq!(ids(d.penalise), vec![SubflowId(1)]);
        assert!(
            d.resend_on_current,
            "100 ms > 4 × 20 ms: resend on the fast one"
        );
        let soon = Some(Duration::from_millis(10));
        let d = opportunistic_retransmit(&fast, &paths, head_on_slow, soon);
        assert!(d.penalise.is_empty(), "within one SRTT of the last penalty");
        // A carrier within 4× the current SRTT stops the scan: no resend.
        let near = test_path(1, 60, 20, 20);
        let d = opportunistic_retransmit(&fast, &[fast.clone(), near], head_on_slow, None);
        assert!(!d.resend_on_current);
        // A carrier with cwnd ≤ 4 segments: resend regardless of its SRTT.
        let tiny = test_path(1, 60, 4, 4);
        let d = opportunistic_retransmit(&fast, &[fast.clone(), tiny], head_on_slow, None);
        assert!(d.resend_on_current);
        // Already sent on the current subflow: never resend there.
        let both = head_on_slow.with(SubflowId(0));
        assert!(!opportunistic_retransmit(&fast, &paths, both, None).resend_on_current);
    }
}
