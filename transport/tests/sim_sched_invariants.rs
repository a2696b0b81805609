//! Scheduler invariants checked inside real simulated transfers: the minRTT family (lrf,
//! gr-sty, tp-sty, tr-sty) never assigns fresh data to a subflow whose inflight has reached its
//! cwnd, and the bytes the core then assigns never put a chunk beyond the subflow's free
//! window (cwnd − inflight − queued, in wire bytes). A wrapper around the registered scheduler
//! checks every decision against the view it was given; the bytes assigned are read from the
//! next view of the same instant (the core decides again before sending anything).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
mod sim_harness;

use mptransport::Instant;
use mptransport::sched::{self, SchedConfig, SchedEvent, Scheduler, Selection, SendKind, Snapshot};
use mptransport::sim::{Pair, TransferSpec, run_transfer};
use sim_harness::{bdp_path, cfg};

/// Largest datagram (the default `max_datagram_bytes`): one chunk's wire bytes at most.
const MAX_DATAGRAM: u64 = 1472;

struct Checked {
    inner: Box<dyn Scheduler>,
    picks: Arc<AtomicU64>,
    violations: Arc<AtomicU64>,
    /// Decisions whose assigned bytes could be read back, and those that overshot.
    byte_checks: Arc<AtomicU64>,
    overshoots: Arc<AtomicU64>,
    /// The previous fresh decision: (time, path, free bytes, queued bytes, inflight bytes).
    last: Option<(Instant, usize, u64, u64, u64)>,
}

impl Scheduler for Checked {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        let Snapshot {
            now, kind, paths, ..
        } = *snap;
        if let Some((at, i, free, queued, inflight)) = self.last.take()
            && at == now
            && let Some(v) = paths.get(i)
            && v.inflight_bytes == inflight
            && v.queued_bytes >= queued
        {
            let assigned = v.queued_bytes - queued;
            self.byte_checks.fetch_add(1, Ordering::Relaxed);
            // Whole chunks; the last one may end beyond the window but must start inside it.
            if assigned == 0 || assigned.saturating_sub(MAX_DATAGRAM) >= free {
                self.overshoots.fetch_add(1, Ordering::Relaxed);
            }
        }
        let sel = self.inner.select(snap);
        if let (Selection::Send { path, .. }, SendKind::Fresh) = (sel, kind) {
            self.picks.fetch_add(1, Ordering::Relaxed);
            let v = paths
                .iter()
                .find(|p| p.id == path)
                .expect("picked a listed path");
            if v.inflight_bytes >= v.cwnd_bytes {
                self.violations.fetch_add(1, Ordering::Relaxed);
            }
            let i = paths.iter().position(|p| p.id == path).expect("listed");
            self.last = Some((now, i, v.free_bytes(), v.queued_bytes, v.inflight_bytes));
        }
        sel
    }
    fn on_event(&mut self, ev: &SchedEvent) {
        self.inner.on_event(ev)
    }
}

#[test]
fn min_rtt_family_never_picks_a_cwnd_full_subflow() {
    let paths = [
        bdp_path("wifi", 20.0, 20, 0.01),
        bdp_path("lte", 15.0, 40, 0.0),
    ];
    let family = ["lrf", "gr-sty", "tp-sty", "tr-sty"];
    let mut checked = 0;
    for name in sched::names().into_iter().filter(|n| family.contains(n)) {
        for cc in ["reno", "bbr"]
            .into_iter()
            .filter(|c| mptransport::cc::names().contains(c))
        {
            let cfg = cfg(cc, name);
            let mut pair = Pair::new(cfg.clone(), cfg, &paths, 5);
            let picks = Arc::new(AtomicU64::new(0));
            let violations = Arc::new(AtomicU64::new(0));
            let byte_checks = Arc::new(AtomicU64::new(0));
            let overshoots = Arc::new(AtomicU64::new(0));
            let inner = sched::build(name, &SchedConfig::default()).unwrap();
            pair.client.replace_scheduler(Box::new(Checked {
                inner,
                picks: picks.clone(),
                violations: violations.clone(),
                byte_checks: byte_checks.clone(),
                overshoots: overshoots.clone(),
                last: None,
            }));
            // The client sends the bulk so the wrapped scheduler decides every placement.
            let spec = TransferSpec {
                request_bytes: 5_000_000,
                response_bytes: 1000,
                ..TransferSpec::default()
            };
            let r = run_transfer(&mut pair, &spec);
            assert!(r.is_byte_exact_and_clean(), "{name}/{cc}: {:?}", r.outcome);
            assert!(
                picks.load(Ordering::Relaxed) > 10,
                "{name}/{cc}: too few decisions"
            );
            assert_eq!(
                violations.load(Ordering::Relaxed),
                0,
                "{name}/{cc} picked a cwnd-full subflow"
            );
            let checks = byte_checks.load(Ordering::Relaxed);
            assert!(
                checks * 2 > picks.load(Ordering::Relaxed),
                "{name}/{cc}: only {checks} decisions could be read back"
            );
            assert_eq!(
                overshoots.load(Ordering::Relaxed),
                0,
                "{name}/{cc}: a chunk was assigned beyond the free window"
            );
            checked += 1;
        }
    }
    assert!(checked >= 2, "lrf must be registered");
}
