//! Tests of `bbr.rs` (a sibling file, so that the algorithm reads on its own).

use super::*;
use crate::cc::RateSample;
use crate::cc::test_sender::TestSender;

const MSS: u64 = 1500;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn bbr_with(margin: f64) -> Bbr {
    let cfg = BbrConfig {
        mss_bytes: MSS,
        pacing_margin_percent: margin,
        ..BbrConfig::default()
    };
    Bbr::new(cfg, Instant::ZERO)
}

fn ack(now: Instant, acked_bytes: u64, rate: Option<RateSample>) -> AckEvent {
    AckEvent {
        now,
        acked_bytes,
        rtt_sample: Some(ms(50)),
        srtt: ms(50),
        min_rtt: ms(50),
        inflight_bytes: 1_000_000,
        prior_inflight_bytes: 1_000_000,
        is_cwnd_limited: true,
        in_recovery: false,
        largest_acked_sent_time: Instant::ZERO,
        rate,
        delivered_bytes_total: 0,
        mss: MSS,
        ..Default::default()
    }
}

fn sample(mbps: f64, prior_delivered_bytes: u64) -> RateSample {
    RateSample {
        delivery_rate: Bandwidth::from_mbps(mbps),
        interval: ms(50),
        delivered_bytes: MSS,
        prior_delivered_bytes,
        is_app_limited: false,
        rtt: ms(50),
        newly_acked_bytes: MSS,
        newly_lost_bytes: 0,
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// A BBR in PROBE_BW with BtlBw 100 Mb/s and RTprop 50 ms.
fn probe_bw_100mbps_50ms(margin: f64, cycle_idx: usize) -> Bbr {
    let mut b = bbr_with(margin);
    b.bw_filter
        .reset(1, Bandwidth::from_mbps(100.0).bytes_per_s());
    b.min_rtt = Some(ms(50));
    b.full_bw_reached = true;
    b.mode = Mode::ProbeBw;
    b.cycle_idx = cycle_idx;
    b.update_gains();
    b.set_pacing_rate(b.pacing_gain, Some(ms(50)));
    b
}

#[test]
fn bdp_and_target_at_100mbps_50ms() {
    let b = probe_bw_100mbps_50ms(1.0, 2);
    let bdp = b.bdp_pkts(Bandwidth::from_mbps(100.0)).unwrap();
    assert!(close(bdp, 416.67, 0.01), "BDP {bdp}");
    // cwnd gain 2: ⌈833.3⌉ = 834 before quantisation; pacing 99 Mb/s → 1 ms = 12375 B
    // = 8 packets per quantum → 834 + 24 = 858 (even).
    assert_eq!((2.0 * bdp).ceil() as u64, 834);
    assert_eq!(b.send_quantum_pkts(), 8);
    let bw = Bandwidth::from_mbps(100.0).bytes_per_s();
    assert_eq!(b.target_cwnd_bytes(bw, 2.0), 858 * MSS);
    // Phase 0 (gain 1.25) adds 2 packets.
    let b0 = probe_bw_100mbps_50ms(1.0, 0);
    // 123.75 Mb/s → 10-packet quanta: ⌈520.8⌉ + 30 = 551 → 552 (even) + 2 = 554.
    assert_eq!(b0.target_cwnd_bytes(bw, 1.25), 554 * MSS);
}

/// Linux 6.x `bbr_update_ack_aggregation` + `bbr_ack_aggregation_cwnd` + `bbr_set_cwnd`,
/// by hand in packets (1500 B) at BtlBw 100 Mbit/s = 8333.3 pkts/s, RTprop 50 ms:
/// * ACK 1 at 10 ms, 10 pkts: expected = 8333.3 · 0.010 = 83 > 0 acked, so the epoch
///   restarts at 10 ms; extra = 10.
/// * ACK 2 at 11 ms, 40 pkts: expected = ⌊8333.3 · 0.001⌋ = 8 < 10, same epoch;
///   acked 50, extra = 50 − 8 = 42 (≤ cwnd).
/// * target = ⌈2 · 416.67⌉ = 834 + 42 = 876, + 3 quanta of ⌊99e6/8/1024/1500⌋ = 8 → 900
///   (even, phase 2: no +2); without the allowance 858.
#[test]
fn ack_aggregation_adds_the_excess_acked_to_the_target_cwnd() {
    let t = |us: u64| Instant::ZERO + Duration::from_micros(us);
    let run = |aggregation: bool| {
        let mut b = probe_bw_100mbps_50ms(1.0, 2);
        b.cfg.ack_aggregation = aggregation;
        b.cwnd_bytes = 800 * MSS;
        b.on_ack(&ack(t(10_000), 10 * MSS, Some(sample(100.0, 0))));
        b.cwnd_bytes = 895 * MSS;
        b.on_ack(&ack(t(11_000), 40 * MSS, Some(sample(100.0, 0))));
        b
    };
    let b = run(true);
    assert_eq!(b.ack_aggregation_cwnd_bytes(), 42 * MSS);
    assert_eq!(b.cwnd_bytes(), 900 * MSS, "min(895 + 40, 900)");
    let off = run(false);
    assert_eq!(off.ack_aggregation_cwnd_bytes(), 0);
    assert_eq!(off.cwnd_bytes(), 858 * MSS, "min(895 + 40, 858)");
}

/// `extra_acked[2]` slots of 5 rounds each: the 42-packet excess of round 2 (slot 0)
/// survives the switch to slot 1 at round 5 and is cleared at round 10, when slot 0 is
/// reused. Each later ACK (1 pkt, 100 ms apart: far below the expected 833) restarts the
/// epoch, so its excess is 1 packet.
#[test]
fn ack_aggregation_forgets_an_excess_after_10_rounds() {
    let t = |us: u64| Instant::ZERO + Duration::from_micros(us);
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    b.cwnd_bytes = 800 * MSS;
    b.on_ack(&ack(t(10_000), 10 * MSS, Some(sample(100.0, 0))));
    b.on_ack(&ack(t(11_000), 40 * MSS, Some(sample(100.0, 0))));
    for round in 3..=10u64 {
        b.on_ack(&ack(t(round * 100_000), MSS, Some(sample(100.0, 0))));
        assert!(b.round_start());
        let want = if round < 10 { 42 } else { 1 };
        assert_eq!(b.ack_aggregation_cwnd_bytes(), want * MSS, "round {round}");
    }
}

/// The excess is capped by cwnd (`min(extra_acked, snd_cwnd)`) and the allowance by
/// 100 ms of BtlBw (`bbr_extra_acked_max_us`); it is 0 until the pipe was full.
#[test]
fn ack_aggregation_caps() {
    let t = |us: u64| Instant::ZERO + Duration::from_micros(us);
    // 100 Mbit/s, cwnd 10 pkts: an ACK of 40 pkts in a fresh epoch gives extra 10.
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    b.cwnd_bytes = 10 * MSS;
    b.on_ack(&ack(t(10_000), 40 * MSS, Some(sample(100.0, 0))));
    assert_eq!(b.ack_aggregation_cwnd_bytes(), 10 * MSS);
    // BtlBw 1 Mbit/s: 100 ms of it is 83.3 pkts/s · 0.1 s = 8 pkts (truncated), so an
    // excess of 20 pkts is allowed only 8.
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    b.bw_filter
        .reset(1, Bandwidth::from_mbps(1.0).bytes_per_s());
    b.cwnd_bytes = 100 * MSS;
    b.on_ack(&ack(t(10_000), 20 * MSS, Some(sample(1.0, 0))));
    assert_eq!(b.aggr.extra_acked_bytes[b.aggr.win_idx], 20 * MSS);
    assert_eq!(b.ack_aggregation_cwnd_bytes(), 8 * MSS);
    b.full_bw_reached = false;
    assert_eq!(
        b.ack_aggregation_cwnd_bytes(),
        0,
        "only once the pipe was full"
    );
}

/// `bbr_tso_segs_goal`: ⌊rate/1024 / MSS⌋ within [2, 127] (1 below 1.2 Mbit/s), at most
/// 65 215 B. 96.5 Mbit/s = 12.0625 MB/s → 11 780 B → 7 packets (the draft's 1 ms would
/// give 8); 20 Mbit/s → 2 441 B → 1 → 2; 1 Mbit/s → 1; 2 Gbit/s → 65 215 B → 43.
#[test]
fn send_quantum_is_linux_tso_segs_goal() {
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    for (mbps, want) in [(96.5, 7), (20.0, 2), (1.0, 1), (2000.0, 43)] {
        b.pacing_rate = Bandwidth::from_mbps(mbps);
        assert_eq!(b.send_quantum_pkts(), want, "{mbps} Mbit/s");
        assert_eq!(b.pacing_burst_bytes(), Some(want * MSS));
    }
}

/// `bbr_quantization_budget` adds 2 packets in PROBE_BW phase 0 whatever the gain
/// asked for: target(1.0) there = ⌈416.67⌉ = 417 + 3·10 (123.75 Mbit/s quanta) = 447
/// → 448 + 2 = 450. Without an RTprop, `bbr_bdp` is TCP_INIT_CWND (10) and the budget
/// still applies: at the initial 2.885 · 10 pkts / 1 ms · 0.99 = 42.85 MB/s the quantum
/// is 27 packets, 10 + 81 = 91 → 92.
#[test]
fn quantization_budget_as_linux() {
    let bw = Bandwidth::from_mbps(100.0).bytes_per_s();
    let b0 = probe_bw_100mbps_50ms(1.0, 0);
    assert_eq!(b0.target_cwnd_bytes(bw, 1.0), 450 * MSS);
    let fresh = bbr_with(1.0);
    assert_eq!(fresh.send_quantum_pkts(), 27);
    assert_eq!(fresh.target_cwnd_bytes(0.0, HIGH_GAIN), 92 * MSS);
}

/// `bbr_is_next_cycle_phase` compares `bbr_packets_in_net_at_edt(prior_in_flight)`,
/// which adds one send quantum (10 packets at 123.75 Mbit/s) while the gain is 1.25:
/// phase 0 ends at prior inflight 544 = 554 − 10, not only at 554.
#[test]
fn probe_phase_counts_the_departing_quantum() {
    let t = |x: u64| Instant::ZERO + ms(x);
    for (inflight, want_idx) in [(543, 0), (544, 1)] {
        let mut b = probe_bw_100mbps_50ms(1.0, 0);
        b.cycle_stamp = t(0);
        b.on_ack(&AckEvent {
            prior_inflight_bytes: inflight * MSS,
            ..ack(t(60), MSS, None)
        });
        assert_eq!(b.cycle_idx(), want_idx, "prior inflight {inflight}");
    }
}

#[test]
fn pacing_per_phase_with_and_without_the_margin() {
    for (idx, plain, margin) in [(0, 125.0, 123.75), (1, 75.0, 74.25), (2, 100.0, 99.0)] {
        let b = probe_bw_100mbps_50ms(0.0, idx);
        assert!(close(b.pacing_rate().unwrap().bps() / 1e6, plain, 1e-9));
        let b = probe_bw_100mbps_50ms(1.0, idx);
        assert!(close(b.pacing_rate().unwrap().bps() / 1e6, margin, 1e-9));
    }
}

#[test]
fn initial_startup_pacing_is_6_92_mbps() {
    for (margin, want) in [(0.0, 6.92), (1.0, 6.92 * 0.99)] {
        let mut b = bbr_with(margin);
        b.on_ack(&AckEvent {
            rate: None,
            acked_bytes: 0,
            ..ack(Instant::ZERO, 0, None)
        });
        let got = b.pacing_rate().unwrap().bps() / 1e6;
        assert!(close(got, want, 0.005), "margin {margin}: {got} Mb/s");
        assert_eq!(b.phase(), CcPhase::Startup);
    }
}

#[test]
fn full_bw_detection_enters_drain_at_round_7() {
    let mut b = bbr_with(1.0);
    let mut delivered = 0;
    for (round, mbps) in [10.0, 20.0, 40.0, 50.0, 55.0, 60.0, 61.0]
        .into_iter()
        .enumerate()
    {
        let prior = delivered;
        delivered += 100 * MSS;
        let now = Instant::ZERO + ms(50) * (round as u32 + 1);
        let a = AckEvent {
            delivered_bytes_total: delivered,
            ..ack(now, MSS, Some(sample(mbps, prior)))
        };
        b.on_ack(&a);
        assert_eq!(b.round_count(), round as u64 + 1);
        let want_cnt = [0, 0, 0, 0, 1, 2, 3][round];
        assert_eq!(b.full_bw_count, want_cnt, "round {}", round + 1);
        let want = if round == 6 {
            CcPhase::Drain
        } else {
            CcPhase::Startup
        };
        assert_eq!(b.phase(), want, "round {}", round + 1);
    }
    assert!(close(b.pacing_gain(), 1.0 / 2.885, 1e-3));
    assert!(close(b.full_bw_bytes_per_s * 8.0 / 1e6, 50.0, 1e-9));
}

#[test]
fn drain_ends_when_inflight_falls_to_the_bdp_and_never_starts_at_0_75() {
    for seed in 1..200u64 {
        let mut b = Bbr::new(
            BbrConfig {
                mss_bytes: MSS,
                seed,
                ..BbrConfig::default()
            },
            Instant::ZERO,
        );
        b.bw_filter
            .reset(1, Bandwidth::from_mbps(100.0).bytes_per_s());
        b.min_rtt = Some(ms(50));
        b.full_bw_reached = true;
        b.mode = Mode::Drain;
        b.pacing_rate = Bandwidth::from_mbps(99.0);
        b.has_seen_rtt = true;
        b.on_ack(&AckEvent {
            inflight_bytes: 500 * MSS,
            ..ack(Instant::ZERO, MSS, None)
        });
        assert_eq!(
            b.mode(),
            Mode::Drain,
            "inflight 500 pkts > BDP 417 + quanta"
        );
        b.on_ack(&AckEvent {
            inflight_bytes: 400 * MSS,
            ..ack(Instant::ZERO, MSS, None)
        });
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert_ne!(b.cycle_idx(), 1, "seed {seed}");
        assert_ne!(b.pacing_gain(), 0.75);
    }
}

#[test]
fn rto_loss_state_grows_from_one_mss_and_restores_prior_cwnd_only_at_its_end() {
    // Linux: bbr_save_cwnd at the RTO (prior_cwnd = 800), cwnd = 1; in CA_Loss cwnd
    // grows by the acked amount but never below bbr_cwnd_min_target = 4 packets; at the
    // exit (CA_Loss -> Open) cwnd = max(cwnd, prior_cwnd) = 800, and that ACK's growth.
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    b.cwnd_bytes = 800 * MSS;
    let t = |x: u64| Instant::ZERO + ms(x);
    let rto = |repeat| CongestionEvent::Rto {
        inflight_bytes: 800 * MSS,
        repeat,
    };
    b.on_congestion(t(0), &rto(false));
    assert_eq!(b.cwnd_bytes(), MSS);
    assert_eq!(b.prior_cwnd_bytes(), 800 * MSS);
    b.on_congestion(t(400), &rto(true));
    assert_eq!(b.prior_cwnd_bytes(), 800 * MSS);
    let in_loss = |now, delivered| AckEvent {
        in_rto_loss: true,
        inflight_bytes: 0,
        delivered_bytes_total: delivered,
        ..ack(now, MSS, None)
    };
    b.on_ack(&in_loss(t(500), 1000 * MSS));
    assert_eq!(b.cwnd_bytes(), 4 * MSS, "1 + 1 MSS, floored at 4 packets");
    b.on_ack(&in_loss(t(501), 1001 * MSS));
    assert_eq!(
        b.cwnd_bytes(),
        5 * MSS,
        "no restore while the loss state lasts"
    );
    b.on_recovery_exit(t(550));
    b.on_ack(&AckEvent {
        delivered_bytes_total: 1002 * MSS,
        inflight_bytes: 0,
        ..ack(t(551), MSS, None)
    });
    // Restored to 800, then the same ACK's growth: min(800 + 1, target ≈ 838) = 801.
    assert_eq!(b.cwnd_bytes(), 801 * MSS);
}

#[test]
fn probe_bw_cycle_is_replaceable_per_subflow() {
    let t = |x: u64| Instant::ZERO + ms(x);
    let coupled = ProbeBwCycle {
        pacing_gains: [1.25, 0.75, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        low_gain_ends_on_time: true,
        min_pkts_per_rtprop: 0.0,
    };
    let mut b = probe_bw_100mbps_50ms(0.0, 2);
    b.set_probe_bw_cycle(coupled);
    b.cycle_stamp = t(0);
    // Inflight far below the BDP: Linux's rule would end a gain < 1 phase at once.
    let low = |now| AckEvent {
        prior_inflight_bytes: 10 * MSS,
        ..ack(now, MSS, None)
    };
    b.on_ack(&low(t(10)));
    assert_eq!(b.cycle_idx(), 2);
    assert_eq!(b.pacing_gain(), 0.5);
    assert!(close(b.pacing_rate().unwrap().bps() / 1e6, 50.0, 1e-9));
    b.on_ack(&low(t(51)));
    assert_eq!(b.cycle_idx(), 3, "ends after one RTprop");
    // The same ACK pattern under Linux's cycle ends the 0.75 phase early.
    let mut linux = probe_bw_100mbps_50ms(0.0, 1);
    linux.cycle_stamp = t(0);
    linux.on_ack(&low(t(10)));
    assert_eq!(linux.cycle_idx(), 2);
    // A floor of 4 packets per RTprop: 4 · 1500 B / 50 ms = 0.96 Mbit/s > 0.001 · 100.
    let mut b = probe_bw_100mbps_50ms(0.0, 2);
    b.set_probe_bw_cycle(ProbeBwCycle {
        pacing_gains: [1.25, 0.75, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001],
        low_gain_ends_on_time: true,
        min_pkts_per_rtprop: 4.0,
    });
    b.cycle_stamp = t(0);
    b.on_ack(&low(t(10)));
    assert!(close(b.pacing_rate().unwrap().bps() / 1e6, 0.96, 1e-9));
}

#[test]
fn probe_bw_phase_rules() {
    let bw = Bandwidth::from_mbps(100.0).bytes_per_s();
    let t = |x: u64| Instant::ZERO + ms(x);
    // gain 1.0: advances after one RTprop.
    let mut b = probe_bw_100mbps_50ms(1.0, 3);
    b.cycle_stamp = t(0);
    b.on_ack(&ack(t(40), MSS, None));
    assert_eq!(b.cycle_idx(), 3);
    b.on_ack(&ack(t(51), MSS, None));
    assert_eq!(b.cycle_idx(), 4);
    // gain 1.25: needs RTprop and (inflight ≥ target(1.25) or a loss).
    let mut b = probe_bw_100mbps_50ms(1.0, 0);
    b.cycle_stamp = t(0);
    let low = AckEvent {
        prior_inflight_bytes: 100 * MSS,
        ..ack(t(60), MSS, None)
    };
    b.on_ack(&low);
    assert_eq!(
        b.cycle_idx(),
        0,
        "RTprop passed but inflight low and no loss"
    );
    let high = b.target_cwnd_bytes(bw, 1.25);
    b.on_ack(&AckEvent {
        prior_inflight_bytes: high,
        ..ack(t(61), MSS, None)
    });
    assert_eq!(b.cycle_idx(), 1);
    // gain 0.75: ends early once inflight ≤ target(1).
    b.on_ack(&AckEvent {
        prior_inflight_bytes: 800 * MSS,
        ..ack(t(62), MSS, None)
    });
    assert_eq!(b.cycle_idx(), 1);
    b.on_ack(&AckEvent {
        prior_inflight_bytes: 300 * MSS,
        ..ack(t(63), MSS, None)
    });
    assert_eq!(b.cycle_idx(), 2);
    assert_eq!(b.pacing_gain(), 1.0);
}

#[test]
fn probe_rtt_after_10_s_holds_4_packets_then_restores_cwnd() {
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    b.cwnd_bytes = 800 * MSS;
    b.min_rtt_stamp = Instant::ZERO;
    let t = |x: u64| Instant::ZERO + ms(x);
    // RTT samples above RTprop for 10 s: the estimate expires.
    let slow = |now, inflight| AckEvent {
        rtt_sample: Some(ms(60)),
        inflight_bytes: inflight,
        ..ack(now, MSS, None)
    };
    b.on_ack(&slow(t(9_000), 800 * MSS));
    assert_eq!(b.mode(), Mode::ProbeBw);
    let before = b.cwnd_bytes();
    b.on_ack(&slow(t(10_001), 800 * MSS));
    assert_eq!(b.mode(), Mode::ProbeRtt);
    assert_eq!(b.cwnd_bytes(), 4 * MSS);
    assert_eq!(
        b.min_rtt(),
        Some(ms(60)),
        "expired filter takes the new sample"
    );
    // Inflight falls to 4 packets: hold for 200 ms and one round.
    b.on_ack(&slow(t(10_100), 4 * MSS));
    assert_eq!(b.mode(), Mode::ProbeRtt);
    b.on_ack(&slow(t(10_250), 4 * MSS));
    assert_eq!(b.mode(), Mode::ProbeRtt, "200 ms passed but no round yet");
    let round_end = AckEvent {
        delivered_bytes_total: 10 * MSS,
        ..ack(t(10_320), MSS, Some(sample(100.0, 5 * MSS)))
    };
    b.on_ack(&AckEvent {
        inflight_bytes: 4 * MSS,
        ..round_end
    });
    assert_eq!(b.mode(), Mode::ProbeBw);
    // Restored to the value before PROBE_RTT, then this ACK's growth.
    assert_eq!(b.cwnd_bytes(), before + MSS);
}

#[test]
fn loss_packet_conservation_then_growth_then_restore() {
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    b.cwnd_bytes = 800 * MSS;
    let t = |x: u64| Instant::ZERO + ms(x);
    b.on_congestion(
        t(0),
        &CongestionEvent::Loss {
            lost_bytes: 10 * MSS,
            largest_lost_sent_time: t(0),
            inflight_bytes: 700 * MSS,
        },
    );
    let rec = |now, inflight, lost| AckEvent {
        in_recovery: true,
        inflight_bytes: inflight,
        delivered_bytes_total: 1000 * MSS,
        rate: Some(RateSample {
            newly_lost_bytes: lost,
            ..sample(100.0, 0)
        }),
        ..ack(now, MSS, None)
    };
    b.on_ack(&rec(t(1), 600 * MSS, 10 * MSS));
    assert_eq!(
        b.cwnd_bytes(),
        601 * MSS,
        "packet conservation: inflight + acked"
    );
    b.on_ack(&rec(t(2), 600 * MSS, 0));
    assert_eq!(
        b.cwnd_bytes(),
        601 * MSS,
        "first round: no growth beyond inflight + acked"
    );
    // Leaving recovery restores the window saved at entry.
    b.on_recovery_exit(t(100));
    b.on_ack(&AckEvent {
        inflight_bytes: 600 * MSS,
        delivered_bytes_total: 1001 * MSS,
        ..ack(t(100), MSS, None)
    });
    assert!(
        b.cwnd_bytes() >= 800 * MSS - MSS,
        "cwnd {}",
        b.cwnd_bytes() / MSS
    );
}

#[test]
fn losses_reach_the_model_also_from_an_ack_without_a_rate_sample() {
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    let loss = CongestionEvent::Loss {
        lost_bytes: 3 * MSS,
        largest_lost_sent_time: Instant::ZERO,
        inflight_bytes: 100 * MSS,
    };
    b.on_congestion(Instant::ZERO, &loss);
    b.on_ack(&AckEvent {
        in_recovery: true,
        ..ack(Instant::ZERO, MSS, None)
    });
    assert_eq!(b.lost_bytes_total, 3 * MSS);
    // With a rate sample, its count is used (it includes the episode's losses).
    b.on_congestion(Instant::ZERO, &loss);
    let with_sample = Some(RateSample {
        newly_lost_bytes: 4 * MSS,
        ..sample(100.0, 0)
    });
    b.on_ack(&AckEvent {
        in_recovery: true,
        ..ack(Instant::ZERO, MSS, with_sample)
    });
    assert_eq!(b.lost_bytes_total, 7 * MSS);
}

#[test]
fn idle_restart_paces_at_btlbw_and_defers_probe_rtt() {
    let t = |x: u64| Instant::ZERO + ms(x);
    let mut b = probe_bw_100mbps_50ms(1.0, 0);
    b.delivered_bytes_total = 1000 * MSS;
    assert!(close(b.pacing_rate().unwrap().bps() / 1e6, 123.75, 1e-9));
    // Sending restarts with nothing in flight: pace at 1.0 × BtlBw.
    b.on_sent(t(10_400), MSS, MSS);
    assert!(close(b.pacing_rate().unwrap().bps() / 1e6, 99.0, 1e-9));
    // RTprop (stamped at 0) is stale, but PROBE_RTT waits for new data to be delivered.
    let no_rtt = |now, acked| AckEvent {
        rtt_sample: None,
        ..ack(now, acked, None)
    };
    b.on_ack(&no_rtt(t(10_500), 0));
    b.on_ack(&no_rtt(t(10_600), MSS));
    assert_eq!(b.mode(), Mode::ProbeBw);
    b.on_ack(&no_rtt(t(10_700), MSS));
    assert_eq!(b.mode(), Mode::ProbeRtt);
    // No idle cwnd cut by default; the switch applies min(cwnd, IW).
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    b.cwnd_bytes = 800 * MSS;
    b.on_idle_restart(t(0));
    assert_eq!(b.cwnd_bytes(), 800 * MSS);
    b.cfg.idle_cwnd_cut = true;
    b.on_idle_restart(t(0));
    assert_eq!(b.cwnd_bytes(), 10 * MSS);
}

#[test]
fn rto_sets_one_mss_and_resets_full_bw() {
    let mut b = probe_bw_100mbps_50ms(1.0, 2);
    b.full_bw_bytes_per_s = 1e6;
    b.on_congestion(
        Instant::ZERO,
        &CongestionEvent::Rto {
            inflight_bytes: 100 * MSS,
            repeat: false,
        },
    );
    assert_eq!(b.cwnd_bytes(), MSS);
    assert_eq!(b.full_bw_bytes_per_s, 0.0);
    assert_eq!(b.mode(), Mode::ProbeBw, "mode is kept");
}

#[test]
fn btlbw_converges_to_each_paths_rate() {
    for mbps in [12.0, 48.0] {
        let bbr = Bbr::new(
            BbrConfig {
                mss_bytes: MSS,
                ..BbrConfig::default()
            },
            Instant::ZERO,
        );
        let mut s = TestSender::new(bbr, MSS, ms(40));
        s.bottleneck = Some(Bandwidth::from_mbps(mbps));
        s.run_for(Duration::from_secs(5));
        let est = s.cc.bw_estimate().unwrap().bps() / 1e6;
        assert!(
            close(est, mbps, 0.03 * mbps),
            "{mbps} Mb/s path: BtlBw {est}"
        );
        assert_eq!(s.cc.phase(), CcPhase::ProbeBw);
        let rtprop = s.cc.min_rtt().unwrap();
        assert!(rtprop >= ms(40) && rtprop < ms(42), "RTprop {rtprop:?}");
        // Goodput over the run is close to the link rate (STARTUP included).
        let goodput = s.delivered_bytes() as f64 * 8.0 / 5.0 / 1e6;
        assert!(goodput > 0.85 * mbps, "goodput {goodput} of {mbps}");
    }
}

#[test]
fn policer_detector_switch() {
    // 20 Mb/s link behind a 5 Mb/s token-bucket policer (bucket 30 kB).
    for lt_bw in [true, false] {
        let cfg = BbrConfig {
            mss_bytes: MSS,
            lt_bw,
            ..BbrConfig::default()
        };
        let mut s = TestSender::new(Bbr::new(cfg, Instant::ZERO), MSS, ms(40));
        s.bottleneck = Some(Bandwidth::from_mbps(20.0));
        s.policer = Some((Bandwidth::from_mbps(5.0), 30_000));
        // The detector fires within the first second and holds lt_bw for 48 rounds.
        let mut seen = None;
        for _ in 0..30 {
            s.run_for(ms(100));
            seen = seen.or(s.cc.long_term_bw());
            if let Some(lt) = s.cc.long_term_bw() {
                assert_eq!(s.cc.bw_estimate(), Some(lt), "the model runs on lt_bw");
                assert_eq!(s.cc.pacing_gain(), 1.0);
            }
        }
        if lt_bw {
            let lt = seen.expect("policer detected").bps() / 1e6;
            assert!(close(lt, 5.0, 0.25), "lt_bw {lt} Mb/s");
        } else {
            assert!(seen.is_none());
        }
    }
}

#[test]
fn bad_option_names_the_valid_range() {
    let mut cfg = CcConfig::default();
    cfg.options
        .insert("pacing_margin_percent".into(), "50".into());
    let err = build(&cfg).err().unwrap().to_string();
    assert!(
        err.contains("pacing_margin_percent") && err.contains("[0, 10]"),
        "{err}"
    );
}
