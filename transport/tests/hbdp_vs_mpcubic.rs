//! The HBDP scheme (Chung & Oh, "An Efficient MPTCP-Based Congestion Control Scheme for HBDP
//! Networks") against MPCubic on a high-BDP pair of disjoint paths: 500 Mbit/s × 100 ms RTT
//! and 100 Mbit/s × 20 ms RTT, drop-tail queues of one BDP, 0.01 % random loss on the data
//! direction. Reports goodput, per-path rates, packets lost (as the sender declared them)
//! and the bottleneck queue drops (congestion losses, as opposed to the random ones).
//!
//! The end-state extras it prints are one sample; `hbdp_rho.rs` follows ρ over whole runs.
//!
//! This is a benchmark, not a CI test (a 500 Mbit/s minute takes a while):
//! `cargo test --release --test hbdp_vs_mpcubic -- --ignored --nocapture`
//! (`HBDP_SIM_S` sets the simulated seconds, default 60). Figures: docs/algorithms/hbdp.md.

mod seed_cc_common;

use mptransport::sim::Net;
use seed_cc_common::{
    HIGH_BDP_LONG, HIGH_BDP_SHORT, high_bdp_pair, high_bdp_run_length, run_rates,
};

struct Outcome {
    goodput: f64,
    fast: f64,
    slow: f64,
    lost: u64,
    rtos: u64,
    queue_drops: u64,
    random_drops: u64,
}

fn run(cc: &str, opts: &[(&str, &str)], seed: u64) -> Outcome {
    let (secs, warmup) = high_bdp_run_length();
    let mut net = Net::new(seed);
    let (fast, slow) = high_bdp_pair(&mut net, cc, opts);
    let r = run_rates(&mut net, secs, warmup, |_, _| {});
    let (cf, cs) = (net.link_counters(fast), net.link_counters(slow));
    if let Some(server) = net.flows[0].server.as_ref() {
        for st in server.subflow_stats() {
            let extra: Vec<String> = st
                .cc_snapshot
                .extra
                .iter()
                .map(|(k, v)| format!("{k}={v:.3}"))
                .collect();
            println!(
                "hbdp_vs_mpcubic {cc} end state {}: cwnd {} pkts, srtt {:.1} ms, {}",
                st.name,
                st.cwnd_bytes / 1472,
                st.srtt.as_secs_f64() * 1e3,
                extra.join(" ")
            );
        }
    }
    let o = Outcome {
        goodput: r[0].goodput_mbps,
        fast: r[0].path(HIGH_BDP_LONG).mbps,
        slow: r[0].path(HIGH_BDP_SHORT).mbps,
        lost: r[0].lost_pkts(),
        rtos: r[0].paths.iter().map(|p| p.rtos).sum(),
        queue_drops: cf.drops_queue + cs.drops_queue,
        random_drops: cf.drops_random + cs.drops_random,
    };
    println!(
        "hbdp_vs_mpcubic {cc} {opts:?}: goodput {:.1} Mbit/s (500x100 {:.1}, 100x20 {:.1}); lost pkts {} (after warm-up), RTOs {}; whole run: queue drops {}, random drops {}",
        o.goodput, o.fast, o.slow, o.lost, o.rtos, o.queue_drops, o.random_drops
    );
    mptransport::report::emit(
        "hbdp_vs_mpcubic",
        &serde_json::json!({"cc": cc, "opts": format!("{opts:?}"), "sim_s": secs.as_secs(), "goodput_mbps": o.goodput, "p500x100_mbps": o.fast, "p100x20_mbps": o.slow, "lost_pkts": o.lost, "rtos": o.rtos, "queue_drops": o.queue_drops, "random_drops": o.random_drops}),
    );
    o
}

#[test]
#[ignore = "benchmark: 500 Mbit/s for a simulated minute; run with --ignored"]
fn hbdp_against_mpcubic_on_a_high_bdp_pair() {
    let m = run("mpcubic", &[], 9);
    let h = run("hbdp", &[], 9);
    let hp = run("hbdp", &[("delta_form", "printed")], 9);
    let hf = run("hbdp", &[("fhat_rule", "off")], 9);
    println!(
        "hbdp_vs_mpcubic goodput hbdp/mpcubic = {:.3}, printed δ {:.3}, no F̂ rule {:.3}",
        h.goodput / m.goodput,
        hp.goodput / m.goodput,
        hf.goodput / m.goodput
    );
    // Both must move data on both paths; the comparison itself is reported, not asserted.
    for o in [&m, &h, &hp, &hf] {
        assert!(o.fast > 1.0 && o.slow > 1.0);
    }
}
