//! Done-when: 20 MB of seeded random bytes over two simulated paths (1 % and 2 % random
//! loss, 20 and 40 ms one-way delay) arrive byte-exact (SHA-256) and both connections close
//! cleanly, for every congestion control × scheduler in the registries. CCs added after
//! reno, cubic and bbr move 5 MB each (thousands of losses still), which keeps the whole
//! matrix within a few minutes.
//!
//! Run: `cargo test --release --test sim_matrix -- --nocapture` (prints one line per pair).

mod sim_harness;

use std::time::Duration;

use mptransport::sim::{Pair, SimPath, TransferSpec, run_transfer};
use mptransport::{cc, sched};
use sim_harness::{bdp_path, cfg};

/// Response size per CC: 20 MB for the three whose figures docs/TRANSPORT.md quotes.
fn response_bytes(cc: &str) -> u64 {
    if ["reno", "cubic", "bbr"].contains(&cc) {
        20_000_000
    } else {
        5_000_000
    }
}

fn paths() -> Vec<SimPath> {
    vec![
        bdp_path("wifi", 50.0, 20, 0.01),
        bdp_path("lte", 20.0, 40, 0.02),
    ]
}

#[test]
fn every_cc_and_scheduler_is_byte_exact_over_lossy_paths() {
    let mut failures = Vec::new();
    for cc_name in cc::names() {
        for sched_name in sched::names() {
            let cfg = cfg(cc_name, sched_name);
            let mut pair = Pair::new(cfg.clone(), cfg, &paths(), 7);
            let spec = TransferSpec {
                request_bytes: 20_000,
                response_bytes: response_bytes(cc_name),
                seed: 11,
                max_steps: 20_000_000,
                max_time: Duration::from_secs(1800),
            };
            let r = run_transfer(&mut pair, &spec);
            let server = pair.server.as_ref().expect("server connection exists");
            let per_path: Vec<String> = server
                .subflow_stats()
                .iter()
                .map(|s| {
                    format!(
                        "{}={:.1}MB",
                        s.name,
                        s.counters.data_bytes_sent_total as f64 / 1e6
                    )
                })
                .collect();
            println!(
                "{cc_name:>8} × {sched_name:<10} exact+clean={} goodput={:.2} Mbit/s t={:.1}s {} reinjected={:.2}MB",
                r.is_byte_exact_and_clean(),
                r.response_goodput_bps() / 1e6,
                r.response_done.map_or(f64::NAN, |d| d.as_secs_f64()),
                per_path.join(" "),
                server.counters().reinjected_bytes_total as f64 / 1e6,
            );
            if !r.is_byte_exact_and_clean() || r.response_bytes_received != response_bytes(cc_name)
            {
                failures.push(format!(
                    "{cc_name}×{sched_name}: {:?} close {:?}/{:?} bytes {}",
                    r.outcome, r.client_close, r.server_close, r.response_bytes_received
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "failed pairs:\n{}",
        failures.join("\n")
    );
}
