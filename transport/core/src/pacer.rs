//! Pacer: spreads packets at a rate instead of sending a window in one burst. It computes a
//! release time and never sleeps; the caller (runtime or simulator) waits until `send_at`.
//!
//! Model: a virtual clock `next_release`. A packet of b bytes may go when
//! `next_release ≤ now + horizon`; sending it moves `next_release` to
//! `max(next_release, now − burst credit) + b/rate`. The burst credit (2 packets at the
//! current rate, as Linux fq's quantum, unless the CC names its own with
//! `pacing_burst_bytes`) lets a sender that was idle or woken late catch up a little without
//! a line-rate burst of the whole window. BBR's is its send quantum (1 ms of data at 100
//! Mbit/s): Linux's internal pacing sends a TSO-autosized skb of that size at once, so a
//! user-space wake-up up to that late costs no sending time.
//!
//! Rate: `SubflowCc::pacing_rate()`. None = the CC does not pace and the core sends unpaced
//! (Linux without the fq qdisc); window CCs that pace on request (`paced=true`) use
//! [`window_pacing_rate`], Linux's `tcp_update_pacing_rate`: cwnd/SRTT × 2.0 in slow start and
//! × 1.2 otherwise.

use std::time::Duration;

use crate::units::{Bandwidth, Instant};

pub const SLOW_START_PACING_GAIN: f64 = 2.0;
pub const CONGESTION_AVOIDANCE_PACING_GAIN: f64 = 1.2;
const BURST_CREDIT_PKTS: u64 = 2;
/// The burst credit never exceeds this (slow rates would otherwise allow long bursts).
const MAX_BURST_CREDIT: Duration = Duration::from_millis(10);
/// One packet never holds the next back longer than this (a near-zero rate).
const MAX_PACKET_GAP: Duration = Duration::from_secs(1);

#[derive(Clone, Debug, Default)]
pub struct Pacer {
    next_release: Instant,
}

impl Pacer {
    /// When a packet may be sent (≤ now means immediately). `rate` None = unpaced.
    pub fn release_time(&self, now: Instant, rate: Option<Bandwidth>) -> Instant {
        match rate {
            Some(r) if r.bps() > 0.0 => self.next_release,
            _ => now,
        }
    }

    /// The pacing release time of the next packet (meaningful only while paced).
    pub fn next_release(&self) -> Instant {
        self.next_release
    }

    /// Records a packet of `bytes` sent at `send_at` (≥ its release time); `burst_bytes` is
    /// the CC's burst credit (None = 2 packets of `mss`).
    pub fn on_sent(
        &mut self,
        send_at: Instant,
        bytes: u64,
        mss: u64,
        rate: Option<Bandwidth>,
        burst_bytes: Option<u64>,
    ) {
        let Some(r) = rate.filter(|r| r.bps() > 0.0) else {
            self.next_release = send_at;
            return;
        };
        let burst = burst_bytes.unwrap_or(BURST_CREDIT_PKTS * mss);
        let credit = r.transfer_time(burst).min(MAX_BURST_CREDIT);
        let base = self.next_release.max(send_at.saturating_sub(credit));
        self.next_release = base + r.transfer_time(bytes).min(MAX_PACKET_GAP);
    }
}

/// Linux-style pacing rate for window CCs: cwnd/SRTT × gain.
pub fn window_pacing_rate(cwnd_bytes: u64, srtt: Duration, slow_start: bool) -> Bandwidth {
    let gain = if slow_start {
        SLOW_START_PACING_GAIN
    } else {
        CONGESTION_AVOIDANCE_PACING_GAIN
    };
    Bandwidth::from_bytes_and_duration(cwnd_bytes, srtt.max(Duration::from_micros(100)))
        .scaled(gain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_packets_at_the_rate_after_the_burst_credit() {
        let rate = Some(Bandwidth::from_mbps(12.0)); // 1500 B per ms
        let mut p = Pacer::default();
        let mut now = Instant::from_nanos(1_000_000_000);
        let mut sends = Vec::new();
        for _ in 0..6 {
            let at = p.release_time(now, rate).max(now);
            sends.push(at);
            p.on_sent(at, 1500, 1500, rate, None);
            now = at;
        }
        // First three go back to back (2-packet credit), then 1 ms apart.
        assert_eq!(sends[1], sends[0]);
        assert_eq!(sends[2], sends[0]);
        assert_eq!(sends[3] - sends[2], Duration::from_millis(1));
        assert_eq!(sends[5] - sends[4], Duration::from_millis(1));
    }

    /// A runtime that wakes `late` after each release and sends everything due within its
    /// batching horizon (mpproxy: 500 µs), at 96 Mbit/s (1500 B every 125 µs), 400 µs late:
    /// * credit 2 packets (250 µs): a wake-up at r + 400 restarts the clock at
    ///   r + 400 − 250, so 150 µs are lost; 1 + ⌊(500 + 250)/125⌋ = 7 packets go, the next
    ///   release is 7·125 − 250 = 625 µs after the wake-up, the next wake-up 400 µs later:
    ///   7 · 1500 B per 1025 µs = 85.4 % of the rate;
    /// * credit 8 packets (1000 µs ≥ 400): nothing is lost, 1 + ⌊(400 + 500)/125⌋ = 8
    ///   packets per 1000 µs = 100 %.
    #[test]
    fn a_burst_credit_of_one_send_quantum_absorbs_late_wake_ups() {
        let rate = Some(Bandwidth::from_mbps(96.0));
        let late = Duration::from_micros(400);
        let horizon = Duration::from_micros(500);
        let run = |burst: Option<u64>| {
            let mut p = Pacer::default();
            let start = Instant::from_nanos(1_000_000_000);
            let mut wake = start;
            let mut bytes = 0u64;
            while wake < start + Duration::from_secs(1) {
                while p.release_time(wake, rate) <= wake + horizon {
                    let at = p.release_time(wake, rate).max(wake);
                    p.on_sent(at, 1500, 1500, rate, burst);
                    bytes += 1500;
                }
                wake = p.next_release() + late;
            }
            bytes as f64 / (wake - start).as_secs_f64() / 12e6
        };
        let two_packets = run(None);
        assert!(
            (two_packets - 10_500.0 / 1025.0 / 12.0).abs() < 0.002,
            "{two_packets}"
        );
        let quantum = run(Some(8 * 1500));
        assert!((quantum - 1.0).abs() < 0.002, "{quantum}");
    }

    #[test]
    fn window_rate_uses_linux_gains() {
        let r = window_pacing_rate(125_000, Duration::from_millis(100), true);
        assert!((r.bps() - 20e6).abs() < 1.0);
        let r = window_pacing_rate(125_000, Duration::from_millis(100), false);
        assert!((r.bps() - 12e6).abs() < 1.0);
    }
}
