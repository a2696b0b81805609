//! Table I of "Coupled BBR" (seed 000: Coupled BBR + AR&P) in the simulator: one 2-subflow
//! MPTCP connection over two disjoint 100 Mbit/s bottlenecks of 25 ms one way (RTT 50 ms),
//! random loss 0.01 % on bottleneck 1 and 0.1 % on bottleneck 2, and 2 single-path background
//! flows on each bottleneck of the same CC family (BBR for BBR and Coupled BBR, CUBIC for
//! CUBIC, Reno for LIA/OLIA/BALIA). Drop-tail queue 0.7 BDP (≈ 437 kB, the paper does not give
//! it: its loss-based RTTs of ≈ 85 ms suggest ≥ 35 ms of queue). Prints one JSON line per CC:
//! MPTCP goodput, per-subflow rates, mean background flow rate per bottleneck, utilisation
//! (MPTCP + all background) / 200.
//!
//! A benchmark, not a CI test: `cargo test --release --test seed000_table1 -- --ignored
//! --nocapture` (`TABLE1_SIM_S` sets the simulated seconds, default 40).
//! `./run_trials.sh --reproduce seed000` runs it and compares with the paper
//! (docs/reproductions/seed000.md).

mod seed_cc_common;

use std::time::Duration;

use mptransport::sim::Net;
use seed_cc_common::{bottleneck, cfg, env_secs, route, run_rates};

fn table_row(mp_cc: &str, background_cc: &str, seed: u64) -> serde_json::Value {
    let secs = env_secs("TABLE1_SIM_S", 40);
    let mut net = Net::new(seed);
    let b1 = bottleneck(&mut net, 100.0, 25.0, 0.7, 1e-4);
    let b2 = bottleneck(&mut net, 100.0, 25.0, 0.7, 1e-3);
    let (r1, r2) = (
        route(&mut net, "sf1", b1, 25.0),
        route(&mut net, "sf2", b2, 25.0),
    );
    net.add_flow(cfg(mp_cc, &[]), cfg(mp_cc, &[]), &[r1, r2]);
    for (i, b) in [b1, b1, b2, b2].into_iter().enumerate() {
        let r = route(&mut net, &format!("bg{i}"), b, 25.0);
        net.add_flow(cfg(background_cc, &[]), cfg(background_cc, &[]), &[r]);
    }
    let r = run_rates(
        &mut net,
        Duration::from_secs(secs),
        Duration::from_secs(10.min(secs / 3)),
        |_, _| {},
    );
    let bg = |i: usize, j: usize| (r[i].goodput_mbps + r[j].goodput_mbps) / 2.0;
    let total: f64 = r.iter().map(|f| f.goodput_mbps).sum();
    serde_json::json!({
        "cc": mp_cc, "background_cc": background_cc, "seed": seed, "sim_s": secs,
        "mptcp_mbps": r[0].goodput_mbps,
        "sf1_mbps": r[0].path("sf1").mbps, "sf2_mbps": r[0].path("sf2").mbps,
        "tcp_per_flow_p1_mbps": bg(1, 2), "tcp_per_flow_p2_mbps": bg(3, 4),
        "utilisation": total / 200.0,
    })
}

#[test]
#[ignore = "benchmark: 5 flows on two 100 Mbit/s bottlenecks per CC; run with --ignored"]
fn table1_every_cc() {
    for (mp, bg) in [
        ("coupled-bbr", "bbr"),
        ("bbr", "bbr"),
        ("cubic", "cubic"),
        ("lia", "reno"),
        ("olia", "reno"),
        ("balia", "reno"),
    ] {
        let row = table_row(mp, bg, 1);
        println!("seed000_table1 {row}");
        mptransport::report::emit("seed000_table1", &row);
        // Every flow moved data and the links were not over-counted.
        let u = row["utilisation"].as_f64().unwrap_or(0.0);
        assert!(u > 0.05 && u <= 1.02, "{mp}: utilisation {u}");
    }
}
