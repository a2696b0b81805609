//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation; Linux
//! `net/ipv4/tcp_rate.c`), kept apart from every CC: the core stamps each packet at send time
//! and feeds acks and losses here; one [`AckRate`] per ACK frame is then handed to the CC in
//! `AckEvent`.
//!
//! rate = (delivered − P.delivered) / max(P.sent − P.first_sent, now − P.delivered_time),
//! where P is the most recently sent packet among those newly acked. As `tcp_rate.c`:
//! * a packet declared lost and then acknowledged (a late ACK) counts as delivered and may be
//!   P (`tcp_clean_rtx_queue`/`tcp_sacktag` count it in `tp->delivered`);
//! * a sample whose interval is below min_rtt is discarded (ACK compression), but the ACK's
//!   newly lost bytes are still reported (`rs->losses` is set before the validity checks);
//! * the subflow's delivery rate (`tcp_get_info`'s `delivery_rate`) is the last sample that
//!   was not app-limited, or an app-limited one that exceeds it.

use std::time::Duration;

use super::RateSample;
use crate::units::{Bandwidth, Instant};

/// Stamped on every packet when it is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketRateStamp {
    pub delivered_bytes: u64,
    pub delivered_time: Instant,
    pub first_sent_time: Instant,
    pub sent_time: Instant,
    pub is_app_limited: bool,
}

/// What the sampler learned from one ACK frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckRate {
    /// The delivery-rate sample, None if nothing was acknowledged or the interval was too
    /// short to trust.
    pub sample: Option<RateSample>,
    /// Bytes newly declared lost while processing the ACK (kept when `sample` is None).
    pub newly_lost_bytes: u64,
    /// `P.delivered` of the sampled packet, whenever the ACK acknowledged a packet (BBR's
    /// round counting compares it with the round's end).
    pub prior_delivered_bytes: Option<u64>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Sampled {
    prior_delivered_bytes: u64,
    prior_time: Instant,
    send_elapsed: Duration,
    is_app_limited: bool,
    rtt: Duration,
}

#[derive(Clone, Copy, Debug, Default)]
struct PendingAck {
    sampled: Option<Sampled>,
    newly_acked_bytes: u64,
    newly_lost_bytes: u64,
}

/// Per-subflow delivery-rate state.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    delivered_bytes: u64,
    delivered_time: Instant,
    first_sent_time: Instant,
    /// Some while app-limited: the `delivered_bytes` mark after which samples are trusted
    /// again (Linux `tp->app_limited`).
    app_limited_until_bytes: Option<u64>,
    /// Linux `rate_delivered`/`rate_interval_us`/`rate_app_limited`.
    reported: Option<(u64, Duration, bool)>,
    pending: PendingAck,
}

impl RateSampler {
    pub fn new() -> RateSampler {
        RateSampler::default()
    }

    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    pub fn is_app_limited(&self) -> bool {
        self.app_limited_until_bytes.is_some()
    }

    /// The subflow's delivery rate as `tcp_get_info` reports it, None before the first
    /// valid sample.
    pub fn delivery_rate(&self) -> Option<Bandwidth> {
        self.reported
            .map(|(bytes, interval, _)| Bandwidth::from_bytes_and_duration(bytes, interval))
    }

    /// Stamp for a packet sent at `now` while `inflight_bytes` (before it) were in flight.
    pub fn on_sent(&mut self, now: Instant, inflight_bytes: u64) -> PacketRateStamp {
        if inflight_bytes == 0 {
            // Start of a new flight: do not count the idle time in the next interval.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        PacketRateStamp {
            delivered_bytes: self.delivered_bytes,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            is_app_limited: self.app_limited_until_bytes.is_some(),
        }
    }

    /// The sender ran out of data with window to spare: samples taken until what is now in
    /// flight is delivered may underestimate the path.
    pub fn on_app_limited(&mut self, inflight_bytes: u64) {
        self.app_limited_until_bytes = Some(self.delivered_bytes + inflight_bytes);
    }

    /// A packet was acknowledged, whether it was still in flight or already declared lost.
    pub fn on_packet_delivered(&mut self, now: Instant, stamp: &PacketRateStamp, bytes: u64) {
        self.delivered_bytes += bytes;
        self.delivered_time = now;
        let p = &mut self.pending;
        p.newly_acked_bytes += bytes;
        if p.sampled
            .is_none_or(|s| stamp.delivered_bytes >= s.prior_delivered_bytes)
        {
            p.sampled = Some(Sampled {
                prior_delivered_bytes: stamp.delivered_bytes,
                prior_time: stamp.delivered_time,
                send_elapsed: stamp.sent_time - stamp.first_sent_time,
                is_app_limited: stamp.is_app_limited,
                rtt: now - stamp.sent_time,
            });
            self.first_sent_time = stamp.sent_time;
        }
    }

    pub fn on_packet_lost(&mut self, bytes: u64) {
        self.pending.newly_lost_bytes += bytes;
    }

    /// Closes the ACK frame (at `now`): its sample and losses; resets the per-ACK state.
    pub fn take_ack(&mut self, now: Instant, min_rtt: Duration) -> AckRate {
        let p = std::mem::take(&mut self.pending);
        if self
            .app_limited_until_bytes
            .is_some_and(|mark| self.delivered_bytes > mark)
        {
            self.app_limited_until_bytes = None;
        }
        let mut out = AckRate {
            sample: None,
            newly_lost_bytes: p.newly_lost_bytes,
            prior_delivered_bytes: p.sampled.map(|s| s.prior_delivered_bytes),
        };
        let Some(s) = p.sampled else {
            return out;
        };
        let ack_elapsed = now - s.prior_time;
        let interval = s.send_elapsed.max(ack_elapsed);
        if interval.is_zero() || interval < min_rtt {
            return out;
        }
        let delivered = self.delivered_bytes - s.prior_delivered_bytes;
        let keep = match self.reported {
            None => true,
            Some((bytes, iv, _)) => {
                !s.is_app_limited
                    || delivered as u128 * iv.as_nanos() >= bytes as u128 * interval.as_nanos()
            }
        };
        if keep {
            self.reported = Some((delivered, interval, s.is_app_limited));
        }
        out.sample = Some(RateSample {
            delivery_rate: Bandwidth::from_bytes_and_duration(delivered, interval),
            interval,
            delivered_bytes: delivered,
            prior_delivered_bytes: s.prior_delivered_bytes,
            is_app_limited: s.is_app_limited,
            rtt: s.rtt,
            newly_acked_bytes: p.newly_acked_bytes,
            newly_lost_bytes: p.newly_lost_bytes,
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    #[test]
    fn steady_flow_measures_the_sending_rate() {
        // 10 packets of 1000 B every 1 ms, each acked 50 ms later: 8 Mbit/s.
        let mut s = RateSampler::new();
        let mut stamps = Vec::new();
        for i in 0..10 {
            stamps.push(s.on_sent(ms(i), i * 1000));
        }
        let mut last = None;
        for (i, st) in stamps.iter().enumerate() {
            s.on_packet_delivered(ms(50 + i as u64), st, 1000);
            last = s
                .take_ack(ms(50 + i as u64), Duration::from_millis(10))
                .sample
                .or(last);
        }
        // The first sample spans the whole RTT (ack_elapsed = 50 ms, 1 packet): discarded
        // intervals aside, the last one covers 9 packets in 59 ms − 50 ms... check rate.
        let sample = last.expect("a sample");
        assert!(sample.rtt == Duration::from_millis(50));
        assert!(sample.delivery_rate.bps() > 0.0 && sample.delivery_rate.bps() < 9e6);
    }

    #[test]
    fn short_interval_is_discarded_and_app_limited_is_flagged() {
        let mut s = RateSampler::new();
        s.on_app_limited(0);
        let st = s.on_sent(ms(0), 0);
        assert!(st.is_app_limited);
        s.on_packet_delivered(ms(5), &st, 1000);
        assert!(
            s.take_ack(ms(5), Duration::from_millis(10))
                .sample
                .is_none()
        );
        assert!(!s.is_app_limited(), "cleared once the mark is passed");
        let st = s.on_sent(ms(5), 0);
        s.on_packet_delivered(ms(25), &st, 1000);
        let r = s
            .take_ack(ms(25), Duration::from_millis(10))
            .sample
            .unwrap();
        assert_eq!(r.interval, Duration::from_millis(20));
        assert_eq!(r.delivered_bytes, 1000);
        assert!(!r.is_app_limited);
        assert!((r.delivery_rate.bps() - 400_000.0).abs() < 1e-6);
    }

    #[test]
    fn late_ack_of_a_lost_packet_counts_as_delivered() {
        // Two 1000 B packets at 0 and 1 ms; the first is declared lost (its loss is counted
        // on the ACK that declared it), then its late ACK at 60 ms delivers it all the same:
        // delivered = 2000 B, the sample's P is the later-sent packet (P.delivered = 0).
        let mut s = RateSampler::new();
        let a = s.on_sent(ms(0), 0);
        let b = s.on_sent(ms(1), 1000);
        s.on_packet_delivered(ms(51), &b, 1000);
        s.on_packet_lost(1000);
        let first = s.take_ack(ms(51), Duration::from_millis(40));
        assert_eq!(first.newly_lost_bytes, 1000);
        assert_eq!(s.delivered_bytes(), 1000);
        s.on_packet_delivered(ms(60), &a, 1000);
        let late = s.take_ack(ms(60), Duration::from_millis(40));
        assert_eq!(s.delivered_bytes(), 2000);
        assert_eq!(late.prior_delivered_bytes, Some(0));
        // P = packet a: delivered since its send = 2000 B over max(0, 60 − 0) = 60 ms.
        let r = late.sample.unwrap();
        assert_eq!(r.delivered_bytes, 2000);
        assert_eq!(r.interval, Duration::from_millis(60));
    }

    #[test]
    fn a_discarded_sample_keeps_its_losses() {
        let mut s = RateSampler::new();
        let st = s.on_sent(ms(0), 0);
        s.on_packet_delivered(ms(5), &st, 1000);
        s.on_packet_lost(3000);
        let r = s.take_ack(ms(5), Duration::from_millis(10));
        assert!(r.sample.is_none(), "5 ms < min_rtt 10 ms");
        assert_eq!(r.newly_lost_bytes, 3000);
        assert_eq!(r.prior_delivered_bytes, Some(0));
        // A loss-only ACK: no packet acked, the losses still come out.
        s.on_packet_lost(1000);
        let r = s.take_ack(ms(6), Duration::from_millis(10));
        assert_eq!(
            (r.sample, r.newly_lost_bytes, r.prior_delivered_bytes),
            (None, 1000, None)
        );
    }

    #[test]
    fn reported_rate_keeps_the_last_unlimited_sample_over_a_lower_app_limited_one() {
        let mut s = RateSampler::new();
        let st = s.on_sent(ms(0), 0);
        s.on_packet_delivered(ms(20), &st, 10_000);
        s.take_ack(ms(20), Duration::from_millis(10));
        // 10 000 B / 20 ms = 4 Mbit/s.
        assert!((s.delivery_rate().unwrap().bps() - 4e6).abs() < 1.0);
        s.on_app_limited(0);
        let st = s.on_sent(ms(20), 0);
        s.on_packet_delivered(ms(40), &st, 1000);
        s.take_ack(ms(40), Duration::from_millis(10));
        // The app-limited 0.4 Mbit/s sample does not replace it.
        assert!((s.delivery_rate().unwrap().bps() - 4e6).abs() < 1.0);
    }
}
