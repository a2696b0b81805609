//! BBR and CUBIC over the simulator's 100 Mbit/s, 25 ms one-way path (moved here from the
//! cc/ unit tests, so the congestion controls' own tests never build the simulator).

use std::time::Duration;

use mptransport::connection::Config;
use mptransport::sim::{LinkSpec, Pair, SimPath, TransferSpec, run_transfer};
use mptransport::units::Bandwidth;

/// 50 MB over the simulated 100 Mbit/s, 25 ms one-way path with a one-BDP queue; returns the
/// response goodput in Mbit/s.
fn sim_goodput_mbps(cc: &str, loss: f64) -> f64 {
    let down = LinkSpec::bdp_queue(Bandwidth::from_mbps(100.0), Duration::from_millis(25), loss);
    let up = LinkSpec { loss: 0.0, ..down };
    let paths = [SimPath {
        name: "wifi".into(),
        up,
        down,
    }];
    let cfg = Config {
        cc: cc.into(),
        sched: "lrf".into(),
        ..Config::default()
    };
    let mut pair = Pair::new(cfg.clone(), cfg, &paths, 3);
    let spec = TransferSpec {
        response_bytes: 50_000_000,
        max_time: Duration::from_secs(600),
        ..TransferSpec::default()
    };
    let r = run_transfer(&mut pair, &spec);
    assert!(r.is_byte_exact_and_clean(), "{cc}: {r:?}");
    r.response_goodput_bps() / 1e6
}

#[test]
fn bbr_keeps_85_percent_of_100_mbps_with_0_1_percent_loss_in_the_simulator() {
    // Target: "with 0.1 % random loss, bbr keeps >= 85 % of the link rate"; the goodput
    // includes STARTUP and counts payload only (1400 B per 1500 B datagram at most).
    let lossy = sim_goodput_mbps("bbr", 0.001);
    let clean = sim_goodput_mbps("bbr", 0.0);
    println!("bbr 100 Mbit/s 25 ms: {clean:.2} Mbit/s clean, {lossy:.2} with 0.1 % loss");
    assert!(
        lossy >= 85.0 && clean >= 85.0,
        "{clean:.2} / {lossy:.2} Mbit/s"
    );
}

#[test]
fn cubic_fills_a_100_mbps_path_in_the_simulator() {
    let goodput = sim_goodput_mbps("cubic", 0.0);
    println!("cubic 100 Mbit/s 25 ms: {goodput:.2} Mbit/s");
    assert!(goodput >= 85.0, "{goodput:.2} Mbit/s");
}
