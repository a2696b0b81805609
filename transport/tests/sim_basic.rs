//! Byte-exact transfers through the simulator (quick cases).

use std::time::Duration;

use mptransport::Bandwidth;
use mptransport::connection::Config;
use mptransport::sim::{LinkSpec, Pair, SimPath, TransferSpec, run_transfer};

fn path(name: &str, mbps: f64, delay_ms: u64, loss: f64) -> SimPath {
    let spec = LinkSpec::bdp_queue(
        Bandwidth::from_mbps(mbps),
        Duration::from_millis(delay_ms),
        loss,
    );
    SimPath {
        name: name.into(),
        up: spec,
        down: spec,
    }
}

fn cfg(cc: &str, sched: &str) -> Config {
    Config {
        cc: cc.into(),
        sched: sched.into(),
        ..Config::default()
    }
}

#[test]
fn one_path_no_loss_1mb() {
    let mut pair = Pair::new(
        cfg("reno", "lrf"),
        cfg("reno", "lrf"),
        &[path("wifi", 20.0, 10, 0.0)],
        1,
    );
    let r = run_transfer(
        &mut pair,
        &TransferSpec {
            response_bytes: 1_000_000,
            ..Default::default()
        },
    );
    println!(
        "{:?} goodput {:.2} Mbit/s",
        r.outcome,
        r.response_goodput_bps() / 1e6
    );
    assert!(r.is_byte_exact_and_clean(), "{r:?}");
}

#[test]
fn two_paths_lossy_2mb() {
    let paths = [path("wifi", 20.0, 20, 0.01), path("lte", 20.0, 40, 0.02)];
    let mut pair = Pair::new(cfg("reno", "lrf"), cfg("reno", "lrf"), &paths, 3);
    let r = run_transfer(
        &mut pair,
        &TransferSpec {
            response_bytes: 2_000_000,
            ..Default::default()
        },
    );
    println!(
        "{:?} goodput {:.2} Mbit/s steps {}",
        r.outcome,
        r.response_goodput_bps() / 1e6,
        r.steps
    );
    assert!(r.is_byte_exact_and_clean(), "{r:?}");
}
