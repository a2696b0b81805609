//! Shared by the simulator tests (`sim_basic.rs`, `sim_matrix.rs`, `sim_loss_recovery.rs`,
//! `sim_sched_invariants.rs`, `sched_behaviour.rs`, `sched_scenarios.rs`, `sim_player.rs`):
//! paths with the same link in both directions, a connection config for one CC and
//! scheduler, and a scheduler wrapper that observes every decision and otherwise delegates.
#![allow(dead_code)]

use std::time::Duration;

use mptransport::Bandwidth;
use mptransport::connection::Config;
use mptransport::sched::{RcvBufAction, SchedEvent, Scheduler, Selection, Snapshot, default_oot};
use mptransport::sim::{LinkSpec, SimPath};
use mptransport::units::PathMask;

/// A path named `name` with `link` in both directions.
pub fn symmetric(name: &str, link: LinkSpec) -> SimPath {
    SimPath {
        name: name.into(),
        up: link,
        down: link,
    }
}

/// A path of `mbps` each way, `one_way_ms` delay, random loss `loss` and a one-BDP drop-tail
/// queue ([`LinkSpec::bdp_queue`]).
pub fn bdp_path(name: &str, mbps: f64, one_way_ms: u64, loss: f64) -> SimPath {
    symmetric(
        name,
        LinkSpec::bdp_queue(
            Bandwidth::from_mbps(mbps),
            Duration::from_millis(one_way_ms),
            loss,
        ),
    )
}

/// The fixed receive window the figures of these tests (and the algorithm pages that quote
/// them) were measured with, before the autotuned kernel-like buffer became the default.
pub const FIXED_RECV_WINDOW_BYTES: u64 = 16 << 20;

/// The default connection config with congestion control `cc` and scheduler `sched`, and a
/// fixed 16 MiB receive window ([`FIXED_RECV_WINDOW_BYTES`]). Use it where a figure or bound
/// was calibrated on that window, and say so; behaviour that must hold whatever the window
/// runs under [`cfg_each_window`]. `tests/recv_buffer_hol.rs` tests the autotuned buffer
/// against the fixed one.
pub fn cfg(cc: &str, sched: &str) -> Config {
    Config {
        recv_window_bytes: Some(FIXED_RECV_WINDOW_BYTES),
        ..cfg_autotuned(cc, sched)
    }
}

/// The product's default config: the receive buffer autotuned as Linux DRS does
/// (`recv_window_bytes: None`; `tcp_rmem` 4096 / 131072 / 6291456).
pub fn cfg_autotuned(cc: &str, sched: &str) -> Config {
    Config {
        cc: cc.into(),
        sched: sched.into(),
        ..Config::default()
    }
}

/// The config under each receive window a behaviour test must hold with: the default
/// (autotuned) buffer first, then the fixed 16 MiB; with a label for messages.
pub fn cfg_each_window(cc: &str, sched: &str) -> [(&'static str, Config); 2] {
    [
        ("autotuned window", cfg_autotuned(cc, sched)),
        ("16 MiB window", cfg(cc, sched)),
    ]
}

/// A scheduler that runs `after_select` after each decision the connection asks `inner` for
/// (with the snapshot, the decision and `inner`, whose `trace_state` then holds its state
/// after that decision) and otherwise behaves as `inner`: every trait method is delegated,
/// including those with a default, which `inner` may override. The pick that `inner`'s
/// `opportunistic_retransmit` makes through its own `select` is not observed: it sends no
/// fresh data.
pub fn observe<F>(inner: Box<dyn Scheduler>, after_select: F) -> Box<dyn Scheduler>
where
    F: FnMut(&Snapshot<'_>, &Selection, &dyn Scheduler) + Send + 'static,
{
    Box::new(Observed {
        inner,
        after_select,
    })
}

struct Observed<F> {
    inner: Box<dyn Scheduler>,
    after_select: F,
}

impl<F> Scheduler for Observed<F>
where
    F: FnMut(&Snapshot<'_>, &Selection, &dyn Scheduler) + Send,
{
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        let sel = self.inner.select(snap);
        (self.after_select)(snap, &sel, self.inner.as_ref());
        sel
    }
    fn on_event(&mut self, ev: &SchedEvent) {
        self.inner.on_event(ev)
    }
    fn opportunistic_retransmit(
        &mut self,
        snap: &Snapshot<'_>,
        head_carriers: PathMask,
    ) -> RcvBufAction {
        self.inner.opportunistic_retransmit(snap, head_carriers)
    }
    fn rcv_buf_optimization(&mut self) -> Option<&mut default_oot::Opportunistic> {
        self.inner.rcv_buf_optimization()
    }
    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        self.inner.trace_state()
    }
}
