//! LPC, largest packet credits (as in the seed paper "Evaluation of MPTCP with BBR
//! Performance on Wi-Fi/Cellular Networks for Video Streaming", Kondo et al.): send on the
//! *available* subflow with the most free window, cwnd − inflight (− bytes already queued on
//! it), i.e. the one that can take the most packets right now. Ties (a choice: the paper does
//! not say) go to the lower SRTT, then the lower id. If none is available, send nothing until an ACK or timer (`Selection::None`).
//!
//! A reinjection prefers, by the same rule, a subflow that has not carried the data yet,
//! and falls back to any available subflow (the kernel's reinjection, as LRF does here).
//!
//! One packet per decision (the out-of-tree kernel decides per segment).

use std::cmp::{Ordering, Reverse};

use super::{PathView, Ranked, SchedConfig, Scheduler};
use crate::cc::RegistryError;

pub fn build(_cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    Ok(Ranked::boxed("lpc", more_credits))
}

/// Order: more free window first, then lower SRTT, then lower id.
fn more_credits(a: &PathView, b: &PathView) -> Ordering {
    (Reverse(a.free_bytes()), a.srtt, a.id).cmp(&(Reverse(b.free_bytes()), b.srtt, b.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{SendKind, test_path};

    fn pick(paths: &[PathView], kind: SendKind) -> Option<u8> {
        crate::sched::test_pick("lpc", paths, kind)
    }

    #[test]
    fn b6_lpc_picks_b_with_10_free_over_a_with_2() {
        // A = (cwnd 10, inflight 8, 40 ms), B = (30, 20, 80 ms).
        let paths = [test_path(0, 40, 10, 8), test_path(1, 80, 30, 20)];
        assert_eq!(pick(&paths, SendKind::Fresh), Some(1));
    }

    #[test]
    fn ties_go_to_lower_srtt_then_lower_id_and_full_subflows_are_skipped() {
        let paths = [test_path(0, 80, 10, 5), test_path(1, 40, 10, 5)];
        assert_eq!(pick(&paths, SendKind::Fresh), Some(1));
        let paths = [test_path(0, 40, 10, 5), test_path(1, 40, 10, 5)];
        assert_eq!(pick(&paths, SendKind::Fresh), Some(0));
        let paths = [test_path(0, 40, 10, 10), test_path(1, 40, 1, 1)];
        assert_eq!(pick(&paths, SendKind::Fresh), None);
    }
}
