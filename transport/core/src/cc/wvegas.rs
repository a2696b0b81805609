//! wVegas, weighted Vegas (Cao, Xu, Fu, "Delay-based congestion control for multipath TCP",
//! IEEE ICNP 2012), as the out-of-tree Linux MPTCP kernel runs it (`mptcp_wvegas.c`).
//!
//! # Model (per subflow; packets, µs, integer arithmetic as the kernel)
//! Every RTT sample adds rtt+1 µs to a per-round sum and lowers baseRTT (the smallest
//! sample ever). Once per round (an ACK for a packet sent after the round began), in the
//! Open state only, if more than 2 samples were taken (otherwise Reno for that ACK):
//! ```text
//!   rtt   = mean sample of the round
//!   diff  = ⌊w·(rtt − baseRTT)/rtt⌋                      packets queued by this subflow
//!   slow start (w < ssthresh, `tcp_in_slow_start`):
//!     diff > γ          → w = min(w, ⌊w·baseRTT/rtt⌋ + 1), ssthresh = min(ssthresh, w)
//!     otherwise          → slow start
//!   congestion avoidance:
//!     diff ≥ α_i        → rate_i = w/rtt; weight_i = rate_i / Σ_j rate_j;
//!                          α_i = max(2, ⌊total_α · weight_i⌋)
//!     diff > α_i        → w −= 1, ssthresh = min(ssthresh, w)
//!     diff < α_i        → w += 1
//!     drain: q = rtt − baseRTT; q_min = min non-zero q seen; q ≥ 2·q_min
//!                        → w = ⌊w·baseRTT/(2·rtt)⌋, q_min forgotten
//!   w ≥ 2; ssthresh = max(ssthresh, ¾·w)  (tcp_current_ssthresh)
//! ```
//! Constants (kernel module parameters): initial α = 2, total α = 10, γ = 1. Between round
//! ends only slow start grows the window. wVegas runs only in the Open state
//! (`mptcp_wvegas_state`): an ACK that leaves a hole (data out of order, `AckEvent::disorder`,
//! the kernel's TCP_CA_Disorder), a loss (Recovery) or an RTO (Loss) turns it off and Reno
//! grows the window meanwhile; the first ACK without a hole after that re-enables it with
//! α = 2, weight 1, no rate and a new round (kernel `wvegas_enable` on `TCP_CA_Open`); an
//! RTO forgets the rate; an idle restart forgets everything, baseRTT included. Σ_j rate_j counts the subflows whose
//! current round has samples (the kernel's `sampled_rtt > 0` test).
//!
//! With one subflow weight = 1 and α = 10: a Vegas that keeps about 10 packets queued,
//! except for the drain, which Vegas does not have. The drain fires whenever a round's
//! queueing delay reaches twice the smallest seen since the last drain, so on a path where
//! the queueing delay only jitters (sub-millisecond bursts) it halves the window every few
//! rounds. `--cc-opt drain=false` leaves plain weighted Vegas.
//!
//! # Choices
//! * The kernel sets q_min to q even when q = 0 and then halves the window (0 ≥ 2·0)
//!   whenever a round's mean RTT equals baseRTT exactly. With jitter that never happens in a
//!   real network, but on a simulated fixed-delay path it would every round; here only
//!   non-zero queueing delays count.
//! * Growth (+1, slow start) needs the subflow to be cwnd-limited, as for every window CC;
//!   the kernel does not gate wVegas, which lets an application-limited video flow inflate
//!   its window without bound.
//! * Rounds end on an ACK for a packet sent at or after the round began (the kernel's
//!   `after(ack, beg_snd_nxt)` in time rather than sequence space).
//!
//! Stats extras: `wvegas_diff_pkts`, `wvegas_alpha`, `wvegas_weight`, `wvegas_base_rtt_ms`,
//! `wvegas_q_min_ms`. Documentation: `docs/algorithms/wvegas.md`.

use super::coupled::is_member;
use super::coupled::prelude::*;
use super::reno::RenoRule;
use super::window::LossState;

/// Kernel `MPTCP_WVEGAS_SCALE`: rates and weights are fixed point with 16 fraction bits.
pub const WVEGAS_SCALE: u32 = 16;

/// Kernel module parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WvegasParams {
    pub initial_alpha: u64,
    pub total_alpha: u64,
    pub gamma: u64,
    /// The kernel's queue drain (`--cc-opt drain=false` turns it off, leaving Vegas with
    /// the weighted α).
    pub drain: bool,
}

impl Default for WvegasParams {
    fn default() -> Self {
        WvegasParams {
            initial_alpha: 2,
            total_alpha: 10,
            gamma: 1,
            drain: true,
        }
    }
}

/// ⌊w·(rtt − base)/rtt⌋: packets this subflow keeps queued (w in packets, times in µs).
pub fn diff_pkts(cwnd: u64, rtt_us: u64, base_rtt_us: u64) -> u64 {
    cwnd * rtt_us.saturating_sub(base_rtt_us) / rtt_us.max(1)
}

/// w/rtt in packets per µs, fixed point 2¹⁶.
pub fn instant_rate(cwnd: u64, rtt_us: u64) -> u64 {
    (cwnd << WVEGAS_SCALE) / rtt_us.max(1)
}

/// rate/Σrate, fixed point 2¹⁶ (`mptcp_wvegas_weight`).
pub fn weight(own_rate: u64, total_rate: u64) -> u64 {
    ((own_rate as u128) << WVEGAS_SCALE)
        .checked_div(total_rate as u128)
        .unwrap_or(0) as u64
}

/// α_i = max(2, ⌊total_α · weight⌋).
pub fn alpha_from_weight(weight: u64, total_alpha: u64) -> u64 {
    ((weight * total_alpha) >> WVEGAS_SCALE).max(2)
}

/// The drain: ⌊w · ⌊2¹⁶·base/(2·rtt)⌋ / 2¹⁶⌋.
pub fn drained_cwnd(cwnd: u64, rtt_us: u64, base_rtt_us: u64) -> u64 {
    let backoff = (base_rtt_us << WVEGAS_SCALE) / (2 * rtt_us.max(1));
    (cwnd * backoff) >> WVEGAS_SCALE
}

/// Per-subflow state (`struct wvegas`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WvegasSub {
    /// wVegas runs (Open state); otherwise Reno.
    pub doing: bool,
    pub round_begin: Instant,
    pub cnt_rtt: u32,
    /// Sum of (sample + 1 µs) in this round.
    pub sampled_rtt_us: u64,
    pub base_rtt_us: u64,
    pub instant_rate: u64,
    pub weight: u64,
    pub alpha: u64,
    /// Smallest non-zero queueing delay since the last drain, 0 = none.
    pub queue_delay_us: u64,
    pub last_diff: u64,
}

impl WvegasSub {
    fn new(now: Instant, p: &WvegasParams) -> WvegasSub {
        let mut s = WvegasSub {
            doing: true,
            round_begin: now,
            cnt_rtt: 0,
            sampled_rtt_us: 0,
            base_rtt_us: u64::MAX,
            instant_rate: 0,
            weight: 1 << WVEGAS_SCALE,
            alpha: p.initial_alpha,
            queue_delay_us: 0,
            last_diff: 0,
        };
        s.enable(now, p);
        s
    }
    /// `wvegas_enable`.
    fn enable(&mut self, now: Instant, p: &WvegasParams) {
        self.doing = true;
        self.round_begin = now;
        self.cnt_rtt = 0;
        self.sampled_rtt_us = 0;
        self.instant_rate = 0;
        self.alpha = p.initial_alpha;
        self.weight = 1 << WVEGAS_SCALE;
        self.queue_delay_us = 0;
    }
}

/// wVegas connection object: the parameters.
#[derive(Clone, Debug, Default)]
pub struct Wvegas {
    pub params: WvegasParams,
}

impl CoupledAlgo for Wvegas {
    type Sub = WvegasSub;
    fn name(&self) -> &'static str {
        "wvegas"
    }
    fn new_sub(&mut self, init: &SubflowInit) -> WvegasSub {
        WvegasSub::new(init.now, &self.params)
    }

    fn on_ack(
        &mut self,
        m: &mut Members<WvegasSub>,
        sf: SubflowId,
        ack: &AckEvent,
        views: &[SubflowCcView],
    ) {
        let p = self.params;
        {
            // pkts_acked: every RTT sample.
            let s = &mut m.get_mut(sf).state;
            if let Some(rtt) = ack.rtt_sample {
                let vrtt = rtt.as_micros() as u64 + 1;
                s.base_rtt_us = s.base_rtt_us.min(vrtt);
                s.sampled_rtt_us += vrtt;
                s.cnt_rtt += 1;
            }
        }
        // tcp_fastretrans_alert runs before cong_avoid: an ACK that leaves a hole moves an
        // Open subflow to Disorder (set_state → wvegas_disable), the first one without a
        // hole back to Open (wvegas_enable: α, weight, rate and the round restart).
        {
            let me = m.get_mut(sf);
            if me.window.state() == LossState::Open {
                if ack.disorder {
                    me.state.doing = false;
                } else if !me.state.doing {
                    me.state.enable(ack.now, &p);
                }
            }
        }
        let no_growth = AckEvent {
            is_cwnd_limited: false,
            ..*ack
        };
        let (doing, open, round_begin, cnt_rtt) = {
            let me = m.get(sf);
            (
                me.state.doing,
                me.window.state() == LossState::Open,
                me.state.round_begin,
                me.state.cnt_rtt,
            )
        };
        if !doing || !open {
            m.get_mut(sf).window.on_ack(ack, &mut RenoRule);
            return;
        }
        let round_end = ack.acked_bytes > 0 && ack.largest_acked_sent_time >= round_begin;
        if !round_end {
            // Between round ends only slow start grows the window.
            let w = &mut m.get_mut(sf).window;
            if w.in_slow_start() {
                w.on_ack(ack, &mut RenoRule);
            } else {
                w.on_ack(&no_growth, &mut RenoRule);
            }
            return;
        }
        m.get_mut(sf).state.round_begin = ack.now;
        if cnt_rtt <= 2 {
            m.get_mut(sf).window.on_ack(ack, &mut RenoRule);
        } else {
            m.get_mut(sf).window.on_ack(&no_growth, &mut RenoRule);
            // Σ rate of the subflows whose round has samples, before this one's update.
            let others: u64 = m
                .iter()
                .filter(|x| x.id != sf && is_member(views, x.id) && x.state.sampled_rtt_us > 0)
                .map(|x| x.state.instant_rate)
                .sum();
            let me = m.get_mut(sf);
            let mss = me.window.config().mss_bytes;
            let s = &mut me.state;
            let mut cwnd = me.window.cwnd_bytes() / mss;
            let ss_inf = me.window.ssthresh_bytes().is_none();
            let mut ssthresh = me.window.ssthresh_bytes().map_or(u64::MAX, |b| b / mss);
            let rtt = s.sampled_rtt_us / s.cnt_rtt as u64;
            let base = s.base_rtt_us;
            let diff = diff_pkts(cwnd, rtt, base);
            s.last_diff = diff;
            let acked_pkts = ack.acked_bytes.div_ceil(mss);
            // tcp_in_slow_start: cwnd < ssthresh.
            if diff > p.gamma && cwnd < ssthresh {
                let target = cwnd * base / rtt.max(1);
                cwnd = cwnd.min(target + 1);
                // mptcp_wvegas_ssthresh: min(ssthresh, cwnd).
                ssthresh = ssthresh.min(cwnd);
            } else if cwnd < ssthresh {
                if ack.is_cwnd_limited {
                    cwnd = (cwnd + acked_pkts).min(ssthresh.max(cwnd));
                }
            } else {
                if diff >= s.alpha {
                    s.instant_rate = instant_rate(cwnd, rtt);
                    let total = others + s.instant_rate;
                    let w = weight(s.instant_rate, total);
                    if w > 0 {
                        s.weight = w;
                    }
                    s.alpha = alpha_from_weight(s.weight, p.total_alpha);
                }
                if diff > s.alpha {
                    cwnd -= 1;
                    ssthresh = ssthresh.min(cwnd);
                } else if diff < s.alpha && ack.is_cwnd_limited {
                    cwnd += 1;
                }
                let q = rtt.saturating_sub(base);
                if q > 0 && (s.queue_delay_us == 0 || s.queue_delay_us > q) {
                    s.queue_delay_us = q;
                }
                if p.drain && s.queue_delay_us > 0 && q >= 2 * s.queue_delay_us {
                    cwnd = drained_cwnd(cwnd, rtt, base);
                    s.queue_delay_us = 0;
                }
            }
            cwnd = cwnd.max(2);
            if ssthresh != u64::MAX {
                ssthresh = ssthresh.max((cwnd >> 1) + (cwnd >> 2));
            }
            me.window.set_cwnd(cwnd * mss);
            if !(ss_inf && ssthresh == u64::MAX) {
                me.window.set_ssthresh(ssthresh.saturating_mul(mss));
            }
        }
        let s = &mut m.get_mut(sf).state;
        s.cnt_rtt = 0;
        s.sampled_rtt_us = 0;
    }

    fn on_congestion(
        &mut self,
        m: &mut Members<WvegasSub>,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        _views: &[SubflowCcView],
    ) {
        let me = m.get_mut(sf);
        me.window.on_congestion(now, ev, &mut RenoRule);
        // set_state(not Open) → wvegas_disable; CA_EVENT_LOSS forgets the rate.
        me.state.doing = false;
        if matches!(ev, CongestionEvent::Rto { .. }) {
            me.state.instant_rate = 0;
        }
    }

    fn on_recovery_exit(&mut self, m: &mut Members<WvegasSub>, sf: SubflowId, now: Instant) {
        // Back to Open: wvegas_enable on the next ACK without a hole (`on_ack`), as the
        // kernel re-enables on set_state(TCP_CA_Open) and goes to Disorder instead while
        // data is still out of order.
        m.get_mut(sf).window.on_recovery_exit(now, &mut RenoRule);
    }

    fn on_idle_restart(&mut self, m: &mut Members<WvegasSub>, sf: SubflowId, now: Instant) {
        let me = m.get_mut(sf);
        me.window.on_idle_restart(now, &mut RenoRule);
        me.state = WvegasSub::new(now, &self.params);
    }

    fn extra(&self, m: &Members<WvegasSub>, sf: SubflowId, out: &mut Vec<(&'static str, f64)>) {
        let s = &m.get(sf).state;
        out.push(("wvegas_diff_pkts", s.last_diff as f64));
        out.push(("wvegas_alpha", s.alpha as f64));
        out.push(("wvegas_weight", s.weight as f64 / 65536.0));
        if s.base_rtt_us != u64::MAX {
            out.push(("wvegas_base_rtt_ms", s.base_rtt_us as f64 / 1e3));
        }
        out.push(("wvegas_q_min_ms", s.queue_delay_us as f64 / 1e3));
    }
}

/// Registry constructor: options `initial_alpha`, `total_alpha`, `gamma` (packets, ≥ 1) and
/// `drain` (default true).
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    let d = WvegasParams::default();
    let get = |key: &str, default: u64| -> Result<u64, RegistryError> {
        let v = cfg.number(key, default as f64)?;
        if v >= 1.0 && v.fract() == 0.0 && v <= 1e6 {
            Ok(v as u64)
        } else {
            Err(RegistryError::BadOption {
                key: key.into(),
                value: v.to_string(),
                valid: format!("a whole number of packets ≥ 1 (default {default})"),
            })
        }
    };
    let params = WvegasParams {
        initial_alpha: get("initial_alpha", d.initial_alpha)?,
        total_alpha: get("total_alpha", d.total_alpha)?,
        gamma: get("gamma", d.gamma)?,
        drain: cfg.flag("drain", d.drain)?,
    };
    Ok(Box::new(Coupled::new(Wvegas { params }, cfg)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled::testkit::{MSS, ack, view};
    use std::time::Duration;

    #[test]
    fn worked_example_diff_weight_alpha_and_drain() {
        // w = 20, base 50 ms, rtt 60 ms; other subflow 10 packets at 100 ms.
        let diff = diff_pkts(20, 60_000, 50_000);
        assert_eq!(diff, 3); // 3.33 packets, integer as in the kernel
        let own = instant_rate(20, 60_000);
        let other = instant_rate(10, 100_000);
        let w = weight(own, own + other);
        // The float weight is 0.769; the kernel's rates in packets/µs·2¹⁶ are small integers
        // (21 and 6 here), so its weight is 21/27 = 0.778. α is 7 either way.
        let float_weight = (20.0 / 60.0) / (20.0 / 60.0 + 10.0 / 100.0);
        assert!((float_weight - 0.769f64).abs() < 5e-4);
        assert_eq!((own, other), (21, 6));
        assert!((w as f64 / 65536.0 - 21.0 / 27.0).abs() < 1e-4);
        let alpha = alpha_from_weight(w, 10);
        assert_eq!(alpha, 7);
        // diff 3 < α 7 → w = 21; a drain with q_min = 4 ms (q = 10 ms ≥ 8 ms) → 8.
        assert_eq!(drained_cwnd(21, 60_000, 50_000), 8);
        assert_eq!(drained_cwnd(20, 60_000, 50_000), 8);
    }

    /// Subflow `sf` in congestion avoidance at `cwnd` packets with ssthresh below it.
    fn setup() -> Coupled<Wvegas> {
        let mut cc = Coupled::new(Wvegas::default(), &CcConfig::default()).unwrap();
        cc.add_subflow(SubflowId(0), Instant::ZERO, MSS);
        cc.add_subflow(SubflowId(1), Instant::ZERO, MSS);
        cc
    }

    fn rtt_ack(now_ms: u64, sent_ms: u64, rtt_ms: u64) -> AckEvent {
        AckEvent {
            largest_acked_sent_time: Instant::from_nanos(sent_ms * 1_000_000),
            rtt_sample: Some(Duration::from_micros(rtt_ms * 1000 - 1)),
            ..ack(now_ms, MSS, rtt_ms)
        }
    }

    #[test]
    fn a_round_with_3_packets_of_queue_raises_alpha_to_7_and_grows_by_one() {
        let mut cc = setup();
        let views = [view(0, 20, 60), view(1, 10, 100)];
        for (id, w) in [(0u8, 20u64), (1, 10)] {
            let m = cc.members.get_mut(SubflowId(id));
            m.window.set_cwnd(w * MSS);
            m.window.set_ssthresh(5 * MSS);
            m.state.base_rtt_us = 50_000;
        }
        // The other subflow has a rate and samples in its round.
        {
            let o = &mut cc.members.get_mut(SubflowId(1)).state;
            o.instant_rate = instant_rate(10, 100_000);
            o.sampled_rtt_us = 100_000;
            o.cnt_rtt = 1;
        }
        // Round 1: three samples of 60 ms, packets sent before the round began → no end.
        cc.members.get_mut(SubflowId(0)).state.round_begin = Instant::from_nanos(1_000_000);
        for i in 0..3 {
            cc.on_ack(SubflowId(0), &rtt_ack(100 + i, 0, 60), &views);
        }
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 20 * MSS);
        // An ACK for a packet sent after the round began ends it: 4 samples, mean 60 ms.
        cc.on_ack(SubflowId(0), &rtt_ack(110, 2, 60), &views);
        let s = cc.members.get(SubflowId(0)).state;
        assert_eq!((s.last_diff, s.alpha), (3, 7));
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 21 * MSS);
        let snap = cc.snapshot(SubflowId(0));
        let alpha = snap.extra.iter().find(|e| e.0 == "wvegas_alpha").unwrap().1;
        assert_eq!(alpha, 7.0);
    }

    #[test]
    fn slow_start_stops_once_more_than_gamma_packets_are_queued() {
        let mut cc = setup();
        let views = [view(0, 10, 60), view(1, 10, 100)];
        cc.members.get_mut(SubflowId(0)).state.base_rtt_us = 50_000;
        cc.members.get_mut(SubflowId(0)).state.round_begin = Instant::from_nanos(1_000_000);
        for i in 0..3 {
            cc.on_ack(SubflowId(0), &rtt_ack(100 + i, 0, 60), &views);
        }
        // Slow start between round ends: 10 + 3 packets.
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 13 * MSS);
        cc.on_ack(SubflowId(0), &rtt_ack(110, 2, 60), &views);
        // diff = ⌊13·10/60⌋ = 2 > γ = 1 → w = min(13, ⌊13·50/60⌋ + 1 = 11); ssthresh =
        // min(∞, 11) = 11 (mptcp_wvegas_ssthresh), then max(11, ¾·11 = 8) = 11.
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 11 * MSS);
        assert_eq!(cc.ssthresh_bytes(SubflowId(0)), Some(11 * MSS));
    }

    /// Subflow 0 at `cwnd` packets with ssthresh `ssthresh`, baseRTT 50 ms, a round that
    /// began at 1 ms.
    fn at(cwnd: u64, ssthresh: u64) -> Coupled<Wvegas> {
        let mut cc = setup();
        let m = cc.members.get_mut(SubflowId(0));
        m.window.set_cwnd(cwnd * MSS);
        m.window.set_ssthresh(ssthresh * MSS);
        m.state.base_rtt_us = 50_000;
        m.state.round_begin = Instant::from_nanos(1_000_000);
        cc
    }

    #[test]
    fn a_round_that_ends_at_ssthresh_grows_in_congestion_avoidance() {
        // The kernel's round-end test is tcp_in_slow_start (cwnd < ssthresh): at cwnd =
        // ssthresh = 10 with no queue (rtt = baseRTT, diff 0 < α 2) the round adds one
        // packet; ssthresh = max(10, ¾·11) = 10. (With cwnd ≤ ssthresh the round took the
        // slow-start branch, which cannot pass ssthresh: the window stayed at 10 for good.)
        let mut cc = at(10, 10);
        let views = [view(0, 10, 50), view(1, 10, 100)];
        for i in 0..3 {
            cc.on_ack(SubflowId(0), &rtt_ack(100 + i, 0, 50), &views);
        }
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 10 * MSS);
        cc.on_ack(SubflowId(0), &rtt_ack(110, 2, 50), &views);
        assert_eq!(cc.members.get(SubflowId(0)).state.last_diff, 0);
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 11 * MSS);
        assert_eq!(cc.ssthresh_bytes(SubflowId(0)), Some(10 * MSS));
    }

    #[test]
    fn disorder_hands_the_window_to_reno_and_open_again_resets_alpha_weight_and_round() {
        let mut cc = at(2, 2);
        let views = [view(0, 2, 50), view(1, 10, 100)];
        {
            let s = &mut cc.members.get_mut(SubflowId(0)).state;
            s.alpha = 7;
            s.weight = 1 << 15;
            s.cnt_rtt = 5;
            s.sampled_rtt_us = 250_000;
        }
        // An ACK of 2 packets while a hole is open (TCP_CA_Disorder): wVegas is off and Reno
        // grows the window, +1 after cwnd = 2 acknowledged packets; between round ends an
        // enabled wVegas would have held it at 2.
        let disordered = AckEvent {
            disorder: true,
            acked_bytes: 2 * MSS,
            ..rtt_ack(100, 0, 50)
        };
        cc.on_ack(SubflowId(0), &disordered, &views);
        assert!(!cc.members.get(SubflowId(0)).state.doing);
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 3 * MSS);
        // Back to Open on the next in-order ACK (wvegas_enable): α = 2, weight = 1, the
        // round restarts now with no samples, so this ACK ends no round.
        cc.on_ack(SubflowId(0), &rtt_ack(120, 110, 50), &views);
        let s = cc.members.get(SubflowId(0)).state;
        assert!(s.doing);
        assert_eq!((s.alpha, s.weight), (2, 1 << WVEGAS_SCALE));
        assert_eq!(s.round_begin, Instant::from_nanos(120_000_000));
        assert_eq!((s.cnt_rtt, s.sampled_rtt_us), (0, 0));
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 3 * MSS);
    }

    #[test]
    fn bad_option_is_rejected() {
        let mut cfg = CcConfig::default();
        cfg.options.insert("total_alpha".into(), "0.5".into());
        assert!(build(&cfg).is_err());
    }
}
