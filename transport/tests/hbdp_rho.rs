//! HBDP's load-balancing factor ρ (eqs. 13-14 of Chung & Oh, "An Efficient MPTCP-Based
//! Congestion Control Scheme for HBDP Networks") over whole runs, on the pair of
//! `hbdp_vs_mpcubic.rs` (500 Mbit/s × 100 ms RTT and 100 Mbit/s × 20 ms RTT, one-BDP drop-tail
//! queues, 0.01 % random loss). That benchmark prints ρ once, at the end of the run; ρ swings
//! between about 0.05 and 1.95 within a run (p_r over 10 round trips sees no loss most of the
//! time), so one end value is one draw. This samples ρ every 10 ms of virtual time after the
//! warm-up, over several seeds and the three variants, and compares it with eq. 13 fed each
//! path's own loss rate and mean SRTT over the same window.
//!
//! A benchmark, not a CI test:
//! `cargo test --release --test hbdp_rho -- --ignored --nocapture`
//! (`HBDP_SEEDS` comma-separated seeds, default 1,2,3,4,5,9; `HBDP_VARIANTS` a subset of
//! `defaults,printed,off`; `HBDP_SIM_S` simulated seconds, default 60). Figures:
//! docs/algorithms/hbdp.md.

mod seed_cc_common;

use std::collections::BTreeMap;

use mptransport::connection::SubflowStats;
use mptransport::sim::Net;
use seed_cc_common::{HIGH_BDP_SHORT, high_bdp_pair, high_bdp_run_length, run_rates};

/// One run's ρ on one path, sampled every 10 ms after the warm-up, and eq. 13 fed the path's
/// own loss rate (packets declared lost / sent after the warm-up) and mean SRTT.
struct RhoPath {
    mean: f64,
    median: f64,
    /// Share of samples with ρ > 1 and with p_r at its floor (no loss in its 10 rounds).
    above_1: f64,
    at_floor: f64,
    end: f64,
    loss_rate: f64,
    mean_srtt_ms: f64,
    eq13: f64,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
}

fn extra(st: &SubflowStats, key: &str) -> f64 {
    st.cc_snapshot
        .extra
        .iter()
        .find(|e| e.0 == key)
        .map_or(f64::NAN, |e| e.1)
}

#[derive(Default)]
struct Samples {
    rho: Vec<f64>,
    srtt_s: Vec<f64>,
    at_floor: usize,
    /// (packets sent, packets lost) at the first and the last sample.
    first: Option<(u64, u64)>,
    last: (u64, u64),
}

fn rho_run(opts: &[(&str, &str)], seed: u64) -> BTreeMap<String, RhoPath> {
    let (secs, warmup) = high_bdp_run_length();
    let mut net = Net::new(seed);
    high_bdp_pair(&mut net, "hbdp", opts);
    let mut samples: BTreeMap<String, Samples> = BTreeMap::new();
    run_rates(&mut net, secs, warmup, |net, t| {
        let Some(server) = net.flows[0].server.as_ref() else {
            return;
        };
        if t < warmup {
            return;
        }
        for st in server.subflow_stats() {
            let s = samples.entry(st.name.clone()).or_default();
            let counts = (st.counters.pkts_sent_total, st.counters.pkts_lost_total);
            s.first.get_or_insert(counts);
            s.last = counts;
            s.rho.push(extra(&st, "hbdp_rho"));
            s.srtt_s.push(st.srtt.as_secs_f64());
            if extra(&st, "hbdp_loss_rate") <= mptransport::cc::hbdp::LOSS_RATE_FLOOR {
                s.at_floor += 1;
            }
        }
    });
    let server = net.flows[0].server.as_ref().expect("server");
    let end: BTreeMap<String, f64> = server
        .subflow_stats()
        .iter()
        .map(|st| (st.name.clone(), extra(st, "hbdp_rho")))
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let eq13_inputs: BTreeMap<&String, (f64, f64)> = samples
        .iter()
        .map(|(name, s)| {
            let (s0, l0) = s.first.unwrap_or_default();
            let p = (s.last.1 - l0) as f64 / (s.last.0 - s0).max(1) as f64;
            (name, (p, mean(&s.srtt_s)))
        })
        .collect();
    let th: Vec<f64> = eq13_inputs
        .values()
        .map(|&(p, rtt)| mptransport::cc::hbdp::expected_throughput(p, rtt))
        .collect();
    let rho13 = mptransport::cc::hbdp::load_balancing(&th);
    samples
        .iter()
        .zip(rho13)
        .map(|((name, s), eq13)| {
            let n = s.rho.len().max(1) as f64;
            let (loss_rate, srtt) = eq13_inputs[name];
            let path = RhoPath {
                mean: mean(&s.rho),
                median: median(&s.rho),
                above_1: s.rho.iter().filter(|&&x| x > 1.0).count() as f64 / n,
                at_floor: s.at_floor as f64 / n,
                end: end.get(name).copied().unwrap_or(f64::NAN),
                loss_rate,
                mean_srtt_ms: srtt * 1e3,
                eq13,
            };
            (name.clone(), path)
        })
        .collect()
}

#[test]
#[ignore = "benchmark: HBDP at 500 Mbit/s for a simulated minute per seed and variant; run with --ignored"]
fn hbdp_rho_over_whole_runs_and_seeds() {
    let seeds: Vec<u64> = std::env::var("HBDP_SEEDS")
        .unwrap_or_else(|_| "1,2,3,4,5,9".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("HBDP_SEEDS: comma-separated integers")
        })
        .collect();
    let variants = std::env::var("HBDP_VARIANTS").unwrap_or_else(|_| "defaults,printed,off".into());
    for v in variants.split(',') {
        let opts: &[(&str, &str)] = match v {
            "defaults" => &[],
            "printed" => &[("delta_form", "printed")],
            "off" => &[("fhat_rule", "off")],
            other => panic!("HBDP_VARIANTS: {other:?} is not defaults, printed or off"),
        };
        let mut short_means = Vec::new();
        for &seed in &seeds {
            let run = rho_run(opts, seed);
            for (name, r) in &run {
                println!(
                    "hbdp_rho {v} seed {seed} {name}: rho mean {:.3} median {:.3} above-1 {:.2} end {:.3}; p_r at floor {:.2} of samples; path loss rate {:.2e}, mean srtt {:.1} ms, eq13 rho {:.3}",
                    r.mean,
                    r.median,
                    r.above_1,
                    r.end,
                    r.at_floor,
                    r.loss_rate,
                    r.mean_srtt_ms,
                    r.eq13
                );
            }
            mptransport::report::emit(
                "hbdp_rho",
                &serde_json::json!({"variant": v, "seed": seed, "sim_s": high_bdp_run_length().0.as_secs(),
                    "paths": run.iter().map(|(n, r)| (n.clone(), serde_json::json!({
                        "rho_mean": r.mean, "rho_median": r.median, "rho_above_1": r.above_1,
                        "rho_end": r.end, "loss_rate_at_floor": r.at_floor,
                        "path_loss_rate": r.loss_rate, "mean_srtt_ms": r.mean_srtt_ms,
                        "eq13_rho": r.eq13}))).collect::<serde_json::Map<_, _>>()}),
            );
            short_means.push(run[HIGH_BDP_SHORT].mean);
        }
        let m = median(&short_means);
        println!(
            "hbdp_rho {v}: {HIGH_BDP_SHORT} median over seeds {seeds:?} of the run's mean ρ {m:.3}"
        );
        // Eq. 13 with the paths' equal random loss and their RTTs (20 vs 100 ms) gives the
        // short path ρ = 5/3: over a run, traffic must lean towards it (ρ > 1), whatever a
        // single end-of-run sample shows.
        assert!(m > 1.0, "{v}: median mean ρ on {HIGH_BDP_SHORT} {m:.3} ≤ 1");
    }
}
