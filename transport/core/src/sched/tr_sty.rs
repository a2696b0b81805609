//! TR-STY, throughput-and-RTT sticky (docs/algorithms/sticky.md; from Kondo et al.,
//! "Evaluation of MPTCP with BBR Performance on Wi-Fi/Cellular networks for Video Streaming"): like TP-STY, but the
//! candidate must also have a lower SRTT than the current subflow: larger cwnd/SRTT *and*
//! smaller SRTT. Otherwise wait for the current subflow (a counted `Wait`). The sticky
//! machine and its two switches for what the paper leaves open are in gr_sty.rs.

use super::gr_sty::{SwitchRule, build_sticky};
use super::{PathView, SchedConfig, Scheduler};
use crate::cc::RegistryError;

/// Switch only to a subflow that is both faster (cwnd/SRTT) and nearer (SRTT).
pub struct ThroughputAndRtt;

impl SwitchRule for ThroughputAndRtt {
    const NAME: &'static str = "tr-sty";
    fn switches(cur: &PathView, cand: &PathView, _cur_exhausted: bool) -> bool {
        cand.cwnd_rate_pkts_per_s() > cur.cwnd_rate_pkts_per_s() && cand.srtt < cur.srtt
    }
}

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    build_sticky::<ThroughputAndRtt>(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::gr_sty::sticky_tests::{b7_decision, sent_on};
    use crate::sched::{ConnView, Selection, SendKind, Snapshot, WaitReason, test_path};
    use crate::units::Instant;

    #[test]
    fn b7_tr_sty_waits_because_lte_has_the_higher_srtt() {
        let mut s = build(&SchedConfig::default()).unwrap();
        assert_eq!(
            b7_decision(s.as_mut()),
            Selection::Wait {
                reason: WaitReason::CurrentPathBusy
            }
        );
        assert_eq!(sent_on(b7_decision(s.as_mut())), None);
    }

    #[test]
    fn tr_sty_switches_to_a_faster_and_nearer_path() {
        let mut s = build(&SchedConfig::default()).unwrap();
        let conn = ConnView::default();
        // Start on LTE (Wi-Fi full at first), then LTE is full and Wi-Fi is free.
        let first = [test_path(0, 40, 10, 10), test_path(1, 80, 10, 0)];
        assert_eq!(
            sent_on(s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &first))),
            Some(1)
        );
        let lte_full = [test_path(0, 40, 10, 0), test_path(1, 80, 10, 10)];
        assert_eq!(
            sent_on(s.select(&Snapshot::new(
                Instant::ZERO,
                SendKind::Fresh,
                conn,
                &lte_full
            ))),
            Some(0)
        );
    }
}
