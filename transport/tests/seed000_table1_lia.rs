//! Why LIA's subflow out-runs the Reno flows on Table I's first bottleneck (seed 000, "Coupled
//! BBR"): the Table I topology of `seed000_table1.rs` over many seeds and longer runs, with
//! controls that take one suspect away at a time. Written up in
//! `docs/reproductions/table1-lia-seed000.md`.
//!
//! Variants (`T1LIA_VARIANTS`, comma-separated; default all):
//! * `lia`: Table I as the page runs it (LIA over both bottlenecks, 2 Reno flows on each).
//! * `reno-mp`: the same, but the MPTCP connection runs uncoupled Reno on each subflow: if its
//!   subflow 1 also beats the Reno flows, the coupling is not the cause.
//! * `reno-only`: bottleneck 1 with three single-path Reno flows: flow 0 takes the MPTCP
//!   connection's place, so its ratio to the other two is what seed and start order alone do.
//! * `lia-ack1`: `lia` with an ACK for every packet instead of every second one (both ends),
//!   for the ACK-counting question (this code counts acknowledged bytes for every CC).
//! * `lia-rfc`: `lia` with RFC 6356's per-ACK byte formula (`--cc-opt form=rfc`) instead of
//!   `mptcp_coupled.c`'s integer α.
//!
//! Each run prints one `seed000_table1_lia` JSON line: the flow on bottleneck 1 under study
//! (`sf1`: the MPTCP connection's subflow 1, or flow 0 in `reno-only`) against the mean of
//! the two Reno flows there, per 10 s window and over [warm-up, end], with congestion events
//! (fast recoveries + RTOs) per 1000 packets sent and the mean SRTT and cwnd sampled every
//! 10 ms. `T1LIA_TRACE=1` also prints to stderr, every 0.5 s, each subflow of the connection:
//! cwnd, SRTT, LIA's `cc_extra` (α_k, packets per +1), in-flight and ssthresh.
//!
//! A benchmark, not a CI test: `T1LIA_SEEDS=1-10 T1LIA_S=120 cargo test --release --test
//! seed000_table1_lia -- --ignored --nocapture`.

mod seed_cc_common;

use std::time::Duration;

use mptransport::connection::Config;
use mptransport::sim::{Net, per_path};
use seed_cc_common::{bottleneck, cfg, env_secs, route, run_rates};

/// Per tick sample of one (flow, path): acked bytes, packets sent, congestion events, srtt, cwnd.
#[derive(Clone, Copy, Default)]
struct Sample {
    acked: u64,
    sent: u64,
    events: u64,
    lost: u64,
    spurious: u64,
    srtt_s: f64,
    cwnd_pkts: f64,
}

/// Reads one counter of a [`Sample`].
type Counter = fn(&Sample) -> u64;

fn sample(net: &Net, flow: usize, path: &str) -> Sample {
    per_path(net.flows[flow].server.as_ref(), |s| Sample {
        acked: s.counters.bytes_acked_total,
        sent: s.counters.pkts_sent_total,
        events: s.counters.recoveries_total + s.counters.rto_total,
        lost: s.counters.pkts_lost_total,
        spurious: s.counters.spurious_losses_total,
        srtt_s: s.srtt.as_secs_f64(),
        cwnd_pkts: s.cwnd_bytes as f64 / 1448.0,
    })
    .into_iter()
    .find(|(n, _)| n == path)
    .map(|(_, x)| x)
    .unwrap_or_default()
}

fn with_acks(mut c: Config, every: u32) -> Config {
    c.ack_every_pkts = every;
    c
}

/// Builds the variant's network; returns it with the (flow, path) pairs on bottleneck 1: the
/// one under study first, then the two Reno flows.
fn build(variant: &str, seed: u64) -> (Net, Vec<(usize, String)>) {
    let mut net = Net::new(seed);
    let b1 = bottleneck(&mut net, 100.0, 25.0, 0.7, 1e-4);
    let ack_every = if variant == "lia-ack1" { 1 } else { 2 };
    let (mp_cc, opts): (&str, &[(&str, &str)]) = match variant {
        "lia" | "lia-ack1" => ("lia", &[]),
        "lia-rfc" => ("lia", &[("form", "rfc")]),
        "reno-mp" => ("reno", &[]),
        "reno-only" => ("reno", &[]),
        other => panic!(
            "T1LIA_VARIANTS: unknown variant '{other}' (lia, reno-mp, reno-only, lia-ack1, lia-rfc)"
        ),
    };
    let mp = |o| with_acks(cfg(mp_cc, o), ack_every);
    let reno = || with_acks(cfg("reno", &[]), ack_every);
    if variant == "reno-only" {
        for i in 0..3 {
            let r = route(&mut net, &format!("f{i}"), b1, 25.0);
            net.add_flow(reno(), reno(), &[r]);
        }
        return (
            net,
            vec![(0, "f0".into()), (1, "f1".into()), (2, "f2".into())],
        );
    }
    let b2 = bottleneck(&mut net, 100.0, 25.0, 0.7, 1e-3);
    let (r1, r2) = (
        route(&mut net, "sf1", b1, 25.0),
        route(&mut net, "sf2", b2, 25.0),
    );
    net.add_flow(mp(opts), mp(opts), &[r1, r2]);
    for (i, b) in [b1, b1, b2, b2].into_iter().enumerate() {
        let r = route(&mut net, &format!("bg{i}"), b, 25.0);
        net.add_flow(reno(), reno(), &[r]);
    }
    (
        net,
        vec![(0, "sf1".into()), (1, "bg0".into()), (2, "bg1".into())],
    )
}

fn run(variant: &str, seed: u64, secs: u64) -> serde_json::Value {
    let (mut net, watched) = build(variant, seed);
    let warmup = Duration::from_secs(10.min(secs / 3));
    let window = Duration::from_secs(10);
    let mut marks: Vec<Vec<Sample>> = Vec::new(); // every 10 s, per watched flow
    let mut sums = vec![(0.0f64, 0.0f64, 0u64); watched.len()]; // srtt, cwnd, n (after warm-up)
    // The MPTCP connection's second subflow (on bottleneck 2): its cwnd enters LIA's α.
    let mut sf2_cwnd: Vec<(f64, u64)> = Vec::new(); // per 10 s window: sum, samples
    let rates = run_rates(&mut net, Duration::from_secs(secs), warmup, |net, t| {
        let now: Vec<Sample> = watched.iter().map(|(f, p)| sample(net, *f, p)).collect();
        if variant != "reno-only" {
            let i = (t.as_secs() / 10) as usize;
            sf2_cwnd.resize(sf2_cwnd.len().max(i + 1), (0.0, 0));
            sf2_cwnd[i].0 += sample(net, 0, "sf2").cwnd_pkts;
            sf2_cwnd[i].1 += 1;
            if std::env::var("T1LIA_TRACE").is_ok() && (t.as_millis() % 500) < 10 {
                let x = per_path(net.flows[0].server.as_ref(), |s| {
                    (
                        s.cwnd_bytes / 1448,
                        s.srtt.as_millis(),
                        s.cc_snapshot.extra.clone(),
                        s.inflight_bytes / 1448,
                        s.cc_snapshot.ssthresh_bytes.map(|b| b / 1448),
                    )
                });
                eprintln!("t={:.1} {:?}", t.as_secs_f64(), x);
            }
        }
        if t >= window * marks.len() as u32 {
            marks.push(now.clone());
        }
        if t >= warmup {
            for (acc, s) in sums.iter_mut().zip(&now) {
                *acc = (acc.0 + s.srtt_s, acc.1 + s.cwnd_pkts, acc.2 + 1);
            }
        }
    });
    let end: Vec<Sample> = watched.iter().map(|(f, p)| sample(&net, *f, p)).collect();
    marks.push(end.clone());
    let per_window = |i: usize| -> Vec<f64> {
        marks
            .windows(2)
            .map(|w| (w[1][i].acked - w[0][i].acked) as f64 * 8.0 / 10.0 / 1e6)
            .collect()
    };
    // Congestion events per 1000 packets sent after the warm-up (mark 1 = 10 s).
    let warm_mark = (warmup.as_secs() / 10) as usize;
    let per_k = |i: usize, f: fn(&Sample) -> u64| {
        let (a, b) = (&marks[warm_mark.min(marks.len() - 1)][i], &end[i]);
        (f(b) - f(a)) as f64 * 1000.0 / (b.sent - a.sent).max(1) as f64
    };
    let (events, lost, spurious): (Counter, Counter, Counter) =
        (|s| s.events, |s| s.lost, |s| s.spurious);
    let mean = |i: usize, f: fn(&(f64, f64, u64)) -> f64| f(&sums[i]) / sums[i].2.max(1) as f64;
    let study = rates[watched[0].0].path(&watched[0].1).mbps;
    let bg = (rates[watched[1].0].path(&watched[1].1).mbps
        + rates[watched[2].0].path(&watched[2].1).mbps)
        / 2.0;
    serde_json::json!({
        "variant": variant, "seed": seed, "sim_s": secs, "warmup_s": warmup.as_secs(),
        "sf1_mbps": study, "reno_p1_mbps": bg, "ratio": study / bg,
        "mptcp_goodput_mbps": rates[0].goodput_mbps,
        "sf1_windows_mbps": per_window(0),
        "sf1_windows_events": marks.windows(2).map(|w| w[1][0].events - w[0][0].events).collect::<Vec<_>>(),
        "sf2_cwnd_windows_pkts": sf2_cwnd.iter().map(|(s, n)| s / (*n).max(1) as f64).collect::<Vec<_>>(),
        "sf1_cwnd_windows_pkts": marks.windows(2).map(|w| w[1][0].cwnd_pkts).collect::<Vec<_>>(),
        "sf1_rtos": rates[watched[0].0].path(&watched[0].1).rtos,
        "reno_rtos": rates[watched[1].0].path(&watched[1].1).rtos + rates[watched[2].0].path(&watched[2].1).rtos,
        "reno_windows_mbps": per_window(1).iter().zip(per_window(2)).map(|(a, b)| (a + b) / 2.0).collect::<Vec<_>>(),
        "sf1_events_per_kpkt": per_k(0, events),
        "reno_events_per_kpkt": (per_k(1, events) + per_k(2, events)) / 2.0,
        "sf1_lost_per_kpkt": per_k(0, lost),
        "reno_lost_per_kpkt": (per_k(1, lost) + per_k(2, lost)) / 2.0,
        "sf1_spurious_per_kpkt": per_k(0, spurious),
        "reno_spurious_per_kpkt": (per_k(1, spurious) + per_k(2, spurious)) / 2.0,
        "sf1_srtt_ms": mean(0, |x| x.0) * 1e3,
        "reno_srtt_ms": (mean(1, |x| x.0) + mean(2, |x| x.0)) / 2.0 * 1e3,
        "sf1_cwnd_pkts": mean(0, |x| x.1),
        "reno_cwnd_pkts": (mean(1, |x| x.1) + mean(2, |x| x.1)) / 2.0,
    })
}

/// `T1LIA_SEEDS` = "a-b" or "a,b,c" (default "1").
fn seeds() -> Vec<u64> {
    let s = std::env::var("T1LIA_SEEDS").unwrap_or_else(|_| "1".into());
    if let Some((a, b)) = s.split_once('-') {
        let (a, b): (u64, u64) = (a.trim().parse().unwrap(), b.trim().parse().unwrap());
        (a..=b).collect()
    } else {
        s.split(',').map(|x| x.trim().parse().unwrap()).collect()
    }
}

#[test]
#[ignore = "benchmark: Table I's LIA anomaly over seeds and controls; run with --ignored"]
fn table1_lia_over_seeds() {
    let secs = env_secs("T1LIA_S", 60);
    let variants = std::env::var("T1LIA_VARIANTS")
        .unwrap_or_else(|_| "lia,reno-mp,reno-only,lia-ack1,lia-rfc".into());
    for v in variants.split(',') {
        for seed in seeds() {
            let row = run(v.trim(), seed, secs);
            println!("seed000_table1_lia {row}");
            mptransport::report::emit("seed000_table1_lia", &row);
            let r = row["ratio"].as_f64().unwrap_or(0.0);
            assert!(r.is_finite() && r > 0.0, "{v} seed {seed}: ratio {r}");
        }
    }
}
