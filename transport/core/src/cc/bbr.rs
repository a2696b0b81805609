//! BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00; Linux `net/ipv4/tcp_bbr.c` of the
//! 6.x kernels, including the ACK-aggregation allowance; `ack_aggregation=false` gives the
//! 4.x kernels the seeds used), uncoupled: one instance per subflow is the seeds' "mpbbr".
//! Model, choices and test vectors: `docs/algorithms/bbr.md`.
//!
//! This file holds the model, the state machine and the `SubflowCc` hooks; beside it,
//! `bbr/outputs.rs` turns the model into the pacing rate and cwnd, `bbr/long_term.rs` is
//! the policer detector and `bbr/windowed_filter.rs` the BtlBw filter.
//!
//! # Model
//! ```text
//!   BtlBw   = max(delivery-rate samples) over the last 10 round trips   (windowed max)
//!   RTprop  = min(RTT samples) over the last 10 s                       (min + stamp)
//!   BDP     = BtlBw · RTprop
//!   pacing  = pacing_gain · BtlBw · (1 − 1 %)                            (Linux margin)
//!   quantum = pacing · 2^-10 s in whole packets, 2..127 (1 below 1.2 Mb/s)  (tso_segs_goal)
//!   aggr    = max excess of ACKed data over BtlBw·epoch, last 5..10 rounds, ≤ 100 ms·BtlBw
//!   target  = even(⌈cwnd_gain · BDP⌉ + aggr + 3 quanta) (+2 in PROBE_BW phase 0), ≥ 4 pkts
//!   cwnd    = min(cwnd + acked, target) once the pipe was full; before: cwnd += acked
//!             while cwnd < target
//! ```
//! A round trip ends when a packet sent after the previous round ended is acknowledged
//! (its `prior_delivered` reaches the delivered count at the round's start).
//!
//! # States
//! ```text
//!              |
//!              V
//!     +---> STARTUP  ----+     pacing/cwnd gain 2/ln2 = 2.885 (doubles the rate per round)
//!     |        |         |     pipe full: 3 rounds with < 25 % BtlBw growth
//!     |        V         |
//!     |      DRAIN   ----+     pacing gain 1/2.885 until inflight ≤ BDP
//!     |        |         |
//!     |        V         |
//!     +---> PROBE_BW ----+     pacing gains [1.25, 0.75, 1, 1, 1, 1, 1, 1], cwnd gain 2;
//!     |        ^    |          entry at a random phase other than 0.75
//!     |        |    |
//!     |        |    +------+   RTprop older than 10 s (and not restarting from idle)
//!     |        |           |
//!     +---- PROBE_RTT <----+   cwnd ≤ 4 pkts for max(200 ms, 1 round) once inflight ≤ 4,
//!                              then back to PROBE_BW (STARTUP if the pipe was never full)
//! ```
//! PROBE_BW phase advance: gain 1 after one RTprop; gain 1.25 after RTprop and (a loss, or
//! inflight ≥ target(1.25)); gain 0.75 after RTprop or as soon as inflight ≤ target(1).
//!
//! # Loss, RTO, policers, idle
//! * First round of recovery: packet conservation, cwnd = max(cwnd, inflight + acked); after
//!   it cwnd grows by the acked amount. Each ACK first deducts the bytes it declared lost.
//!   Entering recovery or the RTO-loss state saves cwnd (`bbr_save_cwnd`, only when Linux
//!   would reduce ssthresh: not on an RTO backoff repeat); leaving them restores
//!   cwnd = max(cwnd, prior_cwnd) (`bbr_set_cwnd_to_recover_or_restore`). The loss state is
//!   the core's (`AckEvent::in_recovery`/`in_rto_loss`): the RTO-loss state lasts until
//!   everything sent before the RTO is acknowledged, and cwnd grows from 1 MSS meanwhile.
//! * RTO: cwnd = 1 MSS, full_bw = 0, and the RTO ends the round (for the policer detector).
//! * PROBE_BW's gain cycle is a per-subflow [`ProbeBwCycle`] (Coupled BBR replaces it).
//! * Long-term ("policer") bandwidth, switch `lt_bw` (default on): after a loss, sample
//!   intervals of 4..16 rounds; an interval ending in a loss with loss rate ≥ 50/256 gives a
//!   rate; two consecutive rates within 1/8 (or 4 kbit/s) of each other mean a token-bucket
//!   policer: pace at their mean with gain 1 for 48 rounds.
//! * Restart from idle (sending with nothing in flight): in PROBE_BW pace at 1.0·BtlBw, and
//!   do not enter PROBE_RTT until something new is delivered. Linux also applies the
//!   generic idle cwnd cut (slow_start_after_idle); the draft does not. Choice: no cut
//!   (switch `idle_cwnd_cut`, default off).
//!
//! In PROBE_RTT (and until what was in flight then is delivered) rate samples are treated
//! as app-limited, as Linux does by setting `tp->app_limited` there.
//!
//! # References
//! Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016;
//! draft-cardwell-iccrg-bbr-congestion-control-00; draft-cheng-iccrg-delivery-rate-estimation;
//! Linux `net/ipv4/tcp_bbr.c` (v4.14..v6.x), `tcp_output.c` (`tcp_update_skb_after_send`);
//! seed 001 (mpbbr = BBR per subflow).

#[cfg(test)]
mod kernel_fixes_tests;
mod long_term;
mod outputs;
mod windowed_filter;

use std::time::Duration;

use super::{
    AckEvent, CcConfig, CcPhase, CcSnapshot, CongestionController, CongestionEvent, RegistryError,
    SubflowCc, SubflowInit, Uncoupled,
};
use crate::units::{Bandwidth, Instant};
use long_term::LongTermBw;
use windowed_filter::{Extreme, WindowedFilter};

/// 2/ln 2: the smallest gain that doubles the sending rate every round trip in STARTUP
/// (the rate must grow as fast as slow start would).
pub const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// The inverse of HIGH_GAIN drains in one round the queue STARTUP built.
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// cwnd = 2·BDP in PROBE_BW leaves room for delayed/stretched ACKs and for probing.
pub const PROBE_BW_CWND_GAIN: f64 = 2.0;
/// Probe for more bandwidth (1.25) for one RTprop, drain the probe's queue (0.75), then
/// cruise (1.0) for six RTprops: 8 phases, mean gain 1.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// PROBE_BW entry draws the phase among the first 7 "other than 0.75" starts (Linux
/// `bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;
/// BtlBw max-filter window: a full gain cycle plus 2 rounds, so one probe is always inside.
pub const BW_WINDOW_ROUNDS: u64 = 10;
/// RTprop window: 10 s, so PROBE_RTT (200 ms) costs about 2 % of the time.
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
/// Time spent at the minimum window in PROBE_RTT: long enough to drain queues and get a
/// clean RTT sample across typical ACK/timer granularity.
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// The smallest cwnd (packets): enough to keep the ACK clock going with delayed ACKs.
pub const MIN_CWND_PKTS: u64 = 4;
/// "Pipe full" when BtlBw grew by less than 25 % ...
pub const FULL_BW_GROWTH: f64 = 1.25;
/// ... for 3 rounds in a row (1 round for the receive window to open, 1 for the sender to
/// use it, 1 for the ACKs of that).
pub const FULL_BW_ROUNDS: u32 = 3;
/// Linux paces 1 % below the estimate so the bottleneck queue drains slowly instead of
/// building when the estimate is a little high.
pub const PACING_MARGIN_PERCENT: f64 = 1.0;
/// Policer detector: minimum interval length in rounds (4) and maximum (4 × 4).
pub const LT_INTERVAL_MIN_ROUNDS: u32 = 4;
/// Loss rate (lost/delivered) that marks a policer: 50/256 ≈ 20 %.
pub const LT_LOSS_THRESHOLD: f64 = 50.0 / 256.0;
/// Two interval rates within 1/8 of each other ...
pub const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// ... or within 4 kbit/s are "the same" (a token-bucket rate).
pub const LT_BW_DIFF_BPS: f64 = 4000.0;
/// Use the policer rate for 48 rounds, then probe again.
pub const LT_BW_MAX_ROUNDS: u32 = 48;
/// `bbr_min_tso_rate`: below 1.2 Mbit/s the send quantum is 1 packet, else at least 2.
pub const MIN_TSO_RATE_BPS: f64 = 1.2e6;
/// `sk_pacing_shift` = 10: a send quantum holds 2^-10 s of data at the pacing rate.
pub const PACING_SHIFT_DIVISOR: f64 = 1024.0;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (65536 − 1 − 320 on x86-64).
pub const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// `bbr_tso_segs_goal` caps the quantum at 0x7F segments.
pub const MAX_TSO_SEGS: u64 = 127;
/// ACK aggregation (Linux 6.x `bbr_extra_acked_gain` = BBR_UNIT): the target cwnd gets
/// 1.0 × the largest recent excess of ACKed data over what BtlBw predicts.
pub const EXTRA_ACKED_GAIN: f64 = 1.0;
/// `bbr_extra_acked_win_rtts`: each of the two excess slots covers 5 rounds, so the max of
/// both spans the last 5..10 rounds.
pub const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// `bbr_extra_acked_max_us`: the allowance never exceeds 100 ms of BtlBw.
pub const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);
/// `bbr_ack_epoch_acked_reset_thresh`: an epoch that has counted 2^20 packets starts over.
pub const ACK_EPOCH_ACKED_RESET_PKTS: u64 = 1 << 20;

/// Settings of BBR; `Default` is Linux's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrConfig {
    pub mss_bytes: u64,
    pub initial_window_pkts: u64,
    /// Option `pacing_margin_percent` (0..=10).
    pub pacing_margin_percent: f64,
    /// Policer detector; option `lt_bw`.
    pub lt_bw: bool,
    /// Option `idle_cwnd_cut`: on restart from idle, cwnd = min(cwnd, IW) (default off).
    pub idle_cwnd_cut: bool,
    /// Option `ack_aggregation` (default on, Linux ≥ 5.1): the ACK-aggregation cwnd
    /// allowance of `bbr_update_ack_aggregation`/`bbr_ack_aggregation_cwnd`; off = the 4.x
    /// kernels the seeds ran.
    pub ack_aggregation: bool,
    /// Option `pacing_burst_quantum` (default on): the pacer's burst credit is one send
    /// quantum (`pacing_burst_bytes`), as Linux sends a TSO-autosized skb at once; off =
    /// the pacer's generic 2 packets.
    pub pacing_burst_quantum: bool,
    /// Seed of the PROBE_BW start-phase draw.
    pub seed: u64,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            mss_bytes: crate::units::DEFAULT_MSS_BYTES,
            initial_window_pkts: 10,
            pacing_margin_percent: PACING_MARGIN_PERCENT,
            lt_bw: true,
            idle_cwnd_cut: false,
            ack_aggregation: true,
            pacing_burst_quantum: true,
            seed: 1,
        }
    }
}

impl BbrConfig {
    /// Reads `--cc-opt` switches `lt_bw`, `idle_cwnd_cut`, `ack_aggregation`,
    /// `pacing_burst_quantum` and `pacing_margin_percent`.
    pub fn from_cc_config(
        cfg: &CcConfig,
        mss_bytes: u64,
        seed: u64,
    ) -> Result<BbrConfig, RegistryError> {
        let d = BbrConfig::default();
        let margin = cfg.number("pacing_margin_percent", d.pacing_margin_percent)?;
        if !(0.0..=10.0).contains(&margin) {
            return Err(RegistryError::BadOption {
                key: "pacing_margin_percent".into(),
                value: margin.to_string(),
                valid: "a number in [0, 10], default 1".into(),
            });
        }
        Ok(BbrConfig {
            mss_bytes,
            initial_window_pkts: cfg.initial_window_pkts,
            pacing_margin_percent: margin,
            lt_bw: cfg.flag("lt_bw", d.lt_bw)?,
            idle_cwnd_cut: cfg.flag("idle_cwnd_cut", d.idle_cwnd_cut)?,
            ack_aggregation: cfg.flag("ack_aggregation", d.ack_aggregation)?,
            pacing_burst_quantum: cfg.flag("pacing_burst_quantum", d.pacing_burst_quantum)?,
            seed,
        })
    }
}

/// The PROBE_BW gain cycle of one subflow. `Default` is Linux's; Coupled BBR (seed 000)
/// replaces only this, per subflow, with [`Bbr::set_probe_bw_cycle`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeBwCycle {
    /// Pacing gain of each of the 8 phases (each > 0; phase 0 is the probe).
    pub pacing_gains: [f64; 8],
    /// A phase with gain < 1 ends only after one RTprop (wall-clock), not as soon as
    /// inflight ≤ BDP as Linux's drain phase does. Coupled BBR needs this: its α phases
    /// would otherwise be skipped and the cycle's mean gain would be lost.
    pub low_gain_ends_on_time: bool,
    /// Floor of the PROBE_BW pacing rate in packets per RTprop (0 = none); Coupled BBR's
    /// "one packet per RTT/4" when its α ≤ 0 is 4.
    pub min_pkts_per_rtprop: f64,
}

impl Default for ProbeBwCycle {
    fn default() -> Self {
        ProbeBwCycle {
            pacing_gains: PACING_GAIN_CYCLE,
            low_gain_ends_on_time: false,
            min_pkts_per_rtprop: 0.0,
        }
    }
}

/// Registry constructor ("bbr"; per subflow = mpbbr); rejects bad options up front.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    BbrConfig::from_cc_config(cfg, cfg.mss_bytes, cfg.seed)?;
    Ok(Box::new(Uncoupled::new("bbr", cfg, Bbr::from_config)))
}

/// The four BBR modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up exponentially to find BtlBw.
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Cruise at BtlBw, probing for more with a gain cycle.
    ProbeBw,
    /// Cut inflight to 4 packets to measure RTprop.
    ProbeRtt,
}

/// Loss state as the core reports it (Linux `icsk_ca_state`, reduced).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open,
    Recovery,
    Loss,
}

/// ACK-aggregation estimate (Linux 6.x `ack_epoch_*`, `extra_acked*`), in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct AckAggregation {
    /// Start of the current ACK sampling epoch (a `delivered_time`).
    epoch_stamp: Instant,
    /// Bytes (S)ACKed since `epoch_stamp`.
    epoch_acked_bytes: u64,
    /// Largest excess of ACKed over expected bytes, one slot per 5-round window.
    extra_acked_bytes: [u64; 2],
    /// Rounds since the current slot was cleared.
    win_rounds: u32,
    win_idx: usize,
}

/// BBR state of one subflow.
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    mss_bytes: u64,
    rng_state: u64,
    mode: Mode,
    cwnd_bytes: u64,
    pacing_rate: Bandwidth,
    /// Pacing was initialised from a real SRTT (not the 1 ms default).
    has_seen_rtt: bool,
    /// BtlBw filter over round counts, values in bytes/s.
    bw_filter: WindowedFilter,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    round_count: u64,
    next_round_delivered_bytes: u64,
    round_start: bool,
    /// BtlBw at the last ≥ 25 % growth, bytes/s.
    full_bw_bytes_per_s: f64,
    full_bw_count: u32,
    full_bw_reached: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    cycle_idx: usize,
    cycle_stamp: Instant,
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_round_done: bool,
    prior_cwnd_bytes: u64,
    restore_cwnd: bool,
    cycle: ProbeBwCycle,
    packet_conservation: bool,
    ca_state: CaState,
    prev_ca_state: CaState,
    idle_restart: bool,
    /// Samples of packets sent before `delivered` passes this mark are app-limited
    /// (set in PROBE_RTT).
    app_limited_until_bytes: u64,
    lt: LongTermBw,
    aggr: AckAggregation,
    delivered_bytes_total: u64,
    lost_bytes_total: u64,
    /// Bytes lost when the last recovery episode began, for an ACK without a rate sample
    /// (the sample carries the same losses when there is one).
    episode_lost_bytes: u64,
    /// Latest time something was delivered (Linux `delivered_mstamp`).
    delivered_time: Instant,
    /// `snd_ssthresh` as Linux BBR leaves it: infinite (None) until STARTUP ends, then
    /// `bbr_inflight(max_bw, 1)` set once by `bbr_check_drain`; halved only by the
    /// out-of-tree MPTCP receive-buffer penalty. BLEST reads it.
    ssthresh_bytes: Option<u64>,
}

impl Bbr {
    pub fn new(cfg: BbrConfig, now: Instant) -> Bbr {
        let mut bbr = Bbr {
            cfg,
            mss_bytes: cfg.mss_bytes,
            // xorshift needs a non-zero state
            rng_state: cfg.seed | 1,
            mode: Mode::Startup,
            cwnd_bytes: cfg.initial_window_pkts * cfg.mss_bytes,
            pacing_rate: Bandwidth::ZERO,
            has_seen_rtt: false,
            bw_filter: WindowedFilter::new(Extreme::Max, BW_WINDOW_ROUNDS),
            min_rtt: None,
            min_rtt_stamp: now,
            round_count: 0,
            next_round_delivered_bytes: 0,
            round_start: false,
            full_bw_bytes_per_s: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            cycle_idx: 0,
            cycle_stamp: now,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd_bytes: 0,
            restore_cwnd: false,
            cycle: ProbeBwCycle::default(),
            packet_conservation: false,
            ca_state: CaState::Open,
            prev_ca_state: CaState::Open,
            idle_restart: false,
            app_limited_until_bytes: 0,
            lt: LongTermBw::default(),
            aggr: AckAggregation {
                epoch_stamp: now,
                epoch_acked_bytes: 0,
                extra_acked_bytes: [0; 2],
                win_rounds: 0,
                win_idx: 0,
            },
            delivered_bytes_total: 0,
            lost_bytes_total: 0,
            episode_lost_bytes: 0,
            delivered_time: now,
            ssthresh_bytes: None,
        };
        bbr.init_pacing_rate(None);
        bbr
    }

    /// Per-subflow factory for [`Uncoupled`]; options were validated by [`build`].
    pub fn from_config(cfg: &CcConfig, init: &SubflowInit) -> Bbr {
        let bbr_cfg =
            BbrConfig::from_cc_config(cfg, init.mss_bytes, init.seed).unwrap_or(BbrConfig {
                mss_bytes: init.mss_bytes,
                initial_window_pkts: cfg.initial_window_pkts,
                seed: init.seed,
                ..BbrConfig::default()
            });
        Bbr::new(bbr_cfg, init.now)
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    pub fn round_count(&self) -> u64 {
        self.round_count
    }
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }
    /// The last ACK started a new round trip (Linux `bbr->round_start`).
    pub fn round_start(&self) -> bool {
        self.round_start
    }
    /// cwnd saved on entering recovery, the RTO-loss state or PROBE_RTT (Linux
    /// `prior_cwnd`), restored as max(cwnd, prior_cwnd) on leaving them.
    pub fn prior_cwnd_bytes(&self) -> u64 {
        self.prior_cwnd_bytes
    }
    pub fn probe_bw_cycle(&self) -> &ProbeBwCycle {
        &self.cycle
    }
    /// Replaces the PROBE_BW gain cycle (takes effect at the next ACK; the phase index and
    /// its start time are kept).
    pub fn set_probe_bw_cycle(&mut self, cycle: ProbeBwCycle) {
        self.cycle = cycle;
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// The policer rate in use, if the detector fired.
    pub fn long_term_bw(&self) -> Option<Bandwidth> {
        self.lt
            .use_bw
            .then(|| Bandwidth::from_bytes_per_s(self.lt.bw_bytes_per_s))
    }

    /// Windowed-max BtlBw, bytes/s.
    fn max_bw(&self) -> f64 {
        self.bw_filter.get()
    }

    /// The bandwidth the model runs on: the policer rate while it is in use, else BtlBw.
    fn bw(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw_bytes_per_s
        } else {
            self.max_bw()
        }
    }

    fn next_random_below(&mut self, n: u64) -> u64 {
        // xorshift64*: enough for a phase draw, reproducible from the run seed.
        let mut x = self.rng_state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng_state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }

    // ---- model update (bbr_update_model) ------------------------------------------------

    fn update_model(&mut self, ack: &AckEvent, lost_bytes: u64) {
        let app_limited = self.update_bw(ack, lost_bytes);
        self.update_ack_aggregation(ack);
        self.update_cycle_phase(ack, lost_bytes);
        self.check_full_bw_reached(app_limited);
        self.check_drain(ack);
        self.update_min_rtt(ack);
        self.update_gains();
    }

    /// Round counting and the BtlBw filter; returns whether the sample is app-limited.
    fn update_bw(&mut self, ack: &AckEvent, lost_bytes: u64) -> bool {
        self.round_start = false;
        let Some(rs) = ack.rate else { return false };
        if rs.delivered_bytes == 0 || rs.interval.is_zero() {
            return false;
        }
        if rs.prior_delivered_bytes >= self.next_round_delivered_bytes {
            self.next_round_delivered_bytes = self.delivered_bytes_total;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let app_limited = rs.is_app_limited
            || (self.app_limited_until_bytes != 0
                && rs.prior_delivered_bytes <= self.app_limited_until_bytes);
        if self.app_limited_until_bytes != 0
            && self.delivered_bytes_total > self.app_limited_until_bytes
        {
            self.app_limited_until_bytes = 0;
        }
        self.lt_bw_sampling(ack.now, lost_bytes, app_limited);
        let bw = rs.delivery_rate.bytes_per_s();
        // An app-limited sample may only raise the estimate.
        if !app_limited || bw >= self.max_bw() {
            self.bw_filter.update(self.round_count, bw);
        }
        app_limited
    }

    fn update_cycle_phase(&mut self, ack: &AckEvent, lost_bytes: u64) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(ack, lost_bytes) {
            self.advance_cycle_phase(ack.now);
        }
    }

    fn is_next_cycle_phase(&self, ack: &AckEvent, lost_bytes: u64) -> bool {
        let min_rtt = self.min_rtt.unwrap_or(Duration::ZERO);
        let is_full_length = self.delivered_time - self.cycle_stamp > min_rtt;
        if self.pacing_gain == 1.0 {
            return is_full_length;
        }
        let inflight = self.inflight_at_edt_bytes(ack.prior_inflight_bytes);
        let bw = self.max_bw();
        if self.pacing_gain > 1.0 {
            return is_full_length
                && (lost_bytes > 0 || inflight >= self.target_cwnd_bytes(bw, self.pacing_gain));
        }
        if self.cycle.low_gain_ends_on_time {
            return is_full_length;
        }
        is_full_length || inflight <= self.target_cwnd_bytes(bw, 1.0)
    }

    fn advance_cycle_phase(&mut self, now: Instant) {
        self.cycle_idx = (self.cycle_idx + 1) % self.cycle.pacing_gains.len();
        self.cycle_stamp = now;
    }

    fn check_full_bw_reached(&mut self, app_limited: bool) {
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw_bytes_per_s * FULL_BW_GROWTH {
            self.full_bw_bytes_per_s = self.max_bw();
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_ROUNDS;
    }

    /// Linux `bbr_check_drain`: on leaving STARTUP, `snd_ssthresh = bbr_inflight(max_bw,
    /// BBR_UNIT)` (computed in DRAIN, so without PROBE_BW's phase-0 packets).
    fn check_drain(&mut self, ack: &AckEvent) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh_bytes = Some(self.target_cwnd_bytes(self.max_bw(), 1.0));
        }
        // `bbr_packets_in_net_at_edt`: on the ACK that enters DRAIN the gain is still
        // STARTUP's, so one send quantum is counted as about to depart.
        if self.mode == Mode::Drain
            && self.inflight_at_edt_bytes(ack.inflight_bytes)
                <= self.target_cwnd_bytes(self.max_bw(), 1.0)
        {
            self.enter_probe_bw(ack.now);
        }
    }

    fn enter_probe_bw(&mut self, now: Instant) {
        self.mode = Mode::ProbeBw;
        let len = self.cycle.pacing_gains.len();
        self.cycle_idx = len - 1 - self.next_random_below(CYCLE_RAND) as usize;
        self.advance_cycle_phase(now);
    }

    fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
    }

    /// Back to STARTUP if the pipe was never full, else PROBE_BW (Linux `bbr_reset_mode`).
    fn reset_mode(&mut self, now: Instant) {
        if self.full_bw_reached {
            self.enter_probe_bw(now)
        } else {
            self.enter_startup()
        }
    }

    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd_bytes = self.cwnd_bytes;
        } else {
            self.prior_cwnd_bytes = self.prior_cwnd_bytes.max(self.cwnd_bytes);
        }
    }

    fn update_min_rtt(&mut self, ack: &AckEvent) {
        let now = ack.now;
        let expired = now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(rtt) = ack.rtt_sample
            && (self.min_rtt.is_none_or(|m| rtt <= m) || expired)
        {
            self.min_rtt = Some(rtt);
            self.min_rtt_stamp = now;
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low rate samples during this mode.
            self.app_limited_until_bytes = (self.delivered_bytes_total + ack.inflight_bytes).max(1);
            let min_cwnd = MIN_CWND_PKTS * self.mss_bytes;
            match self.probe_rtt_done_stamp {
                None if ack.inflight_bytes <= min_cwnd => {
                    self.probe_rtt_done_stamp = Some(now + PROBE_RTT_DURATION);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered_bytes = self.delivered_bytes_total;
                }
                None => {}
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now > done {
                        self.min_rtt_stamp = now;
                        self.restore_cwnd = true;
                        self.reset_mode(now);
                    }
                }
            }
        }
        if ack.acked_bytes > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: once PROBE_RTT's 200 ms have passed, restore cwnd
    /// and leave it. `bbr_cwnd_event` calls it when sending restarts after idle in PROBE_RTT.
    fn check_probe_rtt_done(&mut self, now: Instant) {
        if self.probe_rtt_done_stamp.is_some_and(|done| now > done) {
            self.min_rtt_stamp = now;
            self.cwnd_bytes = self.cwnd_bytes.max(self.prior_cwnd_bytes);
            self.reset_mode(now);
            self.update_gains();
        }
    }

    /// Linux `bbr_cwnd_event(CA_EVENT_TX_START)` with `app_limited`: sending restarts after
    /// idle.
    fn restart_from_idle(&mut self, now: Instant) {
        self.idle_restart = true;
        self.reset_ack_epoch(now);
        if self.mode == Mode::ProbeBw {
            self.set_pacing_rate(1.0, None);
        } else if self.mode == Mode::ProbeRtt {
            self.check_probe_rtt_done(now);
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => {
                let pacing = if self.lt.use_bw {
                    1.0
                } else {
                    self.cycle.pacing_gains[self.cycle_idx]
                };
                (pacing, PROBE_BW_CWND_GAIN)
            }
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }
}

impl SubflowCc for Bbr {
    fn on_sent(&mut self, now: Instant, bytes: u64, inflight_bytes: u64) {
        // Restart after an application pause (Linux CA_EVENT_TX_START with app_limited):
        // nothing was in flight before this packet, and it is not an RTO retransmission.
        if inflight_bytes <= bytes
            && self.delivered_bytes_total > 0
            && self.ca_state == CaState::Open
        {
            self.restart_from_idle(now);
        }
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        if ack.mss > 0 {
            self.mss_bytes = ack.mss;
        }
        // The loss state is the core's: fast recovery, or the RTO-loss state until everything
        // sent before the RTO is acknowledged (Linux CA_Loss until `high_seq`).
        self.ca_state = if ack.in_rto_loss {
            CaState::Loss
        } else if ack.in_recovery {
            CaState::Recovery
        } else {
            CaState::Open
        };
        let lost_bytes = ack.newly_lost_bytes.max(
            ack.rate
                .map_or(self.episode_lost_bytes, |r| r.newly_lost_bytes),
        );
        self.episode_lost_bytes = 0;
        self.lost_bytes_total += lost_bytes;
        self.delivered_bytes_total = ack.delivered_bytes_total;
        if ack.acked_bytes > 0 {
            self.delivered_time = ack.now;
        }
        self.update_model(ack, lost_bytes);
        let srtt = (!ack.srtt.is_zero()).then_some(ack.srtt);
        self.set_pacing_rate(self.pacing_gain, srtt);
        self.set_cwnd(ack, lost_bytes);
    }

    fn on_congestion(&mut self, _now: Instant, ev: &CongestionEvent) {
        match *ev {
            CongestionEvent::Loss { lost_bytes, .. } => {
                self.episode_lost_bytes = lost_bytes;
                // Linux bbr_ssthresh: remember cwnd for the exit of recovery.
                self.save_cwnd();
                self.ca_state = CaState::Recovery;
            }
            CongestionEvent::Rto { repeat, .. } => {
                // Linux calls `bbr_ssthresh` (which saves cwnd) only when `tcp_enter_loss`
                // reduces ssthresh: not on a backoff repeat, not inside fast recovery.
                if !repeat && self.ca_state != CaState::Recovery {
                    self.save_cwnd();
                }
                self.ca_state = CaState::Loss;
                self.prev_ca_state = CaState::Loss;
                self.cwnd_bytes = self.mss_bytes;
                self.full_bw_bytes_per_s = 0.0;
                // Treat the RTO as the end of a round, with a loss, for the policer detector.
                self.round_start = true;
                self.lt_bw_sampling(self.delivered_time, self.mss_bytes, false);
            }
        }
    }

    fn on_recovery_exit(&mut self, _now: Instant) {
        self.ca_state = CaState::Open;
    }

    fn on_idle_restart(&mut self, now: Instant) {
        self.restart_from_idle(now);
        if self.cfg.idle_cwnd_cut {
            let iw = self.cfg.initial_window_pkts * self.mss_bytes;
            self.cwnd_bytes = self.cwnd_bytes.min(iw);
        }
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes
    }

    fn ssthresh_bytes(&self) -> Option<u64> {
        self.ssthresh_bytes
    }

    /// The out-of-tree kernel's `mptcp_rcv_buf_optimization` writes `snd_cwnd` and
    /// `snd_ssthresh` of whatever CC the subflow runs, BBR included, only in `TCP_CA_Open`:
    /// cwnd = max(cwnd/2, 1 packet); ssthresh = max(ssthresh/2, 2 packets) if cwnd was at
    /// least ssthresh (never while ssthresh is still infinite). BBR's next ACK then grows the
    /// halved cwnd by the acknowledged bytes towards its target (`bbr_set_cwnd`, at least 4
    /// packets), so the cut lasts about one round trip.
    fn penalise_cwnd(&mut self) -> bool {
        if self.ca_state != CaState::Open {
            return false;
        }
        let mss = self.mss_bytes;
        let prior_cwnd = self.cwnd_bytes;
        self.cwnd_bytes = (prior_cwnd / mss / 2).max(1) * mss;
        if let Some(ssthresh) = self.ssthresh_bytes
            && prior_cwnd >= ssthresh
        {
            self.ssthresh_bytes = Some((ssthresh / mss / 2).max(2) * mss);
        }
        true
    }

    fn pacing_rate(&self) -> Option<Bandwidth> {
        Some(self.pacing_rate)
    }

    /// One send quantum (Linux `bbr_tso_segs_goal`): the kernel hands its pacer skbs of that
    /// many segments, so it sends them back to back.
    fn pacing_burst_bytes(&self) -> Option<u64> {
        self.cfg
            .pacing_burst_quantum
            .then(|| self.send_quantum_pkts() * self.mss_bytes)
    }

    fn phase(&self) -> CcPhase {
        match self.mode {
            Mode::Startup => CcPhase::Startup,
            Mode::Drain => CcPhase::Drain,
            Mode::ProbeBw => CcPhase::ProbeBw,
            Mode::ProbeRtt => CcPhase::ProbeRtt,
        }
    }

    fn bw_estimate(&self) -> Option<Bandwidth> {
        let bw = self.bw();
        (bw > 0.0).then(|| Bandwidth::from_bytes_per_s(bw))
    }

    fn snapshot(&self) -> CcSnapshot {
        let mut extra = vec![
            ("round_count", self.round_count as f64),
            ("cycle_idx", self.cycle_idx as f64),
            ("full_bw_reached", self.full_bw_reached as u8 as f64),
            ("prior_cwnd_bytes", self.prior_cwnd_bytes as f64),
            ("lt_use_bw", self.lt.use_bw as u8 as f64),
            (
                "extra_acked_bytes",
                self.ack_aggregation_cwnd_bytes() as f64,
            ),
        ];
        if self.lt.bw_bytes_per_s > 0.0 {
            extra.push(("lt_bw_bps", self.lt.bw_bytes_per_s * 8.0));
        }
        CcSnapshot {
            cwnd_bytes: self.cwnd_bytes,
            ssthresh_bytes: self.ssthresh_bytes,
            pacing_rate: Some(self.pacing_rate),
            bw_estimate: self.bw_estimate(),
            min_rtt: self.min_rtt,
            pacing_gain: Some(self.pacing_gain),
            cwnd_gain: Some(self.cwnd_gain),
            extra,
        }
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
pub(crate) mod tests;
