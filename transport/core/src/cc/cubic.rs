//! CUBIC as Linux `net/ipv4/tcp_cubic.c` runs it (v2.3, the kernels the seeds and this
//! machine run), with HyStart; uncoupled, one instance per subflow. Built on the base
//! window machine (`window.rs`): this file is CUBIC's increase rule (`bictcp_update` →
//! `cnt`, applied by `tcp_cong_avoid_ai`), its decrease rule (`cubictcp_recalc_ssthresh`),
//! HyStart (`cubictcp_acked`/`hystart_update`), the idle shift (`cubictcp_cwnd_event`) and
//! the reset at an RTO (`cubictcp_state(TCP_CA_Loss)`).
//!
//! # Model (windows in packets, time in seconds)
//! ```text
//!   loss:   W_max = cwnd·(1+β)/2 if cwnd < W_max (fast convergence) else cwnd
//!           ssthresh = max(cwnd·β, 2)                                   β = 717/1024
//!   first CA ACK of an epoch (t0 = now): K = ∛((W_max − cwnd)/C), origin = W_max
//!           (K = 0, origin = cwnd when W_max ≤ cwnd)                    C = 0.4
//!   each CA ACK: t = now − t0 + delay_min
//!           target = origin ± ⌊C·|t − K|³⌋
//!           cnt = cwnd/(target − cwnd) if target > cwnd, else 100·cwnd
//!           cnt = min(cnt, 20) while W_max = 0 (no loss yet, or after an RTO)
//!           Reno-friendliness: W_tcp += 1 per cwnd·15/8 acked packets;
//!                              W_tcp > cwnd → cnt = min(cnt, cwnd/(W_tcp − cwnd))
//!           cnt = max(cnt, 2)       (at most +1 packet per 2 acked: ×1.5 per RTT)
//!           cwnd += 1 packet per cnt acked packets (tcp_cong_avoid_ai)
//!   RTO:    W_max, K, epoch, delay_min and HyStart forgotten (bictcp_reset)
//! ```
//! Integer divisions are Linux's (packets are whole: cwnd in packets is ⌊cwnd_bytes/MSS⌋).
//! cnt is recomputed at most once per jiffy, and not at all while cwnd is unchanged and
//! less than HZ/32 has passed (HZ = 250 here, as this machine's kernel and Debian's).
//! When sending restarts with nothing in flight, t0 moves forward by the idle time
//! (`CA_EVENT_TX_START`).
//!
//! # HyStart (default on; `--cc-opt hystart=false`)
//! Runs only in slow start, until it fires once (again after an RTO). A round begins when
//! an ACK covers a packet sent after the previous round began, at any window; the two
//! detectors run only with cwnd ≥ 16 packets (Linux 6.13 and later, `hystart_update`). It
//! exits slow start (ssthresh = cwnd) on
//! * **ACK train**: ACKs ≤ 2 ms apart have spanned more than (delay_min + ack_delay)/2 since
//!   the round began. The halving is Linux's for an unpaced socket (no fq); with
//!   `paced=true` the full threshold is used. ack_delay = min(1 ms, 4·64 KiB / pacing rate)
//!   allows for GSO/TSO aggregation (Linux `hystart_ack_delay`; the pacing rate is Linux's
//!   cwnd/SRTT × 2 of slow start even when unpaced).
//! * **delay increase**: after 8 RTT samples in the round, their minimum exceeds
//!   delay_min + clamp(delay_min/8, 4 ms, 16 ms).
//!
//! RTT samples within 1 s of an epoch start are ignored (for delay_min and HyStart).
//!
//! # Pacing
//! None by default (Linux without fq, as the seeds' kernels ran CUBIC); `--cc-opt
//! paced=true` paces at cwnd/SRTT × 2 or × 1.2 (`tcp_update_pacing_rate`).
//!
//! Model, choices and test vectors: `docs/algorithms/cubic.md`. References: RFC 9438;
//! Ha, Rhee, Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", SIGOPS OSR 2008;
//! Ha, Rhee, "Taming the elephants: new TCP slow start", Computer Networks 2011.

use std::time::Duration;

use super::window::{Increase, Reduction, Window, WindowCc, WindowConfig, WindowRule, WindowView};
use super::{AckEvent, CcConfig, CongestionController, RegistryError, SubflowInit, Uncoupled};
use crate::units::Instant;

/// C in packets/s³ (RFC 9438; Linux `bic_scale` 41 → 410/1024 ≈ 0.4004).
pub const CUBIC_C: f64 = 0.4;
/// β in 1/1024 (Linux `beta` = 717 ≈ 0.7).
pub const CUBIC_BETA_1024: u64 = 717;
/// Linux `BICTCP_BETA_SCALE`.
const BETA_SCALE: u64 = 1024;
/// The kernel's timer frequency: jiffies are 1/HZ s (CONFIG_HZ=250 on this machine).
pub const LINUX_HZ: u64 = 250;
const JIFFY_NS: u64 = 1_000_000_000 / LINUX_HZ;
/// Until the first loss (or after an RTO) grow at least 5 % per RTT: cnt ≤ 20.
pub const CNT_CAP_WITHOUT_W_MAX: u64 = 20;
/// HyStart is active only from this window on, packets (Linux `hystart_low_window`).
pub const HYSTART_LOW_WINDOW_PKTS: u64 = 16;
/// ACKs closer than this belong to one train (Linux `hystart_ack_delta_us`).
pub const HYSTART_ACK_DELTA: Duration = Duration::from_millis(2);
/// RTT samples per round before the delay test runs (Linux `HYSTART_MIN_SAMPLES`).
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// Bounds of the delay-increase threshold delay_min/8 (Linux `HYSTART_DELAY_MIN/MAX`).
pub const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
pub const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);
/// Cap of the GSO/TSO allowance added to the ACK-train threshold (Linux: 1 ms).
pub const HYSTART_ACK_DELAY_MAX: Duration = Duration::from_millis(1);
/// Linux `sk_gso_max_size` for the ACK-train allowance (GSO_LEGACY_MAX_SIZE).
pub const GSO_MAX_SIZE_BYTES: f64 = 65536.0;
/// RTT samples this soon after an epoch start are ignored (Linux: HZ jiffies = 1 s).
pub const POST_EPOCH_IGNORE: Duration = Duration::from_secs(1);

/// Settings of CUBIC; `Default` is Linux's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    pub c: f64,
    /// β × 1024 (option `beta` in (0, 1), rounded to 1/1024).
    pub beta_1024: u64,
    /// Option `fast_convergence` (Linux `fast_convergence = 1`).
    pub fast_convergence: bool,
    /// Option `tcp_friendliness` (Linux `tcp_friendliness = 1`).
    pub tcp_friendliness: bool,
    /// Option `hystart` (Linux `hystart = 1`).
    pub hystart: bool,
    /// Options `hystart_ack_train`, `hystart_delay` (Linux `hystart_detect = 3`).
    pub hystart_ack_train: bool,
    pub hystart_delay: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: CUBIC_C,
            beta_1024: CUBIC_BETA_1024,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_ack_train: true,
            hystart_delay: true,
        }
    }
}

impl CubicConfig {
    /// Reads CUBIC's `--cc-opt` switches (the window machine reads its own).
    pub fn from_cc_config(cfg: &CcConfig) -> Result<CubicConfig, RegistryError> {
        let d = CubicConfig::default();
        let beta = cfg.number("beta", d.beta())?;
        if !(beta > 0.0 && beta < 1.0) {
            return Err(RegistryError::BadOption {
                key: "beta".into(),
                value: beta.to_string(),
                valid: "a number in (0, 1), default 717/1024 = 0.7002".into(),
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
            c,
            beta_1024: ((beta * BETA_SCALE as f64).round() as u64).clamp(1, BETA_SCALE - 1),
            fast_convergence: cfg.flag("fast_convergence", d.fast_convergence)?,
            tcp_friendliness: cfg.flag("tcp_friendliness", d.tcp_friendliness)?,
            hystart: cfg.flag("hystart", d.hystart)?,
            hystart_ack_train: cfg.flag("hystart_ack_train", d.hystart_ack_train)?,
            hystart_delay: cfg.flag("hystart_delay", d.hystart_delay)?,
        })
    }

    pub fn beta(&self) -> f64 {
        self.beta_1024 as f64 / BETA_SCALE as f64
    }

    /// Linux `beta_scale` = 8·(1024 + β)/3/(1024 − β) (integer; 15 for β = 717): W_tcp grows
    /// by one packet per cwnd·beta_scale/8 acked packets, i.e. α = 3(1−β)/(1+β) per RTT.
    fn beta_scale(&self) -> u64 {
        8 * (BETA_SCALE + self.beta_1024) / 3 / (BETA_SCALE - self.beta_1024)
    }
}

/// Why slow start ended without a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartExit {
    AckTrain,
    DelayIncrease,
}

/// Jiffies of an instant (Linux `tcp_jiffies32`).
fn jiffies(t: Instant) -> u64 {
    t.as_nanos() / JIFFY_NS
}

/// Linux `usecs_to_jiffies` (rounds up).
fn duration_to_jiffies(d: Duration) -> u64 {
    (d.as_nanos() as u64).div_ceil(JIFFY_NS)
}

/// CUBIC's rule state (Linux `struct bictcp`).
#[derive(Clone, Debug)]
pub struct CubicRule {
    cfg: CubicConfig,
    /// Packets acked per +1 packet (the last `bictcp_update` result).
    cnt: u64,
    /// W_max in packets; 0 = none.
    last_max_cwnd: u64,
    last_cwnd: u64,
    /// Jiffy of the last cnt update; None = never.
    last_time: Option<u64>,
    origin_pkts: u64,
    k_s: f64,
    delay_min: Option<Duration>,
    /// Jiffy the epoch began; None = no epoch.
    epoch_start: Option<u64>,
    /// Acked packets counted for W_tcp.
    ack_cnt: f64,
    /// W_tcp, packets.
    tcp_cwnd: u64,
    // HyStart
    found: Option<HystartExit>,
    round_start: Instant,
    last_ack: Instant,
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
}

impl CubicRule {
    pub fn new(cfg: CubicConfig, now: Instant) -> CubicRule {
        let mut rule = CubicRule {
            cfg,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            origin_pkts: 0,
            k_s: 0.0,
            delay_min: None,
            epoch_start: None,
            ack_cnt: 0.0,
            tcp_cwnd: 0,
            found: None,
            round_start: now,
            last_ack: now,
            curr_rtt: None,
            sample_cnt: 0,
        };
        rule.hystart_reset(now);
        rule
    }

    /// Linux `bictcp_reset`.
    fn reset(&mut self) {
        let cfg = self.cfg;
        let (round_start, last_ack) = (self.round_start, self.last_ack);
        *self = CubicRule {
            round_start,
            last_ack,
            ..CubicRule::new(cfg, round_start)
        };
    }

    /// Linux `bictcp_hystart_reset`.
    fn hystart_reset(&mut self, now: Instant) {
        self.round_start = now;
        self.last_ack = now;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// W_max in packets (0 = none).
    pub fn w_max_pkts(&self) -> u64 {
        self.last_max_cwnd
    }
    /// K of the current epoch in seconds, None without an epoch.
    pub fn k_s(&self) -> Option<f64> {
        self.epoch_start.map(|_| self.k_s)
    }
    /// The last cnt (packets acked per +1 packet).
    pub fn cnt(&self) -> u64 {
        self.cnt
    }
    /// W_tcp of the Reno-friendliness estimate, packets.
    pub fn w_tcp_pkts(&self) -> u64 {
        self.tcp_cwnd
    }
    /// The cubic curve of the current epoch at t seconds after its start, in packets
    /// (unrounded), None without an epoch.
    pub fn w_cubic_pkts(&self, t_s: f64) -> Option<f64> {
        self.epoch_start
            .map(|_| self.cfg.c * (t_s - self.k_s).powi(3) + self.origin_pkts as f64)
    }
    pub fn hystart_exit(&self) -> Option<HystartExit> {
        self.found
    }
    pub fn delay_min(&self) -> Option<Duration> {
        self.delay_min
    }

    /// Linux `bictcp_update`: recomputes cnt for cwnd (packets) and `acked` packets.
    fn update(&mut self, cwnd: u64, acked: f64, now: Instant) {
        let now_j = jiffies(now);
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd
            && self
                .last_time
                .is_some_and(|t| now_j.saturating_sub(t) <= LINUX_HZ / 32)
        {
            return;
        }
        // The cubic part changes at most once per jiffy.
        let cubic_due = !(self.epoch_start.is_some() && self.last_time == Some(now_j));
        if cubic_due {
            self.last_cwnd = cwnd;
            self.last_time = Some(now_j);
            if self.epoch_start.is_none() {
                self.epoch_start = Some(now_j);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k_s = 0.0;
                    self.origin_pkts = cwnd;
                } else {
                    self.k_s = ((self.last_max_cwnd - cwnd) as f64 / self.cfg.c).cbrt();
                    self.origin_pkts = self.last_max_cwnd;
                }
            }
            let epoch = self.epoch_start.unwrap_or(now_j);
            let delay_j = self.delay_min.map_or(0, duration_to_jiffies);
            let t_s = (now_j.saturating_sub(epoch) + delay_j) as f64 / LINUX_HZ as f64;
            let offs = (t_s - self.k_s).abs();
            let delta = (self.cfg.c * offs.powi(3)).floor() as u64;
            let target = if t_s < self.k_s {
                self.origin_pkts.saturating_sub(delta)
            } else {
                self.origin_pkts + delta
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > CNT_CAP_WITHOUT_W_MAX {
                self.cnt = CNT_CAP_WITHOUT_W_MAX;
            }
        }
        if self.cfg.tcp_friendliness {
            let delta = ((cwnd * self.cfg.beta_scale()) >> 3).max(1) as f64;
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// Linux `hystart_update`.
    fn hystart_update(
        &mut self,
        window: &mut Window,
        now: Instant,
        delay: Duration,
        sent: Instant,
    ) {
        if sent >= self.round_start {
            self.hystart_reset(now);
        }
        // Linux 6.13 and later: rounds are counted at every window, the detection runs only
        // from hystart_low_window packets (before, cubictcp_acked tested the window before
        // calling hystart_update, so rounds started only from 16 packets).
        if window.cwnd_bytes() / window.config().mss_bytes < HYSTART_LOW_WINDOW_PKTS {
            return;
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        if self.cfg.hystart_ack_train
            && now.saturating_duration_since(self.last_ack) <= HYSTART_ACK_DELTA
        {
            self.last_ack = now;
            let mut threshold = delay_min + hystart_ack_delay(window);
            if !window.config().paced {
                threshold /= 2;
            }
            if now.saturating_duration_since(self.round_start) > threshold {
                self.found = Some(HystartExit::AckTrain);
                window.set_ssthresh(window.cwnd_bytes());
            }
        }
        if self.cfg.hystart_delay {
            let curr = self.curr_rtt.map_or(delay, |c| c.min(delay));
            self.curr_rtt = Some(curr);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else if curr > delay_min + (delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
            {
                self.found = Some(HystartExit::DelayIncrease);
                window.set_ssthresh(window.cwnd_bytes());
            }
        }
    }
}

/// Linux `hystart_ack_delay`: min(1 ms, 4·gso_max_size / sk_pacing_rate). Linux sets
/// sk_pacing_rate even without fq: cwnd/SRTT × 2 in early slow start.
fn hystart_ack_delay(window: &Window) -> Duration {
    let Some(srtt) = window.srtt().filter(|s| !s.is_zero()) else {
        return Duration::ZERO;
    };
    let rate = 2.0 * window.cwnd_bytes() as f64 / srtt.as_secs_f64();
    if rate <= 0.0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(4.0 * GSO_MAX_SIZE_BYTES / rate).min(HYSTART_ACK_DELAY_MAX)
}

impl WindowRule for CubicRule {
    /// `cubictcp_cong_avoid` after `tcp_slow_start`: `bictcp_update`, then `cnt` for
    /// `tcp_cong_avoid_ai`.
    fn increase(&mut self, w: &WindowView, ack: &AckEvent, acked_bytes: u64) -> Increase {
        let cwnd = (w.cwnd_bytes / w.mss_bytes).max(1);
        self.update(cwnd, w.pkts(acked_bytes), ack.now);
        Increase::PerAcked(self.cnt as f64)
    }

    /// `cubictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, w: &WindowView, _cause: Reduction) -> u64 {
        let cwnd = w.cwnd_bytes / w.mss_bytes;
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            cwnd * (BETA_SCALE + self.cfg.beta_1024) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd * self.cfg.beta_1024 / BETA_SCALE).max(2) * w.mss_bytes
    }

    /// `cubictcp_acked`: delay_min and HyStart.
    fn on_ack_start(&mut self, window: &mut Window, ack: &AckEvent) {
        let Some(rtt) = ack.rtt_sample else { return };
        let now = ack.now;
        if self.epoch_start.is_some_and(|e| {
            jiffies(now).saturating_sub(e) < duration_to_jiffies(POST_EPOCH_IGNORE)
        }) {
            return;
        }
        let delay = rtt.max(Duration::from_micros(1));
        if self.delay_min.is_none_or(|d| d > delay) {
            self.delay_min = Some(delay);
        }
        if self.found.is_none() && window.in_slow_start() && self.cfg.hystart {
            self.hystart_update(window, now, delay, ack.largest_acked_sent_time);
        }
    }

    /// `cubictcp_state(TCP_CA_Loss)`: every RTO forgets W_max, the epoch and delay_min
    /// and restarts HyStart.
    fn on_rto(&mut self, _w: &WindowView, now: Instant, _reduced: bool) {
        self.reset();
        self.hystart_reset(now);
    }

    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`: shift the epoch by the idle time.
    fn on_sent(&mut self, _w: &WindowView, now: Instant, was_idle: bool, idle_for: Duration) {
        if !was_idle {
            return;
        }
        let now_j = jiffies(now);
        let delta = now_j - jiffies(now.saturating_sub(idle_for));
        if let Some(e) = self.epoch_start
            && delta > 0
        {
            self.epoch_start = Some((e + delta).min(now_j));
        }
    }

    fn extra(&self, _w: &WindowView, out: &mut Vec<(&'static str, f64)>) {
        out.push(("w_max_pkts", self.last_max_cwnd as f64));
        out.push(("cnt", self.cnt as f64));
        out.push(("w_tcp_pkts", self.tcp_cwnd as f64));
        if self.epoch_start.is_some() {
            out.push(("k_s", self.k_s));
        }
        if let Some(exit) = self.found {
            out.push((
                "hystart_exit_delay",
                (exit == HystartExit::DelayIncrease) as u8 as f64,
            ));
        }
    }
}

/// CUBIC state of one subflow.
pub type Cubic = WindowCc<CubicRule>;

/// A CUBIC subflow from its two configurations.
pub fn new_cubic(window: WindowConfig, cubic: CubicConfig, now: Instant) -> Cubic {
    WindowCc::new(window, CubicRule::new(cubic, now))
}

/// Per-subflow factory for [`Uncoupled`]; options were validated by [`build`].
pub fn from_config(cfg: &CcConfig, init: &SubflowInit) -> Cubic {
    let window = WindowConfig::from_cc_config(cfg, init.mss_bytes).unwrap_or(WindowConfig {
        mss_bytes: init.mss_bytes,
        initial_window_pkts: cfg.initial_window_pkts,
        ..WindowConfig::default()
    });
    let cubic = CubicConfig::from_cc_config(cfg).unwrap_or_default();
    new_cubic(window, cubic, init.now)
}

/// Registry constructor; rejects bad `--cc-opt` values before any subflow exists.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    WindowConfig::from_cc_config(cfg, cfg.mss_bytes)?;
    CubicConfig::from_cc_config(cfg)?;
    Ok(Box::new(Uncoupled::new("cubic", cfg, from_config)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_sender::TestSender;
    use crate::cc::window::LossState;
    use crate::cc::{CcPhase, CongestionEvent, SubflowCc};
    use crate::units::Bandwidth;

    const MSS: u64 = 1500;

    fn cubic_with(window: WindowConfig, cubic: CubicConfig) -> Cubic {
        new_cubic(
            WindowConfig {
                mss_bytes: MSS,
                ..window
            },
            cubic,
            Instant::ZERO,
        )
    }

    fn cubic() -> Cubic {
        cubic_with(WindowConfig::default(), CubicConfig::default())
    }

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    /// One ACK of `acked_bytes` at `now`, cwnd-limited, with an RTT sample of `rtt_ms`
    /// (packet sent at now − rtt).
    fn ack(now: Instant, acked_bytes: u64, rtt_ms: Option<u64>) -> AckEvent {
        let rtt = rtt_ms.map(Duration::from_millis);
        AckEvent {
            now,
            acked_bytes,
            rtt_sample: rtt,
            srtt: Duration::from_millis(100),
            min_rtt: Duration::from_millis(50),
            is_cwnd_limited: true,
            largest_acked_sent_time: now.saturating_sub(rtt.unwrap_or_default()),
            mss: MSS,
            ..AckEvent::default()
        }
    }

    fn loss(inflight_pkts: u64) -> CongestionEvent {
        CongestionEvent::Loss {
            lost_bytes: MSS,
            largest_lost_sent_time: Instant::ZERO,
            inflight_bytes: inflight_pkts * MSS,
        }
    }

    fn rto(repeat: bool) -> CongestionEvent {
        CongestionEvent::Rto {
            inflight_bytes: 100 * MSS,
            repeat,
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// cwnd = ssthresh = `pkts`: congestion avoidance from the next ACK.
    fn in_ca_at(pkts: u64) -> Cubic {
        let mut c = cubic();
        c.window.set_cwnd(pkts * MSS);
        c.window.set_ssthresh(pkts * MSS);
        c
    }

    #[test]
    fn w_max_100_gives_k_4_217_the_cubic_curve_and_cnt_35() {
        let mut c = cubic();
        c.window.set_cwnd(100 * MSS);
        c.on_congestion(Instant::ZERO, &loss(100));
        // ⌊100·717/1024⌋ = 70 packets.
        assert_eq!(c.ssthresh_bytes(), Some(70 * MSS));
        assert_eq!(c.rule.w_max_pkts(), 100);
        c.on_recovery_exit(Instant::ZERO);
        assert_eq!(c.cwnd_bytes(), 70 * MSS);
        // First CA ACK (RTT 50 ms) starts the epoch.
        c.on_ack(&ack(ms(1000), MSS, Some(50)));
        let k = c.rule.k_s().unwrap();
        assert!(close(k, 4.217, 5e-4), "K = {k}");
        let expect = [(0.0, 70.0), (1.0, 86.68), (2.0, 95.64), (6.0, 102.27)];
        for (t, w) in expect {
            let got = c.rule.w_cubic_pkts(t).unwrap();
            assert!(close(got, w, 0.005), "W_cubic({t}) = {got}, want {w}");
        }
        // t = 0 + usecs_to_jiffies(50 ms) = 13 jiffies = 0.052 s; ⌊0.4·(4.217 − 0.052)³⌋ =
        // ⌊28.9⌋ = 28 → target 72 → cnt = 70/(72 − 70) = 35.
        assert_eq!(c.rule.cnt(), 35);
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_the_previous_one() {
        for (fast, want_w_max) in [(true, 68), (false, 80)] {
            let mut c = cubic_with(
                WindowConfig::default(),
                CubicConfig {
                    fast_convergence: fast,
                    ..CubicConfig::default()
                },
            );
            c.window.set_cwnd(100 * MSS);
            c.on_congestion(Instant::ZERO, &loss(100));
            c.on_recovery_exit(Instant::ZERO);
            // Lost again at 80 < W_max = 100: W_max = ⌊80·1741/2048⌋ = 68 with fast
            // convergence; ssthresh = ⌊80·717/1024⌋ = 56.
            c.window.set_cwnd(80 * MSS);
            c.on_congestion(Instant::ZERO, &loss(80));
            assert_eq!(c.rule.w_max_pkts(), want_w_max);
            assert_eq!(c.ssthresh_bytes(), Some(56 * MSS));
        }
    }

    #[test]
    fn without_w_max_cnt_is_capped_at_20_so_cwnd_grows_5_percent_per_rtt() {
        // After an RTO (W_max forgotten), in CA at 100 packets: target = cwnd → cnt would
        // be 100·cwnd = 10000; the cap makes it 20: +1 packet per 20 acked.
        let mut c = in_ca_at(100);
        for _ in 0..20 {
            c.on_ack(&ack(ms(1000), MSS, Some(50)));
        }
        assert_eq!(c.rule.cnt(), 20);
        assert_eq!(c.cwnd_bytes(), 101 * MSS);
        // With a W_max (= cwnd, K = 0) there is no cap: cnt = 10000, no growth yet.
        let mut c = in_ca_at(100);
        c.rule.last_max_cwnd = 100;
        for _ in 0..20 {
            c.on_ack(&ack(ms(1000), MSS, Some(50)));
        }
        assert_eq!(c.rule.cnt(), 10_000);
        assert_eq!(c.cwnd_bytes(), 100 * MSS);
    }

    #[test]
    fn tcp_friendliness_caps_cnt_and_old_credit_applies_at_once() {
        // W_max = cwnd = 10 (no cap), no delay_min: the cubic target stays 10 → cnt 1000.
        // W_tcp grows by 1 per ⌊10·15/8⌋ = 18 acked packets; the 20th ACK, 32 ms (8
        // jiffies > HZ/32 = 7) later, recomputes: W_tcp = 11 → cnt = 10/(11 − 10) = 10;
        // tcp_cong_avoid_ai then applies the 19 packets of credit: +1 packet, counter 1.
        let mut c = in_ca_at(10);
        c.rule.last_max_cwnd = 10;
        for _ in 0..19 {
            c.on_ack(&ack(ms(0), MSS, None));
        }
        assert_eq!(c.rule.cnt(), 1000);
        assert_eq!(c.cwnd_bytes(), 10 * MSS);
        c.on_ack(&ack(ms(32), MSS, None));
        assert_eq!(c.rule.w_tcp_pkts(), 11);
        assert_eq!(c.rule.cnt(), 10);
        assert_eq!(c.cwnd_bytes(), 11 * MSS);
        assert_eq!(c.window.cwnd_cnt_bytes(), MSS as f64);
    }

    #[test]
    fn rto_collapses_cwnd_forgets_w_max_and_a_repeat_keeps_ssthresh() {
        let mut c = cubic();
        c.window.set_cwnd(100 * MSS);
        c.on_congestion(Instant::ZERO, &rto(false));
        assert_eq!(c.cwnd_bytes(), MSS);
        assert_eq!(c.ssthresh_bytes(), Some(70 * MSS));
        assert_eq!(c.phase(), CcPhase::Loss);
        assert_eq!(c.rule.w_max_pkts(), 0, "bictcp_reset at CA_Loss");
        c.on_congestion(ms(400), &rto(true));
        assert_eq!(c.ssthresh_bytes(), Some(70 * MSS));
        assert_eq!(c.cwnd_bytes(), MSS);
        // Slow start in the RTO-loss state.
        c.on_ack(&AckEvent {
            in_rto_loss: true,
            ..ack(ms(500), MSS, Some(50))
        });
        assert_eq!(c.cwnd_bytes(), 2 * MSS);
        assert_eq!(c.window.state(), LossState::RtoLoss);
    }

    #[test]
    fn hystart_counts_rounds_below_16_packets_but_detects_only_from_16() {
        // Linux 6.13+ hystart_update: the round reset comes before the low-window test.
        let mut c = cubic();
        assert_eq!(c.cwnd_bytes(), 10 * MSS);
        // An ACK at 50 ms for a packet sent at 30 ms (after the round began at 0): a new
        // round at 50 ms although cwnd is 10.
        c.on_ack(&ack(ms(50), MSS, Some(20)));
        assert_eq!(c.rule.round_start, ms(50));
        // ... but its RTT sample is not counted below 16 packets.
        assert_eq!(c.rule.sample_cnt, 0);
    }

    #[test]
    fn hystart_delay_increase_fires_on_the_ninth_sample_of_a_slow_round() {
        let mut c = cubic();
        c.window.set_cwnd(20 * MSS);
        // delay_min = 20 ms; this ACK begins a round.
        c.on_ack(&ack(ms(50), MSS, Some(20)));
        // The next round (its first packet was sent at 60 ms ≥ 50 ms): RTTs of 25 ms >
        // 20 + clamp(20/8, 4, 16) = 24 ms. ACKs 1 ms apart span ≤ 8 ms < (20 + 1)/2.
        c.on_ack(&ack(ms(85), MSS, Some(25)));
        for i in 1..8u64 {
            c.on_ack(&ack(ms(85 + i), MSS, Some(25)));
            assert_eq!(c.rule.hystart_exit(), None, "sample {}", i + 1);
        }
        c.on_ack(&ack(ms(93), MSS, Some(25)));
        assert_eq!(c.rule.hystart_exit(), Some(HystartExit::DelayIncrease));
        assert_eq!(c.ssthresh_bytes(), Some(c.cwnd_bytes()));
        assert_eq!(c.phase(), CcPhase::CongestionAvoidance);
    }

    #[test]
    fn hystart_ack_train_threshold_is_halved_when_unpaced() {
        // delay_min 20 ms, ack_delay 1 ms: threshold (20 + 1)/2 = 10.5 ms unpaced, 21 ms
        // paced. ACKs 1 ms apart after a round began at 50 ms.
        for (paced, fires_at) in [(false, 61u64), (true, 72)] {
            let mut c = cubic_with(
                WindowConfig {
                    paced,
                    ..WindowConfig::default()
                },
                CubicConfig::default(),
            );
            c.window.set_cwnd(20 * MSS);
            c.on_ack(&ack(ms(50), MSS, Some(20)));
            let mut fired = None;
            for t in 51..=80u64 {
                // RTT samples of 20 ms of packets sent before the round began.
                c.on_ack(&AckEvent {
                    largest_acked_sent_time: ms(40),
                    ..ack(ms(t), MSS, Some(20))
                });
                if c.rule.hystart_exit().is_some() {
                    fired = Some(t);
                    break;
                }
            }
            assert_eq!(fired, Some(fires_at), "paced = {paced}");
            assert_eq!(c.rule.hystart_exit(), Some(HystartExit::AckTrain));
        }
    }

    #[test]
    fn idle_time_moves_the_epoch_start() {
        let mut c = in_ca_at(50);
        c.rule.last_max_cwnd = 100;
        c.on_sent(ms(996), MSS, 2 * MSS);
        c.on_ack(&ack(ms(1000), MSS, None));
        assert_eq!(c.rule.epoch_start, Some(250));
        // Nothing in flight for 3 s (750 jiffies), then sending restarts.
        c.on_sent(ms(4000), MSS, MSS);
        assert_eq!(c.rule.epoch_start, Some(1000));
    }

    #[test]
    fn unpaced_by_default() {
        let mut c = cubic();
        c.on_ack(&ack(ms(10), MSS, Some(10)));
        assert_eq!(c.pacing_rate(), None);
    }

    #[test]
    fn hystart_ends_slow_start_near_the_bdp_without_loss() {
        // 12 Mb/s bottleneck (1000 pkt/s of 1500 B), 20 ms base RTT: BDP = 20 packets;
        // unpaced windows queue at the bottleneck and stretch the ACK train.
        let rtt = Duration::from_millis(20);
        let mut s = TestSender::new(cubic(), MSS, rtt);
        s.bottleneck = Some(Bandwidth::from_mbps(12.0));
        for _ in 0..12 {
            s.run_round_trip();
            if s.cc.rule.hystart_exit().is_some() {
                break;
            }
        }
        assert!(s.cc.rule.hystart_exit().is_some());
        assert_eq!(s.cc.phase(), CcPhase::CongestionAvoidance);
        let ssthresh_pkts = s.cc.ssthresh_bytes().unwrap() / MSS;
        assert!(
            (16..=80).contains(&ssthresh_pkts),
            "ssthresh {ssthresh_pkts} pkts"
        );
        // Switched off, the same path keeps slow start going.
        let off = CubicConfig {
            hystart: false,
            ..CubicConfig::default()
        };
        let mut s = TestSender::new(cubic_with(WindowConfig::default(), off), MSS, rtt);
        s.bottleneck = Some(Bandwidth::from_mbps(12.0));
        for _ in 0..6 {
            s.run_round_trip();
        }
        assert_eq!(s.cc.rule.hystart_exit(), None);
        assert_eq!(s.cc.phase(), CcPhase::SlowStart);
        assert!(s.cc.cwnd_bytes() >= 640 * MSS);
    }

    #[test]
    fn cubic_region_growth_is_bounded_by_1_5_cwnd_per_rtt() {
        let rtt = Duration::from_millis(50);
        let mut s = TestSender::new(cubic(), MSS, rtt);
        s.cc.window.set_cwnd(100 * MSS);
        s.cc.on_congestion(s.now, &loss(100));
        s.cc.on_recovery_exit(s.now);
        let mut prev = s.cc.cwnd_bytes();
        for _ in 0..200 {
            s.run_round_trip();
            let now = s.cc.cwnd_bytes();
            assert!(
                now >= prev && now * 2 <= prev * 3 + 2 * MSS,
                "{prev} -> {now}"
            );
            prev = now;
        }
        // After 10 s (> K = 4.2 s) the window has passed W_max = 100 (convex region).
        assert!(prev > 100 * MSS, "cwnd {} pkts", prev / MSS);
    }

    #[test]
    fn without_w_max_a_100_mbps_50_ms_path_refills_within_a_second() {
        // After an RTO or a HyStart exit W_max = 0, so cnt ≤ 20: ×1.05 per RTT. From 200
        // packets to the BDP (100 Mbit/s · 50 ms = 416.7 packets of 1500 B) takes
        // ln(416.7/200)/ln(1.05) = 15.1 RTTs = 0.75 s. Without the cap cnt = 100·cwnd
        // and Reno-friendliness (+0.53 packet per RTT) would need ~400 RTTs (20 s).
        let rtt = Duration::from_millis(50);
        let mut s = TestSender::new(in_ca_at(200), MSS, rtt);
        s.bottleneck = Some(Bandwidth::from_mbps(100.0));
        s.run_for(Duration::from_millis(1000));
        let pkts = s.cc.cwnd_bytes() / MSS;
        assert!(pkts >= 417, "cwnd {pkts} packets after 1 s");
        assert_eq!(s.cc.rule.w_max_pkts(), 0);
    }

    #[test]
    fn bad_options_are_rejected_with_the_valid_range() {
        let mut cfg = CcConfig::default();
        cfg.options.insert("beta".into(), "1.5".into());
        let err = build(&cfg).err().unwrap().to_string();
        assert!(err.contains("beta") && err.contains("(0, 1)"), "{err}");
        let mut cfg = CcConfig::default();
        cfg.options.insert("paced".into(), "maybe".into());
        assert!(build(&cfg).is_err());
    }
}
