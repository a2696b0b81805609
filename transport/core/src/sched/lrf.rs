//! LRF / minRTT (the out-of-tree kernel's default `mptcp_sched.c`; as in the seed paper
//! "Evaluation of MPTCP with BBR Performance on Wi-Fi/Cellular Networks for Video
//! Streaming", Kondo et al.): send on the *available* subflow with the lowest SRTT; ties go to
//! the lower id. If none is available, send nothing and wait for the next ACK or timer
//! (`Selection::None`, not a deliberate wait). A reinjection may use any available subflow,
//! including one that already carried the data (the kernel's reinjection), but prefers a
//! subflow that has not carried it.
//!
//! One packet per decision (the out-of-tree kernel decides per segment).

use super::{Ranked, SchedConfig, Scheduler, by_srtt};
use crate::cc::RegistryError;

pub fn build(_cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    Ok(Ranked::boxed("lrf", by_srtt))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{PathView, Selection, SendKind, decide, sent_on as path_of, test_path};
    use crate::units::SubflowId;

    fn pick(paths: &[PathView], kind: SendKind) -> Selection {
        let mut s = build(&SchedConfig::default()).unwrap();
        decide(s.as_mut(), kind, paths)
    }

    #[test]
    fn b1_lowest_srtt_then_next_when_cwnd_full() {
        let wifi = test_path(0, 40, 10, 0);
        let lte = test_path(1, 80, 10, 0);
        assert_eq!(
            path_of(pick(&[wifi.clone(), lte.clone()], SendKind::Fresh)),
            Some(0)
        );
        let wifi_full = test_path(0, 40, 10, 10);
        assert_eq!(
            path_of(pick(&[wifi_full.clone(), lte], SendKind::Fresh)),
            Some(1)
        );
        let lte_full = test_path(1, 80, 10, 10);
        assert_eq!(
            pick(&[wifi_full, lte_full], SendKind::Fresh),
            Selection::None
        );
    }

    #[test]
    fn ties_go_to_lower_id_and_the_decision_is_one_packet() {
        let a = test_path(0, 40, 10, 4);
        let b = test_path(1, 40, 10, 0);
        match pick(&[b, a], SendKind::Fresh) {
            Selection::Send {
                path,
                burst_bytes,
                copies,
            } => {
                assert_eq!(path, SubflowId(0));
                assert_eq!(burst_bytes, 1448);
                assert!(copies.is_empty());
            }
            other => panic!("expected send, got {other:?}"),
        }
    }
}
