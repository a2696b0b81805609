//! Scheduler invariants checked inside real simulated transfers (ALGORITHMS.md "Checks for
//! any run"): the minRTT family (lrf, gr-sty, tp-sty, tr-sty) never assigns fresh data to a
//! subflow whose inflight has reached its cwnd. A wrapper around the registered scheduler
//! checks every decision against the view it was given.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mptransport::connection::Config;
use mptransport::sched::{
    self, ConnView, PathView, SchedConfig, SchedEvent, Scheduler, Selection, SendKind,
};
use mptransport::sim::{LinkSpec, Pair, SimPath, TransferSpec, run_transfer};
use mptransport::{Bandwidth, Instant};

struct Checked {
    inner: Box<dyn Scheduler>,
    picks: Arc<AtomicU64>,
    violations: Arc<AtomicU64>,
}

impl Scheduler for Checked {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn select(
        &mut self,
        now: Instant,
        kind: SendKind,
        conn: &ConnView,
        paths: &[PathView],
    ) -> Selection {
        let sel = self.inner.select(now, kind, conn, paths);
        if let (Selection::Send { path, .. }, SendKind::Fresh) = (sel, kind) {
            self.picks.fetch_add(1, Ordering::Relaxed);
            let v = paths
                .iter()
                .find(|p| p.id == path)
                .expect("picked a listed path");
            if v.inflight_bytes >= v.cwnd_bytes {
                self.violations.fetch_add(1, Ordering::Relaxed);
            }
        }
        sel
    }
    fn on_event(&mut self, ev: &SchedEvent) {
        self.inner.on_event(ev)
    }
}

#[test]
fn min_rtt_family_never_picks_a_cwnd_full_subflow() {
    let wifi = LinkSpec::bdp_queue(Bandwidth::from_mbps(20.0), Duration::from_millis(20), 0.01);
    let lte = LinkSpec::bdp_queue(Bandwidth::from_mbps(15.0), Duration::from_millis(40), 0.0);
    let paths = [
        SimPath {
            name: "wifi".into(),
            up: wifi,
            down: wifi,
        },
        SimPath {
            name: "lte".into(),
            up: lte,
            down: lte,
        },
    ];
    let family = ["lrf", "gr-sty", "tp-sty", "tr-sty"];
    let mut checked = 0;
    for name in sched::names().into_iter().filter(|n| family.contains(n)) {
        for cc in ["reno", "bbr"]
            .into_iter()
            .filter(|c| mptransport::cc::names().contains(c))
        {
            let cfg = Config {
                cc: cc.into(),
                sched: name.into(),
                ..Config::default()
            };
            let mut pair = Pair::new(cfg.clone(), cfg, &paths, 5);
            let picks = Arc::new(AtomicU64::new(0));
            let violations = Arc::new(AtomicU64::new(0));
            let inner = sched::build(name, &SchedConfig::default()).unwrap();
            pair.client.replace_scheduler(Box::new(Checked {
                inner,
                picks: picks.clone(),
                violations: violations.clone(),
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
            checked += 1;
        }
    }
    assert!(checked >= 2, "lrf must be registered");
}
