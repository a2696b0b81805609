//! Seed 003 (Singhal et al., "Hybrid Multipath Congestion Control"), rate-allocation cases
//! 1 and 2 in the simulator: an MPTCP connection with subflow x11 alone on link C1 and
//! subflow x12 sharing link C2 with a single-path Reno flow x2 (the paper's Fig. 2).
//!
//! Scale: the paper's links are 1024 and 8 Mbit/s; here every rate is divided by 16
//! (64 and 0.5 Mbit/s) so a case simulates in seconds. The paper gives no RTT; every path
//! here has 20 ms (10 ms each way) and a drop-tail queue of one BDP
//! (`SEED003_QUEUE_BDP=3` changes that, for the sensitivity table in the docs). Rates are
//! medians over seeds 1–5, with a random 0–1 ms on every ACK link so that the seeds differ
//! (without it the drop-tail phase decides which flow loses and every seed is the same run).
//!
//! The paper's theoretical rates assume synchronised losses (x12 and x2 halve together, so
//! their rates split in the ratio of their increases); `synchronised_loss_model` shows the
//! implemented rules give exactly those rates under that assumption. The simulator's
//! drop-tail queue loses at a common per-packet rate instead, which gives the independent-loss
//! rates (docs/algorithms/hmptcp.md has the tables). So:
//! * where the paper's value holds in the simulator (case 2 under EMPTCP and H-MPTCP, where
//!   both loss models agree) the test asserts it within 10 %;
//! * elsewhere (case 1, and case 2 under WMPTCP) the 10 % bar is an ignored test
//!   (`--ignored gives_the_papers`), not reproduced, and what holds of the paper's
//!   conclusions is asserted (x11 fills C1; every MPTCP flow beats the best single-path flow in
//!   case 1; H-MPTCP does as well as the better of its halves).
//!
//! The checks on 5-seed medians are ignored in the suite (about 70 s of CPU): the page
//! (`./run_trials.sh --reproduce seed003`) decides the same claims over 10 seeds with intervals,
//! from `sweep`. Figures: `cargo test --release --test seed003_rates -- --include-ignored
//! --nocapture`; the sweep behind the docs' tables: `cargo test --release --test seed003_rates
//! sweep -- --ignored --nocapture` (variables at `sweep`).

mod par_runs;
mod seed_cc_common;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use mptransport::connection::Config;
use mptransport::sim::net::ACK_JITTER;
use mptransport::sim::{LinkSpec, Net, Route};
use par_runs::par_map;
use seed_cc_common::{bottleneck, cfg, run_rates, within};

/// Paper Mbit/s → simulated Mbit/s.
const SCALE: f64 = 1.0 / 16.0;
const ONE_WAY_MS: f64 = 10.0;

/// Runs one case; returns (x11, x12, x2) in paper units (simulated Mbit/s × 16).
/// Queue size in BDP: 1, or `SEED003_QUEUE_BDP` for the sensitivity table.
fn queue_bdp() -> f64 {
    std::env::var("SEED003_QUEUE_BDP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0)
}

/// What the runs may vary besides the CC: queue size, ACK-link jitter, the receiver's ACK
/// ratio.
#[derive(Clone, Copy, Debug)]
struct Setup {
    /// Drop-tail queue of C1 and C2 in BDP of the 20 ms round trip (at least 10 packets).
    queue_bdp: f64,
    /// Every ACK link adds a uniform random 0..`ack_jitter` (FIFO kept).
    ack_jitter: Duration,
    /// The receiver acknowledges every `ack_every` packets (Linux delayed ACKs: 2).
    ack_every: u32,
    /// Simulated seconds; rates are measured over the last three quarters.
    run_s: u64,
}

impl Setup {
    /// One-BDP queues (or `SEED003_QUEUE_BDP`), no jitter, delayed ACKs every 2 packets.
    fn plain() -> Setup {
        Setup {
            queue_bdp: queue_bdp(),
            ack_jitter: Duration::ZERO,
            ack_every: 2,
            run_s: 80,
        }
    }
    /// As `plain`, with the 0–1 ms ACK jitter of the coupled-CC fairness tests.
    fn jittered() -> Setup {
        Setup {
            ack_jitter: ACK_JITTER,
            ..Setup::plain()
        }
    }
}

/// One case with options `opts` under `setup`.
fn run_case_with(
    cc: &str,
    opts: &[(&str, &str)],
    c1_paper: f64,
    c2_paper: f64,
    setup: Setup,
    seed: u64,
) -> ([f64; 3], Vec<(String, f64)>) {
    let q = setup.queue_bdp;
    let ack_jitter = setup.ack_jitter;
    let mut net = Net::new(seed);
    let c1 = bottleneck(&mut net, c1_paper * SCALE, ONE_WAY_MS, q, 0.0);
    let c2 = bottleneck(&mut net, c2_paper * SCALE, ONE_WAY_MS, q, 0.0);
    let route = |net: &mut Net, name: &str, down| {
        let up = net.add_link_with_jitter(
            LinkSpec {
                rate: None,
                delay: Duration::from_secs_f64(ONE_WAY_MS / 1e3),
                loss: 0.0,
                queue_limit_bytes: u64::MAX,
            },
            ack_jitter,
        );
        Route {
            name: name.into(),
            up,
            down,
        }
    };
    let conf = |cc: &str, opts: &[(&str, &str)]| Config {
        ack_every_pkts: setup.ack_every,
        ..cfg(cc, opts)
    };
    let r11 = route(&mut net, "x11", c1);
    let r12 = route(&mut net, "x12", c2);
    net.add_flow(conf(cc, opts), conf(cc, opts), &[r11, r12]);
    let r2 = route(&mut net, "x2", c2);
    net.add_flow(conf("reno", &[]), conf("reno", &[]), &[r2]);
    let r = run_rates(
        &mut net,
        Duration::from_secs(setup.run_s),
        Duration::from_secs(setup.run_s / 4),
        |_, _| {},
    );
    let x = [
        r[0].path("x11").mbps / SCALE,
        r[0].path("x12").mbps / SCALE,
        r[1].path("x2").mbps / SCALE,
    ];
    let lost = [
        r[0].path("x11").lost_pkts,
        r[0].path("x12").lost_pkts,
        r[1].path("x2").lost_pkts,
    ];
    println!(
        "seed003 C1={c1_paper} C2={c2_paper} {cc} {opts:?} {setup:?} seed {seed}: x11 {:.1} x12 {:.1} x2 {:.1} x1 {:.1} (paper units); lost pkts x11 {} x12 {} x2 {}",
        x[0],
        x[1],
        x[2],
        x[0] + x[1],
        lost[0],
        lost[1],
        lost[2],
    );
    mptransport::report::emit(
        "seed003_rates",
        &serde_json::json!({"cc": cc, "opts": format!("{opts:?}"), "c1": c1_paper, "c2": c2_paper,
            "queue_bdp": q, "ack_jitter_ms": ack_jitter.as_secs_f64() * 1e3,
            "ack_every": setup.ack_every, "run_s": setup.run_s, "seed": seed, "x11": x[0], "x12": x[1], "x2": x[2],
            "lost_x11": lost[0], "lost_x12": lost[1], "lost_x2": lost[2]}),
    );
    // ω the sender's CC used on each path (stats extra `weight`).
    let weights = net.flows[0]
        .server
        .as_ref()
        .map(|srv| {
            srv.subflow_stats()
                .iter()
                .map(|st| {
                    let w = st.cc_snapshot.extra.iter().find(|e| e.0 == "weight");
                    (st.name.clone(), w.map_or(f64::NAN, |e| e.1))
                })
                .collect()
        })
        .unwrap_or_default();
    (x, weights)
}

/// The paper's theoretical (x11, x12, x2), Mbit/s: case 1 C1 = C2 = 1024, case 2 C1 = 8.
fn paper(cc: &str, case: u8) -> [f64; 3] {
    match (cc, case) {
        ("emptcp", 1) => [1024.0, 0.0, 1024.0],
        ("wmptcp" | "hmptcp", 1) => [1024.0, 341.0, 683.0],
        ("emptcp" | "hmptcp", 2) => [8.0, 508.0, 516.0],
        ("wmptcp", 2) => [8.0, 341.0, 683.0],
        _ => unreachable!(),
    }
}

/// Within 10 % of the paper's `want`; a rate the paper puts at 0 (EMPTCP's x12 in case 1) is
/// matched by anything up to 10 % of C2 (1024 Mbit/s), since 10 % of 0 is no tolerance.
fn within_paper(got: f64, want: f64) -> bool {
    within(
        got,
        want,
        0.10,
        if want == 0.0 { 0.10 * 1024.0 } else { 0.0 },
    )
}

fn assert_matches_paper(cc: &str, case: u8, x: [f64; 3]) {
    let want = paper(cc, case);
    for (i, name) in ["x11", "x12", "x2"].iter().enumerate() {
        assert!(
            within_paper(x[i], want[i]),
            "case {case} {cc}: {name} = {:.1} Mbit/s (paper units), paper {}",
            x[i],
            want[i]
        );
    }
}

/// Seeds of the measured runs: the simulator has no random loss here, so a seed matters only
/// through the 0–1 ms ACK jitter of `Setup::jittered`.
const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

/// Case `case` (1: C1 = C2 = 1024; 2: C1 = 8, C2 = 1024) under `cc`: the median over
/// `SEEDS` of each of (x11, x12, x2), with the 0–1 ms ACK jitter (without it the drop-tail
/// queue's phase decides which flow loses, and every seed gives the same figures).
/// Computed once per process (the tests of this file share them).
fn case_medians(cc: &str, case: u8) -> [f64; 3] {
    static DONE: Mutex<BTreeMap<(String, u8), [f64; 3]>> = Mutex::new(BTreeMap::new());
    let key = (cc.to_string(), case);
    if let Some(m) = DONE.lock().unwrap().get(&key) {
        return *m;
    }
    let m = measure_case_medians(cc, case);
    DONE.lock().unwrap().insert(key, m);
    m
}

fn measure_case_medians(cc: &str, case: u8) -> [f64; 3] {
    let c1 = if case == 1 { 1024.0 } else { 8.0 };
    let runs: Vec<[f64; 3]> = SEEDS
        .iter()
        .map(|&seed| run_case_with(cc, &[], c1, 1024.0, Setup::jittered(), seed).0)
        .collect();
    let m = [0, 1, 2].map(|i| median(runs.iter().map(|x| x[i]).collect()));
    println!(
        "seed003 case {case} {cc} medians over seeds {SEEDS:?}: x11 {:.1} x12 {:.1} x2 {:.1} x1 {:.1}; paper {:?}",
        m[0],
        m[1],
        m[2],
        m[0] + m[1],
        paper(cc, case)
    );
    mptransport::report::emit(
        "seed003_medians",
        &serde_json::json!({"cc": cc, "case": case, "seeds": SEEDS, "x11": m[0], "x12": m[1], "x2": m[2]}),
    );
    m
}

/// Asserted: the points of the paper that the simulator reproduces within 10 % (case 2 under
/// EMPTCP and H-MPTCP, where synchronised and independent losses give the same rates).
#[test]
#[ignore = "5-seed figures (about 70 s of CPU): --reproduce seed003 decides the same claims over 10 seeds with intervals (`sweep`)"]
fn case2_emptcp_and_hmptcp_give_the_papers_rates_within_10_percent() {
    assert_matches_paper("emptcp", 2, case_medians("emptcp", 2));
    assert_matches_paper("hmptcp", 2, case_medians("hmptcp", 2));
}

/// The bar for the other points: not reproduced (docs/algorithms/hmptcp.md). The
/// paper's rates assume synchronised losses; the simulator's drop-tail queues lose at an
/// equal per-packet rate, which gives the independent-loss rates (WMPTCP x12 ≈ 424, not 341).
#[test]
#[ignore = "not reproduced: the paper's WMPTCP rates assume synchronised losses (docs/algorithms/hmptcp.md)"]
fn case2_wmptcp_gives_the_papers_rates_within_10_percent() {
    assert_matches_paper("wmptcp", 2, case_medians("wmptcp", 2));
}

/// The bar for case 1: not reproduced, for the reason above (EMPTCP x12 ≈ 300
/// instead of 0, WMPTCP and H-MPTCP x12 ≈ 420 instead of 341).
#[test]
#[ignore = "not reproduced: the paper's case-1 rates assume synchronised losses (docs/algorithms/hmptcp.md)"]
fn case1_gives_the_papers_rates_within_10_percent() {
    let mut failed = Vec::new();
    for cc in ["emptcp", "wmptcp", "hmptcp"] {
        let x = case_medians(cc, 1);
        let want = paper(cc, 1);
        for (i, name) in ["x11", "x12", "x2"].iter().enumerate() {
            if !within_paper(x[i], want[i]) {
                failed.push(format!("{cc} {name} {:.1} vs {}", x[i], want[i]));
            }
        }
    }
    assert!(failed.is_empty(), "outside 10 %: {failed:?}");
}

/// Asserted: what holds of the paper's case-1 conclusions. x11 alone on C1 fills it (the one
/// case-1 value independent of loss timing); every variant's x1 beats the best single-path
/// flow (C1); H-MPTCP does at least as well as the better of its halves (0.9: the spread of
/// the medians).
#[test]
#[ignore = "5-seed figures (about 70 s of CPU): --reproduce seed003 decides the same claims over 10 seeds with intervals (`sweep`)"]
fn case1_every_variant_beats_the_best_single_path_flow() {
    let [e, w, h] = ["emptcp", "wmptcp", "hmptcp"].map(|cc| case_medians(cc, 1));
    for (cc, x) in [("emptcp", e), ("wmptcp", w), ("hmptcp", h)] {
        assert!(within(x[0], paper(cc, 1)[0], 0.10, 0.0), "{cc} x11 {x:?}");
        assert!(x[0] + x[1] > 1024.0, "{cc} x1 {x:?}");
    }
    assert!(h[0] + h[1] >= 0.9 * (e[0] + e[1]).max(w[0] + w[1]), "{h:?}");
}

/// The paper's claim that H-MPTCP does at least as well as the better of its two halves in
/// case 2 (it equals EMPTCP there), at 0.9 of the better half's total x1, on the medians.
#[test]
#[ignore = "5-seed figures (about 70 s of CPU): --reproduce seed003 decides the same claims over 10 seeds with intervals (`sweep`)"]
fn case2_hmptcp_does_at_least_as_well_as_its_better_half() {
    let [e, h, w] = ["emptcp", "hmptcp", "wmptcp"].map(|cc| case_medians(cc, 2));
    let better = (e[0] + e[1]).max(w[0] + w[1]);
    println!(
        "seed003 case2 H-MPTCP x1 {:.1} vs better half {better:.1} ({:.3})",
        h[0] + h[1],
        (h[0] + h[1]) / better
    );
    assert!(h[0] + h[1] >= 0.9 * better, "{h:?} vs {better:.1}");
}

/// Median of `x` (odd length).
fn median(mut x: Vec<f64>) -> f64 {
    x.sort_by(|a, b| a.total_cmp(b));
    x[x.len() / 2]
}

#[test]
fn a_path_weight_reaches_the_sending_side() {
    // The server (the sender here) learns the path names from the subflows' HELLOs;
    // `weight.x12=0.1` must reach it and slow x12 down against the default ω = 1/2.
    // Always one-BDP queues: with deeper ones x12 sees one or two loss events a minute and
    // its rate is not yet set by its increase.
    //
    // The ACK links add a random 0–1 ms (`sim::ACK_JITTER`, as in the coupled-CC fairness
    // tests), medians over seeds 1–3. Without any jitter the drop-tail queue has phase
    // effects: the packets it drops are mostly the ones a window increase adds, so x12 with
    // ω = 0.1 (one extra packet every 10 round trips) is almost never hit and keeps its rate
    // (x12 422 with ω = 0.1 against 424 with ω = 1/2, 6 against 29 packets lost).
    let one_bdp = Setup {
        queue_bdp: 1.0,
        ..Setup::jittered()
    };
    let runs: Vec<(u64, &[(&str, &str)])> = (1..=3)
        .flat_map(|seed| [(seed, &[("weight.x12", "0.1")][..]), (seed, &[][..])])
        .collect();
    let out = par_map(&runs, |&(seed, opts)| {
        run_case_with("wmptcp", opts, 1024.0, 1024.0, one_bdp, seed)
    });
    let mut light = Vec::new();
    let mut default = Vec::new();
    for ((_, opts), (x, w)) in runs.iter().zip(out) {
        if opts.is_empty() {
            default.push(x);
        } else {
            assert_eq!(w, vec![("x11".to_string(), 0.5), ("x12".to_string(), 0.1)]);
            light.push(x);
        }
    }
    let (l12, d12) = (
        median(light.iter().map(|x| x[1]).collect()),
        median(default.iter().map(|x| x[1]).collect()),
    );
    let (l2, d2) = (
        median(light.iter().map(|x| x[2]).collect()),
        median(default.iter().map(|x| x[2]).collect()),
    );
    println!(
        "seed003 weight.x12=0.1 vs default (medians of 3 seeds, paper units): x12 {l12:.1} vs {d12:.1}, x2 {l2:.1} vs {d2:.1}"
    );
    assert!(l12 < 0.9 * d12, "x12 {l12:.1} vs {d12:.1}");
    assert!(l2 > d2, "x2 gains what x12 gives up: {l2:.1} vs {d2:.1}");
}

/// Measurement sweep, not a check (prints and emits `seed003_rates` figures):
/// `SEED003_SWEEP_SEEDS=1,2,3` (default 7), `SEED003_SWEEP_CCS` (default
/// emptcp,wmptcp,hmptcp), `SEED003_SWEEP_CASES` (default 1,2), `SEED003_SWEEP_JITTER_MS`
/// (ACK jitter, default 0), `SEED003_SWEEP_ACK_EVERY` (default 2), `SEED003_QUEUE_BDP`,
/// `SEED003_SWEEP_SECS` (simulated seconds, default 80; rates over the last three quarters),
/// `SEED003_SWEEP_OPTS` (CC options key=value, comma-separated, e.g. `weight.x12=0.1`).
/// `./run_trials.sh --reproduce seed003` reads its figures (testbed/reproduce/seed003.py).
#[test]
#[ignore = "measurement sweep for docs/algorithms/hmptcp.md; run on demand"]
fn sweep() {
    let list = |var: &str, default: &str| -> Vec<String> {
        std::env::var(var)
            .unwrap_or_else(|_| default.to_string())
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let num = |var: &str, default: f64| -> f64 {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let setup = Setup {
        queue_bdp: queue_bdp(),
        ack_jitter: Duration::from_secs_f64(num("SEED003_SWEEP_JITTER_MS", 0.0) / 1e3),
        ack_every: num("SEED003_SWEEP_ACK_EVERY", 2.0) as u32,
        run_s: num("SEED003_SWEEP_SECS", 80.0) as u64,
    };
    let opts_text = list("SEED003_SWEEP_OPTS", "");
    let opts: Vec<(&str, &str)> = opts_text
        .iter()
        .map(|kv| kv.split_once('=').expect("SEED003_SWEEP_OPTS: key=value"))
        .collect();
    for case in list("SEED003_SWEEP_CASES", "1,2") {
        let c1 = if case == "1" { 1024.0 } else { 8.0 };
        for cc in list("SEED003_SWEEP_CCS", "emptcp,wmptcp,hmptcp") {
            for seed in list("SEED003_SWEEP_SEEDS", "7") {
                run_case_with(&cc, &opts, c1, 1024.0, setup, seed.parse().expect("seed"));
            }
        }
    }
}

/// The paper's own model of cases 1 and 2, driven by the implemented increase rules
/// (`cc::emptcp`, `cc::wmptcp`, `cc::hmptcp`; Reno's 1 packet per RTT for x2): windows in
/// packets grow continuously by their ΔW per RTT, each link delivers min(C, Σ W/τ) split in
/// proportion to the windows, and when a link's windows exceed its BDP plus its queue every
/// flow on that link halves at once (synchronised losses, the assumption behind the paper's
/// theoretical rates). Same scale, 20 ms base RTT and queues as the simulator runs.
/// Returns the mean (x11, x12, x2) over the last half of `secs`, in paper units.
fn synchronised_loss_model(cc: &str, c1_paper: f64, c2_paper: f64, secs: f64) -> [f64; 3] {
    use mptransport::cc::{emptcp, hmptcp, wmptcp};
    const PKT_BITS: f64 = 1500.0 * 8.0;
    const TAU0_S: f64 = 2.0 * ONE_WAY_MS / 1e3;
    const DT_S: f64 = 1e-4;
    // Capacity (packets/s), BDP and drop-tail queue (packets, at least 10 as `bottleneck`).
    let link = |paper_mbps: f64| {
        let c = paper_mbps * SCALE * 1e6 / PKT_BITS;
        (c, c * TAU0_S, (c * TAU0_S * queue_bdp()).max(10.0))
    };
    let links = [link(c1_paper), link(c2_paper)];
    let on_link = [0usize, 1, 1]; // x11 on C1; x12 and x2 on C2
    let mut w = [10.0f64; 3];
    let mut sum_rate = [0.0f64; 3];
    let steps = (secs / DT_S) as u64;
    for step in 0..steps {
        // Per link: the RTT its flows see (base + queueing) and whether it overflows.
        let mut rtt = [TAU0_S; 3];
        for (l, &(c, bdp, queue)) in links.iter().enumerate() {
            let total: f64 = (0..3).filter(|&f| on_link[f] == l).map(|f| w[f]).sum();
            if total > bdp + queue {
                for f in (0..3).filter(|&f| on_link[f] == l) {
                    w[f] = (w[f] / 2.0).max(2.0);
                }
            }
            let total: f64 = (0..3).filter(|&f| on_link[f] == l).map(|f| w[f]).sum();
            for f in (0..3).filter(|&f| on_link[f] == l) {
                rtt[f] = TAU0_S.max(total / c);
            }
        }
        let rate = [w[0] / rtt[0], w[1] / rtt[1], w[2] / rtt[2]];
        if step >= steps / 2 {
            for f in 0..3 {
                sum_rate[f] += rate[f];
            }
        }
        let all = [
            emptcp::WindowRtt {
                w_pkts: w[0],
                rtt_s: rtt[0],
            },
            emptcp::WindowRtt {
                w_pkts: w[1],
                rtt_s: rtt[1],
            },
        ];
        let increase = |own: usize| match cc {
            "emptcp" => emptcp::increase_per_rtt(all[own], &all),
            "wmptcp" => wmptcp::increase_per_rtt(0.5),
            "hmptcp" => hmptcp::increase_per_rtt(all[own], &all, 0.5).0,
            _ => unreachable!("{cc}"),
        };
        let dw = [increase(0), increase(1), 1.0];
        for f in 0..3 {
            w[f] += dw[f] * DT_S / rtt[f];
        }
    }
    let n = (steps - steps / 2) as f64;
    sum_rate.map(|s| s / n * PKT_BITS / 1e6 / SCALE)
}

/// Checks the implemented rules against the paper's derivation, not the simulator: under the
/// paper's synchronised losses they give its theoretical rates within 10 % (a rate the
/// paper puts at 0 within 10 % of C2).
#[test]
fn under_synchronised_losses_the_rules_give_the_papers_rates() {
    for (case, c1) in [(1u8, 1024.0), (2, 8.0)] {
        for cc in ["emptcp", "wmptcp", "hmptcp"] {
            let x = synchronised_loss_model(cc, c1, 1024.0, 200.0);
            let want = paper(cc, case);
            mptransport::report::emit(
                "seed003_model",
                &serde_json::json!({"cc": cc, "case": case, "x11": x[0], "x12": x[1], "x2": x[2],
                    "paper": want}),
            );
            println!(
                "seed003 model (synchronised losses) case {case} {cc}: x11 {:.1} x12 {:.1} x2 {:.1}; paper {want:?}",
                x[0], x[1], x[2]
            );
            for (i, name) in ["x11", "x12", "x2"].iter().enumerate() {
                assert!(
                    within_paper(x[i], want[i]),
                    "model case {case} {cc}: {name} = {:.1}, paper {}",
                    x[i],
                    want[i]
                );
            }
        }
    }
}
