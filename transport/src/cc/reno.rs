//! NewReno (RFC 5681 + RFC 6582), in the packet-number/ACK-range form of RFC 9002 §7.3.
//!
//! Model (ALGORITHMS.md §0, A1), windows in bytes:
//! * IW = 10 MSS, ssthresh = ∞.
//! * Slow start (cwnd < ssthresh): cwnd += acked bytes.
//! * Congestion avoidance: +MSS·acked/cwnd per ACK, accumulated exactly as Linux's
//!   `snd_cwnd_cnt`: acked bytes add up in `ca_acked_bytes`, and each time they reach cwnd
//!   the window grows by one MSS (so CA adds at most 1 MSS per RTT).
//! * Grow only while cwnd-limited (`AckEvent::is_cwnd_limited`).
//! * Loss (new recovery episode): ssthresh = max(FlightSize/2, 2 MSS), cwnd = ssthresh; no
//!   growth while in recovery; leaving recovery (the full ACK) keeps cwnd = ssthresh.
//!   Classic NewReno inflates cwnd by the three dupACKs (13 MSS in the A1 vector) because
//!   dupACKs do not shrink FlightSize; here ACK ranges remove SACKed packets from inflight, so
//!   the same sending allowance comes without inflation.
//! * RTO: ssthresh as for a loss, cwnd = 1 MSS, then slow start.
//! * Idle longer than an RTO: cwnd = min(cwnd, IW).
//!
//! Does not pace (`pacing_rate() == None`); the core's pacer spreads the window (pacer.rs).

use super::{
    AckEvent, CcConfig, CcPhase, CcSnapshot, CongestionController, CongestionEvent, RegistryError,
    SubflowCc, SubflowInit, Uncoupled,
};
use crate::units::{Bandwidth, Instant};

/// Settings of NewReno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenoConfig {
    pub mss_bytes: u64,
    pub initial_window_pkts: u64,
    /// Floor of ssthresh after a loss, in packets (RFC 5681: 2).
    pub min_ssthresh_pkts: u64,
}

impl Default for RenoConfig {
    fn default() -> Self {
        RenoConfig {
            mss_bytes: crate::units::DEFAULT_MSS_BYTES,
            initial_window_pkts: 10,
            min_ssthresh_pkts: 2,
        }
    }
}

/// Registry constructor.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    Ok(Box::new(Uncoupled::new("reno", cfg, Reno::from_config)))
}

/// NewReno state of one subflow.
#[derive(Clone, Debug)]
pub struct Reno {
    cfg: RenoConfig,
    cwnd_bytes: u64,
    /// u64::MAX = ∞ (no loss yet).
    ssthresh_bytes: u64,
    /// Acked bytes counted towards the next +1 MSS in congestion avoidance.
    ca_acked_bytes: u64,
    phase: CcPhase,
}

impl Reno {
    pub fn new(cfg: RenoConfig) -> Reno {
        Reno {
            cfg,
            cwnd_bytes: cfg.initial_window_pkts * cfg.mss_bytes,
            ssthresh_bytes: u64::MAX,
            ca_acked_bytes: 0,
            phase: CcPhase::SlowStart,
        }
    }

    pub fn from_config(cfg: &CcConfig, init: &SubflowInit) -> Reno {
        Reno::new(RenoConfig {
            mss_bytes: init.mss_bytes,
            initial_window_pkts: cfg.initial_window_pkts,
            ..RenoConfig::default()
        })
    }

    pub fn ssthresh_bytes(&self) -> Option<u64> {
        (self.ssthresh_bytes != u64::MAX).then_some(self.ssthresh_bytes)
    }

    /// cwnd including the fractional CA progress, in bytes (for tests and logs).
    pub fn cwnd_exact_bytes(&self) -> f64 {
        self.cwnd_bytes as f64
            + self.cfg.mss_bytes as f64 * self.ca_acked_bytes as f64 / self.cwnd_bytes as f64
    }

    fn reduced_ssthresh(&self, flight_bytes: u64) -> u64 {
        (flight_bytes / 2).max(self.cfg.min_ssthresh_pkts * self.cfg.mss_bytes)
    }
}

impl SubflowCc for Reno {
    fn on_ack(&mut self, ack: &AckEvent) {
        if ack.in_recovery || !ack.is_cwnd_limited || ack.acked_bytes == 0 {
            return;
        }
        if self.cwnd_bytes < self.ssthresh_bytes {
            self.phase = CcPhase::SlowStart;
            self.cwnd_bytes += ack.acked_bytes;
            if self.cwnd_bytes >= self.ssthresh_bytes {
                // RFC 5681: slow start ends at ssthresh; the excess starts CA counting.
                self.ca_acked_bytes += self.cwnd_bytes - self.ssthresh_bytes;
                self.cwnd_bytes = self.ssthresh_bytes;
                self.phase = CcPhase::CongestionAvoidance;
            }
            return;
        }
        self.phase = CcPhase::CongestionAvoidance;
        self.ca_acked_bytes += ack.acked_bytes;
        while self.ca_acked_bytes >= self.cwnd_bytes {
            self.ca_acked_bytes -= self.cwnd_bytes;
            self.cwnd_bytes += self.cfg.mss_bytes;
        }
    }

    fn on_congestion(&mut self, _now: Instant, ev: &CongestionEvent) {
        match *ev {
            CongestionEvent::Loss { inflight_bytes, .. } => {
                self.ssthresh_bytes = self.reduced_ssthresh(inflight_bytes);
                self.cwnd_bytes = self.ssthresh_bytes;
                self.phase = CcPhase::Recovery;
            }
            CongestionEvent::Rto { inflight_bytes, .. } => {
                self.ssthresh_bytes = self.reduced_ssthresh(inflight_bytes);
                self.cwnd_bytes = self.cfg.mss_bytes;
                self.phase = CcPhase::Loss;
            }
        }
        self.ca_acked_bytes = 0;
    }

    fn on_recovery_exit(&mut self, _now: Instant) {
        if self.phase == CcPhase::Recovery {
            // The full ACK: deflate to ssthresh (already there: no inflation in this form).
            self.cwnd_bytes = self.ssthresh_bytes;
            self.phase = CcPhase::CongestionAvoidance;
        }
    }

    fn on_idle_restart(&mut self, _now: Instant) {
        let iw = self.cfg.initial_window_pkts * self.cfg.mss_bytes;
        self.cwnd_bytes = self.cwnd_bytes.min(iw);
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        None
    }

    fn phase(&self) -> CcPhase {
        self.phase
    }

    fn ssthresh_bytes(&self) -> Option<u64> {
        Reno::ssthresh_bytes(self)
    }

    fn snapshot(&self) -> CcSnapshot {
        CcSnapshot {
            cwnd_bytes: self.cwnd_bytes,
            ssthresh_bytes: self.ssthresh_bytes(),
            extra: vec![("cwnd_exact_bytes", self.cwnd_exact_bytes())],
            ..CcSnapshot::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const MSS: u64 = 1448;

    fn reno() -> Reno {
        Reno::new(RenoConfig {
            mss_bytes: MSS,
            ..RenoConfig::default()
        })
    }

    fn ack(acked_bytes: u64) -> AckEvent {
        AckEvent {
            now: Instant::ZERO,
            acked_bytes,
            rtt_sample: Some(Duration::from_millis(50)),
            srtt: Duration::from_millis(50),
            min_rtt: Duration::from_millis(50),
            inflight_bytes: 0,
            prior_inflight_bytes: 0,
            is_cwnd_limited: true,
            in_recovery: false,
            largest_acked_sent_time: Instant::ZERO,
            rate: None,
            delivered_bytes_total: 0,
            mss: MSS,
            ..Default::default()
        }
    }

    fn in_ca_at_10_mss() -> Reno {
        let mut r = reno();
        r.ssthresh_bytes = 10 * MSS;
        r.phase = CcPhase::CongestionAvoidance;
        r
    }

    #[test]
    fn a1_one_ca_ack_adds_144_8_bytes_and_ten_add_one_mss() {
        let mut r = in_ca_at_10_mss();
        r.on_ack(&ack(MSS));
        assert!((r.cwnd_exact_bytes() - (10 * MSS) as f64 - 144.8).abs() < 1e-9);
        for _ in 0..9 {
            r.on_ack(&ack(MSS));
        }
        assert_eq!(r.cwnd_bytes(), 11 * MSS);
    }

    #[test]
    fn a1_loss_at_flight_20_sets_ssthresh_10_and_full_ack_keeps_10() {
        let mut r = reno();
        r.cwnd_bytes = 20 * MSS;
        let loss = CongestionEvent::Loss {
            lost_bytes: MSS,
            largest_lost_sent_time: Instant::ZERO,
            inflight_bytes: 20 * MSS,
        };
        r.on_congestion(Instant::ZERO, &loss);
        assert_eq!(r.ssthresh_bytes(), Some(10 * MSS));
        assert_eq!(r.phase(), CcPhase::Recovery);
        // no growth during recovery
        r.on_ack(&AckEvent {
            in_recovery: true,
            ..ack(3 * MSS)
        });
        assert_eq!(r.cwnd_bytes(), 10 * MSS);
        r.on_recovery_exit(Instant::ZERO);
        assert_eq!(r.cwnd_bytes(), 10 * MSS);
        assert_eq!(r.phase(), CcPhase::CongestionAvoidance);
    }

    #[test]
    fn a1_rto_sets_one_mss_then_slow_start() {
        let mut r = reno();
        r.on_congestion(
            Instant::ZERO,
            &CongestionEvent::Rto {
                inflight_bytes: 20 * MSS,
                repeat: false,
            },
        );
        assert_eq!(r.cwnd_bytes(), MSS);
        assert_eq!(r.phase(), CcPhase::Loss);
        r.on_ack(&ack(MSS));
        assert_eq!(r.cwnd_bytes(), 2 * MSS);
        assert_eq!(r.phase(), CcPhase::SlowStart);
    }

    #[test]
    fn ca_adds_at_most_one_mss_per_window_of_acks() {
        let mut r = in_ca_at_10_mss();
        // one RTT worth of ACKs = cwnd bytes acked
        for _ in 0..10 {
            r.on_ack(&ack(MSS));
        }
        assert!(r.cwnd_bytes() <= 11 * MSS);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_and_idle_restart_caps_at_iw() {
        let mut r = reno();
        r.on_ack(&AckEvent {
            is_cwnd_limited: false,
            ..ack(MSS)
        });
        assert_eq!(r.cwnd_bytes(), 10 * MSS);
        r.cwnd_bytes = 40 * MSS;
        r.on_idle_restart(Instant::ZERO);
        assert_eq!(r.cwnd_bytes(), 10 * MSS);
    }

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut r = reno();
        r.ssthresh_bytes = 11 * MSS;
        r.on_ack(&ack(2 * MSS));
        assert_eq!(r.cwnd_bytes(), 11 * MSS);
        assert_eq!(r.phase(), CcPhase::CongestionAvoidance);
    }
}
