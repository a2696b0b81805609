//! CC-only test harness (the idea of quiche's `TestSender`): one subflow's congestion
//! control driven by `send_packet` / `ack_next` / `lose_n` / `advance_time`, with the core's
//! delivery-rate sampler (`rate.rs`) and an RFC 6298 RTT estimator, but no connection, no
//! wire format and no real clock. Used by the unit tests of cubic.rs and bbr.rs.
//!
//! The path is a fixed base RTT plus an optional bottleneck of a given rate with an
//! unlimited FIFO queue: a packet sent at t leaves the bottleneck at
//! max(t, previous departure) + size/rate and its ACK arrives one base RTT later.

use std::collections::VecDeque;
use std::time::Duration;

use super::rate::{PacketRateStamp, RateSampler};
use super::{AckEvent, CongestionEvent, SubflowCc};
use crate::units::{Bandwidth, Instant};

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    stamp: PacketRateStamp,
    bytes: u64,
    ack_at: Instant,
    /// Dropped by the policer: declared lost when its ACK would have arrived.
    dropped: bool,
}

/// Token bucket in front of the bottleneck (a traffic policer).
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens_bytes: f64,
    last: Instant,
}

/// One subflow's CC on a modelled path.
pub struct TestSender<C: SubflowCc> {
    pub cc: C,
    pub now: Instant,
    pub mss: u64,
    pub base_rtt: Duration,
    /// Bottleneck rate (None = infinitely fast link: every ACK after exactly `base_rtt`).
    pub bottleneck: Option<Bandwidth>,
    /// `run_round_trip` spreads a window over half a base RTT (as the core's 2× pacer in
    /// slow start), instead of sending it as one burst.
    pub paced: bool,
    /// Token-bucket policer (rate, bucket bytes) before the bottleneck: packets finding
    /// too few tokens are dropped.
    pub policer: Option<(Bandwidth, u64)>,
    bucket: Option<Bucket>,
    rate: RateSampler,
    srtt: Option<Duration>,
    rttvar: Duration,
    min_rtt: Option<Duration>,
    inflight_bytes: u64,
    outstanding: VecDeque<Outstanding>,
    bottleneck_free_at: Instant,
    recovery_start: Option<Instant>,
    /// The episode in `recovery_start` began with an RTO (the RTO-loss state).
    in_rto_loss: bool,
    /// Bytes declared lost since the last ACK (reported as `AckEvent::newly_lost_bytes`).
    pending_lost_bytes: u64,
    /// A send was refused by cwnd since the last round began.
    cwnd_limited: bool,
    pub lost_bytes_total: u64,
}

impl<C: SubflowCc> TestSender<C> {
    pub fn new(cc: C, mss: u64, base_rtt: Duration) -> TestSender<C> {
        TestSender {
            cc,
            now: Instant::ZERO,
            mss,
            base_rtt,
            bottleneck: None,
            paced: false,
            policer: None,
            bucket: None,
            rate: RateSampler::new(),
            srtt: None,
            rttvar: Duration::ZERO,
            min_rtt: None,
            inflight_bytes: 0,
            outstanding: VecDeque::new(),
            bottleneck_free_at: Instant::ZERO,
            recovery_start: None,
            in_rto_loss: false,
            pending_lost_bytes: 0,
            cwnd_limited: true,
            lost_bytes_total: 0,
        }
    }

    pub fn inflight_bytes(&self) -> u64 {
        self.inflight_bytes
    }

    pub fn delivered_bytes(&self) -> u64 {
        self.rate.delivered_bytes()
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery_start.is_some()
    }

    pub fn advance_time(&mut self, d: Duration) {
        self.now += d;
    }

    /// Sends one MSS now if cwnd allows; returns whether it did.
    pub fn send_packet(&mut self) -> bool {
        if self.inflight_bytes + self.mss > self.cc.cwnd_bytes() {
            self.cwnd_limited = true;
            return false;
        }
        let stamp = self.rate.on_sent(self.now, self.inflight_bytes);
        if self.policer_drops() {
            self.outstanding.push_back(Outstanding {
                stamp,
                bytes: self.mss,
                ack_at: self.now + self.base_rtt,
                dropped: true,
            });
            self.inflight_bytes += self.mss;
            self.cc.on_sent(self.now, self.mss, self.inflight_bytes);
            return true;
        }
        let departs = match self.bottleneck {
            Some(rate) => {
                let start = self.bottleneck_free_at.max(self.now);
                self.bottleneck_free_at = start + rate.transfer_time(self.mss);
                self.bottleneck_free_at
            }
            None => self.now,
        };
        self.outstanding.push_back(Outstanding {
            stamp,
            bytes: self.mss,
            ack_at: departs + self.base_rtt,
            dropped: false,
        });
        self.inflight_bytes += self.mss;
        self.cc.on_sent(self.now, self.mss, self.inflight_bytes);
        true
    }

    /// Sends as many packets as cwnd allows, now; returns how many.
    pub fn send_window(&mut self) -> usize {
        let mut n = 0;
        while self.send_packet() {
            n += 1;
        }
        n
    }

    /// Marks the sender application-limited (nothing more to send right now).
    pub fn set_app_limited(&mut self) {
        self.cwnd_limited = false;
        self.rate.on_app_limited(self.inflight_bytes);
    }

    fn policer_drops(&mut self) -> bool {
        let Some((rate, bucket_bytes)) = self.policer else {
            return false;
        };
        let now = self.now;
        let b = self.bucket.get_or_insert(Bucket {
            tokens_bytes: bucket_bytes as f64,
            last: now,
        });
        b.tokens_bytes = (b.tokens_bytes + rate.bytes_in(now - b.last)).min(bucket_bytes as f64);
        b.last = now;
        if b.tokens_bytes >= self.mss as f64 {
            b.tokens_bytes -= self.mss as f64;
            false
        } else {
            true
        }
    }

    /// Sends and receives for `d` of simulated time: ACK-clocked, paced at the CC's pacing
    /// rate when it has one (otherwise limited by cwnd only).
    pub fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        let mut next_send = self.now;
        loop {
            while next_send <= self.now && self.send_packet() {
                let gap = self
                    .cc
                    .pacing_rate()
                    .map_or(Duration::ZERO, |r| r.transfer_time(self.mss));
                next_send = next_send.max(self.now) + gap;
            }
            let cwnd_open = self.inflight_bytes + self.mss <= self.cc.cwnd_bytes();
            let next_ack = self.outstanding.front().map(|p| p.ack_at.max(self.now));
            let next = match (next_ack, cwnd_open) {
                (Some(a), true) => a.min(next_send.max(self.now)),
                (Some(a), false) => a,
                (None, true) => next_send.max(self.now),
                (None, false) => break,
            };
            if next > end {
                self.now = end;
                break;
            }
            if Some(next) == next_ack {
                self.ack_next();
            } else {
                self.now = next;
            }
        }
    }

    /// Moves time to the oldest outstanding packet's ACK and processes it (one ACK frame per
    /// packet); a policed packet is declared lost then instead. Returns false when nothing
    /// is outstanding.
    pub fn ack_next(&mut self) -> bool {
        let Some(p) = self.outstanding.pop_front() else {
            return false;
        };
        self.now = self.now.max(p.ack_at);
        if p.dropped {
            self.declare_lost(&[p]);
            return true;
        }
        let prior_inflight = self.inflight_bytes;
        self.inflight_bytes -= p.bytes;
        self.rate.on_packet_delivered(self.now, &p.stamp, p.bytes);
        let rtt = self.now - p.stamp.sent_time;
        self.update_rtt(rtt);
        if let Some(start) = self.recovery_start
            && p.stamp.sent_time > start
        {
            self.recovery_start = None;
            self.in_rto_loss = false;
            self.cc.on_recovery_exit(self.now);
        }
        let min_rtt = self.min_rtt.unwrap_or(rtt);
        let ack = AckEvent {
            now: self.now,
            acked_bytes: p.bytes,
            rtt_sample: Some(rtt),
            srtt: self.srtt.unwrap_or(rtt),
            min_rtt,
            inflight_bytes: self.inflight_bytes,
            prior_inflight_bytes: prior_inflight,
            is_cwnd_limited: self.cwnd_limited,
            in_recovery: self.recovery_start.is_some() && !self.in_rto_loss,
            in_rto_loss: self.in_rto_loss,
            newly_lost_bytes: std::mem::take(&mut self.pending_lost_bytes),
            rttvar: self.rttvar,
            largest_acked_sent_time: p.stamp.sent_time,
            rate: self.rate.take_ack(self.now, min_rtt).sample,
            delivered_bytes_total: self.rate.delivered_bytes(),
            mss: self.mss,
            ..Default::default()
        };
        self.cc.on_ack(&ack);
        true
    }

    /// ACKs the `n` oldest outstanding packets (each in its own ACK frame).
    pub fn ack_n(&mut self, n: usize) {
        for _ in 0..n {
            if !self.ack_next() {
                break;
            }
        }
    }

    /// Declares the `n` oldest outstanding packets lost now; starts a recovery episode
    /// (`on_congestion(Loss)`) unless one is running. The losses show up in the next ACK's
    /// rate sample.
    pub fn lose_n(&mut self, n: usize) {
        let n = n.min(self.outstanding.len());
        let lost: Vec<Outstanding> = self.outstanding.drain(..n).collect();
        self.declare_lost(&lost);
    }

    fn declare_lost(&mut self, packets: &[Outstanding]) {
        let mut lost = 0;
        let mut largest_sent = Instant::ZERO;
        for p in packets {
            self.inflight_bytes -= p.bytes;
            self.rate.on_packet_lost(p.bytes);
            lost += p.bytes;
            largest_sent = largest_sent.max(p.stamp.sent_time);
        }
        self.lost_bytes_total += lost;
        self.pending_lost_bytes += lost;
        let new_episode = match self.recovery_start {
            None => true,
            Some(start) => largest_sent > start,
        };
        if lost > 0 && new_episode {
            self.recovery_start = Some(self.now);
            let ev = CongestionEvent::Loss {
                lost_bytes: lost,
                largest_lost_sent_time: largest_sent,
                inflight_bytes: self.inflight_bytes + lost,
            };
            self.cc.on_congestion(self.now, &ev);
        }
    }

    /// Retransmission timeout: everything outstanding is lost. A second RTO before the
    /// RTO-loss state ended is a backoff repeat. The state ends when a packet sent after
    /// the last RTO is acknowledged.
    pub fn rto(&mut self) {
        let inflight = self.inflight_bytes;
        let repeat = self.in_rto_loss;
        for p in self.outstanding.drain(..) {
            self.rate.on_packet_lost(p.bytes);
            self.lost_bytes_total += p.bytes;
            self.pending_lost_bytes += p.bytes;
        }
        self.inflight_bytes = 0;
        self.recovery_start = Some(self.now);
        self.in_rto_loss = true;
        self.cc.on_congestion(
            self.now,
            &CongestionEvent::Rto {
                inflight_bytes: inflight,
                repeat,
            },
        );
    }

    /// One lock-step round: send a full window (paced over half a base RTT if `paced`), then
    /// process every ACK of it. Returns the number of packets sent.
    pub fn run_round_trip(&mut self) -> usize {
        self.cwnd_limited = false;
        let room = self.cc.cwnd_bytes().saturating_sub(self.inflight_bytes) / self.mss;
        let gap = if self.paced && room > 0 {
            self.base_rtt / 2 / room as u32
        } else {
            Duration::ZERO
        };
        let start = self.now;
        let mut sent = 0usize;
        loop {
            self.now = start + gap * sent as u32;
            if !self.send_packet() {
                break;
            }
            sent += 1;
        }
        // The window was filled: the round was cwnd-limited.
        self.cwnd_limited = true;
        while self.ack_next() {}
        sent
    }

    fn update_rtt(&mut self, rtt: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let delta = srtt.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + delta) / 4;
                self.srtt = Some((srtt * 7 + rtt) / 8);
            }
        }
    }
}
