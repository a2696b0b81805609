//! Coupled BBR (Han et al., "Leveraging Coupled BBR and Adaptive Packet Scheduling to Boost
//! MPTCP", IEEE TWC 2021) in the simulator:
//! * two disjoint paths of 60 and 20 Mbit/s (50 ms RTT, one-BDP drop-tail queues): the
//!   per-subflow mean rates are within 10 % of β_i·BW_i = (54, 6) Mbit/s, sum 60;
//! * one shared 100 Mbit/s bottleneck (50 ms RTT) with one single-path BBR flow: the
//!   two-subflow Coupled BBR connection gets ≤ 1.3× the single flow's goodput, uncoupled
//!   `bbr` (one BBR per subflow) more than that.
//!
//! Rates are of acknowledged datagram bytes; a link's 28 bytes of IP/UDP header per packet
//! are not in them, so a saturated 60 Mbit/s link reads 60 × 1472/1500 = 58.9 Mbit/s and the
//! predictions are scaled by the same factor.
//! Figures: `cargo test --release --test coupled_bbr_sim -- --nocapture`
//! (docs/algorithms/coupled-bbr.md).

mod seed_cc_common;

use std::time::Duration;

use mptransport::sim::{Net, run_bulk, shared_bottleneck};
use mptransport::units::Bandwidth;
use seed_cc_common::{bottleneck, cfg, route, run_rates, within};

/// Payload share of a datagram on the wire (1472 of 1500 bytes).
const PAYLOAD: f64 = 1472.0 / 1500.0;

fn disjoint(cc: &str, seed: u64) -> (f64, f64) {
    let mut net = Net::new(seed);
    let a = bottleneck(&mut net, 60.0, 25.0, 1.0, 0.0);
    let b = bottleneck(&mut net, 20.0, 25.0, 1.0, 0.0);
    let ra = route(&mut net, "p60", a, 25.0);
    let rb = route(&mut net, "p20", b, 25.0);
    net.add_flow(cfg(cc, &[]), cfg(cc, &[]), &[ra, rb]);
    let r = run_rates(
        &mut net,
        Duration::from_secs(40),
        Duration::from_secs(10),
        |_, _| {},
    );
    let (x1, x2) = (r[0].path("p60").mbps, r[0].path("p20").mbps);
    println!(
        "coupled_bbr_sim disjoint 60+20 {cc}: p60 {x1:.2} p20 {x2:.2} sum {:.2} Mbit/s (goodput {:.2})",
        x1 + x2,
        r[0].goodput_mbps
    );
    mptransport::report::emit(
        "coupled_bbr_disjoint",
        &serde_json::json!({"cc": cc, "p60_mbps": x1, "p20_mbps": x2, "goodput_mbps": r[0].goodput_mbps}),
    );
    (x1, x2)
}

#[test]
fn disjoint_paths_get_beta_times_bw() {
    let (x1, x2) = disjoint("coupled-bbr", 3);
    let (w1, w2) = (54.0 * PAYLOAD, 6.0 * PAYLOAD);
    assert!(within(x1, w1, 0.10, 0.0), "p60 {x1:.2} vs {w1:.2}");
    assert!(within(x2, w2, 0.10, 0.0), "p20 {x2:.2} vs {w2:.2}");
    assert!(within(x1 + x2, 60.0 * PAYLOAD, 0.10, 0.0));
    // Uncoupled BBR takes both paths whole.
    let (u1, u2) = disjoint("bbr", 3);
    assert!(u1 + u2 > 1.2 * (x1 + x2), "bbr {u1:.1}+{u2:.1}");
}

fn shared(cc: &str, seed: u64) -> f64 {
    let mut net = shared_bottleneck(
        cfg(cc, &[]),
        2,
        cfg("bbr", &[]),
        Bandwidth::from_mbps(100.0),
        Duration::from_millis(50),
        seed,
    );
    let r = run_bulk(&mut net, Duration::from_secs(40), Duration::from_secs(10));
    let ratio = r[0].goodput_bps / r[1].goodput_bps;
    println!(
        "coupled_bbr_sim shared 100 Mbit/s {cc} (2 subflows) vs 1 bbr: {:.2} vs {:.2} Mbit/s, ratio {ratio:.2}",
        r[0].goodput_bps / 1e6,
        r[1].goodput_bps / 1e6
    );
    mptransport::report::emit(
        "coupled_bbr_shared",
        &serde_json::json!({"cc": cc, "multipath_mbps": r[0].goodput_bps / 1e6, "bbr_mbps": r[1].goodput_bps / 1e6, "ratio": ratio}),
    );
    ratio
}

#[test]
fn shared_bottleneck_coupled_takes_at_most_1_3_of_a_bbr_flow() {
    let coupled = shared("coupled-bbr", 5);
    // Two uncoupled BBR subflows against one BBR flow at a drop-tail bottleneck: the share
    // swings with phase effects from seed to seed (1.2–3.2 for seeds 1–5 since the core
    // re-enters fast recovery as Linux does), so the median of three seeds is compared.
    let mut runs: Vec<f64> = [5, 6, 7].iter().map(|&s| shared("bbr", s)).collect();
    runs.sort_by(f64::total_cmp);
    let uncoupled = runs[1];
    assert!(coupled <= 1.3, "coupled-bbr / bbr goodput = {coupled:.2}");
    assert!(
        uncoupled > coupled && uncoupled > 1.3,
        "bbr (uncoupled) ratio {uncoupled:.2}"
    );
}

#[test]
fn one_subflow_is_plain_bbr() {
    // With one subflow β = 1 and the cycle is BBR's own: the runs are identical.
    let run = |cc: &str| {
        let mut net = Net::new(11);
        let a = bottleneck(&mut net, 30.0, 10.0, 1.0, 0.001);
        let ra = route(&mut net, "only", a, 10.0);
        net.add_flow(cfg(cc, &[]), cfg(cc, &[]), &[ra]);
        let r = run_rates(
            &mut net,
            Duration::from_secs(15),
            Duration::from_secs(3),
            |_, _| {},
        );
        (r[0].goodput_mbps, r[0].lost_pkts())
    };
    let (c, b) = (run("coupled-bbr"), run("bbr"));
    assert_eq!(c, b);
    assert!(c.0 > 20.0, "{c:?}");
}
