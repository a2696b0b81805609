//! Seed 003 (Singhal et al., "Hybrid Multipath Congestion Control"), rate-allocation case 3
//! in the simulator: the topology of cases 1 and 2 (`seed003_rates.rs`: subflow x11 alone on
//! link C1, subflow x12 sharing link C2 with a single-path Reno flow x2), with a capacity
//! change: both links 1024 Mbit/s, then x11's link at 8 Mbit/s from 6 s to 13 s, then back.
//!
//! The paper's text says "C2 = 8 Mbps" for the change but describes x11 dropping to 8 Mbit/s
//! and the 6-13 s allocation as case 2's (C1 = 8): the link that changes here is x11's, the
//! reading under which the rest of its text holds.
//!
//! Scale and paths as in `seed003_rates.rs`: rates divided by 16, 10 ms one way, one-BDP
//! drop-tail queues; 20 s simulated (the paper shows the first 20 s). The test records each
//! flow's delivered rate in 250 ms bins (`REPRO_OUT`, see `mptransport::report`) and prints
//! per-second rates; `./run_trials.sh --reproduce seed003` derives the transition times from
//! the bins (docs/reproductions/seed003.md). What it asserts is what follows from the paper's
//! conclusions and holds of the simulator: x11 follows its link down (every run) and H-MPTCP
//! does as well as the better of EMPTCP and WMPTCP in the degraded window (medians over the
//! seeds). As in `seed003_rates.rs`, every ACK link adds a random 0–1 ms: without it the
//! drop-tail phase makes every seed the same run, and one 3 s window of one run decides the
//! comparison (docs/algorithms/hmptcp.md, "Case 3").
//!
//! `cargo test --release --test seed003_case3 -- --ignored --nocapture`

mod seed_cc_common;

use std::time::Duration;

use mptransport::sim::net::ACK_JITTER;
use mptransport::sim::{LinkSpec, Net, Route};
use mptransport::units::Bandwidth;
use seed_cc_common::{bottleneck, cfg, run_rates};

/// Paper Mbit/s → simulated Mbit/s (as `seed003_rates.rs`).
const SCALE: f64 = 1.0 / 16.0;
const ONE_WAY_MS: f64 = 10.0;
const BIN_MS: u64 = 250;
const SIM_S: u64 = 20;
/// The degraded window of x11's link, seconds.
const DROP_AT_S: f64 = 6.0;
const BACK_AT_S: f64 = 13.0;

/// One link's spec at `paper_mbps` (one-BDP queue, at least 10 packets, as `bottleneck`).
fn spec(paper_mbps: f64) -> LinkSpec {
    let rate = Bandwidth::from_mbps(paper_mbps * SCALE);
    let one_way = Duration::from_secs_f64(ONE_WAY_MS / 1e3);
    LinkSpec {
        rate: Some(rate),
        delay: one_way,
        loss: 0.0,
        queue_limit_bytes: (rate.bytes_in(one_way * 2) as u64).max(15_000),
    }
}

/// Counters of one path so far: (bytes acked, packets lost, RTOs, fast recoveries).
type PathCounters = [u64; 4];

/// Counters so far on (x11, x12, x2).
fn counters(net: &Net) -> [PathCounters; 3] {
    let by_path = |flow: usize, path: &str| {
        net.flows[flow].server.as_ref().map_or([0; 4], |s| {
            s.subflow_stats()
                .iter()
                .find(|st| st.name == path)
                .map_or([0; 4], |st| {
                    let c = &st.counters;
                    [
                        c.bytes_acked_total,
                        c.pkts_lost_total,
                        c.rto_total,
                        c.recoveries_total,
                    ]
                })
        })
    };
    [by_path(0, "x11"), by_path(0, "x12"), by_path(1, "x2")]
}

/// H-MPTCP's half on x12 right now (0 = EMPTCP's increase, 1 = WMPTCP's), if reported.
fn x12_half(net: &Net) -> Option<f64> {
    net.flows[0].server.as_ref().and_then(|s| {
        s.subflow_stats()
            .iter()
            .find(|st| st.name == "x12")
            .and_then(|st| {
                st.cc_snapshot
                    .extra
                    .iter()
                    .find(|e| e.0 == "hmptcp_half")
                    .map(|e| e.1)
            })
    })
}

/// Uniform random delay added to every ACK link: the 0–1 ms of `seed003_rates.rs` and the
/// coupled-CC fairness tests (`sim::net::ACK_JITTER`), or `SEED003_CASE3_JITTER_MS` (0 gives
/// the jitter-free run, where every seed is the same).
fn ack_jitter() -> Duration {
    std::env::var("SEED003_CASE3_JITTER_MS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(ACK_JITTER, |ms| Duration::from_secs_f64(ms / 1e3))
}

/// Runs case 3 with `cc`; returns the (x11, x12, x2) rate per 250 ms bin, paper units.
fn run(cc: &str, seed: u64) -> Vec<[f64; 3]> {
    let mut net = Net::new(seed);
    let c1 = bottleneck(&mut net, 1024.0 * SCALE, ONE_WAY_MS, 1.0, 0.0);
    let c2 = bottleneck(&mut net, 1024.0 * SCALE, ONE_WAY_MS, 1.0, 0.0);
    let jitter = ack_jitter();
    let route = |net: &mut Net, name: &str, down| Route {
        name: name.into(),
        up: net.add_link_with_jitter(
            LinkSpec {
                rate: None,
                delay: Duration::from_secs_f64(ONE_WAY_MS / 1e3),
                loss: 0.0,
                queue_limit_bytes: u64::MAX,
            },
            jitter,
        ),
        down,
    };
    let r11 = route(&mut net, "x11", c1);
    let r12 = route(&mut net, "x12", c2);
    net.add_flow(cfg(cc, &[]), cfg(cc, &[]), &[r11, r12]);
    let r2 = route(&mut net, "x2", c2);
    net.add_flow(cfg("reno", &[]), cfg("reno", &[]), &[r2]);
    let bin = Duration::from_millis(BIN_MS);
    let (mut state, mut next_bin, mut last) = (0u8, bin, [0u64; 3]);
    let mut bins: Vec<[f64; 3]> = Vec::new();
    // Per phase (before the drop, degraded, after): counters at its start, H-MPTCP's half.
    let mut phase_start = vec![[[0u64; 4]; 3]];
    let mut halves = [(0u32, 0u32); 3];
    run_rates(
        &mut net,
        // One bin more: the last tick falls just before the end of the run.
        Duration::from_secs(SIM_S) + bin,
        Duration::ZERO,
        |net, t| {
            if state == 0 && t.as_secs_f64() >= DROP_AT_S {
                net.set_link(c1, spec(8.0));
                phase_start.push(counters(net));
                state = 1;
            } else if state == 1 && t.as_secs_f64() >= BACK_AT_S {
                net.set_link(c1, spec(1024.0));
                phase_start.push(counters(net));
                state = 2;
            }
            if let Some(h) = x12_half(net) {
                let p = &mut halves[state as usize];
                p.0 += 1;
                p.1 += (h == 0.0) as u32;
            }
            while t >= next_bin {
                let now = counters(net).map(|c| c[0]);
                let rate =
                    |i: usize| (now[i] - last[i]) as f64 * 8.0 / bin.as_secs_f64() / 1e6 / SCALE;
                bins.push([rate(0), rate(1), rate(2)]);
                last = now;
                next_bin += bin;
            }
        },
    );
    bins.truncate((SIM_S * 1000 / BIN_MS) as usize);
    phase_start.push(counters(&net));
    for (p, name) in ["0-6 s", "6-13 s", "13-20 s"].iter().enumerate() {
        let d = |i: usize, k: usize| phase_start[p + 1][i][k] - phase_start[p][i][k];
        let half = if halves[p].0 > 0 {
            format!(
                "; H-MPTCP x12 on EMPTCP's half {:.0} % of 10 ms samples",
                100.0 * halves[p].1 as f64 / halves[p].0 as f64
            )
        } else {
            String::new()
        };
        let path = |i: usize| format!("{}/{}/{}", d(i, 1), d(i, 2), d(i, 3));
        println!(
            "seed003 case3 {cc} seed {seed} {name}: lost/RTOs/recoveries x11 {} x12 {} x2 {}{half}",
            path(0),
            path(1),
            path(2)
        );
    }
    let per_s = (1000 / BIN_MS) as usize;
    let seconds: Vec<String> = bins
        .chunks(per_s)
        .map(|c| {
            let m = |i: usize| c.iter().map(|b| b[i]).sum::<f64>() / c.len() as f64;
            format!("{:.0}/{:.0}/{:.0}", m(0), m(1), m(2))
        })
        .collect();
    println!(
        "seed003 case3 {cc}: x11/x12/x2 per second (paper units): {}",
        seconds.join(" ")
    );
    mptransport::report::emit(
        "seed003_case3",
        &serde_json::json!({"cc": cc, "seed": seed, "bin_s": BIN_MS as f64 / 1e3, "drop_at_s": DROP_AT_S, "back_at_s": BACK_AT_S, "x11": bins.iter().map(|b| b[0]).collect::<Vec<_>>(), "x12": bins.iter().map(|b| b[1]).collect::<Vec<_>>(), "x2": bins.iter().map(|b| b[2]).collect::<Vec<_>>()}),
    );
    bins
}

/// Mean of flow `i` over the bins in [from_s, to_s).
fn mean(bins: &[[f64; 3]], i: usize, from_s: f64, to_s: f64) -> f64 {
    let per_s = 1000.0 / BIN_MS as f64;
    let (a, b) = ((from_s * per_s) as usize, (to_s * per_s) as usize);
    let b = b.min(bins.len());
    bins[a..b].iter().map(|x| x[i]).sum::<f64>() / (b - a).max(1) as f64
}

/// Seeds: `SEED003_CASE3_SEEDS` (comma-separated; `--reproduce seed003 --reps N` sets it),
/// else 1-5 (as the rate cases of `seed003_rates.rs`).
fn seeds() -> Vec<u64> {
    std::env::var("SEED003_CASE3_SEEDS")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .filter(|v: &Vec<u64>| !v.is_empty())
        .unwrap_or_else(|| (1..=5).collect())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

const CCS: [&str; 5] = ["emptcp", "wmptcp", "hmptcp", "lia", "balia"];

// Ignored in the plain run only because `./run_trials.sh --reproduce seed003` runs it with
// `--ignored` and reports its verdict (19 s of CPU for seeds 1-5). It passes on seeds 1-5
// (H-MPTCP / better half 1.00 on the medians); the jitter-free single run that gave 0.76
// since the Linux-fidelity core change was one draw of a transient (0.85-1.40 per seed),
// see docs/algorithms/hmptcp.md, "Case 3".
#[test]
#[ignore = "run by --reproduce seed003 (with --ignored); passes on seeds 1-5 (median ratio 1.00)"]
fn case3_rates_follow_a_capacity_drop_on_x11s_link() {
    let seeds = seeds();
    // x1 = x11 + x12 over 10-13 s, per CC and seed; x11 before and during the drop.
    let mut x1_degraded: Vec<(&str, u64, f64)> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    for &seed in &seeds {
        for cc in CCS {
            let bins = run(cc, seed);
            assert_eq!(bins.len() as u64, SIM_S * 1000 / BIN_MS, "{cc}: bins");
            // x11 is alone on its link: before the drop it fills most of it, from a second
            // after the drop it carries at most the new capacity (+10 % for a queue draining).
            let before = mean(&bins, 0, 3.0, DROP_AT_S);
            let during = mean(&bins, 0, DROP_AT_S + 1.0, BACK_AT_S);
            if before <= 0.5 * 1024.0 {
                failures.push(format!("{cc} seed {seed}: x11 before the drop {before:.0}"));
            }
            if during > 8.0 * 1.1 {
                failures.push(format!("{cc} seed {seed}: x11 during the drop {during:.1}"));
            }
            let x1 = during + mean(&bins, 1, 10.0, BACK_AT_S);
            println!("seed003 case3 {cc} seed {seed}: x1 over 10-13 s {x1:.0}");
            x1_degraded.push((cc, seed, x1));
        }
    }
    // H-MPTCP takes the better of its two halves where case 2's allocation holds: medians over
    // the seeds, as the better-half check of `seed003_rates.rs`.
    let x1 = |name: &str| {
        median(
            x1_degraded
                .iter()
                .filter(|x| x.0 == name)
                .map(|x| x.2)
                .collect(),
        )
    };
    let (e, w, h) = (x1("emptcp"), x1("wmptcp"), x1("hmptcp"));
    println!(
        "seed003 case3 seeds {seeds:?}: median x1 over 10-13 s hmptcp {h:.0}, emptcp {e:.0}, wmptcp {w:.0}; hmptcp / better half {:.3}",
        h / e.max(w)
    );
    if h < 0.9 * e.max(w) {
        failures.push(format!(
            "median x1 in 10-13 s: hmptcp {h:.0} < 0.9 x max(emptcp {e:.0}, wmptcp {w:.0})"
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("; "));
}
