//! Tests of `window.rs` (a sibling file, so that the machine reads on its own).

use super::*;

const MSS: u64 = 1448;

#[test]
fn rcv_buf_penalisation_halves_cwnd_and_ssthresh_outside_slow_start() {
    let mut w = Window::new(WindowConfig::default());
    let mss = w.config().mss_bytes;
    // Slow start (ssthresh ∞): cwnd 10 → 5 packets, ssthresh stays ∞.
    assert!(w.penalise());
    assert_eq!((w.cwnd_bytes(), w.ssthresh_bytes()), (5 * mss, None));
    // Congestion avoidance, cwnd 21 ≥ ssthresh 11: cwnd 10, ssthresh 5 (whole packets).
    w.set_cwnd(21 * mss);
    w.set_ssthresh(11 * mss);
    assert!(w.penalise());
    assert_eq!(
        (w.cwnd_bytes(), w.ssthresh_bytes()),
        (10 * mss, Some(5 * mss))
    );
    // Floors: cwnd at least 1 packet, ssthresh at least 2.
    w.set_cwnd(3 * mss);
    w.set_ssthresh(3 * mss);
    assert!(w.penalise());
    assert_eq!((w.cwnd_bytes(), w.ssthresh_bytes()), (mss, Some(2 * mss)));
    assert!(w.penalise());
    assert_eq!(w.cwnd_bytes(), mss);
    // In fast recovery (not CA_Open): untouched.
    w.set_cwnd(20 * mss);
    let loss = CongestionEvent::Loss {
        lost_bytes: mss,
        largest_lost_sent_time: Instant::ZERO,
        inflight_bytes: 20 * mss,
    };
    w.on_congestion(Instant::ZERO, &loss, &mut Reno);
    let before = (w.cwnd_bytes(), w.ssthresh_bytes());
    assert!(!w.penalise());
    assert_eq!((w.cwnd_bytes(), w.ssthresh_bytes()), before);
}

/// Reno's rule, to exercise the machine alone.
struct Reno;
impl WindowRule for Reno {
    fn increase(&mut self, w: &WindowView, _ack: &AckEvent, _acked: u64) -> Increase {
        Increase::PerAcked(w.cwnd_pkts())
    }
}

/// A rule that returns a fixed increase.
struct Fixed(Increase);
impl WindowRule for Fixed {
    fn increase(&mut self, _w: &WindowView, _ack: &AckEvent, _acked: u64) -> Increase {
        self.0
    }
}

fn window(prr: bool) -> Window {
    Window::new(WindowConfig {
        mss_bytes: MSS,
        prr,
        ..WindowConfig::default()
    })
}

fn ack(acked_bytes: u64, inflight_bytes: u64) -> AckEvent {
    AckEvent {
        acked_bytes,
        inflight_bytes,
        srtt: Duration::from_millis(100),
        rttvar: Duration::from_millis(10),
        is_cwnd_limited: true,
        mss: MSS,
        ..AckEvent::default()
    }
}

/// cwnd 20 MSS, one packet lost at FlightSize 20: a Reno recovery episode.
fn in_recovery(prr: bool, lost_pkts: u64) -> Window {
    let mut w = window(prr);
    w.set_cwnd(20 * MSS);
    let ev = CongestionEvent::Loss {
        lost_bytes: lost_pkts * MSS,
        largest_lost_sent_time: Instant::ZERO,
        inflight_bytes: 20 * MSS,
    };
    assert!(w.on_congestion(Instant::ZERO, &ev, &mut Reno));
    assert_eq!(w.ssthresh_bytes(), Some(10 * MSS));
    w
}

#[test]
fn prr_sends_half_of_what_is_delivered_while_inflight_exceeds_ssthresh() {
    // RFC 6937 proportional part, ssthresh/prior_cwnd = 10/20.
    let mut w = in_recovery(true, 1);
    // ACK 1: prr_delivered 1 MSS → ⌈10·1/20⌉ = 0.5 MSS, but the first send of the
    // episode is forced: cwnd = inflight 18 + 1 MSS.
    w.on_ack(&ack(MSS, 18 * MSS), &mut Reno);
    assert_eq!(w.cwnd_bytes(), 19 * MSS);
    w.on_sent(Instant::ZERO, MSS, 19 * MSS, &mut Reno);
    // ACK 2: ⌈10·2/20⌉ = 1 MSS − prr_out 1 MSS = 0: cwnd = inflight.
    w.on_ack(&ack(MSS, 18 * MSS), &mut Reno);
    assert_eq!(w.cwnd_bytes(), 18 * MSS);
    // ACK 3: in packets as Linux, ⌈10·3/20⌉ = 2 − prr_out 1 = 1: cwnd = 17 + 1.
    w.on_ack(&ack(MSS, 17 * MSS), &mut Reno);
    assert_eq!(w.cwnd_bytes(), 18 * MSS);
    // The full ACK: cwnd = ssthresh.
    w.on_recovery_exit(Instant::ZERO, &mut Reno);
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
    assert_eq!(w.state(), LossState::Open);
}

#[test]
fn prr_slow_start_bound_when_inflight_fell_below_ssthresh() {
    // 12 of 20 lost, one acked: inflight 7 < ssthresh 10. An ACK that declares a new
    // loss: sndcnt = min(10 − 7, max(prr_delivered − prr_out, acked)) = min(3, 1) = 1.
    let mut w = in_recovery(true, 12);
    w.on_ack(
        &AckEvent {
            newly_lost_bytes: MSS,
            ..ack(MSS, 7 * MSS)
        },
        &mut Reno,
    );
    assert_eq!(w.cwnd_bytes(), 8 * MSS);
    w.on_sent(Instant::ZERO, MSS, 8 * MSS, &mut Reno);
    // No new loss but snd_una did not move (a SACK-only ACK in TCP terms): Linux adds no
    // packet, sndcnt = min(10 − 7, max(2 − 1, 1)) = 1 → cwnd 8.
    w.on_ack(&ack(MSS, 7 * MSS), &mut Reno);
    assert_eq!(w.cwnd_bytes(), 8 * MSS);
    // snd_una advanced, no new loss: max(3 − 1, 1) + 1 = 3, min(3, 3) → cwnd 10.
    w.on_ack(
        &AckEvent {
            snd_una_advanced: true,
            ..ack(MSS, 7 * MSS)
        },
        &mut Reno,
    );
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
    // Capped by ssthresh − inflight: inflight 9 → min(1, max(4 − 1, 1) + 1) = 1 → 10.
    w.on_ack(
        &AckEvent {
            snd_una_advanced: true,
            ..ack(MSS, 9 * MSS)
        },
        &mut Reno,
    );
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
}

#[test]
fn ssthresh_is_whole_packets_and_the_ca_counter_restarts_at_a_reduction() {
    // Linux tcp_reno_ssthresh: max(21 >> 1, 2) = 10 packets, not 10.5.
    let mut w = window(false);
    w.set_cwnd(21 * MSS);
    w.set_ssthresh(10 * MSS);
    // Half a packet of CA progress (w = 21: 10 of 21 packets acked).
    for _ in 0..10 {
        w.on_ack(&ack(MSS, 21 * MSS), &mut Reno);
    }
    assert!(w.cwnd_cnt_bytes() > 0.0);
    let loss = CongestionEvent::Loss {
        lost_bytes: MSS,
        largest_lost_sent_time: Instant::ZERO,
        inflight_bytes: 21 * MSS,
    };
    assert!(w.on_congestion(Instant::ZERO, &loss, &mut Reno));
    assert_eq!(w.ssthresh_bytes(), Some(10 * MSS));
    // tcp_init_cwnd_reduction: snd_cwnd_cnt = 0.
    assert_eq!(w.cwnd_cnt_bytes(), 0.0);
    w.on_recovery_exit(Instant::ZERO, &mut Reno);
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
}

#[test]
fn without_prr_cwnd_is_ssthresh_for_the_whole_episode() {
    let mut w = in_recovery(false, 1);
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
    w.on_ack(&ack(3 * MSS, 15 * MSS), &mut Reno);
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
}

#[test]
fn rto_inside_fast_recovery_does_not_reduce_ssthresh_again() {
    // tcp_enter_loss: ssthresh was already reduced for this window.
    let mut w = in_recovery(true, 1);
    let rto = CongestionEvent::Rto {
        inflight_bytes: 19 * MSS,
        repeat: false,
    };
    assert!(!w.on_congestion(Instant::ZERO, &rto, &mut Reno));
    assert_eq!(w.ssthresh_bytes(), Some(10 * MSS));
    assert_eq!(w.cwnd_bytes(), MSS);
    assert_eq!(w.state(), LossState::RtoLoss);
    // A fast-retransmit loss during the RTO-loss state is not a new episode.
    let loss = CongestionEvent::Loss {
        lost_bytes: MSS,
        largest_lost_sent_time: Instant::ZERO,
        inflight_bytes: 2 * MSS,
    };
    assert!(!w.on_congestion(Instant::ZERO, &loss, &mut Reno));
    assert_eq!(w.state(), LossState::RtoLoss);
}

#[test]
fn idle_restart_halves_once_per_rto_down_to_the_initial_window() {
    // RTO = 100 ms + max(4·10 ms, 200 ms) = 300 ms. Linux tcp_cwnd_restart with
    // delta = 700 ms: 700 − 300 > 0 → 40; 400 − 300 > 0 → 20; 100 − 300 ≤ 0 → stop.
    let mut w = window(true);
    w.set_cwnd(80 * MSS);
    w.set_ssthresh(40 * MSS);
    w.on_ack(&ack(0, 0), &mut Reno);
    w.on_sent(Instant::ZERO, MSS, MSS, &mut Reno);
    assert_eq!(w.linux_rto(), Duration::from_millis(300));
    w.on_idle_restart(Instant::from_nanos(700_000_000), &mut Reno);
    assert_eq!(w.cwnd_bytes(), 20 * MSS);
    // ssthresh = max(40, ¾·80) = 60.
    assert_eq!(w.ssthresh_bytes(), Some(60 * MSS));
    // A long idle period stops at IW = 10.
    w.on_sent(Instant::from_nanos(700_000_000), MSS, MSS, &mut Reno);
    w.on_idle_restart(Instant::from_nanos(60_000_000_000), &mut Reno);
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
}

#[test]
fn an_application_limited_sender_decays_cwnd_towards_what_it_used_once_per_rto() {
    // cwnd 40, ssthresh 20, RTO = 100 + max(4·10, 200) = 300 ms. The sender keeps 12
    // packets in flight, never a full window. tcp_cwnd_application_limited at the first
    // send ≥ 300 ms after the stamp: win_used = max(12, IW 10) = 12 < 40 → ssthresh =
    // max(20, 30) = 30, cwnd = (40 + 12)/2 = 26; an RTO later (26 + 12)/2 = 19,
    // ssthresh max(30, 19) = 30.
    let mut w = window(true);
    w.set_cwnd(40 * MSS);
    w.set_ssthresh(20 * MSS);
    let not_limited = AckEvent {
        is_cwnd_limited: false,
        ..ack(0, 0)
    };
    w.on_ack(&not_limited, &mut Reno);
    let t = |ms: u64| Instant::from_nanos(ms * 1_000_000);
    for ms in (0..300).step_by(50) {
        w.on_sent(t(ms), MSS, 12 * MSS, &mut Reno);
        assert_eq!(w.cwnd_bytes(), 40 * MSS, "{ms} ms");
    }
    w.on_sent(t(300), MSS, 12 * MSS, &mut Reno);
    assert_eq!(
        (w.cwnd_bytes(), w.ssthresh_bytes()),
        (26 * MSS, Some(30 * MSS))
    );
    w.on_sent(t(450), MSS, 12 * MSS, &mut Reno);
    assert_eq!(w.cwnd_bytes(), 26 * MSS);
    w.on_sent(t(600), MSS, 12 * MSS, &mut Reno);
    assert_eq!(
        (w.cwnd_bytes(), w.ssthresh_bytes()),
        (19 * MSS, Some(30 * MSS))
    );
    // A full window restarts the clock: no reduction 300 ms after it.
    w.on_sent(t(700), MSS, 19 * MSS, &mut Reno);
    w.on_sent(t(900), MSS, 12 * MSS, &mut Reno);
    assert_eq!(w.cwnd_bytes(), 19 * MSS);
    // Linux's switch turns it off with the idle restart.
    let mut w = Window::new(WindowConfig {
        mss_bytes: MSS,
        slow_start_after_idle: false,
        ..WindowConfig::default()
    });
    w.set_cwnd(40 * MSS);
    w.on_ack(&not_limited, &mut Reno);
    for ms in (0..=1000).step_by(100) {
        w.on_sent(t(ms), MSS, 12 * MSS, &mut Reno);
    }
    assert_eq!(w.cwnd_bytes(), 40 * MSS);
}

#[test]
fn fractional_packet_increases_carry_over_and_floor_at_one_mss() {
    let mut w = window(true);
    w.set_ssthresh(10 * MSS);
    let mut rule = Fixed(Increase::Packets(0.4));
    w.on_ack(&ack(MSS, 0), &mut rule);
    w.on_ack(&ack(MSS, 0), &mut rule);
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
    w.on_ack(&ack(MSS, 0), &mut rule);
    assert_eq!(w.cwnd_bytes(), 11 * MSS, "0.4 + 0.4 + 0.4 = 1.2");
    let mut rule = Fixed(Increase::Packets(-100.0));
    w.on_ack(&ack(MSS, 0), &mut rule);
    assert_eq!(w.cwnd_bytes(), MSS);
}

#[test]
fn per_ack_counting_needs_w_plus_1_acks_and_restarts_at_a_reduction() {
    // `if (snd_cwnd_cnt >= 3) { snd_cwnd++; snd_cwnd_cnt = 0; } else snd_cwnd_cnt++;`
    // per ACK, whatever it acknowledged: 3 ACKs count 1, 2, 3; the 4th adds one packet.
    let mut w = window(true);
    w.set_ssthresh(10 * MSS);
    let mut rule = Fixed(Increase::PerAck(3));
    for n in 1..=3 {
        w.on_ack(&ack(5 * MSS, 0), &mut rule);
        assert_eq!((w.cwnd_bytes(), w.cwnd_cnt_acks()), (10 * MSS, n));
    }
    w.on_ack(&ack(MSS, 0), &mut rule);
    assert_eq!((w.cwnd_bytes(), w.cwnd_cnt_acks()), (11 * MSS, 0));
    w.on_ack(&ack(MSS, 0), &mut rule);
    assert_eq!(w.cwnd_cnt_acks(), 1);
    // tcp_init_cwnd_reduction: snd_cwnd_cnt = 0.
    let loss = CongestionEvent::Loss {
        lost_bytes: MSS,
        largest_lost_sent_time: Instant::ZERO,
        inflight_bytes: 11 * MSS,
    };
    w.on_congestion(Instant::ZERO, &loss, &mut rule);
    assert_eq!(w.cwnd_cnt_acks(), 0);
}

#[test]
fn growth_needs_cwnd_limited_and_stops_in_recovery() {
    let mut w = window(true);
    w.on_ack(
        &AckEvent {
            is_cwnd_limited: false,
            ..ack(MSS, 0)
        },
        &mut Reno,
    );
    assert_eq!(w.cwnd_bytes(), 10 * MSS);
    w.on_ack(&ack(MSS, 0), &mut Reno);
    assert_eq!(w.cwnd_bytes(), 11 * MSS, "slow start adds the acked bytes");
    let mut w = in_recovery(false, 1);
    w.on_ack(
        &ack(5 * MSS, 5 * MSS),
        &mut Fixed(Increase::SetCwnd(50 * MSS)),
    );
    assert_eq!(w.cwnd_bytes(), 10 * MSS, "no increase rule in recovery");
}
