//! The coupled CCs as the out-of-tree MPTCP kernel runs them, in the simulator
//! (docs/algorithms/lia.md "Counting", docs/algorithms/wvegas.md):
//!
//! * wVegas keeps growing after a window cut (`tcp_in_slow_start` at the round end): on a
//!   20 Mbit/s, 40 ms RTT path with 0.1 % random loss it reaches at least 0.6× Reno's
//!   goodput (it reached 0.22× while the round-end test was cwnd ≤ ssthresh).
//! * Single-subflow LIA counts ACKs, as `mptcp_ccc_cong_avoid`: with the receiver's ACK
//!   every second packet it adds about ½ packet per RTT where Reno adds 1, so on a
//!   loss-limited path its goodput is about √½ ≈ 0.71 of Reno's (Mathis: window ∝
//!   √(increase per RTT)); with `--cc-opt growth=rfc` it counts acknowledged packets and
//!   matches Reno.
//!
//! Run: `cargo test --release --test kernel_cc_counting -- --nocapture` (prints the figures).

mod sim_harness;

use std::time::Duration;

use mptransport::Bandwidth;
use mptransport::connection::Config;
use mptransport::sim::{LinkSpec, Pair, SimPath, TransferSpec, run_transfer};
use sim_harness::symmetric;

/// Goodput (bit/s) of one `bytes` transfer over `path` with `cc` and its options.
fn goodput(cc: &str, opts: &[(&str, &str)], path: &SimPath, bytes: u64, seed: u64) -> f64 {
    let mut cfg = Config {
        cc: cc.into(),
        sched: "lrf".into(),
        ..Config::default()
    };
    for (k, v) in opts {
        cfg.cc_config.options.insert(k.to_string(), v.to_string());
    }
    let mut pair = Pair::new(cfg.clone(), cfg, std::slice::from_ref(path), seed);
    let spec = TransferSpec {
        request_bytes: 1000,
        response_bytes: bytes,
        seed,
        ..TransferSpec::default()
    };
    let r = run_transfer(&mut pair, &spec);
    assert!(
        r.is_byte_exact_and_clean(),
        "{cc} {opts:?}: {:?}",
        r.outcome
    );
    r.response_goodput_bps()
}

/// `mpsim --path a:RATE:DELAY:LOSS`: the same rate, delay and loss both ways, a 1-BDP queue.
fn path(mbps: f64, one_way_ms: u64, loss: f64) -> SimPath {
    symmetric(
        "a",
        LinkSpec::bdp_queue(
            Bandwidth::from_mbps(mbps),
            Duration::from_millis(one_way_ms),
            loss,
        ),
    )
}

#[test]
fn wvegas_reaches_0_6_of_reno_after_window_cuts() {
    // mpsim --cc wvegas --path a:20:20:0.001 --bytes 40000000 --seed 3 (and --cc reno).
    let p = path(20.0, 20, 0.001);
    let wvegas = goodput("wvegas", &[], &p, 40_000_000, 3);
    let reno = goodput("reno", &[], &p, 40_000_000, 3);
    println!(
        "wvegas {:.2} Mbit/s, reno {:.2} Mbit/s, ratio {:.2}",
        wvegas / 1e6,
        reno / 1e6,
        wvegas / reno
    );
    assert!(wvegas >= 0.6 * reno, "wvegas {wvegas} reno {reno}");
}

/// A loss-limited path: 100 Mbit/s, 40 ms RTT, 0.5 % random loss each way (Reno's window
/// averages about 15 packets, far below the 345-packet BDP).
const LOSSY: (f64, u64, f64) = (100.0, 20, 0.005);
const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

fn median(mut x: Vec<f64>) -> f64 {
    x.sort_by(|a, b| a.total_cmp(b));
    x[x.len() / 2]
}

#[test]
fn single_subflow_lia_grows_at_the_kernels_per_ack_rate_and_at_reno_rate_with_growth_rfc() {
    let p = path(LOSSY.0, LOSSY.1, LOSSY.2);
    let bytes = 15_000_000;
    let mut kernel = Vec::new();
    let mut rfc = Vec::new();
    for seed in SEEDS {
        let reno = goodput("reno", &[], &p, bytes, seed);
        let lia = goodput("lia", &[], &p, bytes, seed);
        let lia_rfc = goodput("lia", &[("growth", "rfc")], &p, bytes, seed);
        println!(
            "seed {seed}: reno {:.2} Mbit/s, lia {:.2} ({:.2}), lia growth=rfc {:.2} ({:.2})",
            reno / 1e6,
            lia / 1e6,
            lia / reno,
            lia_rfc / 1e6,
            lia_rfc / reno
        );
        kernel.push(lia / reno);
        rfc.push(lia_rfc / reno);
    }
    let (k, r) = (median(kernel), median(rfc));
    println!("median lia/reno {k:.2} (predicted ≈ 0.68), growth=rfc {r:.2} (predicted 1)");
    // Predicted: √(½ · w/(w+1)) ≈ 0.68 at w ≈ 12; tolerance ±0.1.
    assert!((0.58..=0.78).contains(&k), "lia/reno median {k}");
    // Same counting as Reno (one subflow: the same +1 per window of acknowledged packets).
    assert!((0.9..=1.1).contains(&r), "lia growth=rfc / reno median {r}");
}
