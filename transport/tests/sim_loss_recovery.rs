//! Loss recovery as Linux MPTCP. With 2 % random loss on Wi-Fi only (LTE
//! clean), data lost on Wi-Fi by packet or time threshold is retransmitted on Wi-Fi: Wi-Fi's
//! retransmitted packets are at least 90 % of the packets declared lost on Wi-Fi, and LTE
//! carries at most 10 % of that number as retransmissions. Checked for the loss-based CCs and
//! BBR with a per-packet scheduler (LRF), and BBR with a sticky one (TP-STY).
//!
//! Run: `cargo test --release --test sim_loss_recovery -- --nocapture` (one line per pair).

mod sim_harness;

use std::time::Duration;

use mptransport::connection::Config;
use mptransport::sim::{LinkSpec, Pair, SimPath, TransferSpec, run_transfer};
use mptransport::subflow::SubflowCounters;
use mptransport::{Bandwidth, cc, sched};
use sim_harness::symmetric;

const RESPONSE_BYTES: u64 = 20_000_000;

fn paths() -> Vec<SimPath> {
    let wifi = LinkSpec::bdp_queue(Bandwidth::from_mbps(20.0), Duration::from_millis(20), 0.02);
    // "Clean": no random loss and a queue no window reaches in this transfer, so every LTE
    // retransmission is data lost on Wi-Fi.
    let lte = LinkSpec {
        queue_limit_bytes: 16 << 20,
        ..LinkSpec::bdp_queue(Bandwidth::from_mbps(15.0), Duration::from_millis(35), 0.0)
    };
    vec![symmetric("wifi", wifi), symmetric("lte", lte)]
}

/// Runs the transfer; returns the server's (Wi-Fi, LTE) subflow counters.
fn transfer(
    cc_name: &str,
    sched_name: &str,
    reinject_fast_losses: bool,
) -> (SubflowCounters, SubflowCounters) {
    let cfg = Config {
        cc: cc_name.into(),
        sched: sched_name.into(),
        reinject_fast_losses,
        ..Config::default()
    };
    let mut pair = Pair::new(cfg.clone(), cfg, &paths(), 3);
    let spec = TransferSpec {
        request_bytes: 1000,
        response_bytes: RESPONSE_BYTES,
        seed: 5,
        ..TransferSpec::default()
    };
    let r = run_transfer(&mut pair, &spec);
    assert!(
        r.is_byte_exact_and_clean(),
        "{cc_name}/{sched_name}: {:?}",
        r.outcome
    );
    let stats = pair.server.as_ref().expect("server exists").subflow_stats();
    (stats[0].counters, stats[1].counters)
}

#[test]
fn the_old_switch_sends_wifi_losses_to_lte() {
    let (wifi, lte) = transfer("bbr", "tp-sty", true);
    println!(
        "reinject_fast_losses: wifi lost={} retrans={} | lte retrans={}",
        wifi.pkts_lost_total, wifi.pkts_retrans_total, lte.pkts_retrans_total
    );
    assert!(
        lte.pkts_retrans_total * 2 > wifi.pkts_lost_total,
        "with reinject_fast_losses most Wi-Fi losses go to LTE"
    );
}

#[test]
fn wifi_losses_are_retransmitted_on_wifi() {
    // The case (bbr × tp-sty) and LRF with each uncoupled CC. (CUBIC with a sticky
    // scheduler leaves lossy Wi-Fi almost unused: too few losses to judge.)
    let pairs = [
        ("reno", "lrf"),
        ("cubic", "lrf"),
        ("bbr", "lrf"),
        ("bbr", "tp-sty"),
    ];
    let mut checked = 0;
    for (cc_name, sched_name) in pairs {
        if !cc::names().contains(&cc_name) || !sched::names().contains(&sched_name) {
            continue;
        }
        {
            let (wifi, lte) = transfer(cc_name, sched_name, false);
            println!(
                "{cc_name:>6} × {sched_name:<7} wifi lost={} retrans={} rto={} | lte lost={} retrans={}",
                wifi.pkts_lost_total,
                wifi.pkts_retrans_total,
                wifi.rto_total,
                lte.pkts_lost_total,
                lte.pkts_retrans_total
            );
            assert!(
                wifi.pkts_lost_total >= 20,
                "{cc_name}/{sched_name}: too few Wi-Fi losses to judge ({})",
                wifi.pkts_lost_total
            );
            assert_eq!(
                lte.pkts_lost_total, 0,
                "{cc_name}/{sched_name}: LTE must be clean"
            );
            let lost = wifi.pkts_lost_total as f64;
            assert!(
                wifi.pkts_retrans_total as f64 >= 0.9 * lost,
                "{cc_name}/{sched_name}: Wi-Fi retransmitted {} of {} lost",
                wifi.pkts_retrans_total,
                wifi.pkts_lost_total
            );
            assert!(
                lte.pkts_retrans_total as f64 <= 0.1 * lost,
                "{cc_name}/{sched_name}: LTE retransmitted {} for {} lost on Wi-Fi",
                lte.pkts_retrans_total,
                wifi.pkts_lost_total
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "reno, cubic, bbr and lrf must be registered");
}
