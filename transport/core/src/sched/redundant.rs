//! Redundant (out-of-tree Linux MPTCP `mptcp_redundant.c`, v0.90+): every
//! segment goes out on every subflow that can take it, so the connection runs at the pace
//! of the best path and survives the loss of any one.
//!
//! Rule here, per fresh burst: the starting subflow rotates over the subflows (as the
//! kernel's `next_subflow`); the burst goes to the first *available* subflow from there, and
//! a copy (`Selection::Send::copies`) to every other established subflow of the same class
//! (active or backup) that is not in RTO-Loss, *whether or not its window is open*: the copy
//! waits in that subflow's queue and goes out when its cwnd allows, unless the data was
//! delivered meanwhile (the core skips such copies) — the kernel's "each subflow walks the
//! whole stream and skips what is meta-acked". A choice of ours: a subflow takes copies only while less
//! than one cwnd is queued on it, so a slow subflow lags by at most a window and cannot make
//! the core stop scheduling. Backup subflows are used only when no active subflow is
//! available. Reinjections follow the kernel's reinjection: the lowest-SRTT available subflow that has
//! not carried the data, else the lowest-SRTT available one, without copies.
//!
//! Burst: the first subflow's free window (at least one segment), capped by the configured
//! burst budget.
//!
//! Measured in the simulator (`cargo test --release --test sched_behaviour redundant --
//! --nocapture`): on two equal paths each carries every byte; with one path 4× slower the
//! goodput stays that of the faster path.

use super::{
    PathView, SchedConfig, Scheduler, Selection, SendKind, Snapshot, best_available, by_srtt,
};
use crate::cc::RegistryError;
use crate::units::PathMask;

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    Ok(Box::new(Redundant {
        burst_cap_bytes: cfg.burst_bytes,
        next_start: 0,
    }))
}

/// Redundant scheduler state: where the next rotation starts (a subflow id).
pub struct Redundant {
    burst_cap_bytes: u64,
    next_start: u8,
}

impl Redundant {
    /// Available subflows of one class (active or backup), in rotation order.
    fn rotated<'a>(&self, paths: &'a [PathView], backup: bool) -> Vec<&'a PathView> {
        let mut chosen: Vec<&PathView> = paths
            .iter()
            .filter(|p| p.backup == backup && p.is_available())
            .collect();
        chosen.sort_by_key(|p| (p.id.0 < self.next_start, p.id));
        chosen
    }
}

impl Scheduler for Redundant {
    fn name(&self) -> &'static str {
        "redundant"
    }

    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        let Snapshot { kind, paths, .. } = *snap;
        if let SendKind::Reinject { .. } = kind {
            return best_available(paths, kind, by_srtt)
                .map_or(Selection::None, Selection::send_on);
        }
        let mut chosen = self.rotated(paths, false);
        if chosen.is_empty() {
            chosen = self.rotated(paths, true);
        }
        let Some(first) = chosen.first() else {
            return Selection::None;
        };
        let copies = paths
            .iter()
            .filter(|p| p.id != first.id && p.backup == first.backup && takes_copy(p))
            .fold(PathMask::EMPTY, |mask, p| mask.with(p.id));
        self.next_start = first.id.0.wrapping_add(1);
        Selection::Send {
            path: first.id,
            copies,
            burst_bytes: first.free_bytes().min(self.burst_cap_bytes).max(first.mss),
        }
    }
}

/// A copy may wait in a subflow's queue until its window opens (each kernel subflow walks
/// the stream on its own; the core skips queued copies that were delivered meanwhile), but
/// at most one window ahead, so a slow subflow does not hold up the connection.
fn takes_copy(p: &PathView) -> bool {
    p.established && !p.in_rto_loss && p.queued_bytes < p.cwnd_bytes.max(p.mss)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_path;
    use crate::units::Instant;
    use crate::units::SubflowId;

    fn select(s: &mut dyn Scheduler, kind: SendKind, paths: &[PathView]) -> Selection {
        s.select(&Snapshot::of(Instant::ZERO, kind, paths))
    }

    #[test]
    fn b5_every_subflow_gets_the_segment_and_the_start_rotates() {
        let mut s = build(&SchedConfig::default()).unwrap();
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 10, 4)];
        let both = PathMask::single(SubflowId(0)).with(SubflowId(1));
        let mut starts = Vec::new();
        for _ in 0..4 {
            match select(s.as_mut(), SendKind::Fresh, &paths) {
                Selection::Send {
                    path,
                    copies,
                    burst_bytes,
                } => {
                    assert_eq!(copies.with(path), both);
                    assert!(!copies.contains(path));
                    let free_pkts = if path.0 == 0 { 10 } else { 6 };
                    assert_eq!(
                        burst_bytes,
                        free_pkts * 1448,
                        "the first subflow's free window"
                    );
                    starts.push(path.0);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(starts, vec![0, 1, 0, 1]);
    }

    #[test]
    fn b5_a_full_subflow_queues_copies_up_to_a_window_and_backups_wait() {
        let mut s = build(&SchedConfig::default()).unwrap();
        let mut backup = test_path(2, 20, 10, 0);
        backup.backup = true;
        let paths = [
            test_path(0, 40, 10, 10),
            test_path(1, 80, 10, 0),
            backup.clone(),
        ];
        match select(s.as_mut(), SendKind::Fresh, &paths) {
            Selection::Send { path, copies, .. } => {
                assert_eq!(path, SubflowId(1), "the first available subflow");
                assert_eq!(
                    copies,
                    PathMask::single(SubflowId(0)),
                    "a copy waits on full 0"
                );
            }
            other => panic!("{other:?}"),
        }
        let mut lagging = test_path(0, 40, 10, 10);
        lagging.queued_bytes = 10 * 1448;
        let paths = [lagging, test_path(1, 80, 10, 0), backup.clone()];
        match select(s.as_mut(), SendKind::Fresh, &paths) {
            Selection::Send { copies, .. } => assert!(copies.is_empty(), "a window is queued"),
            other => panic!("{other:?}"),
        }
        let only_backup = [test_path(0, 40, 10, 10), test_path(1, 80, 10, 10), backup];
        assert!(matches!(
            select(s.as_mut(), SendKind::Fresh, &only_backup),
            Selection::Send {
                path: SubflowId(2),
                ..
            }
        ));
        let none = [test_path(0, 40, 10, 10)];
        assert_eq!(select(s.as_mut(), SendKind::Fresh, &none), Selection::None);
    }

    #[test]
    fn reinjection_follows_b2_without_copies() {
        let mut s = build(&SchedConfig::default()).unwrap();
        let paths = [test_path(0, 20, 10, 0), test_path(1, 50, 10, 0)];
        let on_a = SendKind::Reinject {
            already_on: PathMask::single(SubflowId(0)),
        };
        assert_eq!(
            select(s.as_mut(), on_a, &paths),
            Selection::Send {
                path: SubflowId(1),
                copies: PathMask::EMPTY,
                burst_bytes: 1448
            }
        );
    }
}
