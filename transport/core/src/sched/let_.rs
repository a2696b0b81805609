//! LET, largest estimated throughput (as in the seed paper "Evaluation of MPTCP with BBR
//! Performance on Wi-Fi/Cellular Networks for Video Streaming", Kondo et al.): send on the
//! *available* subflow with the largest cwnd/SRTT, the window-based estimate of its delivery
//! rate. Ties (a choice: the paper does not say) go to the lower SRTT, then the lower id. If
//! none is available, send nothing until an ACK or timer (`Selection::None`). (`let` is a
//! Rust keyword, hence `let_.rs`.)
//!
//! A reinjection prefers, by the same rule, a subflow that has not carried the data yet,
//! and falls back to any available subflow (the kernel's reinjection, as LRF does here).
//!
//! One packet per decision (the out-of-tree kernel decides per segment).

use std::cmp::Ordering;

use super::{PathView, Ranked, SchedConfig, Scheduler};
use crate::cc::RegistryError;

pub fn build(_cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    Ok(Ranked::boxed("let", better))
}

/// Order: higher cwnd/SRTT first, then lower SRTT, then lower id.
fn better(a: &PathView, b: &PathView) -> Ordering {
    b.cwnd_rate_pkts_per_s()
        .total_cmp(&a.cwnd_rate_pkts_per_s())
        .then(a.srtt.cmp(&b.srtt))
        .then(a.id.cmp(&b.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{SendKind, test_path};

    fn pick(paths: &[PathView], kind: SendKind) -> Option<u8> {
        crate::sched::test_pick("let", paths, kind)
    }

    #[test]
    fn b6_let_picks_b_at_375_over_a_at_250_pkts_per_s() {
        let a = test_path(0, 40, 10, 8);
        let b = test_path(1, 80, 30, 20);
        assert!((a.cwnd_rate_pkts_per_s() - 250.0).abs() < 1e-9);
        assert!((b.cwnd_rate_pkts_per_s() - 375.0).abs() < 1e-9);
        assert_eq!(pick(&[a, b], SendKind::Fresh), Some(1));
    }

    #[test]
    fn b6_lrf_picks_a_in_the_same_vector() {
        let paths = [test_path(0, 40, 10, 8), test_path(1, 80, 30, 20)];
        let mut lrf = crate::sched::lrf::build(&SchedConfig::default()).unwrap();
        let got = crate::sched::decide(lrf.as_mut(), SendKind::Fresh, &paths);
        assert_eq!(crate::sched::sent_on(got), Some(0), "{got:?}");
    }

    #[test]
    fn ties_go_to_lower_srtt_then_lower_id_and_full_subflows_are_skipped() {
        // 20 pkts / 80 ms = 10 pkts / 40 ms = 250 pkt/s.
        let paths = [test_path(0, 80, 20, 0), test_path(1, 40, 10, 0)];
        assert_eq!(pick(&paths, SendKind::Fresh), Some(1));
        let paths = [test_path(0, 40, 10, 0), test_path(1, 40, 10, 0)];
        assert_eq!(pick(&paths, SendKind::Fresh), Some(0));
        let paths = [test_path(0, 40, 100, 0), test_path(1, 40, 10, 10)];
        assert_eq!(pick(&paths, SendKind::Fresh), Some(0));
        let paths = [test_path(0, 40, 100, 100), test_path(1, 40, 10, 10)];
        assert_eq!(pick(&paths, SendKind::Fresh), None);
    }
}
