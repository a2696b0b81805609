//! The schedulers of docs/algorithms/arp.md, blest.md, ecf.md and default-schedulers.md in
//! the simulator, on the scenarios those pages report:
//! * asymmetric RTT (20 Mbit/s both, RTT 50 vs 150 ms), 20 MB with bbr: the receiver's
//!   out-of-order queue (maximum, after 2 s, after start-up, mean) and the completion time,
//!   arp against lrf and rr, over 20 seeds of a 0–1 ms ACK jitter (and one jitter-free run
//!   dissected in docs/algorithms/arp.md);
//! * heterogeneous paths (10 Mbit/s each, RTT 10 vs 100 ms), a sender that writes 1 MB
//!   every second: the 95th percentile of per-write delivery delay, blest/ecf against lrf,
//!   over 10 seeds of the same jitter and 300 writes;
//! * a path that breaks mid-transfer: every scheduler delivers 50 MB byte-exact;
//! * AR&P's "predicted arrival never decreases within a batch", checked on every decision of
//!   real transfers.
//!
//! Figures: `cargo test --release --test sched_scenarios -- --nocapture --test-threads 1`.

mod par_runs;
mod sim_harness;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mptransport::cc::CcPhase;
use mptransport::connection::Config;
use mptransport::sched::{self, SchedConfig, Scheduler, Selection, SendKind, Snapshot};
use mptransport::sim::{
    AppLimitedSpec, Pair, SimPath, TransferSpec, run_app_limited, run_transfer_with,
};
use par_runs::par_map;
use sim_harness::{bdp_path, cfg, cfg_autotuned, observe};

const NEW_SCHEDULERS: [&str; 5] = ["arp", "blest", "ecf", "default-oot", "default-upstream"];

fn path(name: &str, mbps: f64, one_way_ms: u64) -> SimPath {
    bdp_path(name, mbps, one_way_ms, 0.0)
}

/// Largest random extra delay of every packet on a path's ACK direction (client → server) in
/// the multi-seed runs: uniform 0–1 ms, FIFO kept, as `sim::net::ACK_JITTER` in the
/// coupled-CC and seed 003 tests. Without it these runs have no random element (no random
/// loss), every seed gives the same run, and a maximum or a p95 is one sample; with it the
/// seed picks the jitter stream, which moves the ACK clock by less than a millisecond and
/// with it which packets a drop-tail queue drops.
const ACK_JITTER_MS: f64 = 1.0;

/// [`ACK_JITTER_MS`], or `SCHED_ACK_JITTER_MS` for a sensitivity run (docs/algorithms/arp.md).
fn ack_jitter_ms() -> f64 {
    std::env::var("SCHED_ACK_JITTER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ACK_JITTER_MS)
}

/// A pair over `paths` whose client → server links add a uniform 0..`ack_jitter_ms` to every
/// packet, seeded by `seed` (linkemu's jitter: delay + j/2 ± j/2, never reordering). The
/// server → client (data) links are the paths' own, unchanged. `ack_jitter_ms = 0` gives the
/// same links as `Pair::new`.
fn jittered_pair(c: Config, s: Config, paths: &[SimPath], seed: u64, ack_jitter_ms: f64) -> Pair {
    let link = |l: &mptransport::sim::LinkSpec, jitter_ms: f64| {
        let rate = match l.rate {
            Some(r) => format!(r#"{{"kind": "constant", "bps": {}}}"#, r.bps()),
            None => r#"{"kind": "unlimited"}"#.to_string(),
        };
        format!(
            r#"{{"rate": {rate}, "delay_ms": {}, "jitter_ms": {}, "loss": {{"kind": "bernoulli", "p": {}}}, "queue": {{"kind": "bytes", "limit": {}}}, "schedule": []}}"#,
            l.delay.as_secs_f64() * 1e3 + jitter_ms / 2.0,
            jitter_ms / 2.0,
            l.loss,
            l.queue_limit_bytes.max(1500)
        )
    };
    // Written by hand, not through a JSON map, to keep the paths in order (path i = subflow i).
    let entries: Vec<String> = paths
        .iter()
        .map(|p| {
            format!(
                r#""{}": {{"up": {}, "down": {}}}"#,
                p.name,
                link(&p.up, ack_jitter_ms),
                link(&p.down, 0.0)
            )
        })
        .collect();
    let text = format!(
        r#"{{"schema": 1, "name": "ack-jitter", "source": "sched_scenarios.rs", "duration_s": 3600, "paths": {{{}}}}}"#,
        entries.join(", ")
    );
    let scenario = linkemu::scenario::parse(&text, "sched_scenarios.rs").expect("valid scenario");
    Pair::from_scenario(c, s, &scenario, seed).expect("valid pair")
}

/// Receiver's out-of-order queue over one transfer.
struct Outcome {
    completion_s: f64,
    ofo_max_bytes: u64,
    /// When the overall maximum was reached, and the sender's subflow phases then.
    ofo_max_at_s: f64,
    ofo_max_phases: String,
    /// Time-weighted mean over the transfer.
    ofo_mean_bytes: f64,
    /// Largest after the first 2 s (seed 000 on Fig. 11(b): "After 2 seconds, AR&P scheduler
    /// keeps the out-of-order queue much shorter").
    ofo_max_after_2s_bytes: u64,
    /// Largest after the first 3 s (start-up and its losses excluded in these runs).
    ofo_max_settled_bytes: u64,
    /// When every subflow of the sender had reached BBR's PROBE_BW (start-up over), plus
    /// the largest SRTT then: from this instant on, everything the receiver holds was sent
    /// after start-up. NaN if that never happened (a CC without PROBE_BW).
    steady_from_s: f64,
    /// Largest out-of-order queue before `steady_from_s` (start-up) and from it on.
    ofo_max_startup_bytes: u64,
    ofo_max_steady_bytes: u64,
    /// Copies the sender placed on redundant subflows.
    redundant_bytes: u64,
    /// arp only: when the last path (the slow one here) first entered AR's set N, i.e. first
    /// could carry new data, read from the scheduler's trace state (`n_mask`); NaN if it never
    /// did (it carried copies only) or for a scheduler without N.
    last_path_joined_n_at_s: f64,
    /// arp only: the start of the last path's final stretch in N (NaN if it was out of N at
    /// the last decision), and how many times it entered N.
    last_path_in_n_at_end_since_s: f64,
    last_path_n_entries: u64,
}

/// A bulk transfer of `bytes`. The fixed 16 MiB window (`cfg`): docs/algorithms/arp.md's
/// out-of-order-queue figures and the bounds asserted on them were measured with it.
fn transfer(cc: &str, sched_name: &str, paths: &[SimPath], bytes: u64) -> Outcome {
    let pair = Pair::new(cfg(cc, sched_name), cfg(cc, sched_name), paths, 3);
    transfer_on(pair, cc, sched_name, paths.len(), bytes, 11)
}

/// `transfer` over [`jittered_pair`] with seed `seed` (links and data); the fixed window, as
/// `transfer`.
fn transfer_jittered(
    cc: &str,
    sched_name: &str,
    paths: &[SimPath],
    bytes: u64,
    seed: u64,
) -> Outcome {
    let (c, s) = (cfg(cc, sched_name), cfg(cc, sched_name));
    let pair = jittered_pair(c, s, paths, seed, ack_jitter_ms());
    transfer_on(pair, cc, sched_name, paths.len(), bytes, seed)
}

fn transfer_on(
    mut pair: Pair,
    cc: &str,
    sched_name: &str,
    n_paths: usize,
    bytes: u64,
    data_seed: u64,
) -> Outcome {
    let spec = TransferSpec {
        response_bytes: bytes,
        seed: data_seed,
        max_time: Duration::from_secs(600),
        ..TransferSpec::default()
    };
    let (mut last_t, mut last_ofo, mut area) = (0u64, 0u64, 0.0f64);
    let (mut after_2s_max, mut settled_max) = (0u64, 0u64);
    let (mut max_at_s, mut max_seen, mut max_phases) = (0.0, 0u64, String::new());
    let mut steady_from_s = f64::NAN;
    let (mut startup_max, mut steady_max) = (0u64, 0u64);
    // AR&P's N, from the connection's own decision trace (it only records, the scheduler
    // is not replaced or wrapped).
    let last_path_bit = 1u64 << (n_paths - 1);
    let (mut tracing, mut joined_n_at_s) = (false, f64::NAN);
    // The start of its current stretch in N (NaN while out of N) and how often it entered N.
    let (mut in_n_since_s, mut n_entries) = (f64::NAN, 0u64);
    let r = run_transfer_with(&mut pair, &spec, |p| {
        if sched_name == "arp"
            && let Some(s) = p.server.as_mut()
        {
            if !tracing {
                s.enable_sched_trace();
                tracing = true;
            }
            for d in s.drain_sched_trace() {
                let in_n = d
                    .state
                    .iter()
                    .any(|(k, v)| *k == "n_mask" && (*v as u64) & last_path_bit != 0);
                let at_s = d.time.as_nanos() as f64 / 1e9;
                if in_n && joined_n_at_s.is_nan() {
                    joined_n_at_s = at_s;
                }
                if in_n && in_n_since_s.is_nan() {
                    (in_n_since_s, n_entries) = (at_s, n_entries + 1);
                } else if !in_n {
                    in_n_since_s = f64::NAN;
                }
            }
        }
        let t = p.now.as_nanos();
        let now_s = t as f64 / 1e9;
        area += last_ofo as f64 * (t - last_t) as f64 / 1e9;
        last_t = t;
        last_ofo = p.client.counters().ofo_queue_bytes;
        if now_s >= 2.0 {
            after_2s_max = after_2s_max.max(last_ofo);
        }
        if now_s >= 3.0 {
            settled_max = settled_max.max(last_ofo);
        }
        let sender = p
            .server
            .as_ref()
            .map(|s| s.subflow_stats())
            .unwrap_or_default();
        if steady_from_s.is_nan()
            && sender.len() == n_paths
            && sender.iter().all(|s| s.cc_phase == CcPhase::ProbeBw)
        {
            let srtt = sender.iter().map(|s| s.srtt).max().unwrap_or_default();
            steady_from_s = now_s + srtt.as_secs_f64();
        }
        if steady_from_s.is_nan() || now_s < steady_from_s {
            startup_max = startup_max.max(last_ofo);
        } else {
            steady_max = steady_max.max(last_ofo);
        }
        if last_ofo > max_seen {
            (max_seen, max_at_s) = (last_ofo, now_s);
            max_phases = sender
                .iter()
                .map(|s| {
                    format!(
                        "{} {:?}, SRTT {} ms",
                        s.name,
                        s.cc_phase,
                        s.srtt.as_millis()
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
        }
    });
    assert!(r.is_byte_exact_and_clean(), "{cc} × {sched_name}: {r:?}");
    let completion_s = r.response_done.unwrap().as_secs_f64();
    let ofo_max_bytes = pair.client.counters().ofo_queue_max_bytes;
    assert_eq!(ofo_max_bytes, max_seen, "the hook saw every step's queue");
    Outcome {
        completion_s,
        ofo_max_bytes,
        ofo_max_at_s: max_at_s,
        ofo_max_phases: max_phases,
        ofo_mean_bytes: area / completion_s,
        ofo_max_after_2s_bytes: after_2s_max,
        ofo_max_settled_bytes: settled_max,
        steady_from_s,
        ofo_max_startup_bytes: startup_max,
        ofo_max_steady_bytes: steady_max,
        redundant_bytes: pair
            .server
            .as_ref()
            .map_or(0, |s| s.counters().redundant_bytes_total),
        last_path_joined_n_at_s: joined_n_at_s,
        last_path_in_n_at_end_since_s: in_n_since_s,
        last_path_n_entries: n_entries,
    }
}

/// Seed 000 Fig. 11(b): equal rates (20 Mbit/s), RTT 50 vs 150 ms; 20 MB with bbr, lrf and
/// arp. Prints and emits (`arp_asymmetric_rtt`) both.
fn asymmetric_rtt_lrf_and_arp() -> (Outcome, Outcome) {
    let paths = [path("wifi", 20.0, 25), path("lte", 20.0, 75)];
    let lrf = transfer("bbr", "lrf", &paths, 20_000_000);
    let arp = transfer("bbr", "arp", &paths, 20_000_000);
    for (name, o) in [("lrf", &lrf), ("arp", &arp)] {
        println!(
            "asymmetric RTT, bbr, 20 MB, {name}: {:.3} s; receiver out-of-order queue max {} B \
             at {:.2} s ({}), mean {:.0} B, max after 3 s {} B; start-up over (every subflow \
             in PROBE_BW + its SRTT) at {:.2} s: max before {} B, from then on {} B",
            o.completion_s,
            o.ofo_max_bytes,
            o.ofo_max_at_s,
            o.ofo_max_phases,
            o.ofo_mean_bytes,
            o.ofo_max_settled_bytes,
            o.steady_from_s,
            o.ofo_max_startup_bytes,
            o.ofo_max_steady_bytes
        );
        mptransport::report::emit(
            "arp_asymmetric_rtt",
            &serde_json::json!({"cc": "bbr", "sched": name, "completion_s": o.completion_s,
                "ofo_max_bytes": o.ofo_max_bytes, "ofo_max_at_s": o.ofo_max_at_s,
                "ofo_mean_bytes": o.ofo_mean_bytes,
                "ofo_max_after_3s_bytes": o.ofo_max_settled_bytes,
                "steady_from_s": o.steady_from_s,
                "ofo_max_startup_bytes": o.ofo_max_startup_bytes,
                "ofo_max_steady_bytes": o.ofo_max_steady_bytes}),
        );
    }
    println!(
        "arp/lrf: max {:.2}×, mean {:.2}×, max after 3 s {:.2}×, max in start-up {:.2}×, \
         max from the end of start-up {:.2}×, time {:+.1} %",
        arp.ofo_max_bytes as f64 / lrf.ofo_max_bytes as f64,
        arp.ofo_mean_bytes / lrf.ofo_mean_bytes,
        arp.ofo_max_settled_bytes as f64 / lrf.ofo_max_settled_bytes as f64,
        arp.ofo_max_startup_bytes as f64 / lrf.ofo_max_startup_bytes as f64,
        arp.ofo_max_steady_bytes as f64 / lrf.ofo_max_steady_bytes as f64,
        (arp.completion_s / lrf.completion_s - 1.0) * 100.0
    );
    (lrf, arp)
}

#[test]
fn arp_cuts_the_out_of_order_queue_on_asymmetric_rtt_without_slowing_down() {
    let (lrf, arp) = asymmetric_rtt_lrf_and_arp();
    // The jitter-free run that the timeline of docs/algorithms/arp.md ("Where the maximum
    // comes from") dissects; one run, so one sample: the figures over seeds, and the issue's
    // bar on them, are `arp_over_seeds_on_asymmetric_rtt` and the ignored
    // `arp_meets_the_issue_bar_on_the_overall_maximum_and_time` below. Regression bounds
    // on this run, looser than its figures: the average queue (Fig. 11(a)) and the queue
    // once start-up is over.
    assert!(arp.steady_from_s.is_finite() && lrf.steady_from_s.is_finite());
    assert!(arp.ofo_mean_bytes < 0.75 * lrf.ofo_mean_bytes);
    assert!(arp.ofo_max_steady_bytes as f64 <= 0.5 * lrf.ofo_max_steady_bytes as f64);
    assert!(arp.ofo_max_settled_bytes as f64 <= 0.5 * lrf.ofo_max_settled_bytes as f64);
    assert!(arp.completion_s <= 1.10 * lrf.completion_s);
}

/// The receiver's out-of-order queue every 100 ms of the asymmetric-RTT transfer, with the
/// sender's subflow phases, SRTT, min RTT, BBR's bandwidth estimate and packets declared lost
/// so far (each line: the bin starting at that time, the sender's state at its end), and for
/// arp its N mask
/// and whether P runs (the table in docs/algorithms/arp.md, "Where the maximum comes from"):
/// `cargo test --release --test sched_scenarios arp_timeline -- --ignored --nocapture`
/// (`SCHED_JITTER_SEED=k` in front: seed k of the multi-seed sweep).
#[test]
#[ignore = "prints a timeline for docs/algorithms/arp.md; asserts nothing beyond a clean transfer"]
fn arp_timeline_of_the_out_of_order_queue_on_asymmetric_rtt() {
    let paths = [path("wifi", 20.0, 25), path("lte", 20.0, 75)];
    // `SCHED_JITTER_SEED=k`: the run of seed k of the multi-seed sweep (ACK jitter on).
    let jitter_seed = std::env::var("SCHED_JITTER_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    for name in ["lrf", "arp"] {
        let (c, s) = (cfg("bbr", name), cfg("bbr", name));
        let mut pair = match jitter_seed {
            None => Pair::new(c, s, &paths, 3),
            Some(k) => jittered_pair(c, s, &paths, k, ack_jitter_ms()),
        };
        let spec = TransferSpec {
            response_bytes: 20_000_000,
            seed: jitter_seed.unwrap_or(11),
            max_time: Duration::from_secs(600),
            ..TransferSpec::default()
        };
        let (mut bin, mut bin_max) = (0u64, 0u64);
        let state = Arc::new(Mutex::new(Vec::new()));
        let mut installed = false;
        let r = run_transfer_with(&mut pair, &spec, |p| {
            if !installed && let Some(s) = p.server.as_mut() {
                // Keeps the scheduler's trace state after each decision, for printing.
                let spy = state.clone();
                s.replace_scheduler(observe(
                    sched::build(name, &SchedConfig::default()).unwrap(),
                    move |_, _, inner| *spy.lock().unwrap() = inner.trace_state(),
                ));
                installed = true;
            }
            let ofo = p.client.counters().ofo_queue_bytes;
            let now_bin = p.now.as_nanos() / 100_000_000;
            if now_bin != bin {
                let Some(server) = p.server.as_ref() else {
                    return;
                };
                let subflows: Vec<String> = server
                    .subflow_stats()
                    .iter()
                    .map(|s| {
                        format!(
                            "{} {:?} SRTT {} ms min RTT {} us BtlBw {:.2} Mbit/s lost {}",
                            s.name,
                            s.cc_phase,
                            s.srtt.as_millis(),
                            s.min_rtt.as_micros(),
                            s.bw_estimate.map_or(0.0, |b| b.bytes_per_s() * 8e-6),
                            s.counters.pkts_lost_total
                        )
                    })
                    .collect();
                let state: Vec<String> = state
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| ["n_mask", "predictive"].contains(k))
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect();
                println!(
                    "{name} {:.1} s: out-of-order max {bin_max} B; {}; {}",
                    bin as f64 / 10.0,
                    subflows.join("; "),
                    state.join(", ")
                );
                (bin, bin_max) = (now_bin, 0);
            }
            bin_max = bin_max.max(ofo);
        });
        assert!(r.is_byte_exact_and_clean(), "{name}: {r:?}");
    }
}

/// Seed 000 Fig. 11(a): equal rates, RTT 50 ms against 50, 100, 150 and 250 ms; the paper
/// plots the average out-of-order queue. Figures in docs/algorithms/arp.md.
#[test]
fn arp_average_out_of_order_queue_over_the_rtt_of_the_second_path() {
    let mut mean_ratio = std::collections::BTreeMap::new();
    for one_way_ms in [25u64, 50, 75, 125] {
        let paths = [path("wifi", 20.0, 25), path("lte", 20.0, one_way_ms)];
        let lrf = transfer("bbr", "lrf", &paths, 20_000_000);
        let arp = transfer("bbr", "arp", &paths, 20_000_000);
        let ratio = arp.ofo_mean_bytes / lrf.ofo_mean_bytes.max(1.0);
        println!(
            "RTT 50 vs {} ms, bbr, 20 MB: lrf {:.3} s, mean queue {:.0} B, max {} B; arp {:.3} s \
             ({:+.1} %), mean queue {:.0} B ({ratio:.2}×), max {} B ({:.2}×), copies {} B",
            2 * one_way_ms,
            lrf.completion_s,
            lrf.ofo_mean_bytes,
            lrf.ofo_max_bytes,
            arp.completion_s,
            (arp.completion_s / lrf.completion_s - 1.0) * 100.0,
            arp.ofo_mean_bytes,
            arp.ofo_max_bytes,
            arp.ofo_max_bytes as f64 / lrf.ofo_max_bytes as f64,
            arp.redundant_bytes
        );
        mean_ratio.insert(2 * one_way_ms, ratio);
    }
    // The average queue falls once the RTTs differ (the paper: "over 300 %" more for minRTT
    // at 100 ms, −65 % for AR&P at 250 ms). At 250 ms AR's utility puts the second path in R
    // (x₂/x₁ = 1 ≤ (250 − 100)/50 = 3), so it carries copies only.
    for rtt_ms in [100, 150, 250] {
        assert!(
            mean_ratio[&rtt_ms] < 0.75,
            "{rtt_ms} ms: {:.2}×",
            mean_ratio[&rtt_ms]
        );
    }
}

/// Window key of the default receive buffer: autotuned as Linux DRS (`recv_window_bytes:
/// None`), not a fixed size.
const AUTOTUNED: u64 = 0;

/// "autotuned" or the fixed window in KiB, for the printed tables.
fn window_label(window: u64) -> String {
    if window == AUTOTUNED {
        "autotuned".into()
    } else {
        format!("{} KiB", window >> 10)
    }
}

/// The sender writes 1 MB every second, `writes` times; returns each write's delivery
/// delay in seconds. `recv_window_bytes`: what the receiver offers (BLEST's rule is about
/// that window), [`AUTOTUNED`] for the default buffer. `jitter_seed`: None = the
/// deterministic pair (`Pair::new`, seed 5); Some(k) = [`jittered_pair`] with seed k.
/// `sched_name` may carry '+'-separated flags after a '/': `paper` (ECF with RFC 6298's
/// δ, `delta=paper`, the default until the kernel's δ replaced it) and `no-penalty`
/// (`rcv_buf_penalty=off`); e.g. "ecf/paper+no-penalty".
fn app_limited(
    cc: &str,
    sched_name: &str,
    paths: &[SimPath],
    writes: u64,
    recv_window_bytes: u64,
    jitter_seed: Option<u64>,
) -> Vec<f64> {
    let (name, flags) = sched_name.split_once('/').unwrap_or((sched_name, ""));
    let mut c = Config {
        recv_window_bytes: (recv_window_bytes != AUTOTUNED).then_some(recv_window_bytes),
        ..cfg(cc, name)
    };
    for flag in flags.split('+').filter(|f| !f.is_empty()) {
        let (key, value) = match flag {
            "paper" => ("delta", "paper"),
            "no-penalty" => ("rcv_buf_penalty", "off"),
            other => panic!("unknown scheduler flag {other:?} in {sched_name:?}"),
        };
        let opts = &mut c.sched_config.options;
        opts.insert(key.into(), value.into());
    }
    let mut pair = match jitter_seed {
        None => Pair::new(c.clone(), c, paths, 5),
        Some(seed) => jittered_pair(c.clone(), c, paths, seed, ack_jitter_ms()),
    };
    let spec = AppLimitedSpec {
        writes,
        ..AppLimitedSpec::default()
    };
    let r = run_app_limited(&mut pair, &spec, |_| {});
    assert!(r.outcome.is_ok(), "{cc} × {sched_name}: {:?}", r.outcome);
    assert_eq!(r.delays.len() as u64, writes);
    r.delays.iter().map(|d| d.as_secs_f64()).collect()
}

fn percentile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let rank = (q * (s.len() - 1) as f64).round() as usize;
    s[rank]
}

#[test]
fn every_scheduler_survives_a_path_break_byte_exact() {
    // Seed 000 Fig. 10(a) conditions (netem-scenarios/seed000-path-break.toml): 20 Mbit/s,
    // 25 ms one way on both paths, then a total outage of lte. 50 MB over 40 Mbit/s takes
    // about 10 s, so the outage starts at 5 s (mid-transfer) instead of 15 s.
    let paths = [path("wifi", 20.0, 25), path("lte", 20.0, 25)];
    let mut dead = paths[1].up;
    dead.loss = 1.0;
    for cc in ["bbr", "cubic"] {
        for name in NEW_SCHEDULERS
            .iter()
            .chain(["lrf", "rr", "redundant"].iter())
        {
            // The default (autotuned) receive buffer: no figure is calibrated here, and the
            // buffer the product runs is the one that must survive the break.
            let mut pair = Pair::new(cfg_autotuned(cc, name), cfg_autotuned(cc, name), &paths, 7);
            let spec = TransferSpec {
                response_bytes: 50_000_000,
                seed: 13,
                max_time: Duration::from_secs(600),
                ..TransferSpec::default()
            };
            let mut broken = false;
            let r = run_transfer_with(&mut pair, &spec, |p| {
                if !broken && p.now.as_nanos() >= 5_000_000_000 {
                    p.set_link(1, false, dead);
                    p.set_link(1, true, dead);
                    broken = true;
                }
            });
            println!(
                "path break at 5 s, {cc} × {name:<16}: 50 MB in {:.2} s, byte-exact {}",
                r.response_done.map_or(f64::NAN, |d| d.as_secs_f64()),
                r.response_sha_sent == r.response_sha_received
                    && r.response_bytes_received == 50_000_000
            );
            mptransport::report::emit(
                "path_break",
                &serde_json::json!({"cc": cc, "sched": name, "completion_s": r.response_done.map(|d| d.as_secs_f64()), "byte_exact": r.response_sha_sent == r.response_sha_received && r.response_bytes_received == 50_000_000}),
            );
            assert!(broken, "the transfer ended before the break");
            assert_eq!(r.response_bytes_received, 50_000_000, "{cc} × {name}");
            assert_eq!(
                r.response_sha_sent, r.response_sha_received,
                "{cc} × {name}"
            );
        }
    }
}

/// Checks, after each decision of AR&P, that the predicted arrival of the first segment
/// placed is not earlier than the bound on the last segment of the previous decision of the
/// same batch.
struct ArrivalCheck {
    last: Option<(f64, f64)>,
    checked: Arc<AtomicU64>,
    violations: Arc<AtomicU64>,
    /// P-scheduling decisions (a run placed by predicted arrival), in or out of a batch.
    predicted: Arc<AtomicU64>,
    /// Not an invariant, reported: the largest amount (ns) by which a fresh run's predicted
    /// arrival falls below the previous fresh run's bound when the two are in different
    /// batches (t0, rates and queues have moved in between).
    worst_across_batches_ns: Arc<AtomicU64>,
}

impl ArrivalCheck {
    fn after_select(&mut self, snap: &Snapshot<'_>, sel: &Selection, arp: &dyn Scheduler) {
        let state = arp.trace_state();
        let get = |k: &str| {
            state
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| *v)
                .expect("arp reports its state")
        };
        let (batch, first, bound) = (
            get("batch"),
            get("arrival_first_s"),
            get("arrival_last_bound_s"),
        );
        if matches!(sel, Selection::Send { .. }) && first.is_finite() {
            self.predicted.fetch_add(1, Ordering::Relaxed);
            if let Some((b, prev_bound)) = self.last {
                if b == batch {
                    self.checked.fetch_add(1, Ordering::Relaxed);
                    if first < prev_bound - 1e-9 {
                        self.violations.fetch_add(1, Ordering::Relaxed);
                    }
                } else if matches!(snap.kind, SendKind::Fresh) && first < prev_bound {
                    let ns = ((prev_bound - first) * 1e9) as u64;
                    self.worst_across_batches_ns
                        .fetch_max(ns, Ordering::Relaxed);
                }
            }
            self.last = Some((batch, bound));
        }
    }
}

#[test]
fn arp_predicted_arrival_never_decreases_within_a_batch_in_real_transfers() {
    let scenarios: [(&str, [SimPath; 2]); 3] = [
        (
            "asymmetric",
            [path("wifi", 20.0, 25), path("lte", 20.0, 75)],
        ),
        ("equal", [path("wifi", 20.0, 25), path("lte", 20.0, 25)]),
        ("rate-skew", [path("wifi", 30.0, 10), path("lte", 8.0, 40)]),
    ];
    let mut total_checked = 0;
    for (label, paths) in scenarios {
        for predict in ["probe_bw", "always"] {
            for cc in ["bbr", "cubic"] {
                let mut sched_cfg = SchedConfig::default();
                sched_cfg.options.insert("predict".into(), predict.into());
                let checked = Arc::new(AtomicU64::new(0));
                let violations = Arc::new(AtomicU64::new(0));
                let predicted = Arc::new(AtomicU64::new(0));
                let worst_across = Arc::new(AtomicU64::new(0));
                let mut pair = Pair::new(cfg(cc, "arp"), cfg(cc, "arp"), &paths, 9);
                let mut installed = false;
                let spec = TransferSpec {
                    response_bytes: 8_000_000,
                    seed: 3,
                    max_time: Duration::from_secs(300),
                    ..TransferSpec::default()
                };
                let r = run_transfer_with(&mut pair, &spec, |p| {
                    if !installed && let Some(s) = p.server.as_mut() {
                        let mut check = ArrivalCheck {
                            last: None,
                            checked: checked.clone(),
                            violations: violations.clone(),
                            predicted: predicted.clone(),
                            worst_across_batches_ns: worst_across.clone(),
                        };
                        s.replace_scheduler(observe(
                            sched::build("arp", &sched_cfg).unwrap(),
                            move |snap, sel, arp| check.after_select(snap, sel, arp),
                        ));
                        installed = true;
                    }
                });
                assert!(r.is_byte_exact_and_clean(), "{label} {predict} {cc}: {r:?}");
                let (c, v) = (
                    checked.load(Ordering::Relaxed),
                    violations.load(Ordering::Relaxed),
                );
                // With bbr in the paper's mode P runs once the subflows of N are in
                // PROBE_BW; in these runs every batch there held one decision (the scheduling
                // window stays about full, each segment sent frees room for about one), so
                // the multi-decision batches checked come from predict=always.
                println!(
                    "arp {label} predict={predict} {cc}: {} P decisions, {c} of them later \
                     decisions of a batch checked, {v} violations; across batches the \
                     predicted arrival fell back by at most {:.3} ms",
                    predicted.load(Ordering::Relaxed),
                    worst_across.load(Ordering::Relaxed) as f64 / 1e6
                );
                assert_eq!(v, 0, "{label} {predict} {cc}");
                total_checked += c;
            }
        }
    }
    // Most batches hold one decision (the core asks again as soon as one segment's room
    // opens); the check must still have run on many multi-decision batches.
    assert!(
        total_checked > 100,
        "only {total_checked} in-batch decisions checked"
    );
}

// ---------------------------------------------------------------------------------------
// Over seeds. One deterministic run gives one maximum and one p95; these runs put the
// 0–1 ms ACK jitter of `jittered_pair` on every path and repeat over seeds. The set-up (seeds,
// lengths, schedulers, the statistic each verdict reads) was fixed before the first
// multi-seed run and is written in docs/algorithms/arp.md ("Over seeds") and blest.md:
// * AR&P: seeds 1–20, 20 MB (the issue's size), lrf (= minRTT), rr and arp, bbr; each
//   figure as the median over seeds and its range; ratios are per seed (arp and lrf with
//   the same seed), summarised the same way;
// * BLEST / ECF: seeds 1–10, 300 writes of 1 MB, lrf, blest, ecf and ecf with
//   `rcv_buf_penalty=off` × cubic, bbr × windows 16 MiB, 512 KiB, 256 KiB; per seed the
//   p95 over the 300 writes, then the median over seeds and the per-seed ratio to lrf.
// `SCHED_SEEDS=n` and `SCHED_WRITES=n` override the number of seeds and writes of the
// ignored sweeps (for a quicker look; the documented figures use the defaults).

const ARP_SWEEP_SEEDS: u64 = 20;
const APP_SWEEP_SEEDS: u64 = 10;
const APP_SWEEP_WRITES: u64 = 300;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// (median, min, max).
fn spread(v: &[f64]) -> (f64, f64, f64) {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (median(v), min, max)
}

fn show_spread(v: &[f64], scale: f64, decimals: usize) -> String {
    let (m, lo, hi) = spread(v);
    format!(
        "{:.d$} [{:.d$}–{:.d$}]",
        m * scale,
        lo * scale,
        hi * scale,
        d = decimals
    )
}

type Metric = (&'static str, fn(&Outcome) -> f64);

const ARP_METRICS: [Metric; 6] = [
    ("completion (s)", |o| o.completion_s),
    ("max (kB)", |o| o.ofo_max_bytes as f64),
    ("max after 2 s (kB)", |o| o.ofo_max_after_2s_bytes as f64),
    ("mean (kB)", |o| o.ofo_mean_bytes),
    ("max after start-up (kB)", |o| o.ofo_max_steady_bytes as f64),
    ("max after 3 s (kB)", |o| o.ofo_max_settled_bytes as f64),
];

/// Per scheduler, the outcomes of seeds 1..=`n_seeds` on seed 000 Fig. 11(b)'s paths.
fn arp_asymmetric_rtt_over_seeds(
    scheds: &[&'static str],
    n_seeds: u64,
) -> std::collections::BTreeMap<&'static str, Vec<Outcome>> {
    let paths = [path("wifi", 20.0, 25), path("lte", 20.0, 75)];
    // `SCHED_CC` runs the same seeds over another CC (seed 000's page: coupled-bbr, as the
    // paper ran AR&P); the bounds below were measured with bbr.
    let cc = std::env::var("SCHED_CC").unwrap_or_else(|_| "bbr".to_string());
    let runs: Vec<(&'static str, u64)> = scheds
        .iter()
        .flat_map(|&s| (1..=n_seeds).map(move |seed| (s, seed)))
        .collect();
    let outcomes = par_map(&runs, |&(s, seed)| {
        transfer_jittered(&cc, s, &paths, 20_000_000, seed)
    });
    let mut out: std::collections::BTreeMap<&'static str, Vec<Outcome>> =
        std::collections::BTreeMap::new();
    for ((s, _), o) in runs.iter().zip(outcomes) {
        out.entry(*s).or_default().push(o);
    }
    for seed in 1..=n_seeds {
        for &s in scheds {
            let o = &out[s][seed as usize - 1];
            println!(
                "seed {seed} {s:<4}: {:.3} s, max {} B at {:.2} s, after 2 s {} B, mean {:.0} B, \
                 start-up over at {:.2} s, max after it {} B, copies {} B{}",
                o.completion_s,
                o.ofo_max_bytes,
                o.ofo_max_at_s,
                o.ofo_max_after_2s_bytes,
                o.ofo_mean_bytes,
                o.steady_from_s,
                o.ofo_max_steady_bytes,
                o.redundant_bytes,
                if s == "arp" {
                    format!(
                        ", LTE first in N at {:.2} s, entered N {} times, in N at the end since \
                         {:.2} s",
                        o.last_path_joined_n_at_s,
                        o.last_path_n_entries,
                        o.last_path_in_n_at_end_since_s
                    )
                } else {
                    String::new()
                }
            );
            // One record per seed and scheduler for `REPRO_OUT`: seed 000's page counts the
            // seeds of each AR&P mode from them (when LTE joined N against the end of
            // start-up). NaN (never joined, or not arp) is written as null.
            mptransport::report::emit(
                "arp_asymmetric_rtt_seed",
                &serde_json::json!({"cc": cc, "sched": s, "seed": seed,
                    "ack_jitter_ms": ack_jitter_ms(), "completion_s": o.completion_s,
                    "ofo_max_bytes": o.ofo_max_bytes, "ofo_mean_bytes": o.ofo_mean_bytes,
                    "ofo_max_after_2s_bytes": o.ofo_max_after_2s_bytes,
                    "ofo_max_after_3s_bytes": o.ofo_max_settled_bytes,
                    "steady_from_s": o.steady_from_s,
                    "ofo_max_steady_bytes": o.ofo_max_steady_bytes,
                    "redundant_bytes": o.redundant_bytes,
                    "last_path_joined_n_at_s": o.last_path_joined_n_at_s,
                    "last_path_n_entries": o.last_path_n_entries,
                    "last_path_in_n_at_end_since_s": o.last_path_in_n_at_end_since_s}),
            );
        }
    }
    println!("median [min–max] over {n_seeds} seeds; ratios per seed against lrf");
    // One record per scheduler and metric for `REPRO_OUT` (testbed/reproduce.py): the median
    // and range over seeds (in `unit`: the labels' kB are for printing), and of the per-seed
    // ratio to lrf.
    for &s in scheds {
        for (label, f) in ARP_METRICS {
            let v: Vec<f64> = out[s].iter().map(f).collect();
            let r: Vec<f64> = v
                .iter()
                .zip(out["lrf"].iter().map(f))
                .map(|(a, b)| a / b)
                .collect();
            let ((m, lo, hi), (rm, rlo, rhi)) = (spread(&v), spread(&r));
            mptransport::report::emit(
                "arp_asymmetric_rtt_over_seeds",
                &serde_json::json!({"cc": cc, "sched": s, "seeds": n_seeds,
                    "ack_jitter_ms": ack_jitter_ms(), "metric": label,
                    "unit": if label.contains("kB") { "bytes" } else { "s" },
                    "median": m, "min": lo, "max": hi,
                    "ratio_to_lrf_median": rm, "ratio_to_lrf_min": rlo, "ratio_to_lrf_max": rhi}),
            );
        }
    }
    for (label, f) in ARP_METRICS {
        let scale = if label.contains("kB") { 1e-3 } else { 1.0 };
        let digits = if label.contains("kB") { 0 } else { 3 };
        let lrf: Vec<f64> = out["lrf"].iter().map(f).collect();
        let mut line = format!("{label:<24}");
        for &s in scheds {
            let v: Vec<f64> = out[s].iter().map(f).collect();
            line += &format!(" | {s} {}", show_spread(&v, scale, digits));
            if s != "lrf" {
                let r: Vec<f64> = v.iter().zip(&lrf).map(|(a, b)| a / b).collect();
                line += &format!(" ({}×)", show_spread(&r, 1.0, 3));
            }
        }
        println!("{line}");
    }
    out
}

/// Per-seed ratios `sched`/lrf of one metric.
fn ratios(
    out: &std::collections::BTreeMap<&'static str, Vec<Outcome>>,
    sched: &str,
    f: fn(&Outcome) -> f64,
) -> Vec<f64> {
    out[sched]
        .iter()
        .zip(&out["lrf"])
        .map(|(a, b)| f(a) / f(b))
        .collect()
}

/// Seed 000 Fig. 11(b) over seeds 1–20, lrf (= minRTT), rr and arp (about 9 s of CPU):
/// `cargo test --release --test sched_scenarios arp_over_seeds -- --nocapture` prints each
/// run and the table of docs/algorithms/arp.md ("Over seeds"). Asserts what holds there; the
/// bounds sit above the worst seed (or the median where a statistic is bimodal), see below.
/// They hold for the set-up's 0–1 ms jitter (and 0–0.3 ms); with `SCHED_ACK_JITTER_MS=3` the
/// after-3-s bound fails (1.20× lrf, the page's sensitivity table).
#[test]
fn arp_over_seeds_on_asymmetric_rtt() {
    let n = env_or("SCHED_SEEDS", ARP_SWEEP_SEEDS);
    let out = arp_asymmetric_rtt_over_seeds(&["lrf", "rr", "arp"], n);
    let mean = ratios(&out, "arp", |o| o.ofo_mean_bytes);
    let after_3s = ratios(&out, "arp", |o| o.ofo_max_settled_bytes as f64);
    let after_startup = ratios(&out, "arp", |o| o.ofo_max_steady_bytes as f64);
    let time = ratios(&out, "arp", |o| o.completion_s);
    // Measured over seeds 1–20 (docs/algorithms/arp.md): the mean 0.60× (0.01–0.62), the
    // maximum after 3 s 0.18× (0.00–0.20): every seed, so every seed is held to a bound
    // between the worst seed and lrf. After start-up 0.10× in the median, but 1.00× in one
    // seed (LTE joins N only after its start-up); the median is held to the issue's 0.5×.
    // Time: +5.4 % in the median, up to +80 % in the seeds where LTE never leaves R; the
    // median is held to +10 %.
    assert!(mean.iter().all(|r| *r < 0.75), "mean {mean:?}");
    assert!(after_3s.iter().all(|r| *r <= 0.5), "after 3 s {after_3s:?}");
    assert!(
        median(&after_startup) <= 0.5,
        "after start-up {after_startup:?}"
    );
    assert!(median(&time) <= 1.10, "time {time:?}");
}

/// The issue's bar over the same seeds: the overall maximum ≤ 0.5× lrf's and the completion
/// time within +5 %, each as the median of the per-seed ratios. Not met (docs/algorithms/arp.md,
/// "Over seeds"); kept as the bar, not lowered:
/// `cargo test --release --test sched_scenarios arp_meets -- --ignored --nocapture`.
#[test]
#[ignore = "measures a median max of 1.09× lrf and +5.4 % time against ≤ 0.5× and ≤ +5 %; see docs/algorithms/arp.md"]
fn arp_meets_the_issue_bar_on_the_overall_maximum_and_time() {
    let out = arp_asymmetric_rtt_over_seeds(&["lrf", "arp"], ARP_SWEEP_SEEDS);
    let max = ratios(&out, "arp", |o| o.ofo_max_bytes as f64);
    let time = ratios(&out, "arp", |o| o.completion_s);
    assert!(median(&max) <= 0.5, "max / lrf per seed {max:?}");
    assert!(median(&time) <= 1.05, "time / lrf per seed {time:?}");
}

type P95Table = std::collections::BTreeMap<(u64, &'static str, &'static str), Vec<f64>>;

/// The sweep's schedulers: every one at its defaults (ECF with the kernel's δ), ECF without
/// the receive-buffer penalty, and ECF with RFC 6298's δ (the sweep's ECF before the kernel's
/// δ became the default).
const APP_SCHEDULERS: [&str; 5] = ["lrf", "blest", "ecf", "ecf/no-penalty", "ecf/paper"];
/// The default (autotuned) buffer, the fixed 16 MiB that was the default until autotuning,
/// and two fixed windows that bind.
const APP_WINDOWS: [u64; 4] = [AUTOTUNED, 16 << 20, 512 << 10, 256 << 10];

/// 10 Mbit/s each, RTT 10 ms vs 100 ms: per seed 1..=`n_seeds`, the p95 of the per-write
/// delivery delay over `writes` writes of 1 MB, one a second.
fn p95_of_seed(window: u64, cc: &str, sched_name: &str, seed: u64, writes: u64) -> f64 {
    let paths = [path("fast", 10.0, 5), path("slow", 10.0, 50)];
    let delays = app_limited(cc, sched_name, &paths, writes, window, Some(seed));
    percentile(&delays, 0.95)
}

/// Per-seed ratios of one cell against lrf with the same window, CC and seed.
fn against_lrf(t: &P95Table, window: u64, cc: &'static str, s: &'static str) -> Vec<f64> {
    let lrf = &t[&(window, cc, "lrf")];
    t[&(window, cc, s)]
        .iter()
        .zip(lrf)
        .map(|(a, b)| a / b)
        .collect()
}

/// Runs `cells` (and lrf for each window × CC among them), printing one line per window × CC
/// in the form of docs/algorithms/blest.md's table.
fn app_limited_over_seeds(
    cells: &[(u64, &'static str, &'static str)],
    n_seeds: u64,
    writes: u64,
) -> P95Table {
    let mut keys: Vec<(u64, &'static str, &'static str)> = Vec::new();
    let mut groups: Vec<(u64, &'static str)> = Vec::new();
    for &(w, cc, s) in cells {
        for name in ["lrf", s] {
            if !keys.contains(&(w, cc, name)) {
                keys.push((w, cc, name));
            }
        }
        if !groups.contains(&(w, cc)) {
            groups.push((w, cc));
        }
    }
    let runs: Vec<_> = keys
        .iter()
        .flat_map(|&k| (1..=n_seeds).map(move |seed| (k, seed)))
        .collect();
    let p95 = par_map(&runs, |&((w, cc, name), seed)| {
        p95_of_seed(w, cc, name, seed, writes)
    });
    let mut t = P95Table::new();
    for ((key, _), v) in runs.iter().zip(p95) {
        t.entry(*key).or_default().push(v);
    }
    for (w, cc) in groups {
        let mut line = format!(
            "window {}, {cc}, p95 of {writes} writes (ms), median [min–max] over \
             {n_seeds} seeds: lrf {}",
            window_label(w),
            show_spread(&t[&(w, cc, "lrf")], 1e3, 0)
        );
        let others: Vec<&'static str> = t
            .keys()
            .filter(|k| k.0 == w && k.1 == cc && k.2 != "lrf")
            .map(|k| k.2)
            .collect();
        for s in others {
            let v = &t[&(w, cc, s)];
            let r = against_lrf(&t, w, cc, s);
            let below = r.iter().filter(|x| **x < 1.0).count();
            line += &format!(
                "; {s} {} (×lrf {}, below lrf in {below}/{n_seeds})",
                show_spread(v, 1e3, 0),
                show_spread(&r, 1.0, 3)
            );
        }
        println!("{line}");
    }
    t
}

/// Every window × CC × scheduler of docs/algorithms/blest.md's table (about 170 s of CPU):
/// `cargo test --release --test sched_scenarios app_limited_over_seeds_sweep -- --ignored --nocapture`.
#[test]
#[ignore = "the 10-seed, 300-write sweep of docs/algorithms/blest.md (about 170 s of CPU)"]
fn app_limited_over_seeds_sweep() {
    let mut cells = Vec::new();
    for w in APP_WINDOWS {
        for cc in ["cubic", "bbr"] {
            for s in &APP_SCHEDULERS[1..] {
                cells.push((w, cc, *s));
            }
        }
    }
    let t = app_limited_over_seeds(
        &cells,
        env_or("SCHED_SEEDS", APP_SWEEP_SEEDS),
        env_or("SCHED_WRITES", APP_SWEEP_WRITES),
    );
    assert_eq!(t.len(), APP_WINDOWS.len() * 2 * APP_SCHEDULERS.len());
}

/// Cells where the sweep (seeds 1–10, 300 writes; re-run on commit 0017229, table in
/// docs/algorithms/blest.md) put the scheduler's p95 below lrf's in every seed, at least 1 %
/// from a tie in its worst seed (in the comment).
const CUTS_IN_EVERY_SEED: [(u64, &str, &str); 6] = [
    (AUTOTUNED, "bbr", "ecf/paper"), // 0.930
    (16 << 20, "bbr", "ecf/paper"),  // 0.929
    (512 << 10, "cubic", "blest"),   // 0.963
    (512 << 10, "bbr", "blest"),     // 0.987
    (256 << 10, "cubic", "blest"),   // 0.835
    (256 << 10, "bbr", "ecf/paper"), // 0.982
];

/// Cells where it was above lrf's in every seed; best per-seed ratio in the comment. ECF at
/// its default (the kernel's δ ≥ 100 ms) holds the slow path back for longer and is slower
/// with cubic at every window; BLEST with bbr at 256 KiB stays slower after bbr's ssthresh.
const SLOWER_IN_EVERY_SEED: [(u64, &str, &str); 4] = [
    (AUTOTUNED, "cubic", "ecf"),       // 1.291
    (512 << 10, "cubic", "ecf/paper"), // 1.126: the kernel's cwnd penalisation
    (256 << 10, "cubic", "ecf/paper"), // 1.104
    (256 << 10, "bbr", "blest"),       // 1.149
];

/// Seeds 1–3 of the sweep (the first three of its ten) on a selection of the cells whose sign
/// did not change over the ten: each seed must keep that sign. The worst seed of the ten is
/// at least 1 % from a tie in every such cell (table in docs/algorithms/blest.md); ties and
/// mixed cells (BLEST at the default window, ECF at its defaults with bbr) are not asserted.
#[test]
fn blest_and_ecf_tail_delay_over_seeds_keeps_the_sign_of_the_sweep() {
    let cells: Vec<_> = CUTS_IN_EVERY_SEED
        .iter()
        .chain(SLOWER_IN_EVERY_SEED.iter())
        .copied()
        .collect();
    let t = app_limited_over_seeds(&cells, env_or("SCHED_SEEDS", 3), APP_SWEEP_WRITES);
    for (w, cc, s) in CUTS_IN_EVERY_SEED {
        let r = against_lrf(&t, w, cc, s);
        assert!(r.iter().all(|x| *x < 1.0), "{s} {cc} {w}: {r:?}");
    }
    for (w, cc, s) in SLOWER_IN_EVERY_SEED {
        let r = against_lrf(&t, w, cc, s);
        assert!(r.iter().all(|x| *x > 1.0), "{s} {cc} {w}: {r:?}");
    }
}

/// The issue's bar: at the issue's set-up (the default receive window, now autotuned) BLEST
/// and ECF, each at its defaults, cut the p95 against lrf, with cubic and with bbr, in every
/// seed of the sweep. Neither does on commit 0017229 (docs/algorithms/blest.md):
/// `cargo test --release --test sched_scenarios blest_and_ecf_meet -- --ignored --nocapture`.
#[test]
#[ignore = "at the default (autotuned) window BLEST ties lrf (1.000× with cubic, 5/10 seeds below; 1.000× with bbr, 0/10) and ECF at its defaults is slower with cubic (1.306×) and ties with bbr (1.000×); see docs/algorithms/blest.md"]
fn blest_and_ecf_meet_the_issue_bar_at_the_default_window() {
    let w = AUTOTUNED;
    let cells = [
        (w, "cubic", "blest"),
        (w, "cubic", "ecf"),
        (w, "bbr", "blest"),
        (w, "bbr", "ecf"),
    ];
    let t = app_limited_over_seeds(&cells, APP_SWEEP_SEEDS, APP_SWEEP_WRITES);
    for (w, cc, s) in cells {
        let r = against_lrf(&t, w, cc, s);
        assert!(r.iter().all(|x| *x < 1.0), "{s} {cc}: {r:?}");
    }
}

/// The jittered pair without jitter is the plain pair: the same transfer, the same queue.
#[test]
fn jittered_pair_without_jitter_is_the_plain_pair() {
    let paths = [path("wifi", 20.0, 25), path("lte", 20.0, 75)];
    let plain = transfer("bbr", "lrf", &paths, 5_000_000);
    let (c, s) = (cfg("bbr", "lrf"), cfg("bbr", "lrf"));
    let same = transfer_on(
        jittered_pair(c.clone(), s.clone(), &paths, 3, 0.0),
        "bbr",
        "lrf",
        2,
        5_000_000,
        11,
    );
    assert_eq!(plain.completion_s, same.completion_s);
    assert_eq!(plain.ofo_max_bytes, same.ofo_max_bytes);
    // With the jitter the seed matters: two seeds, two different runs.
    let a = transfer_on(
        jittered_pair(c.clone(), s.clone(), &paths, 1, ACK_JITTER_MS),
        "bbr",
        "lrf",
        2,
        5_000_000,
        11,
    );
    let b = transfer_on(
        jittered_pair(c, s, &paths, 2, ACK_JITTER_MS),
        "bbr",
        "lrf",
        2,
        5_000_000,
        11,
    );
    assert_ne!(
        (a.completion_s, a.ofo_max_bytes),
        (b.completion_s, b.ofo_max_bytes)
    );
}

/// Seed 000 Fig. 11(a) over seeds: equal rates (20 Mbit/s), RTT 50 ms against 50, 100, 150
/// and 250 ms, 20 MB with bbr, lrf and arp with the 0–1 ms ACK jitter, seeds 1–10 (fixed
/// before the run, as the other sweeps); per RTT the median [range] of the per-seed ratios
/// arp/lrf of the mean queue (what the figure plots), the maximum and the time (about 20 s
/// of CPU): `cargo test --release --test sched_scenarios arp_fig11a_over_seeds -- --ignored
/// --nocapture`. Figures in docs/algorithms/arp.md.
#[test]
#[ignore = "a sweep for docs/algorithms/arp.md (Fig. 11(a) over seeds)"]
fn arp_fig11a_over_seeds() {
    let n = env_or("SCHED_SEEDS", 10);
    for one_way_ms in [25u64, 50, 75, 125] {
        let paths = [path("wifi", 20.0, 25), path("lte", 20.0, one_way_ms)];
        let runs = |s: &str| -> Vec<Outcome> {
            (1..=n)
                .map(|seed| transfer_jittered("bbr", s, &paths, 20_000_000, seed))
                .collect()
        };
        let (lrf, arp) = (runs("lrf"), runs("arp"));
        let ratio = |f: fn(&Outcome) -> f64| -> Vec<f64> {
            arp.iter()
                .zip(&lrf)
                .map(|(a, b)| f(a) / f(b).max(1.0))
                .collect()
        };
        let mean_lrf: Vec<f64> = lrf.iter().map(|o| o.ofo_mean_bytes).collect();
        println!(
            "RTT 50 vs {} ms over {n} seeds: lrf mean queue {} kB; arp/lrf mean {}×, max {}×, \
             time {}×",
            2 * one_way_ms,
            show_spread(&mean_lrf, 1e-3, 1),
            show_spread(&ratio(|o| o.ofo_mean_bytes), 1.0, 3),
            show_spread(&ratio(|o| o.ofo_max_bytes as f64), 1.0, 3),
            show_spread(&ratio(|o| o.completion_s), 1.0, 3)
        );
    }
}
