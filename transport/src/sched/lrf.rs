//! LRF / minRTT (the out-of-tree kernel's default `mptcp_sched.c`; as in the seed paper
//! "Evaluation of MPTCP with BBR Performance on Wi-Fi/Cellular Networks for Video
//! Streaming", Kondo et al.): send on the *available* subflow with the lowest SRTT; ties go to
//! the lower id. If none is available, send nothing and wait for the next ACK or timer
//! (`Selection::None`, not a deliberate wait). A reinjection may use any available subflow,
//! including one that already carried the data (the kernel's reinjection), but prefers a
//! subflow that has not carried it.
//!
//! One packet per decision (the out-of-tree kernel decides per segment).

use super::{
    ConnView, PathView, SchedConfig, Scheduler, Selection, SendKind, best_available, by_srtt,
};
use crate::cc::RegistryError;
use crate::units::Instant;

pub fn build(_cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    Ok(Box::new(Lrf))
}

pub struct Lrf;

impl Scheduler for Lrf {
    fn name(&self) -> &'static str {
        "lrf"
    }

    fn select(
        &mut self,
        _now: Instant,
        kind: SendKind,
        _conn: &ConnView,
        paths: &[PathView],
    ) -> Selection {
        best_available(paths, kind, by_srtt).map_or(Selection::None, Selection::send_on)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{SchedConfig, test_path};
    use crate::units::PathMask;
    use crate::units::SubflowId;

    fn pick(paths: &[PathView], kind: SendKind) -> Selection {
        let mut s = build(&SchedConfig::default()).unwrap();
        s.select(Instant::ZERO, kind, &ConnView::default(), paths)
    }

    fn path_of(sel: Selection) -> Option<u8> {
        match sel {
            Selection::Send { path, .. } => Some(path.0),
            _ => None,
        }
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

    #[test]
    fn reinjection_prefers_a_path_that_did_not_carry_the_data() {
        let a = test_path(0, 20, 10, 0);
        let b = test_path(1, 50, 10, 0);
        let kind = SendKind::Reinject {
            already_on: PathMask::single(SubflowId(0)),
        };
        assert_eq!(path_of(pick(&[a.clone(), b], kind)), Some(1));
        let b_full = test_path(1, 50, 10, 10);
        assert_eq!(path_of(pick(&[a, b_full], kind)), Some(0));
    }
}
