//! Redundant (ALGORITHMS.md B5; out-of-tree Linux MPTCP `mptcp_redundant.c`, v0.90+): every
//! segment goes out on every subflow that can take it, so the connection runs at the pace
//! of the best path and survives the loss of any one.
//!
//! Rule here, per fresh segment: the starting subflow rotates over the subflows (as the
//! kernel's `next_subflow`); the segment goes to the first *available* subflow from there,
//! and a copy to every other available subflow (`Selection::Send::copies`). Backup subflows
//! are used only when no active subflow is available. Reinjections follow B2's net effect:
//! the lowest-SRTT available subflow that has not carried the data, else the lowest-SRTT
//! available one, without copies.
//!
//! [PROP] Difference from the kernel: there, a subflow whose window was full when a segment
//! was scheduled sends it later if it is not meta-acked by then (each subflow walks the
//! stream on its own). This core keeps no per-subflow stream position, so a subflow that is
//! not available at the moment of the decision gets no copy of that segment; it takes part
//! again from the next segment on. On equal paths both are available together and every
//! byte is sent n times; on unequal paths the fast path carries every segment it has room
//! for, so goodput stays at least that of the best path.
//!
//! Burst: the smallest free window among the chosen subflows (at least one segment), capped
//! by the configured burst budget, so that copies do not pile up on the slower subflow.

use super::{ConnView, PathView, SchedConfig, Scheduler, Selection, SendKind, lowest_srtt};
use crate::cc::RegistryError;
use crate::units::{Instant, PathMask};

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

    fn select(
        &mut self,
        _now: Instant,
        kind: SendKind,
        _conn: &ConnView,
        paths: &[PathView],
    ) -> Selection {
        if let SendKind::Reinject { already_on } = kind {
            let chosen = lowest_srtt(paths, |p| p.is_available() && !already_on.contains(p.id))
                .or_else(|| lowest_srtt(paths, |p| p.is_available()));
            return match chosen {
                Some(p) => Selection::Send {
                    path: p.id,
                    copies: PathMask::EMPTY,
                    burst_bytes: p.free_bytes().min(self.burst_cap_bytes).max(p.mss),
                },
                None => Selection::None,
            };
        }
        let mut chosen = self.rotated(paths, false);
        if chosen.is_empty() {
            chosen = self.rotated(paths, true);
        }
        let Some(first) = chosen.first() else {
            return Selection::None;
        };
        let copies = chosen[1..]
            .iter()
            .fold(PathMask::EMPTY, |mask, p| mask.with(p.id));
        let smallest_free = chosen.iter().map(|p| p.free_bytes()).min().unwrap_or(0);
        self.next_start = first.id.0.wrapping_add(1);
        Selection::Send {
            path: first.id,
            copies,
            burst_bytes: smallest_free.min(self.burst_cap_bytes).max(first.mss),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_path;
    use crate::units::SubflowId;

    fn select(s: &mut dyn Scheduler, kind: SendKind, paths: &[PathView]) -> Selection {
        s.select(Instant::ZERO, kind, &ConnView::default(), paths)
    }

    #[test]
    fn b5_every_available_subflow_gets_the_segment_and_the_start_rotates() {
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
                    assert_eq!(burst_bytes, 6 * 1448, "smallest free window");
                    starts.push(path.0);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(starts, vec![0, 1, 0, 1]);
    }

    #[test]
    fn b5_a_full_subflow_gets_no_copy_and_backups_only_when_no_active_is_free() {
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
                assert_eq!(path, SubflowId(1));
                assert!(copies.is_empty(), "full subflow 0 and backup 2 get nothing");
            }
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
                burst_bytes: 10 * 1448
            }
        );
    }
}
