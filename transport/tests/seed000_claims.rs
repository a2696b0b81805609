//! The experiments of the seed 000 page ("Leveraging Coupled BBR and Adaptive Packet
//! Scheduling to Boost MPTCP", Han et al., IEEE TWC 2021), over seeds, in virtual time. Each
//! benchmark prints and emits (`REPRO_OUT`) one JSON record per seed and configuration; the
//! page (`testbed/reproduce/seed000.py`) decides its verdicts from them with
//! `metrics/verdict.py`. Benchmarks, not CI tests (`--ignored`); the fast tests at the end
//! check the pieces they are built from.
//!
//! * `two_bottlenecks`: Fig. 2's topology (Table I, Fig. 3, Fig. 8(a)): a 2-subflow connection
//!   over two disjoint bottlenecks (100 Mbit/s unless `SEED000_MBPS`) of 25 ms one way, drop-tail queues, random loss on
//!   the data direction, and 2 single-path background flows per bottleneck.
//! * `shared_fairness`: a 2-subflow connection and one single-path BBR flow in one 100 Mbit/s
//!   bottleneck (RTT 50 ms, one-BDP queue): the fairness of Coupled BBR to a TCP BBR flow.
//! * `three_paths`: Fig. 16's topology (Figs. 17 and 18): a 3-subflow connection over three
//!   bottlenecks (100 Mbit/s unless `SEED000_MBPS`), one single-path background flow on each.
//! * `deterioration`: Fig. 10: two 20 Mbit/s paths (25 ms one way); path 2 deteriorates
//!   (loss and delay) suddenly (`sudden`, Fig. 10(a)) or gradually until it is unusable
//!   (`gradual`, Fig. 10(b)); goodput per second, per scheduler.
//!
//! Every ACK link adds a uniform 0–1 ms (FIFO kept, as `sim::shared_bottleneck`), so that a
//! seed changes the run even where no random loss is configured. Loss is Bernoulli, or, with
//! `SEED000_LOSS_MODEL=bursty`, a two-state (Gilbert-Elliott) process stepped every 10 ms of
//! virtual time: a lossy link is in a bad state (50 % loss) for 20 ms on average and in a good
//! state (no loss) otherwise, at the same mean loss rate.
//!
//! Environment (all optional): `SEED000_SEEDS` (`1-10` or `1,2,5`), `SEED000_SIM_S`,
//! `SEED000_WARMUP_S`, `SEED000_QUEUE_BDP`, `SEED000_MBPS`, `SEED000_CCS`, `SEED000_SCHEDS`, `SEED000_LOSS1`,
//! `SEED000_LOSS2` (a comma-separated list), `SEED000_LOSSES`, `SEED000_DELAYS_MS`,
//! `SEED000_MODE`, `SEED000_LOSS_MODEL`, `SEED000_TAG` (copied into every record).
//! `cargo test --release --test seed000_claims -- --ignored --nocapture two_bottlenecks`.

mod seed_cc_common;

use std::time::Duration;

use mptransport::Bandwidth;
use mptransport::rng::Rng;
use mptransport::sim::{BulkPump, LinkId, LinkSpec, Net, Route, per_path};
use seed_cc_common::{cfg, run_rates};

/// Payload share of a datagram on the wire (1472 of 1500 bytes): a full link of R Mbit/s
/// reads R × PAYLOAD here.
const PAYLOAD: f64 = 1472.0 / 1500.0;
/// Largest random extra delay on every ACK link.
const ACK_JITTER: Duration = Duration::from_millis(1);
/// The bursty loss model: loss in the bad state, and the chance per 10 ms step of leaving it
/// (mean stay 20 ms).
const BURST_LOSS: f64 = 0.5;
const BURST_LEAVE: f64 = 0.5;

fn env_str(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_string())
}

fn env_f64(var: &str, default: f64) -> f64 {
    let text = env_str(var, &default.to_string());
    text.parse()
        .unwrap_or_else(|_| panic!("{var}={text}: not a number"))
}

fn env_list(var: &str, default: &str) -> Vec<String> {
    env_str(var, default)
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn env_f64_list(var: &str, default: &str) -> Vec<f64> {
    env_list(var, default)
        .iter()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("{var}: '{s}' is not a number"))
        })
        .collect()
}

/// `1-10` or `1,2,5`.
fn parse_seeds(text: &str) -> Vec<u64> {
    let bad = || panic!("SEED000_SEEDS={text}: expected FIRST-LAST or a comma-separated list");
    if let Some((a, b)) = text.split_once('-') {
        let (a, b): (u64, u64) = (
            a.trim().parse().unwrap_or_else(|_| bad()),
            b.trim().parse().unwrap_or_else(|_| bad()),
        );
        (a..=b).collect()
    } else {
        text.split(',')
            .map(|s| s.trim().parse().unwrap_or_else(|_| bad()))
            .collect()
    }
}

fn seeds() -> Vec<u64> {
    parse_seeds(&env_str("SEED000_SEEDS", "1-10"))
}

/// Run length and warm-up from `SEED000_SIM_S` / `SEED000_WARMUP_S`.
fn run_length(default_s: f64, default_warmup_s: f64) -> (Duration, Duration) {
    (
        Duration::from_secs_f64(env_f64("SEED000_SIM_S", default_s)),
        Duration::from_secs_f64(env_f64("SEED000_WARMUP_S", default_warmup_s)),
    )
}

/// A bottleneck (data direction) of `mbps`, `one_way_ms`, a drop-tail queue of `queue_bdp` ×
/// the BDP of a 2·`one_way_ms` round trip (at least 10 packets), random loss `loss`.
fn bottleneck_spec(mbps: f64, one_way_ms: f64, queue_bdp: f64, loss: f64) -> LinkSpec {
    let rate = Bandwidth::from_mbps(mbps);
    let one_way = Duration::from_secs_f64(one_way_ms / 1e3);
    let bdp = rate.bytes_in(one_way * 2) * queue_bdp;
    LinkSpec {
        rate: Some(rate),
        delay: one_way,
        loss,
        queue_limit_bytes: (bdp as u64).max(15_000),
    }
}

/// A route whose data crosses `down` and whose ACKs return over a fresh uncongested link of
/// `one_way_ms` plus a uniform 0–1 ms.
fn route(net: &mut Net, name: &str, down: LinkId, one_way_ms: f64) -> Route {
    let up = net.add_link_with_jitter(
        LinkSpec {
            rate: None,
            delay: Duration::from_secs_f64(one_way_ms / 1e3),
            loss: 0.0,
            queue_limit_bytes: u64::MAX,
        },
        ACK_JITTER,
    );
    Route {
        name: name.into(),
        up,
        down,
    }
}

/// The loss process of the lossy links: Bernoulli (built into the links) or bursty (stepped
/// here every tick).
struct LossModel {
    bursty: bool,
    rng: Rng,
    /// (link, spec with its mean loss, in the bad state now)
    links: Vec<(LinkId, LinkSpec, bool)>,
}

impl LossModel {
    fn new(seed: u64) -> LossModel {
        let model = env_str("SEED000_LOSS_MODEL", "bernoulli");
        assert!(
            model == "bernoulli" || model == "bursty",
            "SEED000_LOSS_MODEL={model}: expected bernoulli or bursty"
        );
        LossModel {
            bursty: model == "bursty",
            rng: Rng::new(seed ^ 0x5eed_0000),
            links: Vec::new(),
        }
    }

    /// Adds a link; under the bursty model a lossy link starts in the good state.
    fn add(&mut self, net: &mut Net, spec: LinkSpec) -> LinkId {
        let built = if self.bursty && spec.loss > 0.0 {
            LinkSpec { loss: 0.0, ..spec }
        } else {
            spec
        };
        let id = net.add_link(built);
        if self.bursty && spec.loss > 0.0 {
            self.links.push((id, spec, false));
        }
        id
    }

    /// One 10 ms step of every bursty link: enter the bad state with the chance that keeps
    /// the mean loss at the spec's, leave it with [`BURST_LEAVE`].
    fn step(&mut self, net: &mut Net) {
        for (id, spec, bad) in &mut self.links {
            let enter = BURST_LEAVE * spec.loss / (BURST_LOSS - spec.loss);
            let flip = if *bad { BURST_LEAVE } else { enter };
            if self.rng.chance(flip) {
                *bad = !*bad;
                let loss = if *bad { BURST_LOSS } else { 0.0 };
                net.set_link(*id, LinkSpec { loss, ..*spec });
            }
        }
    }
}

/// The background CC of the paper's "same family" for a multipath CC.
fn background_cc(mp_cc: &str) -> &'static str {
    match mp_cc {
        "bbr" | "coupled-bbr" => "bbr",
        "cubic" => "cubic",
        _ => "reno",
    }
}

/// SRTT samples (ms) of one flow's paths, every tick after the warm-up.
#[derive(Default)]
struct RttSamples {
    per_path: Vec<(String, Vec<f64>)>,
}

impl RttSamples {
    fn sample(&mut self, net: &Net, flow: usize) {
        for (name, srtt) in per_path(net.flows[flow].server.as_ref(), |s| s.srtt) {
            if srtt.is_zero() {
                continue;
            }
            match self.per_path.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(srtt.as_secs_f64() * 1e3),
                None => self.per_path.push((name, vec![srtt.as_secs_f64() * 1e3])),
            }
        }
    }

    fn median(&self, name: &str) -> f64 {
        self.per_path
            .iter()
            .find(|(n, _)| n == name)
            .map_or(f64::NAN, |(_, v)| median(v))
    }

    fn pooled_median(&self) -> f64 {
        median(
            &self
                .per_path
                .iter()
                .flat_map(|(_, v)| v.clone())
                .collect::<Vec<_>>(),
        )
    }
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Fig. 2's topology with loss `loss1` / `loss2` on bottlenecks 1 / 2, both of
/// `SEED000_MBPS` (default 100, the paper's); one record.
fn two_bottlenecks_run(mp_cc: &str, loss1: f64, loss2: f64, seed: u64) -> serde_json::Value {
    let (duration, warmup) = run_length(60.0, 10.0);
    let queue_bdp = env_f64("SEED000_QUEUE_BDP", 0.7);
    let mbps = env_f64("SEED000_MBPS", 100.0);
    let bg_cc = background_cc(mp_cc);
    let mut net = Net::new(seed);
    let mut loss = LossModel::new(seed);
    let b1 = loss.add(&mut net, bottleneck_spec(mbps, 25.0, queue_bdp, loss1));
    let b2 = loss.add(&mut net, bottleneck_spec(mbps, 25.0, queue_bdp, loss2));
    let (r1, r2) = (
        route(&mut net, "sf1", b1, 25.0),
        route(&mut net, "sf2", b2, 25.0),
    );
    net.add_flow(cfg(mp_cc, &[]), cfg(mp_cc, &[]), &[r1, r2]);
    for (i, b) in [b1, b1, b2, b2].into_iter().enumerate() {
        let r = route(&mut net, &format!("bg{i}"), b, 25.0);
        net.add_flow(cfg(bg_cc, &[]), cfg(bg_cc, &[]), &[r]);
    }
    let mut rtt = RttSamples::default();
    let mut bg_rtt = RttSamples::default();
    let r = run_rates(&mut net, duration, warmup, |net, t| {
        loss.step(net);
        if t >= warmup {
            rtt.sample(net, 0);
            bg_rtt.sample(net, 1);
        }
    });
    let total: f64 = r.iter().map(|f| f.goodput_mbps).sum();
    serde_json::json!({
        "tag": env_str("SEED000_TAG", ""), "cc": mp_cc, "background_cc": bg_cc, "seed": seed,
        "loss1": loss1, "loss2": loss2, "queue_bdp": queue_bdp, "mbps": mbps,
        "loss_model": env_str("SEED000_LOSS_MODEL", "bernoulli"),
        "sim_s": duration.as_secs_f64(), "warmup_s": warmup.as_secs_f64(),
        "mptcp_mbps": r[0].goodput_mbps,
        "sf1_mbps": r[0].path("sf1").mbps, "sf2_mbps": r[0].path("sf2").mbps,
        "tcp_p1_mbps": [r[1].goodput_mbps, r[2].goodput_mbps],
        "tcp_p2_mbps": [r[3].goodput_mbps, r[4].goodput_mbps],
        "utilisation": total / (2.0 * mbps * PAYLOAD),
        "sf1_srtt_median_ms": rtt.median("sf1"), "sf2_srtt_median_ms": rtt.median("sf2"),
        "mptcp_srtt_median_ms": rtt.pooled_median(),
        "tcp_p1_srtt_median_ms": bg_rtt.pooled_median(),
    })
}

#[test]
#[ignore = "benchmark: Fig. 2's topology per CC, loss point and seed; run with --ignored"]
fn two_bottlenecks() {
    let ccs = env_list("SEED000_CCS", "coupled-bbr,bbr,cubic,lia,olia,balia");
    let loss1 = env_f64("SEED000_LOSS1", 1e-4);
    let losses2 = env_f64_list("SEED000_LOSS2", "0.001");
    for cc in &ccs {
        for &loss2 in &losses2 {
            for seed in seeds() {
                let row = two_bottlenecks_run(cc, loss1, loss2, seed);
                println!("seed000_two_bottlenecks {row}");
                mptransport::report::emit("seed000_two_bottlenecks", &row);
                let u = row["utilisation"].as_f64().unwrap_or(0.0);
                assert!(u > 0.02 && u <= 1.02, "{cc}: utilisation {u}");
            }
        }
    }
}

/// One 2-subflow `mp_cc` connection and one single-path BBR flow in one 100 Mbit/s bottleneck
/// (RTT 50 ms, queue `SEED000_QUEUE_BDP` × BDP, default 1).
fn shared_run(mp_cc: &str, seed: u64) -> serde_json::Value {
    let (duration, warmup) = run_length(40.0, 10.0);
    let queue_bdp = env_f64("SEED000_QUEUE_BDP", 1.0);
    let mut net = Net::new(seed);
    let b = net.add_link(bottleneck_spec(100.0, 25.0, queue_bdp, 0.0));
    let routes = [
        route(&mut net, "mp0", b, 25.0),
        route(&mut net, "mp1", b, 25.0),
    ];
    net.add_flow(cfg(mp_cc, &[]), cfg(mp_cc, &[]), &routes);
    let sp = route(&mut net, "sp", b, 25.0);
    net.add_flow(cfg("bbr", &[]), cfg("bbr", &[]), &[sp]);
    let r = run_rates(&mut net, duration, warmup, |_, _| {});
    serde_json::json!({
        "tag": env_str("SEED000_TAG", ""), "cc": mp_cc, "seed": seed, "queue_bdp": queue_bdp,
        "sim_s": duration.as_secs_f64(), "warmup_s": warmup.as_secs_f64(),
        "multipath_mbps": r[0].goodput_mbps, "bbr_mbps": r[1].goodput_mbps,
        "ratio": r[0].goodput_mbps / r[1].goodput_mbps,
    })
}

#[test]
#[ignore = "benchmark: Coupled BBR against one BBR flow at a shared bottleneck; run with --ignored"]
fn shared_fairness() {
    for cc in env_list("SEED000_CCS", "coupled-bbr,bbr") {
        for seed in seeds() {
            let row = shared_run(&cc, seed);
            println!("seed000_shared {row}");
            mptransport::report::emit("seed000_shared", &row);
        }
    }
}

/// Fig. 16's topology: 3 bottlenecks of `SEED000_MBPS` (default 100, the paper's), one-way
/// `delay_ms`, loss `loss`, one background flow of the family on each; `ramp` raises every
/// loss linearly to 1 % from 10 s to 30 s (Fig. 18). Records the goodput over [warm-up, end]
/// and per second.
fn three_paths_run(
    mp_cc: &str,
    delay_ms: f64,
    loss: f64,
    ramp: bool,
    seed: u64,
) -> serde_json::Value {
    let (duration, warmup) = run_length(30.0, 5.0);
    let queue_bdp = env_f64("SEED000_QUEUE_BDP", 1.0);
    let mbps = env_f64("SEED000_MBPS", 100.0);
    let bg_cc = background_cc(mp_cc);
    let mut net = Net::new(seed);
    let mut model = LossModel::new(seed);
    let spec = bottleneck_spec(mbps, delay_ms, queue_bdp, loss);
    let links: Vec<LinkId> = (0..3).map(|_| model.add(&mut net, spec)).collect();
    let routes: Vec<Route> = links
        .iter()
        .enumerate()
        .map(|(i, &l)| route(&mut net, &format!("p{}", i + 1), l, delay_ms))
        .collect();
    net.add_flow(cfg(mp_cc, &[]), cfg(mp_cc, &[]), &routes);
    for (i, &l) in links.iter().enumerate() {
        let r = route(&mut net, &format!("bg{i}"), l, delay_ms);
        net.add_flow(cfg(bg_cc, &[]), cfg(bg_cc, &[]), &[r]);
    }
    let mut per_s = PerSecond::default();
    let mut bulk = BulkPump::start(&mut net);
    let start_ramp = Duration::from_secs(10);
    let end_ramp = Duration::from_secs(30);
    let mut next_tick = net.now;
    while net.now.as_nanos() < duration.as_nanos() as u64 {
        bulk.pump(&mut net);
        let t = Duration::from_nanos(net.now.as_nanos());
        if net.now >= next_tick {
            model.step(&mut net);
            if ramp && t >= start_ramp {
                let f = ((t - start_ramp).as_secs_f64() / (end_ramp - start_ramp).as_secs_f64())
                    .min(1.0);
                let p = loss + f * (0.01 - loss);
                for &l in &links {
                    net.set_link(l, LinkSpec { loss: p, ..spec });
                }
            }
            per_s.record(t, &bulk.read_total);
            next_tick = net.now + Duration::from_millis(10);
        }
        if !net.step() {
            break;
        }
    }
    per_s.record(duration, &bulk.read_total);
    let mp = per_s.mbps(0);
    let bg: Vec<f64> = (1..=3).map(|i| mean_from(&per_s.mbps(i), warmup)).collect();
    serde_json::json!({
        "tag": env_str("SEED000_TAG", ""), "cc": mp_cc, "background_cc": bg_cc, "seed": seed,
        "delay_ms": delay_ms, "loss": loss, "ramp": ramp, "queue_bdp": queue_bdp, "mbps": mbps,
        "sim_s": duration.as_secs_f64(), "warmup_s": warmup.as_secs_f64(),
        "mptcp_mbps": mean_from(&mp, warmup), "tcp_mbps": bg, "mptcp_mbps_per_s": mp,
    })
}

/// Mean of per-second rates from second `from` on.
fn mean_from(per_s: &[f64], from: Duration) -> f64 {
    let v = &per_s[(from.as_secs() as usize).min(per_s.len())..];
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Bytes read per flow at each whole second of virtual time.
#[derive(Default)]
struct PerSecond {
    at_second: Vec<Vec<u64>>,
}

impl PerSecond {
    fn record(&mut self, t: Duration, read_total: &[u64]) {
        while self.at_second.len() <= t.as_secs() as usize {
            self.at_second.push(read_total.to_vec());
        }
    }

    /// Goodput of flow `i` in each second, Mbit/s.
    fn mbps(&self, i: usize) -> Vec<f64> {
        self.at_second
            .windows(2)
            .map(|w| (w[1][i] - w[0][i]) as f64 * 8.0 / 1e6)
            .collect()
    }
}

#[test]
#[ignore = "benchmark: Figs. 17 and 18 on three 100 Mbit/s paths; run with --ignored"]
fn three_paths() {
    let ccs = env_list("SEED000_CCS", "coupled-bbr,lia");
    let ramp = env_str("SEED000_MODE", "sweep") == "ramp";
    for cc in &ccs {
        for &delay in &env_f64_list("SEED000_DELAYS_MS", "20") {
            for &loss in &env_f64_list("SEED000_LOSSES", "0.0001") {
                for seed in seeds() {
                    let row = three_paths_run(cc, delay, loss, ramp, seed);
                    println!(
                        "seed000_three_paths {cc} d {delay} p {loss} seed {seed}: {:.1} Mbit/s",
                        row["mptcp_mbps"].as_f64().unwrap_or(f64::NAN)
                    );
                    mptransport::report::emit("seed000_three_paths", &row);
                }
            }
        }
    }
}

/// Fig. 10: two 20 Mbit/s paths of 25 ms one way (one-BDP queues). `sudden`: at 15 s path 2's
/// data direction takes loss `SEED000_BAD_LOSS` (default 10 %) and `SEED000_BAD_DELAY_MS` more
/// delay (default 75) at once; `gradual`: both rise linearly from 5 s to 20 s, and from 20 s
/// path 2 drops everything. Records goodput per second and the receiver's out-of-order queue.
fn deterioration_run(cc: &str, sched: &str, mode: &str, seed: u64) -> serde_json::Value {
    let (duration, _) = run_length(35.0, 5.0);
    let bad_loss = env_f64("SEED000_BAD_LOSS", 0.1);
    let bad_extra_ms = env_f64("SEED000_BAD_DELAY_MS", 75.0);
    let mut net = Net::new(seed);
    let good = bottleneck_spec(20.0, 25.0, 1.0, 0.0);
    let l1 = net.add_link(good);
    let l2 = net.add_link(good);
    let routes = [
        route(&mut net, "p1", l1, 25.0),
        route(&mut net, "p2", l2, 25.0),
    ];
    let mut c = cfg(cc, &[]);
    c.sched = sched.into();
    net.add_flow(c.clone(), c, &routes);
    let worse = |f: f64| LinkSpec {
        loss: f * bad_loss,
        delay: good.delay + Duration::from_secs_f64(f * bad_extra_ms / 1e3),
        ..good
    };
    let (mut per_s, mut ofo_area, mut last_t) = (PerSecond::default(), 0.0, 0.0);
    let mut bulk = BulkPump::start(&mut net);
    let mut next_tick = net.now;
    let mut applied = -1.0;
    while net.now.as_nanos() < duration.as_nanos() as u64 {
        bulk.pump(&mut net);
        let t = Duration::from_nanos(net.now.as_nanos());
        if net.now >= next_tick {
            let ts = t.as_secs_f64();
            // How far path 2 has deteriorated (0 = good, 1 = worst; 2 = unusable).
            let f = match mode {
                "sudden" => f64::from(u8::from(ts >= 15.0)),
                "gradual" if ts >= 20.0 => 2.0,
                "gradual" => ((ts - 5.0) / 15.0).clamp(0.0, 1.0),
                _ => panic!("SEED000_MODE={mode}: expected sudden or gradual"),
            };
            if (f - applied).abs() > 1e-3 {
                let spec = if f > 1.5 {
                    LinkSpec {
                        loss: 1.0,
                        ..worse(1.0)
                    }
                } else {
                    worse(f)
                };
                net.set_link(l2, spec);
                applied = f;
            }
            per_s.record(t, &bulk.read_total);
            let ofo = net.flows[0].client.counters().ofo_queue_bytes as f64;
            ofo_area += ofo * (ts - last_t);
            last_t = ts;
            next_tick = net.now + Duration::from_millis(10);
        }
        if !net.step() {
            break;
        }
    }
    per_s.record(duration, &bulk.read_total);
    let redundant = net.flows[0]
        .server
        .as_ref()
        .map_or(0, |s| s.counters().redundant_bytes_total);
    serde_json::json!({
        "tag": env_str("SEED000_TAG", ""), "cc": cc, "sched": sched, "mode": mode, "seed": seed,
        "bad_loss": bad_loss, "bad_extra_delay_ms": bad_extra_ms,
        "sim_s": duration.as_secs_f64(), "goodput_mbps_per_s": per_s.mbps(0),
        "ofo_mean_bytes": ofo_area / duration.as_secs_f64(), "redundant_bytes": redundant,
    })
}

#[test]
#[ignore = "benchmark: Fig. 10's path deterioration per scheduler; run with --ignored"]
fn deterioration() {
    let mode = env_str("SEED000_MODE", "sudden");
    for cc in env_list("SEED000_CCS", "coupled-bbr") {
        for sched in env_list("SEED000_SCHEDS", "arp,rr,redundant") {
            for seed in seeds() {
                let row = deterioration_run(&cc, &sched, &mode, seed);
                println!(
                    "seed000_deterioration {cc} {sched} {mode} seed {seed}: {:?}",
                    row["goodput_mbps_per_s"]
                );
                mptransport::report::emit("seed000_deterioration", &row);
            }
        }
    }
}

#[test]
fn seeds_parse_as_range_or_list() {
    assert_eq!(parse_seeds("1-4"), vec![1, 2, 3, 4]);
    assert_eq!(parse_seeds("3, 7"), vec![3, 7]);
}

#[test]
fn bursty_loss_keeps_the_mean_rate() {
    // The two-state process stepped every 10 ms: its stationary loss is the spec's.
    let mut net = Net::new(1);
    let mut model = LossModel {
        bursty: true,
        rng: Rng::new(9),
        links: Vec::new(),
    };
    let id = model.add(&mut net, bottleneck_spec(100.0, 25.0, 1.0, 0.01));
    let steps = 400_000;
    let bad = (0..steps)
        .filter(|_| {
            model.step(&mut net);
            model.links[0].2
        })
        .count();
    let mean_loss = bad as f64 / steps as f64 * BURST_LOSS;
    assert!((mean_loss - 0.01).abs() < 0.001, "mean loss {mean_loss}");
    assert_eq!(model.links[0].0, id);
}

#[test]
fn per_second_goodput_counts_bytes_read_in_each_second() {
    let mut p = PerSecond::default();
    p.record(Duration::ZERO, &[0]);
    p.record(Duration::from_millis(1500), &[125_000]);
    p.record(Duration::from_secs(2), &[250_000]);
    // Second 0 ends with the first record at or after 1 s (125 kB = 1 Mbit).
    assert_eq!(p.mbps(0), vec![1.0, 1.0]);
    assert!((mean_from(&[1.0, 2.0, 4.0], Duration::from_secs(1)) - 3.0).abs() < 1e-12);
}
