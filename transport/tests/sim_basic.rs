//! Byte-exact transfers through the simulator (quick cases).

mod sim_harness;

use mptransport::connection::Config;
use mptransport::sim::{LinkSpec, Pair, TransferSpec, run_transfer};
use sim_harness::{bdp_path as path, cfg};

#[test]
fn one_path_no_loss_1mb() {
    let mut pair = Pair::new(
        cfg("reno", "lrf"),
        cfg("reno", "lrf"),
        &[path("wifi", 20.0, 10, 0.0)],
        1,
    );
    let r = run_transfer(
        &mut pair,
        &TransferSpec {
            response_bytes: 1_000_000,
            ..Default::default()
        },
    );
    println!(
        "{:?} goodput {:.2} Mbit/s",
        r.outcome,
        r.response_goodput_bps() / 1e6
    );
    assert!(r.is_byte_exact_and_clean(), "{r:?}");
}

#[test]
fn two_paths_lossy_2mb() {
    let paths = [path("wifi", 20.0, 20, 0.01), path("lte", 20.0, 40, 0.02)];
    let mut pair = Pair::new(cfg("reno", "lrf"), cfg("reno", "lrf"), &paths, 3);
    let r = run_transfer(
        &mut pair,
        &TransferSpec {
            response_bytes: 2_000_000,
            ..Default::default()
        },
    );
    println!(
        "{:?} goodput {:.2} Mbit/s steps {}",
        r.outcome,
        r.response_goodput_bps() / 1e6,
        r.steps
    );
    assert!(r.is_byte_exact_and_clean(), "{r:?}");
}

#[test]
fn small_receive_window_and_a_paused_reader_still_complete() {
    use mptransport::Instant;
    let client_cfg = Config {
        recv_window_bytes: Some(64 * 1024),
        ..cfg("cubic", "lrf")
    };
    let paths = [path("wifi", 20.0, 10, 0.01), path("lte", 10.0, 30, 0.0)];
    let mut pair = Pair::new(client_cfg, cfg("cubic", "lrf"), &paths, 9);
    let total = 1_000_000usize;
    let data: Vec<u8> = (0..total).map(|i| (i * 7 % 251) as u8).collect();
    let mut written = 0usize;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 65536];
    let mut max_ofo_plus_buffer = 0usize;
    let pause_until = Instant::from_nanos(2_000_000_000);
    pair.client.write(b"GET");
    pair.client.finish();
    let r = pair.drive_bounded(
        5_000_000,
        Instant::from_nanos(600_000_000_000),
        |p| {
            if let Some(s) = p.server.as_mut() {
                written += s.write(&data[written..]);
                if written == total {
                    s.finish();
                }
                let mut sink = [0u8; 64];
                while s.read(&mut sink) > 0 {}
            }
            max_ofo_plus_buffer = max_ofo_plus_buffer
                .max(p.client.readable_bytes() + p.client.counters().ofo_queue_bytes as usize);
            if p.now >= pause_until {
                loop {
                    let n = p.client.read(&mut buf);
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
            }
        },
        |p| p.client.is_closed() && p.server.as_ref().is_some_and(|s| s.is_closed()),
    );
    assert!(r.is_ok(), "{r:?}");
    pair.collect_events();
    let clean = |evs: &[mptransport::Event]| {
        evs.iter().any(|e| {
            *e == mptransport::Event::Closed {
                reason: mptransport::connection::CloseReason::Clean,
            }
        })
    };
    assert!(
        clean(&pair.client_events) && clean(&pair.server_events),
        "not a clean close"
    );
    assert_eq!(got.len(), total);
    assert!(got == data, "stream differs");
    // The paused reader's buffer never held more than the window it offered.
    assert!(
        max_ofo_plus_buffer <= 64 * 1024 + 1500,
        "{max_ofo_plus_buffer}"
    );
}

#[test]
fn a_path_that_dies_mid_transfer_is_recovered_by_reinjection() {
    use mptransport::Instant;
    use mptransport::sim::run_transfer_with;
    for cc in ["reno", "cubic", "bbr"] {
        let paths = [path("wifi", 20.0, 10, 0.0), path("lte", 10.0, 30, 0.0)];
        let mut pair = Pair::new(cfg(cc, "lrf"), cfg(cc, "lrf"), &paths, 4);
        let cut_at = Instant::from_nanos(1_500_000_000);
        let dead = LinkSpec {
            loss: 1.0,
            ..paths[0].down
        };
        let mut cut_done = false;
        let mut wifi_bytes_at_cut = 0;
        let spec = TransferSpec {
            response_bytes: 8_000_000,
            ..Default::default()
        };
        let r = run_transfer_with(&mut pair, &spec, |p| {
            if !cut_done && p.now >= cut_at {
                // Wi-Fi goes dark in both directions, mid-transfer.
                p.set_link(0, false, dead);
                p.set_link(0, true, dead);
                cut_done = true;
                wifi_bytes_at_cut = p
                    .server
                    .as_ref()
                    .map_or(0, |s| s.subflow_stats()[0].counters.data_bytes_sent_total);
            }
        });
        assert!(
            cut_done && wifi_bytes_at_cut > 0,
            "{cc}: the cut must happen mid-transfer"
        );
        assert!(
            r.is_byte_exact_and_clean(),
            "{cc}: {:?} {:?} {:?} got {}",
            r.outcome,
            r.client_close,
            r.server_close,
            r.response_bytes_received
        );
        let server = pair.server.as_ref().unwrap();
        assert!(
            server.subflow_stats()[0].counters.rto_total > 0,
            "{cc}: wifi never timed out"
        );
        assert!(
            server.counters().reinjected_bytes_total > 0,
            "{cc}: nothing reinjected"
        );
    }
}

#[test]
fn server_accepts_subflows_whose_hello_arrives_out_of_order() {
    // Path 0 is much slower, so the server hears subflow 1's HELLO first.
    let paths = [path("wifi", 20.0, 60, 0.0), path("lte", 20.0, 5, 0.0)];
    let mut pair = Pair::new(cfg("cubic", "lrf"), cfg("cubic", "lrf"), &paths, 2);
    let r = run_transfer(
        &mut pair,
        &TransferSpec {
            response_bytes: 3_000_000,
            ..Default::default()
        },
    );
    assert!(r.is_byte_exact_and_clean(), "{:?}", r.outcome);
    let stats = pair.server.as_ref().unwrap().subflow_stats();
    assert_eq!(
        stats.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["wifi", "lte"]
    );
    assert!(stats.iter().all(|s| s.established));
}
