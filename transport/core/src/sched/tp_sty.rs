//! TP-STY, throughput sticky (docs/algorithms/sticky.md; from Kondo et al.,
//! "Evaluation of MPTCP with BBR Performance on Wi-Fi/Cellular networks for Video Streaming"): stay on the current subflow until
//! it is exhausted, then move to the lowest-SRTT available subflow only if its window-based
//! throughput estimate cwnd/SRTT is larger than the current one's; otherwise wait for the
//! current subflow (a counted `Wait`). The sticky machine and its two switches for what the paper leaves open are in
//! gr_sty.rs.

use super::gr_sty::{SwitchRule, build_sticky};
use super::{PathView, SchedConfig, Scheduler};
use crate::cc::RegistryError;

/// Switch only to a subflow with a larger cwnd/SRTT.
pub struct Throughput;

impl SwitchRule for Throughput {
    const NAME: &'static str = "tp-sty";
    fn switches(cur: &PathView, cand: &PathView, _cur_exhausted: bool) -> bool {
        cand.cwnd_rate_pkts_per_s() > cur.cwnd_rate_pkts_per_s()
    }
}

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    build_sticky::<Throughput>(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::gr_sty::sticky_tests::{b7_decision, sent_on};
    use crate::sched::{ConnView, SendKind, Snapshot, test_path};
    use crate::units::Instant;

    #[test]
    fn b7_tp_sty_switches_to_lte_at_375_over_250_pkts_per_s() {
        let mut s = build(&SchedConfig::default()).unwrap();
        assert_eq!(sent_on(b7_decision(s.as_mut())), Some(1));
    }

    #[test]
    fn tp_sty_waits_for_wifi_when_lte_is_not_faster() {
        let mut s = build(&SchedConfig::default()).unwrap();
        let conn = ConnView::default();
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 10, 0)];
        s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths));
        // Wi-Fi full at 250 pkt/s, LTE free at 125 pkt/s: stay and wait.
        let wifi_full = [test_path(0, 40, 10, 10), test_path(1, 80, 10, 0)];
        let got = s.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn,
            &wifi_full,
        ));
        assert!(
            matches!(got, crate::sched::Selection::Wait { .. }),
            "{got:?}"
        );
    }
}
