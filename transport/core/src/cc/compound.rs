//! Compound TCP (Sridharan, Tan, Bansal, Thaler, "Compound TCP: A New TCP Congestion
//! Control for High-Speed and Long Distance Networks", draft-sridharan-tcpm-ctcp-02, 2008;
//! Tan, Song, Zhang, Sridharan, "A Compound TCP approach for high-speed and long distance
//! networks", IEEE INFOCOM 2006). Uncoupled: one instance per subflow.
//!
//! # Model (packets; the window machine's cwnd is win)
//! ```text
//!   win   = cwnd + dwnd           cwnd = the loss-based (Reno) part, dwnd = the delay part
//!   CA ACK:  cwnd += 1/win per acknowledged packet; dwnd = 0 in slow start
//!   once per round in CA:  diff = win·(1 − baseRTT/RTT), RTT = the round's smallest sample
//!     diff < γ  → dwnd += max(α·win^k − 1, 0)
//!     diff ≥ γ  → dwnd  = max(dwnd − ζ·diff, 0)
//!   loss:  dwnd = max(win·(1 − β) − cwnd/2, 0), cwnd = cwnd/2   (so win' = max(win/2, cwnd/2) + …)
//!   RTO:   dwnd = 0, then Reno
//!   α = 1/8, β = 1/2, k = 0.75, ζ = 1, γ = 30 packets
//! ```
//! The delay component runs only while win > low_wnd = 38 packets (the draft: it "only
//! kicks in when cwnd is larger than some threshold, currently set to 38 packets"); option
//! `low_window`, 0 = always. baseRTT is the smallest RTT sample seen. Option `gamma_autotune=true` adds the rule of
//! the Linux CTCP module: at each loss γ += (¾·diff − γ)/2, clamped to [5, 30] packets, where
//! diff is the last round's.
//!
//! Slow start, recovery (PRR), RTO and idle restart are the base window machine's
//! (`window.rs`); during recovery the window follows PRR towards the new win.
//!
//! Stats extras: `ctcp_dwnd_pkts`, `ctcp_diff_pkts`, `ctcp_gamma_pkts`, `ctcp_base_rtt_ms`.
//! Documentation: `docs/algorithms/compound.md`.

use std::time::Duration;

use super::window::{
    Increase, LossState, Reduction, Window, WindowCc, WindowConfig, WindowRule, WindowView,
};
use super::{AckEvent, CcConfig, CongestionController, RegistryError, SubflowInit, Uncoupled};
use crate::units::Instant;

/// Constants of the draft.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompoundParams {
    pub alpha: f64,
    pub beta: f64,
    pub k: f64,
    pub zeta: f64,
    /// γ in packets.
    pub gamma: f64,
    pub gamma_autotune: bool,
    /// The delay component runs only above this window, packets (the draft's low_wnd:
    /// "currently set to 38 packets assuming 1500 byte MTU"); 0 = always.
    pub low_window_pkts: f64,
}

impl Default for CompoundParams {
    fn default() -> Self {
        CompoundParams {
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            zeta: 1.0,
            gamma: 30.0,
            gamma_autotune: false,
            low_window_pkts: 38.0,
        }
    }
}

/// Packets queued in the network: win·(1 − baseRTT/RTT).
pub fn diff_pkts(win: f64, base_rtt: Duration, rtt: Duration) -> f64 {
    win * (1.0 - base_rtt.as_secs_f64() / rtt.as_secs_f64().max(1e-9))
}

/// dwnd after one round in congestion avoidance.
pub fn dwnd_after_round(dwnd: f64, win: f64, diff: f64, p: &CompoundParams) -> f64 {
    if diff < p.gamma {
        dwnd + (p.alpha * win.powf(p.k) - 1.0).max(0.0)
    } else {
        (dwnd - p.zeta * diff).max(0.0)
    }
}

/// (cwnd, dwnd) after a loss.
pub fn after_loss(cwnd: f64, dwnd: f64, p: &CompoundParams) -> (f64, f64) {
    let win = cwnd + dwnd;
    ((cwnd / 2.0), (win * (1.0 - p.beta) - cwnd / 2.0).max(0.0))
}

/// The Linux module's γ tuning at a loss.
pub fn tuned_gamma(gamma: f64, diff: f64) -> f64 {
    (gamma + (0.75 * diff - gamma) / 2.0).clamp(5.0, 30.0)
}

/// Compound's rule and state for one subflow.
#[derive(Clone, Debug)]
pub struct CompoundRule {
    pub params: CompoundParams,
    pub dwnd_pkts: f64,
    pub base_rtt: Option<Duration>,
    round_begin: Instant,
    round_min_rtt: Option<Duration>,
    pub last_diff_pkts: f64,
}

impl CompoundRule {
    pub fn new(params: CompoundParams, now: Instant) -> CompoundRule {
        CompoundRule {
            params,
            dwnd_pkts: 0.0,
            base_rtt: None,
            round_begin: now,
            round_min_rtt: None,
            last_diff_pkts: 0.0,
        }
    }
}

impl WindowRule for CompoundRule {
    fn on_ack_start(&mut self, window: &mut Window, ack: &AckEvent) {
        if let Some(rtt) = ack.rtt_sample {
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
            self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |b| b.min(rtt)));
        }
        if ack.acked_bytes == 0 || ack.largest_acked_sent_time < self.round_begin {
            return;
        }
        // A round ended.
        self.round_begin = ack.now;
        let (Some(base), Some(rtt)) = (self.base_rtt, self.round_min_rtt.take()) else {
            return;
        };
        let v = window.view();
        if v.state != LossState::Open || v.in_slow_start() {
            self.dwnd_pkts = 0.0;
            return;
        }
        let win = v.cwnd_pkts();
        let diff = diff_pkts(win, base, rtt);
        self.last_diff_pkts = diff;
        if !ack.is_cwnd_limited && diff < self.params.gamma {
            return; // grow only while cwnd-limited
        }
        if win <= self.params.low_window_pkts {
            return; // the delay component kicks in only above low_wnd
        }
        let reno = (win - self.dwnd_pkts).max(1.0);
        let dwnd = dwnd_after_round(self.dwnd_pkts, win, diff, &self.params);
        self.dwnd_pkts = dwnd;
        window.set_cwnd(((reno + dwnd) * v.mss_bytes as f64).round() as u64);
    }

    fn increase(&mut self, w: &WindowView, _ack: &AckEvent, acked_bytes: u64) -> Increase {
        let acked_pkts = w.pkts(acked_bytes);
        Increase::Packets(acked_pkts / w.cwnd_pkts().max(1.0))
    }

    fn ssthresh(&mut self, w: &WindowView, cause: Reduction) -> u64 {
        let win = w.cwnd_pkts();
        let dwnd = self.dwnd_pkts.min(win);
        let reno = win - dwnd;
        match cause {
            Reduction::FastRecovery { .. } => {
                if self.params.gamma_autotune {
                    self.params.gamma = tuned_gamma(self.params.gamma, self.last_diff_pkts);
                }
                let (reno2, dwnd2) = after_loss(reno, dwnd, &self.params);
                self.dwnd_pkts = dwnd2;
                ((reno2 + dwnd2) * w.mss_bytes as f64) as u64
            }
            Reduction::Rto { .. } => {
                self.dwnd_pkts = 0.0;
                super::window::reno_ssthresh(w)
            }
        }
    }

    fn on_rto(&mut self, _w: &WindowView, _now: Instant, _reduced: bool) {
        self.dwnd_pkts = 0.0;
        self.round_min_rtt = None;
    }

    fn extra(&self, _w: &WindowView, out: &mut Vec<(&'static str, f64)>) {
        out.push(("ctcp_dwnd_pkts", self.dwnd_pkts));
        out.push(("ctcp_diff_pkts", self.last_diff_pkts));
        out.push(("ctcp_gamma_pkts", self.params.gamma));
        if let Some(b) = self.base_rtt {
            out.push(("ctcp_base_rtt_ms", b.as_secs_f64() * 1e3));
        }
    }
}

/// Compound state of one subflow.
pub type Compound = WindowCc<CompoundRule>;

fn params_from(cfg: &CcConfig) -> Result<CompoundParams, RegistryError> {
    let d = CompoundParams::default();
    let gamma = cfg.number("gamma", d.gamma)?;
    if gamma <= 0.0 {
        return Err(RegistryError::BadOption {
            key: "gamma".into(),
            value: gamma.to_string(),
            valid: "packets > 0 (default 30)".into(),
        });
    }
    let low_window_pkts = cfg.number("low_window", d.low_window_pkts)?;
    if low_window_pkts < 0.0 {
        return Err(RegistryError::BadOption {
            key: "low_window".into(),
            value: low_window_pkts.to_string(),
            valid: "packets ≥ 0 (default 38; 0 = the delay component at every window)".into(),
        });
    }
    Ok(CompoundParams {
        gamma,
        gamma_autotune: cfg.flag("gamma_autotune", d.gamma_autotune)?,
        low_window_pkts,
        ..d
    })
}

/// Per-subflow factory; options were validated by [`build`].
pub fn from_config(cfg: &CcConfig, init: &SubflowInit) -> Compound {
    let window = WindowConfig::from_cc_config(cfg, init.mss_bytes).unwrap_or(WindowConfig {
        mss_bytes: init.mss_bytes,
        ..WindowConfig::default()
    });
    let params = params_from(cfg).unwrap_or_default();
    WindowCc::new(window, CompoundRule::new(params, init.now))
}

/// Registry constructor: options `gamma` (packets), `gamma_autotune`, `low_window`
/// (packets) plus the window machine's.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    WindowConfig::from_cc_config(cfg, cfg.mss_bytes)?;
    params_from(cfg)?;
    Ok(Box::new(Uncoupled::new("compound", cfg, from_config)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled::testkit::MSS;
    use crate::cc::{CongestionEvent, SubflowCc};
    use crate::units::SubflowId;

    #[test]
    fn worked_example_round_and_loss() {
        let p = CompoundParams::default();
        let diff = diff_pkts(
            100.0,
            Duration::from_millis(100),
            Duration::from_millis(110),
        );
        assert!((diff - 9.09).abs() < 5e-3, "{diff}");
        let d = dwnd_after_round(0.0, 100.0, diff, &p);
        assert!((d - 2.95).abs() < 5e-3, "{d}");
        assert_eq!(after_loss(60.0, 40.0, &p), (30.0, 20.0));
        // A large queue shrinks dwnd by ζ·diff.
        assert_eq!(dwnd_after_round(40.0, 100.0, 35.0, &p), 5.0);
        assert_eq!(tuned_gamma(30.0, 10.0), 18.75);
        assert_eq!(tuned_gamma(6.0, 0.0), 5.0);
    }

    fn ack(now_ms: u64, sent_ms: u64, rtt_ms: u64) -> AckEvent {
        AckEvent {
            now: Instant::from_nanos(now_ms * 1_000_000),
            acked_bytes: MSS,
            rtt_sample: Some(Duration::from_millis(rtt_ms)),
            srtt: Duration::from_millis(rtt_ms),
            min_rtt: Duration::from_millis(rtt_ms),
            is_cwnd_limited: true,
            largest_acked_sent_time: Instant::from_nanos(sent_ms * 1_000_000),
            mss: MSS,
            ..AckEvent::default()
        }
    }

    fn compound_and_reno_in_ca() -> (Compound, crate::cc::reno::Reno) {
        let cfg = CcConfig::default();
        let init = SubflowInit {
            id: SubflowId(0),
            now: Instant::ZERO,
            mss_bytes: MSS,
            seed: 1,
        };
        let mut c = from_config(&cfg, &init);
        let mut r = crate::cc::reno::from_config(&cfg, &init);
        for cc in [&mut c as &mut dyn SubflowCc, &mut r] {
            let loss = CongestionEvent::Loss {
                lost_bytes: MSS,
                largest_lost_sent_time: Instant::ZERO,
                inflight_bytes: 100 * MSS,
            };
            cc.on_congestion(Instant::ZERO, &loss);
            cc.on_recovery_exit(Instant::ZERO);
        }
        // Congestion avoidance at 80 packets.
        for w in [&mut c.window, &mut r.window] {
            w.set_cwnd(80 * MSS);
            w.set_ssthresh(80 * MSS);
        }
        (c, r)
    }

    #[test]
    fn below_the_38_packet_low_window_the_delay_component_stays_off() {
        // win 30 ≤ low_wnd 38, rounds without queueing: the draft's dwnd would grow by
        // α·30^0.75 − 1 = 0.60 per round; it stays 0 and Compound is Reno.
        let (mut c, _) = compound_and_reno_in_ca();
        c.window.set_cwnd(30 * MSS);
        c.window.set_ssthresh(30 * MSS);
        for i in 0..5u64 {
            c.on_ack(&ack(10 + 2 * i, 10 + 2 * i - 1, 50));
        }
        assert_eq!(c.rule.dwnd_pkts, 0.0);
        // low_window = 0: the same rounds grow dwnd (5 rounds × about 0.6).
        let mut cfg = CcConfig::default();
        cfg.options.insert("low_window".into(), "0".into());
        let init = SubflowInit {
            id: SubflowId(0),
            now: Instant::ZERO,
            mss_bytes: MSS,
            seed: 1,
        };
        let mut c = from_config(&cfg, &init);
        c.window.set_cwnd(30 * MSS);
        c.window.set_ssthresh(30 * MSS);
        for i in 0..5u64 {
            c.on_ack(&ack(10 + 2 * i, 10 + 2 * i - 1, 50));
        }
        assert!(c.rule.dwnd_pkts > 2.0, "{}", c.rule.dwnd_pkts);
    }

    #[test]
    fn with_a_standing_queue_above_gamma_it_is_reno() {
        let (mut c, mut r) = compound_and_reno_in_ca();
        // baseRTT 10 ms from one early sample, then every round (10 ACKs) sees 100 ms:
        // diff = 0.9·win ≥ 72 packets, far above γ, so dwnd stays 0.
        c.on_ack(&ack(1, 0, 10));
        r.on_ack(&ack(1, 0, 10));
        for i in 0..3000u64 {
            let sent = if i % 10 == 0 { 10 + i - 1 } else { 0 };
            let a = ack(10 + i, sent, 100);
            c.on_ack(&a);
            r.on_ack(&a);
        }
        assert_eq!(c.rule.dwnd_pkts, 0.0);
        let (cw, rw) = (c.cwnd_bytes() / MSS, r.cwnd_bytes() / MSS);
        assert!(
            cw == rw || cw + 1 == rw || cw == rw + 1,
            "compound {cw} reno {rw}"
        );
        assert!(rw > 100);
    }

    #[test]
    fn without_queueing_dwnd_grows_every_round_and_a_loss_splits_it() {
        let (mut c, _) = compound_and_reno_in_ca();
        let start = c.cwnd_bytes() / MSS;
        // Every ACK ends a round (packets sent after the previous ACK), RTT = baseRTT.
        for i in 0..20u64 {
            c.on_ack(&ack(10 + 2 * i, 10 + 2 * i - 1, 50));
        }
        assert!(c.rule.dwnd_pkts > 20.0, "{}", c.rule.dwnd_pkts);
        let win = c.cwnd_bytes() as f64 / MSS as f64;
        assert!(win > start as f64 + 20.0);
        let dwnd = c.rule.dwnd_pkts;
        let loss = CongestionEvent::Loss {
            lost_bytes: MSS,
            largest_lost_sent_time: Instant::ZERO,
            inflight_bytes: c.cwnd_bytes(),
        };
        c.on_congestion(Instant::ZERO, &loss);
        c.on_recovery_exit(Instant::ZERO);
        let (reno2, dwnd2) = after_loss(win - dwnd, dwnd, &CompoundParams::default());
        assert!((c.rule.dwnd_pkts - dwnd2).abs() < 1e-9);
        let expect = ((reno2 + dwnd2) * MSS as f64) as u64;
        assert!(
            c.cwnd_bytes().abs_diff(expect) <= MSS,
            "{} vs {expect}",
            c.cwnd_bytes()
        );
    }
}
