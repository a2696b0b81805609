//! HBDP's friendliness with a regular CUBIC flow at a common bottleneck (Chung & Oh, "An
//! Efficient MPTCP-Based Congestion Control Scheme for HBDP Networks", Fig. 11): one
//! two-subflow connection whose subflows both cross one drop-tail bottleneck, and one
//! single-path CUBIC connection across the same link (`sim::shared_bottleneck`: one-BDP
//! queue, ACKs over uncongested links with a random 0–1 ms, so that the seeds differ).
//!
//! The paper's Fig. 2(a) gives no rate or delay; here 50 Mbit/s and 100 ms RTT (a BDP of
//! about 430 packets), 40 s simulated, rates measured over 20–40 s ("after 20 seconds, the
//! proposed scheme keeps its congestion window size below that of regular Cubic TCP").
//!
//! A benchmark read by `./run_trials.sh --reproduce seed004` (its verdict is computed there
//! over the seeds): `cargo test --release --test hbdp_friendliness -- --ignored --nocapture`
//! (`HBDP_FRIEND_SEEDS` comma-separated seeds, default 1,2,3; `HBDP_FRIEND_CCS` the
//! multipath CCs, default hbdp).

mod seed_cc_common;

use std::time::Duration;

use mptransport::sim::shared_bottleneck;
use mptransport::units::Bandwidth;
use seed_cc_common::{cfg, run_rates};

const RATE_MBPS: f64 = 50.0;
const RTT_MS: u64 = 100;
const SIM_S: u64 = 40;
const MEASURE_FROM_S: u64 = 20;

fn list(var: &str, default: &str) -> Vec<String> {
    std::env::var(var)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// (multipath goodput, CUBIC goodput) over the measured window, Mbit/s.
fn run(mp_cc: &str, seed: u64) -> (f64, f64) {
    let mut net = shared_bottleneck(
        cfg(mp_cc, &[]),
        2,
        cfg("cubic", &[]),
        Bandwidth::from_mbps(RATE_MBPS),
        Duration::from_millis(RTT_MS),
        seed,
    );
    let r = run_rates(
        &mut net,
        Duration::from_secs(SIM_S),
        Duration::from_secs(MEASURE_FROM_S),
        |_, _| {},
    );
    (r[0].goodput_mbps, r[1].goodput_mbps)
}

#[test]
#[ignore = "benchmark read by --reproduce seed004; run with --ignored"]
fn hbdp_shares_a_common_bottleneck_with_a_cubic_flow() {
    for cc in list("HBDP_FRIEND_CCS", "hbdp") {
        for seed in list("HBDP_FRIEND_SEEDS", "1,2,3") {
            let seed: u64 = seed.parse().expect("HBDP_FRIEND_SEEDS: integers");
            let (mp, cubic) = run(&cc, seed);
            println!(
                "hbdp_friendliness {cc} seed {seed}: multipath {mp:.1} Mbit/s, cubic {cubic:.1} Mbit/s over {MEASURE_FROM_S}-{SIM_S} s"
            );
            mptransport::report::emit(
                "hbdp_friendliness",
                &serde_json::json!({"cc": cc, "seed": seed, "rate_mbps": RATE_MBPS,
                    "rtt_ms": RTT_MS, "sim_s": SIM_S, "measure_from_s": MEASURE_FROM_S,
                    "mp_mbps": mp, "cubic_mbps": cubic}),
            );
            // Both flows move data; the comparison itself is the page's verdict.
            assert!(
                mp > 0.5 && cubic > 0.5,
                "{cc} seed {seed}: {mp:.1} / {cubic:.1}"
            );
        }
    }
}
