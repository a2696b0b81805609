//! Round robin (docs/algorithms/rr.md; out-of-tree Linux MPTCP `mptcp_rr.c`).
//!
//! Each subflow has a quota of segments sent in the current round; `num_segments` (default
//! 1) is the full quota. Over the *available* subflows (cwnd space, when `cwnd_limited`):
//! 1. prefer one that is part-way through its quota (0 < quota < num_segments);
//! 2. else take one with quota 0 — the kernel keeps the *last* such one in list order
//!    (here: id order), which gives B, A, B, A... on two free subflows;
//! 3. if every available subflow has a full quota, reset all quotas and retry.
//!
//! The pick carries `num_segments − quota` segments. A reinjection does not touch quotas: it
//! goes to the last available subflow that has not carried the data yet, else (the data has
//! been everywhere) to the last available one (`rr_get_available_subflow`).
//!
//! Options: `num_segments` (integer ≥ 1, default 1), `cwnd_limited` (default on; off lets
//! RR assign to subflows whose cwnd is full — they send when it opens).

use super::{PathView, SchedConfig, Scheduler, Selection, SendKind, Snapshot};
use crate::cc::RegistryError;
use crate::units::{MAX_SUBFLOWS, PathMask};

/// Settings of round robin; `Default` is the kernel's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundRobinConfig {
    pub num_segments: u64,
    pub cwnd_limited: bool,
}

impl Default for RoundRobinConfig {
    fn default() -> Self {
        RoundRobinConfig {
            num_segments: 1,
            cwnd_limited: true,
        }
    }
}

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    let d = RoundRobinConfig::default();
    let num_segments =
        match cfg.options.get("num_segments") {
            None => d.num_segments,
            Some(v) => v.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                RegistryError::BadOption {
                    key: "num_segments".into(),
                    value: v.clone(),
                    valid: "an integer ≥ 1, default 1".into(),
                }
            })?,
        };
    let cwnd_limited = cfg.flag("cwnd_limited", d.cwnd_limited)?;
    Ok(Box::new(RoundRobin::new(RoundRobinConfig {
        num_segments,
        cwnd_limited,
    })))
}

/// Round-robin state: one quota per subflow id.
pub struct RoundRobin {
    cfg: RoundRobinConfig,
    quota_segments: [u64; MAX_SUBFLOWS],
}

impl RoundRobin {
    pub fn new(cfg: RoundRobinConfig) -> RoundRobin {
        RoundRobin {
            cfg,
            quota_segments: [0; MAX_SUBFLOWS],
        }
    }

    /// `mptcp_rr_is_available` with the cwnd test as `cwnd_limited` says; a potentially
    /// failed subflow (`tp->pf`) is never usable.
    fn usable(&self, p: &PathView) -> bool {
        if p.potentially_failed {
            return false;
        }
        if self.cfg.cwnd_limited {
            p.is_available()
        } else {
            p.established && !p.in_rto_loss
        }
    }

    /// `rr_get_available_subflow` always tests the cwnd (reinjections).
    fn usable_for_reinjection(p: &PathView) -> bool {
        p.is_available() && !p.potentially_failed
    }

    /// Steps 1-2; None when every usable subflow has a full quota (or none is usable).
    fn pick_by_quota(&self, paths: &[PathView]) -> Option<(usize, u64)> {
        let full = self.cfg.num_segments;
        let mut unused = None;
        for (i, p) in paths.iter().enumerate() {
            if !self.usable(p) {
                continue;
            }
            let quota = self.quota_segments[p.id.index()];
            if quota > 0 && quota < full {
                return Some((i, full - quota));
            }
            if quota == 0 {
                unused = Some((i, full));
            }
        }
        unused
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "rr"
    }

    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        let Snapshot { kind, paths, .. } = *snap;
        if let SendKind::Reinject { already_on } = kind {
            let last_usable = |skip: PathMask| {
                paths
                    .iter()
                    .rfind(|p| Self::usable_for_reinjection(p) && !skip.contains(p.id))
            };
            return match last_usable(already_on).or_else(|| last_usable(PathMask::EMPTY)) {
                Some(p) => Selection::Send {
                    path: p.id,
                    copies: PathMask::EMPTY,
                    burst_bytes: p.mss,
                },
                None => Selection::None,
            };
        }
        let picked = match self.pick_by_quota(paths) {
            Some(pick) => Some(pick),
            None if paths.iter().any(|p| self.usable(p)) => {
                // Every usable subflow used its quota: a new round.
                self.quota_segments = [0; MAX_SUBFLOWS];
                self.pick_by_quota(paths)
            }
            None => None,
        };
        match picked {
            Some((i, segments)) => {
                let p = &paths[i];
                self.quota_segments[p.id.index()] += segments;
                Selection::Send {
                    path: p.id,
                    copies: PathMask::EMPTY,
                    burst_bytes: segments * p.mss,
                }
            }
            None => Selection::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_path;
    use crate::units::Instant;
    use crate::units::SubflowId;

    fn picks(s: &mut dyn Scheduler, paths: &[PathView], n: usize) -> Vec<Option<u8>> {
        (0..n)
            .map(
                |_| match s.select(&Snapshot::of(Instant::ZERO, SendKind::Fresh, paths)) {
                    Selection::Send { path, .. } => Some(path.0),
                    _ => None,
                },
            )
            .collect()
    }

    #[test]
    fn b4_two_free_subflows_alternate_starting_with_b() {
        let mut rr = build(&SchedConfig::default()).unwrap();
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 10, 0)];
        assert_eq!(
            picks(rr.as_mut(), &paths, 4),
            vec![Some(1), Some(0), Some(1), Some(0)]
        );
    }

    #[test]
    fn b4_with_b_cwnd_full_only_a_is_used() {
        let mut rr = build(&SchedConfig::default()).unwrap();
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 10, 10)];
        assert_eq!(
            picks(rr.as_mut(), &paths, 3),
            vec![Some(0), Some(0), Some(0)]
        );
        let all_full = [test_path(0, 40, 10, 10), test_path(1, 80, 10, 10)];
        assert_eq!(picks(rr.as_mut(), &all_full, 1), vec![None]);
    }

    #[test]
    fn quota_of_three_segments_is_given_as_one_burst_then_the_other_subflow() {
        let mut cfg = SchedConfig::default();
        cfg.options.insert("num_segments".into(), "3".into());
        let mut rr = build(&cfg).unwrap();
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 10, 0)];
        match rr.select(&Snapshot::of(Instant::ZERO, SendKind::Fresh, &paths)) {
            Selection::Send {
                path, burst_bytes, ..
            } => {
                assert_eq!(path, SubflowId(1));
                assert_eq!(burst_bytes, 3 * 1448);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            picks(rr.as_mut(), &paths, 3),
            vec![Some(0), Some(1), Some(0)]
        );
        cfg.options.insert("num_segments".into(), "0".into());
        assert!(build(&cfg).is_err());
    }

    #[test]
    fn a_potentially_failed_subflow_gets_no_turn() {
        // `mptcp_rr_is_available` returns false on `tp->pf`: with A potentially failed (its
        // RTO-loss state already over) every turn goes to B.
        let mut a = test_path(0, 20, 10, 0);
        a.potentially_failed = true;
        let b = test_path(1, 20, 10, 0);
        let mut rr = RoundRobin::new(RoundRobinConfig::default());
        for _ in 0..4 {
            let sel = rr.select(&Snapshot::of(
                Instant::ZERO,
                SendKind::Fresh,
                &[a.clone(), b.clone()],
            ));
            assert!(
                matches!(sel, Selection::Send { path, .. } if path == SubflowId(1)),
                "{sel:?}"
            );
        }
    }

    #[test]
    fn reinjection_goes_to_a_subflow_that_did_not_carry_it() {
        let mut rr = build(&SchedConfig::default()).unwrap();
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 10, 0)];
        let on_b = SendKind::Reinject {
            already_on: PathMask::single(SubflowId(1)),
        };
        let got = rr.select(&Snapshot::of(Instant::ZERO, on_b, &paths));
        assert_eq!(crate::sched::sent_on(got), Some(0), "{got:?}");
        let everywhere = SendKind::Reinject {
            already_on: PathMask::single(SubflowId(0)).with(SubflowId(1)),
        };
        let got = rr.select(&Snapshot::of(Instant::ZERO, everywhere, &paths));
        assert_eq!(crate::sched::sent_on(got), Some(1), "{got:?}");
        // Reinjection does not consume quota: fresh data still starts with B.
        assert_eq!(picks(rr.as_mut(), &paths, 2), vec![Some(1), Some(0)]);
    }
}
