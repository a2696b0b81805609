//! BBR's `snd_ssthresh`, the out-of-tree MPTCP receive-buffer penalty and the end of
//! PROBE_RTT on a restart from idle, as Linux `tcp_bbr.c` (`bbr_check_drain`,
//! `bbr_set_cwnd`, `bbr_cwnd_event`) and `mptcp_sched.c` (`mptcp_rcv_buf_optimization`) do
//! them. Expectations computed by hand in the comments.

use std::time::Duration;

use super::{Bbr, BbrConfig, CaState, Mode};
use crate::cc::{AckEvent, RateSample, SubflowCc};
use crate::units::{Bandwidth, Instant};

const MSS: u64 = 1500;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn ack(now: Instant, acked_bytes: u64, delivered: u64, rate: Option<RateSample>) -> AckEvent {
    AckEvent {
        now,
        acked_bytes,
        rtt_sample: Some(ms(50)),
        srtt: ms(50),
        min_rtt: ms(50),
        inflight_bytes: 1_000_000,
        prior_inflight_bytes: 1_000_000,
        is_cwnd_limited: true,
        largest_acked_sent_time: Instant::ZERO,
        rate,
        delivered_bytes_total: delivered,
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

fn bbr() -> Bbr {
    Bbr::new(
        BbrConfig {
            mss_bytes: MSS,
            ..BbrConfig::default()
        },
        Instant::ZERO,
    )
}

/// Rounds of 10, 20, 40, 50, 55, 60, 61 Mbit/s at 50 ms: the pipe is full at round 7.
fn through_startup(b: &mut Bbr) {
    let mut delivered = 0;
    for (round, mbps) in [10.0, 20.0, 40.0, 50.0, 55.0, 60.0, 61.0]
        .into_iter()
        .enumerate()
    {
        let prior = delivered;
        delivered += 100 * MSS;
        let now = Instant::ZERO + ms(50) * (round as u32 + 1);
        assert_eq!(b.ssthresh_bytes(), None, "infinite during STARTUP");
        b.on_ack(&ack(now, MSS, delivered, Some(sample(mbps, prior))));
    }
}

#[test]
fn leaving_startup_sets_ssthresh_to_bbr_inflight_of_max_bw() {
    let mut b = bbr();
    through_startup(&mut b);
    assert_eq!(b.mode, Mode::Drain);
    // bbr_inflight(max_bw = 61 Mbit/s, gain 1): BDP = 7.625e6 B/s · 50 ms / 1500 B =
    // 254.17 → 255 packets; send quantum from the pacing rate of the previous ACK,
    // 2.885 · 60 Mbit/s · 0.99 = 21.42e6 B/s → 21 424 000 / 1024 = 20 922 B → 13 packets;
    // 255 + 3·13 = 294, already even: 294 · 1500 = 441 000 B.
    assert_eq!(b.ssthresh_bytes(), Some(441_000));
    assert_eq!(b.snapshot().ssthresh_bytes, Some(441_000));
}

#[test]
fn ssthresh_is_set_once_and_kept_through_an_rto() {
    let mut b = bbr();
    through_startup(&mut b);
    let set = b.ssthresh_bytes();
    assert!(set.is_some());
    // An RTO: Linux `bbr_ssthresh` returns snd_ssthresh unchanged.
    b.on_congestion(
        Instant::ZERO + ms(400),
        &crate::cc::CongestionEvent::Rto {
            repeat: false,
            inflight_bytes: 10 * MSS,
        },
    );
    assert_eq!(b.ssthresh_bytes(), set);
}

/// A BBR in PROBE_BW (pipe full) at cwnd `cwnd_pkts` and ssthresh `ssthresh_pkts`.
fn probe_bw(cwnd_pkts: u64, ssthresh_pkts: Option<u64>) -> Bbr {
    let mut b = bbr();
    b.bw_filter
        .reset(1, Bandwidth::from_mbps(100.0).bytes_per_s());
    b.min_rtt = Some(ms(50));
    b.full_bw_reached = true;
    b.mode = Mode::ProbeBw;
    b.cycle_idx = 2;
    b.update_gains();
    b.cwnd_bytes = cwnd_pkts * MSS;
    b.ssthresh_bytes = ssthresh_pkts.map(|p| p * MSS);
    b
}

#[test]
fn rcv_buf_penalty_halves_a_bbr_subflows_cwnd_and_ssthresh_as_the_kernel_does() {
    // 20 packets, ssthresh 10: cwnd ≥ ssthresh, both halve → 10 / 5.
    let mut b = probe_bw(20, Some(10));
    assert!(b.penalise_cwnd());
    assert_eq!(
        (b.cwnd_bytes(), b.ssthresh_bytes()),
        (10 * MSS, Some(5 * MSS))
    );
    // 3 packets, ssthresh 4 ("slow start"): cwnd → max(1, 1) = 1, ssthresh kept.
    let mut b = probe_bw(3, Some(4));
    assert!(b.penalise_cwnd());
    assert_eq!((b.cwnd_bytes(), b.ssthresh_bytes()), (MSS, Some(4 * MSS)));
    // ssthresh still infinite (before STARTUP ended): only cwnd halves, 21 → 10.
    let mut b = probe_bw(21, None);
    assert!(b.penalise_cwnd());
    assert_eq!((b.cwnd_bytes(), b.ssthresh_bytes()), (10 * MSS, None));
    // Not in TCP_CA_Open: nothing.
    let mut b = probe_bw(20, Some(10));
    b.ca_state = CaState::Recovery;
    assert!(!b.penalise_cwnd());
    assert_eq!(b.cwnd_bytes(), 20 * MSS);
}

#[test]
fn the_penalised_cwnd_grows_back_by_the_acked_bytes() {
    // 40 → 20 packets; the next ACK of 2 packets (pipe full): cwnd = min(20 + 2, target) =
    // 22 packets, target = 2·BDP (100 Mbit/s · 50 ms = 416.7 → 834 packets) and more.
    let mut b = probe_bw(40, Some(30));
    assert!(b.penalise_cwnd());
    assert_eq!(b.cwnd_bytes(), 20 * MSS);
    let now = Instant::ZERO + ms(60);
    b.on_ack(&AckEvent {
        inflight_bytes: 18 * MSS,
        prior_inflight_bytes: 20 * MSS,
        ..ack(now, 2 * MSS, 1_000 * MSS, Some(sample(100.0, 900 * MSS)))
    });
    assert_eq!(b.cwnd_bytes(), 22 * MSS);
}

#[test]
fn a_send_after_idle_ends_an_expired_probe_rtt() {
    // PROBE_RTT entered with cwnd 20 packets saved, held at 4, its 200 ms over at t = 1 s;
    // the first send after idle at 1.001 s (nothing in flight) ends it
    // (`bbr_cwnd_event` → `bbr_check_probe_rtt_done`): cwnd = max(4, 20) = 20 packets and,
    // the pipe having been full, PROBE_BW.
    let mut b = probe_bw(4, Some(10));
    b.mode = Mode::ProbeRtt;
    b.update_gains();
    b.prior_cwnd_bytes = 20 * MSS;
    b.delivered_bytes_total = 1_000 * MSS;
    b.probe_rtt_done_stamp = Some(Instant::ZERO + ms(1_000));
    b.on_sent(Instant::ZERO + ms(1_001), MSS, MSS);
    assert_eq!(b.mode, Mode::ProbeBw);
    assert_eq!(b.cwnd_bytes(), 20 * MSS);
    // Before the 200 ms are over, the restart leaves PROBE_RTT alone.
    let mut b = probe_bw(4, Some(10));
    b.mode = Mode::ProbeRtt;
    b.delivered_bytes_total = 1_000 * MSS;
    b.probe_rtt_done_stamp = Some(Instant::ZERO + ms(1_000));
    b.on_sent(Instant::ZERO + ms(900), MSS, MSS);
    assert_eq!(b.mode, Mode::ProbeRtt);
}
