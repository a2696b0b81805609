//! The base window machine: what every loss-based window CC shares, so that an algorithm is
//! "an increase rule and a decrease rule" in its own file.
//!
//! # What the machine does (RFC 5681, RFC 6582, RFC 6937; Linux `tcp_input.c`, `tcp_cong.c`)
//! Windows are in bytes; "packets" below are bytes / MSS.
//! * **Start**: cwnd = IW (10 MSS), ssthresh = ∞.
//! * **Slow start** (cwnd < ssthresh): cwnd += acked, at most up to ssthresh; what is left of
//!   the ACK goes on to congestion avoidance (Linux `tcp_slow_start`).
//! * **Congestion avoidance**: the rule's [`Increase`]. The common form is
//!   [`Increase::PerAcked`]`(w)`, Linux `tcp_cong_avoid_ai`: acked bytes add up in a counter
//!   (`snd_cwnd_cnt`) and each time it reaches w·MSS, cwnd grows by one MSS. Reno's w is cwnd
//!   in packets (+1 MSS per window of ACKs); CUBIC's is its `cnt`.
//! * **Cwnd-limited gating**: no growth from an ACK unless `AckEvent::is_cwnd_limited`
//!   (Linux `tcp_is_cwnd_limited`; the kernel LIA/OLIA/BALIA code gates the same way).
//! * **Fast recovery** (`CongestionEvent::Loss`, once per episode): prior_cwnd = cwnd,
//!   ssthresh = the rule's decrease (Reno: max(cwnd/2, 2 MSS), Linux `tcp_reno_ssthresh`).
//!   During the episode cwnd never grows; it follows Proportional Rate Reduction
//!   (RFC 6937, Linux `tcp_cwnd_reduction`, the default) or, with option `prr=false`, is set
//!   to ssthresh at once (RFC 6582 without window inflation: ACK ranges already take SACKed
//!   data out of inflight). At the end of the episode cwnd = ssthresh (Linux
//!   `tcp_end_cwnd_reduction`).
//! * **RTO** (`CongestionEvent::Rto { repeat }`, Linux `tcp_enter_loss`): ssthresh is
//!   reduced once per loss episode: not on a backoff repeat, and not when the RTO fires
//!   inside a fast-recovery episode (ssthresh was already reduced for that window). cwnd =
//!   1 MSS; the RTO-loss state lasts until the core calls `on_recovery_exit`. cwnd grows by
//!   slow start meanwhile (Linux grows cwnd in CA_Loss); cwnd is kept at the exit.
//! * **Idle restart** (Linux `tcp_cwnd_restart`, `tcp_slow_start_after_idle = 1`): after
//!   an idle period longer than one RTO, ssthresh = max(ssthresh, ¾·cwnd), then cwnd is halved
//!   once per RTO elapsed, but not below min(IW, cwnd). The RTO is Linux's,
//!   SRTT + max(4·RTTVAR, 200 ms), from the last ACK's estimator values.
//! * **Application-limited sender** (RFC 2861, Linux `tcp_cwnd_validate` →
//!   `tcp_cwnd_application_limited`, which the out-of-tree MPTCP runs for every subflow it
//!   sends on): when an RTO has passed since the window was last full (or reduced), in the
//!   Open state, cwnd = (cwnd + most in flight meanwhile, at least IW)/2 and ssthresh =
//!   max(ssthresh, ¾·cwnd). Off with `slow_start_after_idle=false`, as in Linux.
//! * **Pacing**: none (Linux without the fq qdisc) unless option `paced=true`; then
//!   cwnd/SRTT × 2 while cwnd < ssthresh/2 and × 1.2 otherwise (Linux
//!   `tcp_update_pacing_rate`).
//!
//! # Writing an algorithm on it
//! Implement [`WindowRule`]: [`WindowRule::increase`] (required) and, where the algorithm
//! differs from Reno, [`WindowRule::ssthresh`]. Optional hooks see every event
//! ([`WindowRule::on_ack_start`] runs before any window change, as Linux's `pkts_acked`;
//! HyStart lives there). An uncoupled algorithm is then `WindowCc<MyRule>` in the registry:
//!
//! ```
//! use mptransport_core::cc::window::{Increase, WindowCc, WindowConfig, WindowRule, WindowView};
//! use mptransport_core::cc::{AckEvent, SubflowCc};
//!
//! /// Scalable TCP-like: +0.01 packet per acknowledged packet, ssthresh = 7/8 cwnd.
//! struct Scalable;
//! impl WindowRule for Scalable {
//!     fn increase(&mut self, w: &WindowView, _ack: &AckEvent, acked: u64) -> Increase {
//!         Increase::Packets(0.01 * acked as f64 / w.mss_bytes as f64)
//!     }
//!     fn ssthresh(&mut self, w: &WindowView, _cause: mptransport_core::cc::window::Reduction) -> u64 {
//!         (w.cwnd_bytes * 7 / 8).max(2 * w.mss_bytes)
//!     }
//! }
//! let cc = WindowCc::new(WindowConfig::default(), Scalable);
//! assert_eq!(cc.cwnd_bytes(), 10 * WindowConfig::default().mss_bytes);
//! ```
//!
//! A coupled algorithm (LIA, OLIA, BALIA, ...) implements `CongestionController` itself,
//! keeps one [`Window`] per subflow, and on each hook builds its rule from `views` (every
//! subflow's cwnd, SRTT, rate, loss state) and passes it in:
//! `self.windows[sf].on_ack(ack, &mut LiaRule { alpha, cwnd_total })`. The rule may borrow
//! `views`; nothing needs to be stored between calls unless the algorithm keeps state.
//!
//! Anything the [`Increase`] forms do not cover (wVegas' once-per-RTT moves, Compound's
//! dwnd) can set the window directly with [`Window::set_cwnd`] / [`Window::set_ssthresh`]
//! before or after `on_ack`, or return [`Increase::SetCwnd`].
//!
//! Full model, choices and test vectors: `docs/algorithms/window.md`.

use std::time::Duration;

use super::{AckEvent, CcConfig, CcPhase, CcSnapshot, CongestionEvent, RegistryError, SubflowCc};
use crate::pacer::window_pacing_rate;
use crate::units::{Bandwidth, Instant};

/// Linux `TCP_RTO_MIN`: the floor of 4·RTTVAR in the RTO the idle restart counts with.
pub const LINUX_RTO_MIN: Duration = Duration::from_millis(200);
/// Linux `TCP_TIMEOUT_INIT`: the RTO before any RTT sample.
pub const LINUX_RTO_INITIAL: Duration = Duration::from_secs(1);
/// Floor of ssthresh after a reduction, in packets (RFC 5681, Linux `tcp_reno_ssthresh`).
pub const MIN_SSTHRESH_PKTS: u64 = 2;
/// cwnd never goes below this many packets through [`Increase::Packets`] or
/// [`Window::set_cwnd`] (Linux keeps snd_cwnd ≥ 1).
pub const MIN_CWND_PKTS: u64 = 1;

/// Loss state of one subflow's window (Linux `icsk_ca_state`, reduced to what matters for
/// the window: Open/Disorder = `Open`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LossState {
    Open,
    /// Fast recovery episode (Linux TCP_CA_Recovery).
    Recovery,
    /// After a retransmission timeout until the core ends the RTO-loss state (TCP_CA_Loss).
    RtoLoss,
}

/// Settings of the window machine; `Default` is Linux's behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowConfig {
    pub mss_bytes: u64,
    pub initial_window_pkts: u64,
    /// Floor of ssthresh after a reduction in packets (2).
    pub min_ssthresh_pkts: u64,
    /// Proportional Rate Reduction in fast recovery (Linux; option `prr`, default true).
    /// Off: cwnd = ssthresh at the start of the episode.
    pub prr: bool,
    /// Pace at cwnd/SRTT × 2 or × 1.2 (Linux with the fq qdisc; option `paced`, default
    /// false = unpaced as Linux with pfifo_fast).
    pub paced: bool,
    /// Cut cwnd after idle periods (Linux `tcp_slow_start_after_idle`; option
    /// `slow_start_after_idle`, default true).
    pub slow_start_after_idle: bool,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            mss_bytes: crate::units::DEFAULT_MSS_BYTES,
            initial_window_pkts: 10,
            min_ssthresh_pkts: MIN_SSTHRESH_PKTS,
            prr: true,
            paced: false,
            slow_start_after_idle: true,
        }
    }
}

impl WindowConfig {
    /// Reads the machine's `--cc-opt` switches `prr`, `paced`, `slow_start_after_idle`.
    pub fn from_cc_config(cfg: &CcConfig, mss_bytes: u64) -> Result<WindowConfig, RegistryError> {
        let d = WindowConfig::default();
        Ok(WindowConfig {
            mss_bytes,
            initial_window_pkts: cfg.initial_window_pkts,
            min_ssthresh_pkts: d.min_ssthresh_pkts,
            prr: cfg.flag("prr", d.prr)?,
            paced: cfg.flag("paced", d.paced)?,
            slow_start_after_idle: cfg.flag("slow_start_after_idle", d.slow_start_after_idle)?,
        })
    }

    pub fn initial_window_bytes(&self) -> u64 {
        self.initial_window_pkts * self.mss_bytes
    }
}

/// Read-only state of one window, handed to the rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowView {
    pub cwnd_bytes: u64,
    /// `u64::MAX` = ∞ (no reduction yet).
    pub ssthresh_bytes: u64,
    pub mss_bytes: u64,
    pub state: LossState,
    /// cwnd when the current or last reduction began (Linux `prior_cwnd`); 0 = none yet.
    pub prior_cwnd_bytes: u64,
    pub initial_window_bytes: u64,
    /// Inflight as last reported by the core (after the ACK being processed, if any).
    pub inflight_bytes: u64,
}

impl WindowView {
    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd_bytes as f64 / self.mss_bytes as f64
    }
    /// `bytes` in (fractional) packets of this window's MSS.
    pub fn pkts(&self, bytes: u64) -> f64 {
        bytes as f64 / self.mss_bytes as f64
    }
    pub fn in_slow_start(&self) -> bool {
        self.cwnd_bytes < self.ssthresh_bytes
    }
    /// ssthresh, None while ∞.
    pub fn ssthresh(&self) -> Option<u64> {
        (self.ssthresh_bytes != u64::MAX).then_some(self.ssthresh_bytes)
    }
}

/// What congestion avoidance does with one ACK's acknowledged bytes (those left after slow
/// start).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Increase {
    /// Linux `tcp_cong_avoid_ai(w)`: +1 MSS each time w packets' worth of acknowledged bytes
    /// have accumulated (w > 0, in packets, may be fractional). Reno: w = cwnd in packets.
    PerAcked(f64),
    /// Change cwnd by this many packets (fractional, may be negative, as OLIA's). The
    /// fraction carries over to the next ACK; cwnd changes in whole MSS and never goes
    /// below [`MIN_CWND_PKTS`].
    Packets(f64),
    /// Set cwnd to this many bytes (at least [`MIN_CWND_PKTS`] MSS).
    SetCwnd(u64),
    /// The out-of-tree MPTCP kernel's coupled counting (`mptcp_ccc_cong_avoid`,
    /// `mptcp_balia_cong_avoid`): every ACK adds 1 to an ACK counter whatever it
    /// acknowledged, and `if (snd_cwnd_cnt >= w) { snd_cwnd++; snd_cwnd_cnt = 0; } else
    /// snd_cwnd_cnt++;` so +1 MSS takes w + 1 ACKs (w ≥ 1, whole packets).
    PerAck(u64),
    /// Leave cwnd as it is.
    Hold,
}

/// An increase of `dw_per_rtt` packets per window of ACKs, spread over the ACKs: this ACK's
/// share is `dw_per_rtt · acked/MSS / cwnd` packets (cwnd floored at one packet).
pub fn per_rtt_increase(dw_per_rtt: f64, w: &WindowView, acked_bytes: u64) -> Increase {
    Increase::Packets(dw_per_rtt * w.pkts(acked_bytes) / w.cwnd_pkts().max(1.0))
}

/// Why the window is being reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// A new fast-recovery episode; `flight_bytes` = inflight before the losses were taken
    /// out (RFC 5681's FlightSize).
    FastRecovery { flight_bytes: u64 },
    /// The first RTO of a loss episode.
    Rto { flight_bytes: u64 },
}

/// Reno's decrease (Linux `tcp_reno_ssthresh`): max(cwnd/2, 2 MSS). Linux halves cwnd,
/// RFC 5681 halves FlightSize; with cwnd-limited gating the two are within a packet or two.
pub fn reno_ssthresh(w: &WindowView) -> u64 {
    (w.cwnd_bytes / 2).max(MIN_SSTHRESH_PKTS * w.mss_bytes)
}

/// The algorithm-specific part of a window CC. Only [`WindowRule::increase`] is required;
/// every other hook defaults to Reno / doing nothing. Hooks that get `&mut Window` may change
/// it (e.g. HyStart sets ssthresh).
pub trait WindowRule {
    /// Congestion avoidance: what to do with `acked_bytes` (> 0) of this ACK. Called only
    /// while cwnd-limited, in Open or RTO-loss state, with cwnd ≥ ssthresh.
    fn increase(&mut self, w: &WindowView, ack: &AckEvent, acked_bytes: u64) -> Increase;

    /// New ssthresh in bytes, once per loss episode (Linux `ssthresh` op). Default: Reno.
    fn ssthresh(&mut self, w: &WindowView, _cause: Reduction) -> u64 {
        reno_ssthresh(w)
    }

    /// Every ACK, before the window reacts (Linux `pkts_acked`, e.g. HyStart).
    fn on_ack_start(&mut self, _window: &mut Window, _ack: &AckEvent) {}

    /// Every RTO, repeats included, after the window entered the RTO-loss state (Linux
    /// `set_state(TCP_CA_Loss)`). `reduced` = ssthresh was reduced by this RTO.
    fn on_rto(&mut self, _w: &WindowView, _now: Instant, _reduced: bool) {}

    /// Every packet counted in inflight, after the window saw it. `was_idle` = nothing was in
    /// flight before it (Linux `CA_EVENT_TX_START`); `idle_for` = time since the previous
    /// send.
    fn on_sent(&mut self, _w: &WindowView, _now: Instant, _was_idle: bool, _idle_for: Duration) {}

    /// The fast-recovery episode or the RTO-loss state ended (after the window's own exit).
    fn on_recovery_exit(&mut self, _w: &WindowView, _now: Instant) {}

    /// Algorithm-specific values for logs (`CcSnapshot::extra`).
    fn extra(&self, _w: &WindowView, _out: &mut Vec<(&'static str, f64)>) {}
}

/// One subflow's window: cwnd, ssthresh and the loss state.
#[derive(Clone, Debug)]
pub struct Window {
    cfg: WindowConfig,
    cwnd_bytes: u64,
    ssthresh_bytes: u64,
    /// Linux `snd_cwnd_cnt`, in acknowledged bytes.
    cwnd_cnt_bytes: f64,
    /// w of the last [`Increase::PerAcked`], for `cwnd_exact_bytes`.
    last_w_pkts: f64,
    /// The kernel's `snd_cwnd_cnt` counted in ACKs ([`Increase::PerAck`]).
    cwnd_cnt_acks: u64,
    /// Fraction of a packet carried by [`Increase::Packets`].
    frac_pkts: f64,
    state: LossState,
    prior_cwnd_bytes: u64,
    /// RFC 6937 `prr_delivered` and `prr_out`, in packets as Linux counts them.
    prr_delivered_pkts: u64,
    prr_out_pkts: u64,
    last_sent: Option<Instant>,
    srtt: Option<Duration>,
    rttvar: Duration,
    inflight_bytes: u64,
    /// Linux `snd_cwnd_used` (most in flight since the window was last full) and
    /// `snd_cwnd_stamp` (when it was last full or last changed by validation/restart).
    cwnd_used_bytes: u64,
    cwnd_stamp: Option<Instant>,
}

impl Window {
    pub fn new(cfg: WindowConfig) -> Window {
        Window {
            cfg,
            cwnd_bytes: cfg.initial_window_bytes(),
            ssthresh_bytes: u64::MAX,
            cwnd_cnt_bytes: 0.0,
            last_w_pkts: 0.0,
            cwnd_cnt_acks: 0,
            frac_pkts: 0.0,
            state: LossState::Open,
            prior_cwnd_bytes: 0,
            prr_delivered_pkts: 0,
            prr_out_pkts: 0,
            last_sent: None,
            srtt: None,
            rttvar: Duration::ZERO,
            inflight_bytes: 0,
            cwnd_used_bytes: 0,
            cwnd_stamp: None,
        }
    }

    pub fn config(&self) -> &WindowConfig {
        &self.cfg
    }

    pub fn view(&self) -> WindowView {
        WindowView {
            cwnd_bytes: self.cwnd_bytes,
            ssthresh_bytes: self.ssthresh_bytes,
            mss_bytes: self.cfg.mss_bytes,
            state: self.state,
            prior_cwnd_bytes: self.prior_cwnd_bytes,
            initial_window_bytes: self.cfg.initial_window_bytes(),
            inflight_bytes: self.inflight_bytes,
        }
    }

    pub fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes
    }

    /// cwnd plus the progress of the `snd_cwnd_cnt` counter towards the next MSS, in bytes
    /// (e.g. 10 MSS + 144.8 B after one Reno CA ACK of one MSS).
    pub fn cwnd_exact_bytes(&self) -> f64 {
        if self.last_w_pkts > 0.0 {
            self.cwnd_bytes as f64 + self.cwnd_cnt_bytes / self.last_w_pkts
        } else {
            self.cwnd_bytes as f64
        }
    }

    /// ssthresh, None while ∞.
    pub fn ssthresh_bytes(&self) -> Option<u64> {
        self.view().ssthresh()
    }

    pub fn state(&self) -> LossState {
        self.state
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd_bytes < self.ssthresh_bytes
    }

    /// Phase for logs and schedulers.
    pub fn phase(&self) -> CcPhase {
        match self.state {
            LossState::Recovery => CcPhase::Recovery,
            LossState::RtoLoss => CcPhase::Loss,
            LossState::Open if self.in_slow_start() => CcPhase::SlowStart,
            LossState::Open => CcPhase::CongestionAvoidance,
        }
    }

    /// Latest SRTT the core reported (None before the first ACK).
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// Sets ssthresh (bytes; `u64::MAX` = ∞), e.g. a HyStart exit (ssthresh = cwnd).
    pub fn set_ssthresh(&mut self, bytes: u64) {
        self.ssthresh_bytes = bytes;
    }

    /// Sets cwnd (at least [`MIN_CWND_PKTS`] MSS).
    pub fn set_cwnd(&mut self, bytes: u64) {
        self.cwnd_bytes = bytes.max(MIN_CWND_PKTS * self.cfg.mss_bytes);
    }

    /// The out-of-tree MPTCP kernel's receive-buffer penalisation of a slow subflow
    /// (`mptcp_rcv_buf_optimization` in `net/mptcp/mptcp_sched.c`), in whole packets as the
    /// kernel counts: cwnd = max(cwnd/2, 1); ssthresh = max(ssthresh/2, 2) unless in slow
    /// start (cwnd below ssthresh before the halving). Only in the Open state (the kernel
    /// tests `TCP_CA_Open`); returns whether it applied.
    pub fn penalise(&mut self) -> bool {
        if self.state != LossState::Open {
            return false;
        }
        let mss = self.cfg.mss_bytes;
        let prior_cwnd = self.cwnd_bytes;
        self.cwnd_bytes = (prior_cwnd / mss / 2).max(1) * mss;
        if prior_cwnd >= self.ssthresh_bytes {
            self.ssthresh_bytes = (self.ssthresh_bytes / mss / 2).max(2) * mss;
        }
        true
    }

    /// The `snd_cwnd_cnt` counter in bytes.
    pub fn cwnd_cnt_bytes(&self) -> f64 {
        self.cwnd_cnt_bytes
    }

    /// The `snd_cwnd_cnt` counter in ACKs ([`Increase::PerAck`]).
    pub fn cwnd_cnt_acks(&self) -> u64 {
        self.cwnd_cnt_acks
    }

    /// Linux's RTO from the last ACK's estimator values, SRTT + max(4·RTTVAR, 200 ms).
    pub fn linux_rto(&self) -> Duration {
        match self.srtt {
            Some(srtt) => srtt + (self.rttvar * 4).max(LINUX_RTO_MIN),
            None => LINUX_RTO_INITIAL,
        }
    }

    /// `pacing_rate()` of a window CC: None (unpaced) unless `paced`; then Linux's
    /// `tcp_update_pacing_rate`, max(cwnd, inflight)/SRTT × (2 if cwnd < ssthresh/2, else 1.2).
    pub fn pacing_rate(&self) -> Option<Bandwidth> {
        if !self.cfg.paced {
            return None;
        }
        let srtt = self.srtt?;
        let early_slow_start = self.cwnd_bytes < self.ssthresh_bytes / 2;
        Some(window_pacing_rate(
            self.cwnd_bytes.max(self.inflight_bytes),
            srtt,
            early_slow_start,
        ))
    }

    // ---- events ---------------------------------------------------------------------------

    /// A packet of `bytes` counted in inflight was sent; `inflight_bytes` includes it.
    pub fn on_sent<R: WindowRule + ?Sized>(
        &mut self,
        now: Instant,
        bytes: u64,
        inflight_bytes: u64,
        rule: &mut R,
    ) {
        if self.state == LossState::Recovery {
            self.prr_out_pkts += 1;
        }
        let was_idle = inflight_bytes <= bytes;
        let idle_for = self
            .last_sent
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        self.last_sent = Some(now);
        self.inflight_bytes = inflight_bytes;
        self.validate_cwnd(now, inflight_bytes);
        rule.on_sent(&self.view(), now, was_idle, idle_for);
    }

    /// RFC 2861 as Linux `tcp_cwnd_validate` after a send (the out-of-tree MPTCP calls it
    /// for every subflow it sent on, `mptcp_write_xmit`, with "cwnd full" = packets in
    /// flight ≥ cwnd): while the window is full the stamp follows; otherwise the most in
    /// flight is remembered, and once an RTO has passed since the stamp
    /// `tcp_cwnd_application_limited` runs (with `slow_start_after_idle`, Linux's switch for
    /// both).
    fn validate_cwnd(&mut self, now: Instant, inflight_bytes: u64) {
        let stamp = *self.cwnd_stamp.get_or_insert(now);
        if inflight_bytes >= self.cwnd_bytes {
            self.cwnd_used_bytes = 0;
            self.cwnd_stamp = Some(now);
            return;
        }
        self.cwnd_used_bytes = self.cwnd_used_bytes.max(inflight_bytes);
        if self.cfg.slow_start_after_idle
            && now.saturating_duration_since(stamp) >= self.linux_rto()
        {
            self.application_limited(now);
        }
    }

    /// Linux `tcp_cwnd_application_limited` (RFC 2861's reduction), in whole packets: in
    /// the Open state, with win_used = max(most in flight, IW) below cwnd, ssthresh =
    /// max(ssthresh, ¾·cwnd) and cwnd = (cwnd + win_used)/2.
    fn application_limited(&mut self, now: Instant) {
        if self.state == LossState::Open {
            let mss = self.cfg.mss_bytes;
            let cwnd = self.cwnd_bytes / mss;
            let used = self
                .cwnd_used_bytes
                .div_ceil(mss)
                .max(self.cfg.initial_window_pkts);
            if used < cwnd {
                if self.ssthresh_bytes != u64::MAX {
                    let three_quarters = ((cwnd >> 1) + (cwnd >> 2)) * mss;
                    self.ssthresh_bytes = self.ssthresh_bytes.max(three_quarters);
                }
                self.cwnd_bytes = ((cwnd + used) >> 1) * mss;
            }
            self.cwnd_used_bytes = 0;
        }
        self.cwnd_stamp = Some(now);
    }

    /// One ACK frame (Linux `tcp_cong_control` without a `cong_control` op).
    pub fn on_ack<R: WindowRule + ?Sized>(&mut self, ack: &AckEvent, rule: &mut R) {
        if !ack.srtt.is_zero() {
            self.srtt = Some(ack.srtt);
            self.rttvar = ack.rttvar;
        }
        self.inflight_bytes = ack.inflight_bytes;
        if ack.is_cwnd_limited {
            // tcp_cwnd_validate: the network is fed fully.
            self.cwnd_used_bytes = 0;
            self.cwnd_stamp = Some(ack.now);
        }
        rule.on_ack_start(self, ack);
        if self.state == LossState::Recovery {
            if self.cfg.prr {
                self.prr_step(ack);
            }
            return;
        }
        if !ack.is_cwnd_limited || ack.acked_bytes == 0 {
            return;
        }
        let mut acked = ack.acked_bytes;
        if self.in_slow_start() {
            acked = self.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let inc = rule.increase(&self.view(), ack, acked);
        self.apply(inc, acked);
    }

    /// A congestion signal. Returns whether ssthresh was reduced.
    pub fn on_congestion<R: WindowRule + ?Sized>(
        &mut self,
        now: Instant,
        ev: &CongestionEvent,
        rule: &mut R,
    ) -> bool {
        let mss = self.cfg.mss_bytes;
        match *ev {
            CongestionEvent::Loss {
                lost_bytes,
                inflight_bytes,
                ..
            } => {
                // In CA_Loss Linux does not start a fast recovery (`tcp_process_loss`);
                // a second Loss event inside an episode is not a new episode.
                if self.state != LossState::Open {
                    return false;
                }
                self.prior_cwnd_bytes = self.cwnd_bytes;
                let ssthresh = rule.ssthresh(
                    &self.view(),
                    Reduction::FastRecovery {
                        flight_bytes: inflight_bytes,
                    },
                );
                self.ssthresh_bytes = self.whole_ssthresh(ssthresh);
                self.prr_delivered_pkts = 0;
                self.prr_out_pkts = 0;
                // tcp_init_cwnd_reduction: snd_cwnd_cnt = 0.
                self.cwnd_cnt_bytes = 0.0;
                self.cwnd_cnt_acks = 0;
                self.frac_pkts = 0.0;
                self.state = LossState::Recovery;
                self.cwnd_stamp = Some(now);
                if self.cfg.prr {
                    // Until the ACK's PRR step: room for the fast retransmission only (as
                    // Linux's RACK reordering timer runs `tcp_cwnd_reduction(sk, 1, 0)`).
                    let after_loss = inflight_bytes.saturating_sub(lost_bytes);
                    self.cwnd_bytes = self.cwnd_bytes.min(after_loss + mss).max(mss);
                } else {
                    self.cwnd_bytes = self.ssthresh_bytes;
                }
                true
            }
            CongestionEvent::Rto {
                inflight_bytes,
                repeat,
            } => {
                let reduce = !repeat && self.state != LossState::Recovery;
                if reduce {
                    self.prior_cwnd_bytes = self.cwnd_bytes;
                    let ssthresh = rule.ssthresh(
                        &self.view(),
                        Reduction::Rto {
                            flight_bytes: inflight_bytes,
                        },
                    );
                    self.ssthresh_bytes = self.whole_ssthresh(ssthresh);
                }
                self.cwnd_bytes = mss;
                self.cwnd_cnt_bytes = 0.0;
                self.cwnd_cnt_acks = 0;
                self.frac_pkts = 0.0;
                self.state = LossState::RtoLoss;
                self.cwnd_stamp = Some(now);
                rule.on_rto(&self.view(), now, reduce);
                reduce
            }
        }
    }

    /// The fast-recovery episode or the RTO-loss state ended.
    pub fn on_recovery_exit<R: WindowRule + ?Sized>(&mut self, now: Instant, rule: &mut R) {
        match self.state {
            LossState::Recovery => {
                if self.ssthresh_bytes != u64::MAX {
                    self.cwnd_bytes = self.ssthresh_bytes;
                }
            }
            LossState::RtoLoss => {}
            LossState::Open => return,
        }
        self.state = LossState::Open;
        // tcp_end_cwnd_reduction / the end of CA_Loss stamp the window.
        self.cwnd_stamp = Some(now);
        rule.on_recovery_exit(&self.view(), now);
    }

    /// Sending restarts after the subflow was idle longer than an RTO (Linux
    /// `tcp_cwnd_restart`).
    pub fn on_idle_restart<R: WindowRule + ?Sized>(&mut self, now: Instant, _rule: &mut R) {
        if !self.cfg.slow_start_after_idle || self.state != LossState::Open {
            return;
        }
        let Some(last) = self.last_sent else { return };
        let idle = now.saturating_duration_since(last);
        let rto = self.linux_rto();
        // tcp_current_ssthresh in Open state: max(ssthresh, ¾ cwnd).
        if self.ssthresh_bytes != u64::MAX {
            let three_quarters = (self.cwnd_bytes >> 1) + (self.cwnd_bytes >> 2);
            self.ssthresh_bytes = self.ssthresh_bytes.max(three_quarters);
        }
        let restart = self.cfg.initial_window_bytes().min(self.cwnd_bytes);
        let mut cwnd = self.cwnd_bytes;
        let mut left = idle;
        // while ((delta -= rto) > 0 && cwnd > restart_cwnd) cwnd >>= 1;
        while left > rto && cwnd > restart {
            left -= rto;
            // Whole packets, as Linux halves snd_cwnd.
            cwnd = ((cwnd / self.cfg.mss_bytes) >> 1) * self.cfg.mss_bytes;
        }
        self.cwnd_bytes = cwnd.max(restart);
        self.cwnd_stamp = Some(now);
    }

    // ---- internals ------------------------------------------------------------------------

    /// A rule's ssthresh in whole packets, at least the floor: Linux keeps `snd_ssthresh`
    /// in packets (`tcp_reno_ssthresh` = max(cwnd >> 1, 2), CUBIC's cwnd·β/1024 rounded
    /// down). Together with cwnd in whole packets this keeps the send gate `inflight <
    /// cwnd` from letting one packet more than Linux out after every reduction.
    fn whole_ssthresh(&self, ssthresh_bytes: u64) -> u64 {
        let mss = self.cfg.mss_bytes;
        (ssthresh_bytes / mss * mss).max(self.cfg.min_ssthresh_pkts * mss)
    }

    /// Linux `tcp_slow_start`: returns the acked bytes left over for congestion avoidance.
    fn slow_start(&mut self, acked: u64) -> u64 {
        let cwnd = self
            .cwnd_bytes
            .saturating_add(acked)
            .min(self.ssthresh_bytes);
        let used = cwnd - self.cwnd_bytes;
        self.cwnd_bytes = cwnd;
        acked - used
    }

    fn apply(&mut self, inc: Increase, acked: u64) {
        let mss = self.cfg.mss_bytes;
        let floor = MIN_CWND_PKTS * mss;
        match inc {
            Increase::PerAcked(w_pkts) => {
                let w_pkts = w_pkts.max(f64::MIN_POSITIVE);
                self.last_w_pkts = w_pkts;
                let w_bytes = w_pkts * mss as f64;
                // Linux tcp_cong_avoid_ai: credits accumulated at a higher w apply now.
                if self.cwnd_cnt_bytes >= w_bytes {
                    self.cwnd_cnt_bytes = 0.0;
                    self.cwnd_bytes += mss;
                }
                self.cwnd_cnt_bytes += acked as f64;
                if self.cwnd_cnt_bytes >= w_bytes {
                    let delta = (self.cwnd_cnt_bytes / w_bytes).floor();
                    self.cwnd_cnt_bytes -= delta * w_bytes;
                    self.cwnd_bytes += delta as u64 * mss;
                }
            }
            Increase::Packets(p) => {
                self.frac_pkts += p;
                let whole = self.frac_pkts.trunc();
                self.frac_pkts -= whole;
                let cwnd = self.cwnd_bytes as f64 + whole * mss as f64;
                self.cwnd_bytes = (cwnd.max(0.0) as u64).max(floor);
            }
            Increase::PerAck(w_pkts) => {
                if self.cwnd_cnt_acks >= w_pkts.max(1) {
                    self.cwnd_bytes += mss;
                    self.cwnd_cnt_acks = 0;
                } else {
                    self.cwnd_cnt_acks += 1;
                }
            }
            Increase::SetCwnd(bytes) => self.cwnd_bytes = bytes.max(floor),
            Increase::Hold => {}
        }
    }

    /// RFC 6937 / Linux `tcp_cwnd_reduction`, in packets as Linux counts (`prr_delivered`,
    /// `prr_out`, `packets_in_flight`; a partial packet counts as one). Below ssthresh Linux
    /// adds one packet (the slow-start reduction bound) only on an ACK that advanced
    /// `snd_una` and declared no new loss (`FLAG_SND_UNA_ADVANCED && !newly_lost`), not on
    /// every ACK as RFC 6937's PRR-SSRB.
    fn prr_step(&mut self, ack: &AckEvent) {
        let mss = self.cfg.mss_bytes;
        let newly = ack.acked_bytes.div_ceil(mss);
        if newly == 0 || self.prior_cwnd_bytes == 0 {
            return;
        }
        self.prr_delivered_pkts += newly;
        let inflight = ack.inflight_bytes.div_ceil(mss);
        let ssthresh = self.ssthresh_bytes / mss;
        let prior_cwnd = self.prior_cwnd_bytes.div_ceil(mss);
        let sndcnt = if inflight > ssthresh {
            // Proportional part: ⌈ssthresh·prr_delivered/prior_cwnd⌉ − prr_out.
            (ssthresh * self.prr_delivered_pkts)
                .div_ceil(prior_cwnd)
                .saturating_sub(self.prr_out_pkts)
        } else {
            let delta = ssthresh - inflight;
            let mut sndcnt = self
                .prr_delivered_pkts
                .saturating_sub(self.prr_out_pkts)
                .max(newly);
            if ack.snd_una_advanced && ack.newly_lost_bytes == 0 {
                sndcnt += 1;
            }
            delta.min(sndcnt)
        };
        // Force the fast retransmission when nothing was sent in the episode yet.
        let sndcnt = sndcnt.max(if self.prr_out_pkts > 0 { 0 } else { 1 });
        self.cwnd_bytes = (ack.inflight_bytes + sndcnt * mss).max(MIN_CWND_PKTS * mss);
    }

    /// Snapshot for logs with the rule's extras.
    pub fn snapshot<R: WindowRule + ?Sized>(&self, rule: &R) -> CcSnapshot {
        let view = self.view();
        let mut extra = vec![("cwnd_exact_bytes", self.cwnd_exact_bytes())];
        rule.extra(&view, &mut extra);
        CcSnapshot {
            cwnd_bytes: self.cwnd_bytes,
            ssthresh_bytes: self.ssthresh_bytes(),
            pacing_rate: self.pacing_rate(),
            extra,
            ..CcSnapshot::default()
        }
    }
}

/// An uncoupled window CC: one [`Window`] and one rule per subflow. Register it with
/// `Uncoupled::new(name, cfg, factory)` where the factory returns `WindowCc<MyRule>`.
#[derive(Clone, Debug)]
pub struct WindowCc<R: WindowRule> {
    pub window: Window,
    pub rule: R,
}

impl<R: WindowRule> WindowCc<R> {
    pub fn new(cfg: WindowConfig, rule: R) -> WindowCc<R> {
        WindowCc {
            window: Window::new(cfg),
            rule,
        }
    }
}

impl<R: WindowRule + Send> SubflowCc for WindowCc<R> {
    fn on_sent(&mut self, now: Instant, bytes: u64, inflight_bytes: u64) {
        self.window
            .on_sent(now, bytes, inflight_bytes, &mut self.rule)
    }
    fn on_ack(&mut self, ack: &AckEvent) {
        self.window.on_ack(ack, &mut self.rule)
    }
    fn on_congestion(&mut self, now: Instant, ev: &CongestionEvent) {
        self.window.on_congestion(now, ev, &mut self.rule);
    }
    fn on_recovery_exit(&mut self, now: Instant) {
        self.window.on_recovery_exit(now, &mut self.rule)
    }
    fn on_idle_restart(&mut self, now: Instant) {
        self.window.on_idle_restart(now, &mut self.rule)
    }
    fn cwnd_bytes(&self) -> u64 {
        self.window.cwnd_bytes()
    }
    fn pacing_rate(&self) -> Option<Bandwidth> {
        self.window.pacing_rate()
    }
    fn phase(&self) -> CcPhase {
        self.window.phase()
    }
    fn ssthresh_bytes(&self) -> Option<u64> {
        self.window.ssthresh_bytes()
    }
    fn snapshot(&self) -> CcSnapshot {
        self.window.snapshot(&self.rule)
    }
    fn penalise_cwnd(&mut self) -> bool {
        self.window.penalise()
    }
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
