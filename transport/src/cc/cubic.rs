//! CUBIC (RFC 9438) with HyStart as in Linux `net/ipv4/tcp_cubic.c`; uncoupled, one
//! instance per subflow (ALGORITHMS.md A2).
//!
//! # Model (windows in packets = bytes / MSS, time in seconds)
//! ```text
//!   W_cubic(t) = C·(t − K)³ + W_max            C = 0.4 pkt/s³
//!   K          = ∛((W_max − cwnd_epoch) / C)   (0 when cwnd_epoch ≥ W_max)
//!   W_est     += α·acked/cwnd per ACK          α = 3(1−β)/(1+β) = 0.529 until W_est ≥ cwnd_prior, then 1
//!   CA ACK:  W_cubic(t) < W_est  →  cwnd = W_est                      (Reno-friendly region)
//!            otherwise           →  target = clamp(W_cubic(t+SRTT), cwnd, 1.5·cwnd)
//!                                   cwnd += (target − cwnd)/cwnd per acked packet
//!   loss:    W_max = cwnd·(1+β)/2 if cwnd < W_max (fast convergence) else cwnd;
//!            cwnd_prior = cwnd; cwnd = ssthresh = max(β·cwnd, 2)   β = 0.7
//!   RTO:     ssthresh as for a loss, cwnd = 1, W_max forgotten (next epoch: K = 0,
//!            W_max = cwnd at the epoch start)
//! ```
//! t counts from the first CA ACK of the epoch (`t0`) and excludes idle time: when sending
//! restarts with nothing in flight, t0 moves forward by the idle gap (Linux
//! `CA_EVENT_TX_START`).
//!
//! # States
//! ```text
//!   SlowStart ──HyStart exit / cwnd ≥ ssthresh──► CongestionAvoidance
//!       ▲                                              │ loss (new episode)
//!       │ ACK after RTO                                ▼
//!     Loss ◄──────────── RTO (from any) ────────── Recovery ──recovery exit──► CA
//! ```
//!
//! # HyStart (Linux, default on; `--cc-opt hystart=false` turns it off)
//! Exits slow start (ssthresh = cwnd) without a loss, once cwnd ≥ 16 packets, when either
//! * **ACK train**: ACKs arriving less than 2 ms apart have spanned more than `delay_min`
//!   since the round began (Linux halves the threshold only for an unpaced socket; this
//!   core always paces, so the full `delay_min` is used, as Linux does with pacing), or
//! * **delay increase**: the minimum RTT of the first 8 samples of a round (and of every
//!   later sample in it) exceeds `delay_min + clamp(delay_min/8, 4 ms, 16 ms)`.
//!
//! A round ends when a packet sent after the round began is acknowledged. RTT samples
//! within 1 s of an epoch start are ignored for `delay_min` (right after recovery).
//!
//! # References
//! RFC 9438 §4 (equations, Reno-friendly region, fast convergence, timeout handling);
//! Ha, Rhee, Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", SIGOPS OSR 2008;
//! Ha, Rhee, "Taming the elephants: new TCP slow start", Computer Networks 2011 (HyStart).

use std::time::Duration;

use super::{
    AckEvent, CcConfig, CcPhase, CcSnapshot, CongestionController, CongestionEvent, RegistryError,
    SubflowCc, SubflowInit, Uncoupled,
};
use crate::units::{Bandwidth, Instant};

/// C in pkt/s³ (RFC 9438 §5: 0.4 makes CUBIC about as aggressive as Reno at 100 ms RTT for
/// windows below ~40 packets and lets it reach 10 Gb/s windows in seconds).
pub const CUBIC_C: f64 = 0.4;
/// Multiplicative decrease factor (RFC 9438 §4.6: 0.7 trades a gentler cut than Reno's 0.5
/// for the Reno-friendly α below).
pub const CUBIC_BETA: f64 = 0.7;
/// HyStart is active only from this window on (Linux `hystart_low_window`): below 16
/// packets an early exit would cost more than the overshoot it prevents.
pub const HYSTART_LOW_WINDOW_PKTS: f64 = 16.0;
/// ACKs closer than this belong to one train (Linux `hystart_ack_delta_us`).
pub const HYSTART_ACK_DELTA: Duration = Duration::from_millis(2);
/// RTT samples per round before the delay test runs (Linux `HYSTART_MIN_SAMPLES`).
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// Bounds of the delay-increase threshold delay_min/8 (Linux `HYSTART_DELAY_MIN/MAX`):
/// 4 ms ignores jitter on short paths, 16 ms stops long paths from overshooting a lot.
pub const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
pub const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);
/// RTT samples this soon after an epoch start are ignored (Linux: 1 s = HZ, "discard delay
/// samples right after fast recovery").
pub const HYSTART_POST_EPOCH_IGNORE: Duration = Duration::from_secs(1);

/// Settings of CUBIC; `Default` is RFC 9438 + Linux.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    pub mss_bytes: u64,
    pub initial_window_pkts: u64,
    pub c: f64,
    pub beta: f64,
    /// RFC 9438 §4.7 fast convergence (Linux `fast_convergence = 1`).
    pub fast_convergence: bool,
    /// HyStart slow-start exit (Linux `hystart = 1`); option `hystart`.
    pub hystart: bool,
    /// The sender is paced, so the ACK-train threshold is `delay_min`, not `delay_min / 2`
    /// (Linux `sk_pacing_status != SK_PACING_NONE`); option `hystart_paced`.
    pub hystart_paced: bool,
    /// Floor of ssthresh after a loss, in packets (RFC 9438: 2).
    pub min_ssthresh_pkts: u64,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            mss_bytes: crate::units::DEFAULT_MSS_BYTES,
            initial_window_pkts: 10,
            c: CUBIC_C,
            beta: CUBIC_BETA,
            fast_convergence: true,
            hystart: true,
            hystart_paced: true,
            min_ssthresh_pkts: 2,
        }
    }
}

impl CubicConfig {
    /// Reads `--cc-opt` switches: `hystart`, `hystart_paced`, `fast_convergence` (booleans),
    /// `beta` in (0, 1), `c` > 0.
    pub fn from_cc_config(cfg: &CcConfig, mss_bytes: u64) -> Result<CubicConfig, RegistryError> {
        let d = CubicConfig::default();
        let beta = cfg.number("beta", d.beta)?;
        if !(beta > 0.0 && beta < 1.0) {
            return Err(RegistryError::BadOption {
                key: "beta".into(),
                value: beta.to_string(),
                valid: "a number in (0, 1), default 0.7".into(),
            });
        }
        let c = cfg.number("c", d.c)?;
        if c <= 0.0 {
            return Err(RegistryError::BadOption {
                key: "c".into(),
                value: c.to_string(),
                valid: "a number > 0, default 0.4".into(),
            });
        }
        Ok(CubicConfig {
            mss_bytes,
            initial_window_pkts: cfg.initial_window_pkts,
            c,
            beta,
            fast_convergence: cfg.flag("fast_convergence", d.fast_convergence)?,
            hystart: cfg.flag("hystart", d.hystart)?,
            hystart_paced: cfg.flag("hystart_paced", d.hystart_paced)?,
            min_ssthresh_pkts: d.min_ssthresh_pkts,
        })
    }

    /// α of the Reno-friendly region, 3(1−β)/(1+β) (RFC 9438 §4.3).
    pub fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }
}

/// Registry constructor; rejects bad `--cc-opt` values before any subflow exists.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    CubicConfig::from_cc_config(cfg, cfg.mss_bytes)?;
    Ok(Box::new(Uncoupled::new("cubic", cfg, Cubic::from_config)))
}

/// One congestion-avoidance epoch (from the first CA ACK after a reduction).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    /// t0; moved forward by idle gaps.
    start: Instant,
    /// K in seconds.
    k_s: f64,
    /// The plateau W_max this epoch climbs to (W_max, or cwnd at the epoch start when larger).
    origin_pkts: f64,
    /// Reno-friendly estimate W_est in packets.
    w_est_pkts: f64,
}

/// Why slow start ended without a loss (for logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartExit {
    AckTrain,
    DelayIncrease,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Hystart {
    /// A packet sent at or after this instant ends the round when acked.
    round_start: Instant,
    last_ack: Instant,
    /// Minimum RTT sampled in the current round.
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
    /// Minimum RTT ever seen (outside the post-epoch window).
    delay_min: Option<Duration>,
    found: Option<HystartExit>,
}

impl Hystart {
    fn new(now: Instant) -> Hystart {
        Hystart {
            round_start: now,
            last_ack: now,
            curr_rtt: None,
            sample_cnt: 0,
            delay_min: None,
            found: None,
        }
    }
    fn start_round(&mut self, now: Instant) {
        self.round_start = now;
        self.last_ack = now;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }
}

/// CUBIC state of one subflow.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    mss_bytes: u64,
    /// Exact window in bytes (fractional growth is kept, `cwnd_bytes()` floors it).
    cwnd_bytes: f64,
    /// f64::INFINITY until the first reduction.
    ssthresh_bytes: f64,
    /// W_max in packets; 0 = none (start, or forgotten after an RTO).
    w_max_pkts: f64,
    /// cwnd before the last reduction, in packets (switches α to 1 in the Reno-friendly
    /// region once W_est reaches it); 0 = none.
    cwnd_prior_pkts: f64,
    epoch: Option<Epoch>,
    hystart: Hystart,
    last_sent: Option<Instant>,
    phase: CcPhase,
}

impl Cubic {
    pub fn new(cfg: CubicConfig, now: Instant) -> Cubic {
        Cubic {
            cfg,
            mss_bytes: cfg.mss_bytes,
            cwnd_bytes: (cfg.initial_window_pkts * cfg.mss_bytes) as f64,
            ssthresh_bytes: f64::INFINITY,
            w_max_pkts: 0.0,
            cwnd_prior_pkts: 0.0,
            epoch: None,
            hystart: Hystart::new(now),
            last_sent: None,
            phase: CcPhase::SlowStart,
        }
    }

    /// Per-subflow factory for [`Uncoupled`]; options were validated by [`build`].
    pub fn from_config(cfg: &CcConfig, init: &SubflowInit) -> Cubic {
        let cubic_cfg = CubicConfig::from_cc_config(cfg, init.mss_bytes).unwrap_or(CubicConfig {
            mss_bytes: init.mss_bytes,
            initial_window_pkts: cfg.initial_window_pkts,
            ..CubicConfig::default()
        });
        Cubic::new(cubic_cfg, init.now)
    }

    fn cwnd_pkts(&self) -> f64 {
        self.cwnd_bytes / self.mss_bytes as f64
    }

    /// W_max in packets (0 = none).
    pub fn w_max_pkts(&self) -> f64 {
        self.w_max_pkts
    }

    /// K of the current epoch, in seconds.
    pub fn k_s(&self) -> Option<f64> {
        self.epoch.map(|e| e.k_s)
    }

    /// W_est of the current epoch, in packets.
    pub fn w_est_pkts(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est_pkts)
    }

    /// W_cubic(t) of the current epoch, in packets, t since the epoch start.
    pub fn w_cubic_pkts(&self, t: Duration) -> Option<f64> {
        self.epoch.map(|e| self.w_cubic_at(&e, t.as_secs_f64()))
    }

    /// Why the last slow start ended early, if HyStart ended it.
    pub fn hystart_exit(&self) -> Option<HystartExit> {
        self.hystart.found
    }

    fn w_cubic_at(&self, e: &Epoch, t_s: f64) -> f64 {
        self.cfg.c * (t_s - e.k_s).powi(3) + e.origin_pkts
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd_bytes < self.ssthresh_bytes
    }

    /// HyStart's per-ACK part (Linux `cubictcp_acked` + `hystart_update`).
    fn update_hystart(&mut self, ack: &AckEvent) {
        let Some(rtt) = ack.rtt_sample else { return };
        if let Some(e) = self.epoch
            && ack.now - e.start < HYSTART_POST_EPOCH_IGNORE
        {
            return;
        }
        let rtt = rtt.max(Duration::from_micros(1));
        let delay_min = match self.hystart.delay_min {
            Some(d) if d <= rtt => d,
            _ => {
                self.hystart.delay_min = Some(rtt);
                rtt
            }
        };
        if !self.cfg.hystart
            || self.hystart.found.is_some()
            || !self.in_slow_start()
            || self.cwnd_pkts() < HYSTART_LOW_WINDOW_PKTS
        {
            return;
        }
        let now = ack.now;
        // ACK train.
        if now - self.hystart.last_ack <= HYSTART_ACK_DELTA {
            self.hystart.last_ack = now;
            let threshold = if self.cfg.hystart_paced {
                delay_min
            } else {
                delay_min / 2
            };
            if now - self.hystart.round_start > threshold {
                self.hystart.found = Some(HystartExit::AckTrain);
            }
        }
        // Delay increase.
        let curr = self.hystart.curr_rtt.map_or(rtt, |c| c.min(rtt));
        self.hystart.curr_rtt = Some(curr);
        if self.hystart.sample_cnt < HYSTART_MIN_SAMPLES {
            self.hystart.sample_cnt += 1;
        } else {
            let eta = (delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
            if curr > delay_min + eta {
                self.hystart.found = Some(HystartExit::DelayIncrease);
            }
        }
        if self.hystart.found.is_some() {
            self.ssthresh_bytes = self.cwnd_bytes;
        }
    }

    /// Congestion avoidance for `acked_bytes` (RFC 9438 §4.2-4.4).
    fn cubic_update(&mut self, now: Instant, acked_bytes: f64, srtt: Duration) {
        let cwnd_pkts = self.cwnd_pkts();
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                let (k_s, origin_pkts) = if self.w_max_pkts > cwnd_pkts {
                    (
                        ((self.w_max_pkts - cwnd_pkts) / self.cfg.c).cbrt(),
                        self.w_max_pkts,
                    )
                } else {
                    (0.0, cwnd_pkts)
                };
                let e = Epoch {
                    start: now,
                    k_s,
                    origin_pkts,
                    w_est_pkts: cwnd_pkts,
                };
                self.epoch = Some(e);
                e
            }
        };
        let acked_pkts = acked_bytes / self.mss_bytes as f64;
        let t_s = (now - epoch.start).as_secs_f64();
        let alpha = if epoch.w_est_pkts >= self.cwnd_prior_pkts {
            1.0
        } else {
            self.cfg.alpha_cubic()
        };
        let w_est_pkts = epoch.w_est_pkts + alpha * acked_pkts / cwnd_pkts;
        self.epoch = Some(Epoch {
            w_est_pkts,
            ..epoch
        });
        let w_cubic = self.w_cubic_at(&epoch, t_s);
        let new_cwnd_pkts = if w_cubic < w_est_pkts {
            // Reno-friendly region; never shrink cwnd here.
            w_est_pkts.max(cwnd_pkts)
        } else {
            let target = self
                .w_cubic_at(&epoch, t_s + srtt.as_secs_f64())
                .clamp(cwnd_pkts, 1.5 * cwnd_pkts);
            cwnd_pkts + (target - cwnd_pkts) / cwnd_pkts * acked_pkts
        };
        self.cwnd_bytes = new_cwnd_pkts * self.mss_bytes as f64;
    }

    fn reduce(&mut self) {
        let cwnd_pkts = self.cwnd_pkts();
        self.w_max_pkts = if self.cfg.fast_convergence && cwnd_pkts < self.w_max_pkts {
            cwnd_pkts * (1.0 + self.cfg.beta) / 2.0
        } else {
            cwnd_pkts
        };
        self.cwnd_prior_pkts = cwnd_pkts;
        let floor = (self.cfg.min_ssthresh_pkts * self.mss_bytes) as f64;
        self.ssthresh_bytes = (self.cfg.beta * self.cwnd_bytes).max(floor);
        self.epoch = None;
    }
}

impl SubflowCc for Cubic {
    fn on_sent(&mut self, now: Instant, bytes: u64, inflight_bytes: u64) {
        // Sending restarts from nothing in flight: exclude the idle gap from t.
        if inflight_bytes <= bytes
            && let (Some(last), Some(e)) = (self.last_sent, self.epoch.as_mut())
        {
            e.start = (e.start + (now - last)).min(now);
        }
        self.last_sent = Some(now);
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        if ack.mss > 0 {
            self.mss_bytes = ack.mss;
        }
        // A HyStart round ends when a packet sent after it began is acknowledged.
        if ack.largest_acked_sent_time >= self.hystart.round_start && self.in_slow_start() {
            self.hystart.start_round(ack.now);
        }
        self.update_hystart(ack);
        if ack.in_recovery || ack.acked_bytes == 0 {
            return;
        }
        if !ack.is_cwnd_limited {
            if matches!(self.phase, CcPhase::Recovery | CcPhase::Loss) {
                self.phase = phase_for(self.in_slow_start());
            }
            return;
        }
        let mut acked = ack.acked_bytes as f64;
        if self.in_slow_start() {
            // Linux tcp_slow_start: grow up to ssthresh; the rest counts in CA.
            let room = self.ssthresh_bytes - self.cwnd_bytes;
            let used = acked.min(room);
            self.cwnd_bytes += used;
            acked -= used;
        }
        if !self.in_slow_start() && acked > 0.0 {
            self.cubic_update(ack.now, acked, ack.srtt);
        }
        self.phase = phase_for(self.in_slow_start());
    }

    fn on_congestion(&mut self, now: Instant, ev: &CongestionEvent) {
        match *ev {
            CongestionEvent::Loss { .. } => {
                self.reduce();
                self.cwnd_bytes = self.ssthresh_bytes;
                self.phase = CcPhase::Recovery;
            }
            CongestionEvent::Rto { .. } => {
                self.reduce();
                // RFC 9438 §4.8 / Linux bictcp_reset: the next epoch starts from K = 0 and
                // W_max = cwnd at its start.
                self.w_max_pkts = 0.0;
                self.cwnd_bytes = self.mss_bytes as f64;
                self.hystart = Hystart {
                    delay_min: self.hystart.delay_min,
                    ..Hystart::new(now)
                };
                self.phase = CcPhase::Loss;
            }
        }
    }

    fn on_recovery_exit(&mut self, _now: Instant) {
        if self.phase == CcPhase::Recovery {
            self.phase = phase_for(self.in_slow_start());
        }
    }

    fn on_idle_restart(&mut self, _now: Instant) {
        // ALGORITHMS.md §0: idle longer than one RTO restarts from at most IW.
        let iw = (self.cfg.initial_window_pkts * self.mss_bytes) as f64;
        self.cwnd_bytes = self.cwnd_bytes.min(iw);
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes as u64
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        None
    }

    fn phase(&self) -> CcPhase {
        self.phase
    }

    fn ssthresh_bytes(&self) -> Option<u64> {
        self.ssthresh_bytes
            .is_finite()
            .then_some(self.ssthresh_bytes as u64)
    }

    fn snapshot(&self) -> CcSnapshot {
        let mut extra = vec![("w_max_pkts", self.w_max_pkts)];
        if let Some(e) = self.epoch {
            extra.push(("k_s", e.k_s));
            extra.push(("w_est_pkts", e.w_est_pkts));
        }
        if let Some(exit) = self.hystart.found {
            extra.push((
                "hystart_exit_delay",
                (exit == HystartExit::DelayIncrease) as u8 as f64,
            ));
        }
        CcSnapshot {
            cwnd_bytes: self.cwnd_bytes(),
            ssthresh_bytes: self.ssthresh_bytes(),
            min_rtt: self.hystart.delay_min,
            extra,
            ..CcSnapshot::default()
        }
    }
}

fn phase_for(slow_start: bool) -> CcPhase {
    if slow_start {
        CcPhase::SlowStart
    } else {
        CcPhase::CongestionAvoidance
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_sender::TestSender;

    const MSS: u64 = 1500;

    fn cubic() -> Cubic {
        Cubic::new(
            CubicConfig {
                mss_bytes: MSS,
                ..CubicConfig::default()
            },
            Instant::ZERO,
        )
    }

    fn ack_at(now: Instant, acked_bytes: u64) -> AckEvent {
        AckEvent {
            now,
            acked_bytes,
            rtt_sample: None,
            srtt: Duration::from_millis(100),
            min_rtt: Duration::from_millis(100),
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

    fn loss() -> CongestionEvent {
        CongestionEvent::Loss {
            lost_bytes: MSS,
            largest_lost_sent_time: Instant::ZERO,
            inflight_bytes: 0,
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn a2_w_max_100_gives_k_4_217_and_the_cubic_curve() {
        let mut c = cubic();
        c.cwnd_bytes = 100.0 * MSS as f64;
        c.on_congestion(Instant::ZERO, &loss());
        assert!(close(c.w_max_pkts(), 100.0, 1e-9));
        assert_eq!(c.cwnd_bytes(), 70 * MSS);
        assert_eq!(c.ssthresh_bytes(), Some(70 * MSS));
        c.on_recovery_exit(Instant::ZERO);
        // First CA ACK starts the epoch.
        c.on_ack(&ack_at(Instant::from_nanos(1), 1));
        let k = c.k_s().unwrap();
        assert!(close(k, 4.217, 5e-4), "K = {k}");
        let expect = [(0.0, 70.0), (1.0, 86.68), (2.0, 95.64), (6.0, 102.27)];
        for (t, w) in expect {
            let got = c.w_cubic_pkts(Duration::from_secs_f64(t)).unwrap();
            assert!(close(got, w, 0.005), "W_cubic({t}) = {got}, want {w}");
        }
    }

    #[test]
    fn a2_fast_convergence_lowers_w_max_below_the_previous_one() {
        let mut c = cubic();
        c.cwnd_bytes = 100.0 * MSS as f64;
        c.on_congestion(Instant::ZERO, &loss());
        c.cwnd_bytes = 80.0 * MSS as f64; // lost again before reaching W_max = 100
        c.on_congestion(Instant::ZERO, &loss());
        assert!(close(c.w_max_pkts(), 80.0 * 1.7 / 2.0, 1e-9));
        assert_eq!(c.cwnd_bytes(), 56 * MSS);
    }

    #[test]
    fn a2_w_max_10_after_10_rtts_is_in_the_reno_friendly_region() {
        // W_max = 10, RTT 100 ms: a loss at cwnd 10 → 7; then each RTT the whole window is
        // acknowledged (in MSS-sized ACKs plus the fractional rest), cwnd-limited.
        let mut c = cubic();
        c.cwnd_bytes = 10.0 * MSS as f64;
        c.on_congestion(Instant::ZERO, &loss());
        c.on_recovery_exit(Instant::ZERO);
        assert_eq!(c.cwnd_bytes(), 7 * MSS);
        let start = Instant::from_nanos(1);
        c.on_ack(&ack_at(start, 0)); // zero bytes: no epoch yet
        for rtt in 1..=10u32 {
            let now = start + Duration::from_millis(100) * rtt;
            let mut window = c.cwnd_bytes();
            while window > 0 {
                let bytes = window.min(MSS);
                c.on_ack(&ack_at(now, bytes));
                window -= bytes;
            }
        }
        let w_est = c.w_est_pkts().unwrap();
        let w_cubic = c.w_cubic_pkts(Duration::from_secs(1)).unwrap();
        assert!(close(w_cubic, 9.65, 0.005), "W_cubic(1 s) = {w_cubic}");
        // ALGORITHMS.md's 14.2 adds α once per RTT; per ACK, cwnd (= W_est) grows inside the
        // RTT, so each ACK adds a little less: 14.02 here.
        assert!(close(w_est, 14.2, 0.2), "W_est = {w_est}");
        assert!(w_est > w_cubic);
        // Reno-friendly: cwnd follows W_est.
        assert!(close(c.cwnd_pkts(), w_est, 1e-6));
        assert_eq!(c.phase(), CcPhase::CongestionAvoidance);
    }

    #[test]
    fn cubic_region_growth_is_bounded_by_1_5_cwnd_per_rtt() {
        let rtt = Duration::from_millis(50);
        let mut s = TestSender::new(cubic(), MSS, rtt);
        s.cc.cwnd_bytes = 100.0 * MSS as f64;
        s.cc.on_congestion(s.now, &loss());
        s.cc.on_recovery_exit(s.now);
        let mut prev = s.cc.cwnd_pkts();
        for _ in 0..200 {
            s.run_round_trip();
            let now_pkts = s.cc.cwnd_pkts();
            assert!(now_pkts >= prev - 1e-9 && now_pkts <= 1.5 * prev + 1e-9);
            prev = now_pkts;
        }
        // After 10 s (> K = 4.2 s) the window has passed W_max = 100 (convex region).
        assert!(prev > 100.0, "cwnd {prev}");
    }

    #[test]
    fn rto_sets_one_mss_and_forgets_w_max() {
        let mut c = cubic();
        c.cwnd_bytes = 100.0 * MSS as f64;
        c.on_congestion(
            Instant::ZERO,
            &CongestionEvent::Rto {
                inflight_bytes: 100 * MSS,
                repeat: false,
            },
        );
        assert_eq!(c.cwnd_bytes(), MSS);
        assert_eq!(c.ssthresh_bytes(), Some(70 * MSS));
        assert_eq!(c.phase(), CcPhase::Loss);
        assert_eq!(c.w_max_pkts(), 0.0);
        c.on_ack(&ack_at(Instant::ZERO, MSS));
        assert_eq!(c.cwnd_bytes(), 2 * MSS);
        assert_eq!(c.phase(), CcPhase::SlowStart);
        // At ssthresh the epoch starts with K = 0 and W_max = cwnd.
        c.cwnd_bytes = 70.0 * MSS as f64;
        c.on_ack(&ack_at(Instant::from_nanos(5), MSS));
        assert_eq!(c.k_s(), Some(0.0));
    }

    #[test]
    fn no_growth_in_recovery_or_when_not_cwnd_limited() {
        let mut c = cubic();
        c.on_ack(&AckEvent {
            is_cwnd_limited: false,
            ..ack_at(Instant::ZERO, MSS)
        });
        assert_eq!(c.cwnd_bytes(), 10 * MSS);
        c.on_congestion(Instant::ZERO, &loss());
        let w = c.cwnd_bytes();
        c.on_ack(&AckEvent {
            in_recovery: true,
            ..ack_at(Instant::ZERO, MSS)
        });
        assert_eq!(c.cwnd_bytes(), w);
    }

    #[test]
    fn idle_time_is_excluded_from_t() {
        let mut c = cubic();
        c.cwnd_bytes = 100.0 * MSS as f64;
        c.on_congestion(Instant::ZERO, &loss());
        c.on_recovery_exit(Instant::ZERO);
        let t0 = Instant::from_nanos(1_000_000);
        c.on_sent(t0, MSS, 2 * MSS);
        c.on_ack(&ack_at(t0, MSS));
        assert_eq!(c.epoch.unwrap().start, t0);
        // Nothing in flight for 3 s, then sending restarts.
        c.on_sent(t0 + Duration::from_secs(3), MSS, MSS);
        assert_eq!(c.epoch.unwrap().start, t0 + Duration::from_secs(3));
        c.on_idle_restart(t0);
        assert!(c.cwnd_bytes() <= 10 * MSS);
    }

    #[test]
    fn hystart_ends_slow_start_near_the_bdp_without_loss() {
        // 12 Mb/s bottleneck (1000 pkt/s of 1500 B), 20 ms base RTT: BDP = 20 packets.
        let rtt = Duration::from_millis(20);
        let mut s = TestSender::new(cubic(), MSS, rtt);
        s.bottleneck = Some(Bandwidth::from_mbps(12.0));
        s.paced = true;
        for _ in 0..12 {
            s.run_round_trip();
            if s.cc.hystart_exit().is_some() {
                break;
            }
        }
        assert!(s.cc.hystart_exit().is_some());
        assert_eq!(s.cc.phase(), CcPhase::CongestionAvoidance);
        let ssthresh_pkts = s.cc.ssthresh_bytes().unwrap() / MSS;
        assert!(
            (16..=80).contains(&ssthresh_pkts),
            "ssthresh {ssthresh_pkts} pkts"
        );
        // Switched off, the same path keeps slow start going.
        let mut cfg = CcConfig::default();
        cfg.options.insert("hystart".into(), "off".into());
        let off = CubicConfig::from_cc_config(&cfg, MSS).unwrap();
        let mut s = TestSender::new(Cubic::new(off, Instant::ZERO), MSS, rtt);
        s.bottleneck = Some(Bandwidth::from_mbps(12.0));
        s.paced = true;
        for _ in 0..6 {
            s.run_round_trip();
        }
        assert_eq!(s.cc.hystart_exit(), None);
        assert_eq!(s.cc.phase(), CcPhase::SlowStart);
        assert!(s.cc.cwnd_bytes() >= 640 * MSS);
    }

    #[test]
    fn hystart_delay_increase_fires_on_the_ninth_sample_of_a_slow_round() {
        let ms = |x: u64| Instant::from_nanos(x * 1_000_000);
        let mut c = cubic();
        c.cwnd_bytes = 20.0 * MSS as f64;
        let sample = |now: Instant, sent: Instant| AckEvent {
            rtt_sample: Some(now - sent),
            largest_acked_sent_time: sent,
            ..ack_at(now, MSS)
        };
        // delay_min = 20 ms.
        c.on_ack(&sample(ms(50), ms(30)));
        // Next round: RTTs of 25 ms > 20 + max(20/8, 4) = 24 ms.
        c.on_ack(&sample(ms(85), ms(60)));
        for i in 1..8u64 {
            c.on_ack(&sample(ms(85 + i), ms(60 + i)));
            assert_eq!(c.hystart_exit(), None, "sample {}", i + 1);
        }
        c.on_ack(&sample(ms(93), ms(68)));
        assert_eq!(c.hystart_exit(), Some(HystartExit::DelayIncrease));
        assert_eq!(c.phase(), CcPhase::CongestionAvoidance);
        assert!(c.ssthresh_bytes().unwrap() <= c.cwnd_bytes());
    }

    #[test]
    fn cubic_fills_a_100_mbps_path_in_the_simulator() {
        let goodput = crate::cc::bbr::tests::sim_goodput_mbps("cubic", 0.0);
        println!("cubic 100 Mbit/s 25 ms: {goodput:.2} Mbit/s");
        assert!(goodput >= 85.0, "{goodput:.2} Mbit/s");
    }

    #[test]
    fn bad_options_are_rejected_with_the_valid_range() {
        let mut cfg = CcConfig::default();
        cfg.options.insert("beta".into(), "1.5".into());
        let err = build(&cfg).err().unwrap().to_string();
        assert!(err.contains("beta") && err.contains("(0, 1)"), "{err}");
    }
}
