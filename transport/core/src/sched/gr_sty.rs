//! Sticky schedulers (as in the seed paper "Evaluation of MPTCP with BBR Performance on
//! Wi-Fi/Cellular Networks for Video Streaming", Kondo et al.) and GR-STY, the greedy one.
//!
//! State `cur`, set to the LRF choice (lowest-SRTT available subflow) at the start and again
//! after `cur` goes down.
//! ```text
//!   cur available ─────────────────────────────► send on cur
//!   cur exhausted, cand = lowest-SRTT available subflow ≠ cur:
//!       no cand ───────────────────────────────► nothing (Selection::None: wait for ACKs)
//!       rule(cur, cand) ───────────────────────► cur = cand, send on cand
//!       otherwise ─────────────────────────────► Wait(CurrentPathBusy), counted
//!   rules: GR-STY  always switches
//!          TP-STY  switches if cwnd/SRTT(cand) > cwnd/SRTT(cur)          (tp_sty.rs)
//!          TR-STY  ... and SRTT(cand) < SRTT(cur)                        (tr_sty.rs)
//! ```
//! The two readings the paper leaves open are options, with the defaults that reproduce
//! its TP-STY clinging to Wi-Fi:
//! * `switch_test` = `when_exhausted` (default: the rule runs only once cur is exhausted, "stay
//!   until resources are exhausted") | `every_packet` (the rule runs on every decision, even
//!   while cur is available; GR then moves whenever cand has a lower SRTT, TP/TR when their
//!   rule holds).
//! * `congestion` = `cwnd_full` (default: cur is exhausted when it is not available,
//!   cwnd full, RTO-Loss) | `loss_state` (cur is exhausted only in a loss state —
//!   Recovery, RTO-Loss — and a merely cwnd-full cur is waited for).
//!
//! A reinjection does not move `cur`: it goes to the lowest-SRTT available subflow that has
//! not carried the data, else the lowest-SRTT available one (the kernel's reinjection, as LRF).
//! One packet per decision (the out-of-tree kernel decides per segment).

use super::{
    PathView, SchedConfig, SchedEvent, Scheduler, Selection, SendKind, Snapshot, WaitReason,
    best_available, by_srtt, lowest_srtt,
};
use crate::cc::{CcPhase, RegistryError};
use crate::units::SubflowId;

/// When the switch rule is evaluated (open in the paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchTest {
    WhenExhausted,
    EveryPacket,
}

/// What "cur is congested" means (open in the paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    CwndFull,
    LossState,
}

/// Settings shared by the three sticky schedulers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StickyConfig {
    pub switch_test: SwitchTest,
    pub congestion: Congestion,
}

impl StickyConfig {
    pub fn from_sched_config(cfg: &SchedConfig) -> Result<StickyConfig, RegistryError> {
        let switch_test = match cfg.choice(
            "switch_test",
            &["when_exhausted", "every_packet"],
            "when_exhausted",
        )? {
            "every_packet" => SwitchTest::EveryPacket,
            _ => SwitchTest::WhenExhausted,
        };
        let congestion =
            match cfg.choice("congestion", &["cwnd_full", "loss_state"], "cwnd_full")? {
                "loss_state" => Congestion::LossState,
                _ => Congestion::CwndFull,
            };
        Ok(StickyConfig {
            switch_test,
            congestion,
        })
    }
}

/// The part that differs between GR, TP and TR: may the scheduler leave `cur` for `cand`?
pub trait SwitchRule: Send {
    const NAME: &'static str;
    /// `cur_exhausted`: cur cannot take data now (or is congested), so this is a forced
    /// choice; otherwise (every-packet test) the candidate must be strictly better.
    fn switches(cur: &PathView, cand: &PathView, cur_exhausted: bool) -> bool;
}

/// GR-STY: switch to the candidate whenever cur is exhausted; in the every-packet reading,
/// whenever the candidate has a lower SRTT (greedy for latency).
pub struct Greedy;

impl SwitchRule for Greedy {
    const NAME: &'static str = "gr-sty";
    fn switches(cur: &PathView, cand: &PathView, cur_exhausted: bool) -> bool {
        cur_exhausted || cand.srtt < cur.srtt
    }
}

/// Sticky scheduler with the switch rule `R`.
pub struct Sticky<R: SwitchRule> {
    cfg: StickyConfig,
    cur: Option<SubflowId>,
    rule: std::marker::PhantomData<R>,
}

impl<R: SwitchRule> Sticky<R> {
    pub fn new(cfg: StickyConfig) -> Sticky<R> {
        Sticky {
            cfg,
            cur: None,
            rule: std::marker::PhantomData,
        }
    }

    /// The current path, if one is set.
    pub fn current(&self) -> Option<SubflowId> {
        self.cur
    }

    fn send_on(&self, p: &PathView) -> Selection {
        Selection::send_on(p)
    }

    fn exhausted(&self, cur: &PathView) -> bool {
        match self.cfg.congestion {
            Congestion::CwndFull => !cur.is_available(),
            Congestion::LossState => {
                cur.in_rto_loss || matches!(cur.cc_phase, CcPhase::Recovery | CcPhase::Loss)
            }
        }
    }
}

/// Registry constructor for any rule.
pub fn build_sticky<R: SwitchRule + 'static>(
    cfg: &SchedConfig,
) -> Result<Box<dyn Scheduler>, RegistryError> {
    Ok(Box::new(Sticky::<R>::new(StickyConfig::from_sched_config(
        cfg,
    )?)))
}

/// Registry constructor of GR-STY.
pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    build_sticky::<Greedy>(cfg)
}

impl<R: SwitchRule + 'static> Scheduler for Sticky<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }

    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        let Snapshot { kind, paths, .. } = *snap;
        if let SendKind::Reinject { .. } = kind {
            return best_available(paths, kind, by_srtt)
                .map_or(Selection::None, |p| self.send_on(p));
        }
        let cur = self
            .cur
            .and_then(|id| paths.iter().find(|p| p.id == id && p.established));
        let Some(cur) = cur else {
            // (Re-)initialise to the LRF choice.
            let first = lowest_srtt(paths, |p| p.is_available());
            self.cur = first.map(|p| p.id);
            return first.map_or(Selection::None, |p| self.send_on(p));
        };
        let exhausted = self.exhausted(cur);
        if !exhausted && self.cfg.switch_test == SwitchTest::WhenExhausted {
            return if cur.is_available() {
                self.send_on(cur)
            } else {
                // loss_state reading: a cwnd-full cur that is not in a loss state is waited for.
                Selection::Wait {
                    reason: WaitReason::CurrentPathBusy,
                }
            };
        }
        let cand = lowest_srtt(paths, |p| p.id != cur.id && p.is_available());
        match cand {
            Some(cand) if R::switches(cur, cand, exhausted) => {
                self.cur = Some(cand.id);
                self.send_on(cand)
            }
            _ if cur.is_available() => self.send_on(cur),
            Some(_) => Selection::Wait {
                reason: WaitReason::CurrentPathBusy,
            },
            None => Selection::None,
        }
    }

    fn on_event(&mut self, ev: &SchedEvent) {
        if let SchedEvent::PathDown { path, .. } = *ev
            && self.cur == Some(path)
        {
            self.cur = None;
        }
    }

    /// `current_path`: the id of `cur`, null (NaN) while unset.
    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        vec![("current_path", self.cur.map_or(f64::NAN, |c| c.0 as f64))]
    }
}

/// Shared test vectors for the three sticky schedulers (worked out by hand from the rules above).
#[cfg(test)]
pub(crate) mod sticky_tests {
    use super::*;
    use crate::sched::ConnView;
    use crate::sched::test_path;
    use crate::units::Instant;

    /// cur = Wi-Fi (10 pkts, 40 ms → 250 pkt/s) and full; LTE (30 pkts, 80 ms → 375 pkt/s).
    pub fn b7_decision(s: &mut dyn Scheduler) -> Selection {
        let conn = ConnView::default();
        let wifi = test_path(0, 40, 10, 0);
        let lte = test_path(1, 80, 30, 0);
        // First decision: LRF choice = Wi-Fi.
        let first = s.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn,
            &[wifi.clone(), lte.clone()],
        ));
        assert_eq!(crate::sched::sent_on(first), Some(0), "{first:?}");
        // While Wi-Fi has room, stay on it even though LTE is free.
        let wifi_half = test_path(0, 40, 10, 5);
        let stay = s.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn,
            &[wifi_half, lte.clone()],
        ));
        assert_eq!(crate::sched::sent_on(stay), Some(0), "{stay:?}");
        let wifi_full = test_path(0, 40, 10, 10);
        s.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn,
            &[wifi_full, lte],
        ))
    }

    pub use crate::sched::sent_on;
}

#[cfg(test)]
mod tests {
    use super::sticky_tests::{b7_decision, sent_on};
    use super::*;
    use crate::sched::{ConnView, test_path};
    use crate::units::{Instant, PathMask};

    fn gr(opts: &[(&str, &str)]) -> Box<dyn Scheduler> {
        let mut cfg = SchedConfig::default();
        for (k, v) in opts {
            cfg.options.insert(k.to_string(), v.to_string());
        }
        build(&cfg).unwrap()
    }

    #[test]
    fn b7_gr_sty_switches_to_lte_when_wifi_is_full_and_stays_there() {
        let mut s = gr(&[]);
        assert_eq!(sent_on(b7_decision(s.as_mut())), Some(1));
        // Sticky: LTE stays cur although Wi-Fi (lower SRTT) has room again.
        let conn = ConnView::default();
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 30, 3)];
        assert_eq!(
            sent_on(s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths))),
            Some(1)
        );
    }

    #[test]
    fn nothing_available_is_none_not_a_wait_and_path_down_reinitialises() {
        let mut s = Sticky::<Greedy>::new(
            StickyConfig::from_sched_config(&SchedConfig::default()).unwrap(),
        );
        let conn = ConnView::default();
        let full = [test_path(0, 40, 10, 10), test_path(1, 80, 10, 10)];
        assert_eq!(
            s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &full)),
            Selection::None
        );
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 10, 0)];
        s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths));
        assert_eq!(s.current(), Some(SubflowId(0)));
        s.on_event(&SchedEvent::PathDown {
            path: SubflowId(0),
            now: Instant::ZERO,
        });
        assert_eq!(s.current(), None);
        let only_lte = [test_path(1, 80, 10, 0)];
        s.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn,
            &only_lte,
        ));
        assert_eq!(s.current(), Some(SubflowId(1)));
    }

    #[test]
    fn every_packet_reading_moves_gr_to_a_lower_srtt_path_while_cur_has_room() {
        let conn = ConnView::default();
        let mut s = gr(&[("switch_test", "every_packet")]);
        let lte_first = [test_path(0, 40, 10, 10), test_path(1, 80, 30, 0)];
        assert_eq!(
            sent_on(s.select(&Snapshot::new(
                Instant::ZERO,
                SendKind::Fresh,
                conn,
                &lte_first
            ))),
            Some(1)
        );
        let both_free = [test_path(0, 40, 10, 0), test_path(1, 80, 30, 0)];
        assert_eq!(
            sent_on(s.select(&Snapshot::new(
                Instant::ZERO,
                SendKind::Fresh,
                conn,
                &both_free
            ))),
            Some(0)
        );
    }

    #[test]
    fn loss_state_reading_waits_for_a_full_cur_and_leaves_it_in_recovery() {
        let conn = ConnView::default();
        let mut s = gr(&[("congestion", "loss_state")]);
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 30, 0)];
        s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths));
        let wifi_full = [test_path(0, 40, 10, 10), test_path(1, 80, 30, 0)];
        assert_eq!(
            s.select(&Snapshot::new(
                Instant::ZERO,
                SendKind::Fresh,
                conn,
                &wifi_full
            )),
            Selection::Wait {
                reason: WaitReason::CurrentPathBusy
            }
        );
        let mut wifi_recovery = test_path(0, 40, 10, 2);
        wifi_recovery.cc_phase = CcPhase::Recovery;
        let paths = [wifi_recovery, test_path(1, 80, 30, 0)];
        assert_eq!(
            sent_on(s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths))),
            Some(1)
        );
    }

    #[test]
    fn bad_switch_options_name_the_valid_values() {
        let mut cfg = SchedConfig::default();
        cfg.options.insert("congestion".into(), "rto".into());
        let err = build(&cfg).err().unwrap().to_string();
        assert!(
            err.contains("congestion") && err.contains("cwnd_full|loss_state"),
            "{err}"
        );
    }

    #[test]
    fn reinjection_does_not_move_cur() {
        let conn = ConnView::default();
        let mut s = gr(&[]);
        let paths = [test_path(0, 40, 10, 0), test_path(1, 80, 30, 0)];
        s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths));
        let on_wifi = SendKind::Reinject {
            already_on: PathMask::single(SubflowId(0)),
        };
        assert_eq!(
            sent_on(s.select(&Snapshot::new(Instant::ZERO, on_wifi, conn, &paths))),
            Some(1)
        );
        assert_eq!(
            sent_on(s.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths))),
            Some(0)
        );
    }
}
