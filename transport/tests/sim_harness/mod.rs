//! Shared by the simulator tests (`sim_basic.rs`, `sim_matrix.rs`, `sim_loss_recovery.rs`,
//! `sim_sched_invariants.rs`, `sched_behaviour.rs`, `sched_scenarios.rs`): paths with the same
//! link in both directions, and a connection config for one CC and scheduler.
#![allow(dead_code)]

use std::time::Duration;

use mptransport::Bandwidth;
use mptransport::connection::Config;
use mptransport::sim::{LinkSpec, SimPath};

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

/// The default connection config with congestion control `cc` and scheduler `sched`.
pub fn cfg(cc: &str, sched: &str) -> Config {
    Config {
        cc: cc.into(),
        sched: sched.into(),
        ..Config::default()
    }
}
