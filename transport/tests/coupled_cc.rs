//! Behaviour of the coupled congestion controls in the simulator (docs/algorithms/coupled.md
//! "Measured behaviour"): fairness at a shared bottleneck, moving traffic off a lossy path,
//! and seed 001's mpbbr-against-BALIA contrast.
//!
//! Run: `cargo test --release --test coupled_cc -- --nocapture` (prints the figures).

use std::time::Duration;

use mptransport::connection::Config;
use mptransport::sim::{LinkSpec, Net, Route, run_bulk, shared_bottleneck};
use mptransport::Bandwidth;

fn cfg(cc: &str) -> Config {
    Config {
        cc: cc.into(),
        sched: "lrf".into(),
        ..Config::default()
    }
}

/// One 2-subflow connection running `cc` and one single-path Reno flow through one
/// 20 Mbit/s, 40 ms RTT, 1-BDP drop-tail bottleneck for 120 s of virtual time (the first
/// 10 s are not counted). Returns (multipath goodput, single-path goodput) in bit/s.
fn shared_bottleneck_goodputs(cc: &str, seed: u64) -> (f64, f64) {
    let mut net = shared_bottleneck(
        cfg(cc),
        2,
        cfg("reno"),
        Bandwidth::from_mbps(20.0),
        Duration::from_millis(40),
        seed,
    );
    let r = run_bulk(&mut net, Duration::from_secs(120), Duration::from_secs(10));
    (r[0].goodput_bps, r[1].goodput_bps)
}

#[test]
fn coupled_ccs_take_at_most_1_3x_a_reno_flow_at_a_shared_bottleneck_and_reno_takes_more() {
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    for cc in ["lia", "olia", "balia", "reno"] {
        let (mp, sp) = shared_bottleneck_goodputs(cc, 1);
        let ratio = mp / sp;
        lines.push(format!(
            "{cc:>6}: multipath {:.2} Mbit/s, single-path reno {:.2} Mbit/s, ratio {ratio:.2}",
            mp / 1e6,
            sp / 1e6
        ));
        let ok = if cc == "reno" { ratio >= 1.6 } else { ratio <= 1.3 };
        if !ok {
            failures.push(format!("{cc}: ratio {ratio:.2}"));
        }
        // The link is used: together at least 80 % of 20 Mbit/s.
        if mp + sp < 16e6 {
            failures.push(format!("{cc}: total {:.2} Mbit/s", (mp + sp) / 1e6));
        }
    }
    println!("{}", lines.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("; "));
}

/// Two disjoint 20 Mbit/s paths (20 ms one way, 1-BDP queues), 1 % random loss on the
/// second; 60 s of virtual time. Returns the share of data bytes sent on the clean path.
fn clean_path_share(cc: &str, seed: u64) -> f64 {
    let mut net = Net::new(seed);
    let one_way = Duration::from_millis(20);
    let rate = Bandwidth::from_mbps(20.0);
    let mut routes = Vec::new();
    for (name, loss) in [("clean", 0.0), ("lossy", 0.01)] {
        let down = net.add_link(LinkSpec::bdp_queue(rate, one_way, loss));
        let up = net.add_link(LinkSpec::bdp_queue(rate, one_way, 0.0));
        routes.push(Route {
            name: name.into(),
            up,
            down,
        });
    }
    net.add_flow(cfg(cc), cfg(cc), &routes);
    let r = run_bulk(&mut net, Duration::from_secs(60), Duration::from_secs(5));
    let bytes = &r[0].data_bytes_sent_per_path;
    println!(
        "{cc:>6}: clean {:.1} MB, lossy {:.1} MB, goodput {:.2} Mbit/s",
        bytes[0].1 as f64 / 1e6,
        bytes[1].1 as f64 / 1e6,
        r[0].goodput_bps / 1e6
    );
    bytes[0].1 as f64 / (bytes[0].1 + bytes[1].1) as f64
}

#[test]
fn coupled_ccs_put_at_least_70_percent_on_the_clean_path() {
    let mut failures = Vec::new();
    for cc in ["lia", "olia", "balia"] {
        let share = clean_path_share(cc, 2);
        println!("{cc:>6}: clean-path share {:.1} %", share * 100.0);
        if share < 0.70 {
            failures.push(format!("{cc}: {:.1} %", share * 100.0));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("; "));
}
