//! MPCubic (Le, Hong, et al., "MPCubic: An extended cubic TCP for multiple paths over high
//! bandwidth-delay networks", ICTC 2011, as summarised in Chung and Oh's HBDP paper): CUBIC
//! on every subflow with the growth beyond W_max scaled down by a connection-wide δ.
//!
//! # Model (packets, seconds; r = subflow, over the members R)
//! ```text
//!   δ          = max_r (ŵ_r / RTT_r)⁴ / (Σ_r ŵ_r / RTT_r)⁴        ŵ = cwnd   (eq. 7)
//!   W_r(t)     = min(δ·C(t − K_r)³, C(t − K_r)³) + W_max,r
//!   K_r        = ∛((W_max,r − cwnd_epoch) / C)   (0 when cwnd_epoch ≥ W_max,r)
//!   CA ACK:    target = clamp(W_r(t + SRTT), cwnd, 1.5·cwnd); cwnd += (target − cwnd)/cwnd
//!              per acknowledged packet
//!   loss:      W_max = cwnd·(1 + b)/2 if cwnd < W_max (fast convergence) else cwnd;
//!              cwnd = ssthresh = max(b·cwnd, 2)
//!   RTO:       ssthresh as for a loss, cwnd = 1, W_max forgotten
//! ```
//! Below W_max (t < K) the cubic term is negative and min() picks plain CUBIC: δ only slows
//! the probing beyond the last maximum. The constants are the original CUBIC paper's:
//! C = 0.4 and β = 0.2, i.e. the multiplicative factor b = 1 − β = 0.8 (`--cc-opt beta=0.7`
//! gives RFC 9438's factor). t excludes idle time, as in CUBIC.
//!
//! With one member δ = 1, and MPCubic is CUBIC, including RFC 9438's Reno-friendly region
//! (W_est += 3(1−b)/(1+b)·acked/cwnd; cwnd = W_est while W_cubic < W_est).
//!
//! # Choices (the paper's per-path equation is dimensionally broken as printed and leaves
//! its exponent unnamed)
//! * δ from eq. 7 with ŵ = cwnd.
//! * The Reno-friendly region only with one member: with several it would let every subflow
//!   grow at Reno's pace regardless of δ, undoing the coupling.
//! * No HyStart (slow start exits at the first loss).
//!
//! Stats extras: `mpcubic_delta`, `mpcubic_w_max_pkts`, `mpcubic_k_s`. Documentation:
//! `docs/algorithms/mpcubic.md`.

use std::time::Duration;

use super::coupled::member_windows;
use super::coupled::prelude::*;
use super::window::{Increase, Reduction, WindowRule, WindowView};

/// C in packets/s³ (CUBIC).
pub const MPCUBIC_C: f64 = 0.4;
/// Multiplicative decrease factor 1 − β with the original CUBIC β = 0.2.
pub const MPCUBIC_FACTOR: f64 = 0.8;

/// δ = max(ŵ/RTT)⁴ / (Σ ŵ/RTT)⁴ (w in packets, RTT in seconds); 1 without members.
pub fn delta(w: &[f64], rtt: &[f64]) -> f64 {
    let x: Vec<f64> = w.iter().zip(rtt).map(|(w, r)| w / r).collect();
    let sum: f64 = x.iter().sum();
    if x.is_empty() || sum <= 0.0 {
        return 1.0;
    }
    let max = x.iter().cloned().fold(f64::MIN, f64::max);
    (max / sum).powi(4)
}

/// W(t) = min(δ·C(t−K)³, C(t−K)³) + W_max.
pub fn w_target(t_s: f64, k_s: f64, w_max: f64, c: f64, delta: f64) -> f64 {
    let cubic = c * (t_s - k_s).powi(3);
    (delta * cubic).min(cubic) + w_max
}

/// K = ∛((W_max − cwnd)/C), 0 when cwnd ≥ W_max.
pub fn k_seconds(w_max: f64, cwnd: f64, c: f64) -> f64 {
    if w_max > cwnd {
        ((w_max - cwnd) / c).cbrt()
    } else {
        0.0
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    start: Instant,
    k_s: f64,
    origin_pkts: f64,
    w_est_pkts: f64,
}

/// Per-subflow CUBIC state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpCubicSub {
    pub w_max_pkts: f64,
    cwnd_prior_pkts: f64,
    epoch: Option<Epoch>,
    last_sent: Option<Instant>,
    pub delta: f64,
}

impl Default for MpCubicSub {
    fn default() -> Self {
        MpCubicSub {
            w_max_pkts: 0.0,
            cwnd_prior_pkts: 0.0,
            epoch: None,
            last_sent: None,
            delta: 1.0,
        }
    }
}

/// MPCubic's connection object: the constants.
#[derive(Clone, Debug)]
pub struct MpCubic {
    pub c: f64,
    pub factor: f64,
}

impl Default for MpCubic {
    fn default() -> Self {
        MpCubic {
            c: MPCUBIC_C,
            factor: MPCUBIC_FACTOR,
        }
    }
}

struct MpCubicRule<'a> {
    sub: &'a mut MpCubicSub,
    c: f64,
    factor: f64,
    delta: f64,
    reno_friendly: bool,
    srtt: Duration,
}

impl WindowRule for MpCubicRule<'_> {
    fn increase(&mut self, w: &WindowView, ack: &AckEvent, acked_bytes: u64) -> Increase {
        let cwnd = w.cwnd_pkts();
        let s = &mut *self.sub;
        let e = *s.epoch.get_or_insert_with(|| {
            let k_s = k_seconds(s.w_max_pkts, cwnd, self.c);
            Epoch {
                start: ack.now,
                k_s,
                origin_pkts: if s.w_max_pkts > cwnd {
                    s.w_max_pkts
                } else {
                    cwnd
                },
                w_est_pkts: cwnd,
            }
        });
        let acked = w.pkts(acked_bytes);
        let t = (ack.now - e.start).as_secs_f64();
        let alpha = if e.w_est_pkts >= s.cwnd_prior_pkts {
            1.0
        } else {
            3.0 * (1.0 - self.factor) / (1.0 + self.factor)
        };
        let w_est = e.w_est_pkts + alpha * acked / cwnd;
        s.epoch = Some(Epoch {
            w_est_pkts: w_est,
            ..e
        });
        let w_now = w_target(t, e.k_s, e.origin_pkts, self.c, self.delta);
        let new_cwnd = if self.reno_friendly && w_now < w_est {
            w_est.max(cwnd)
        } else {
            let target = w_target(
                t + self.srtt.as_secs_f64(),
                e.k_s,
                e.origin_pkts,
                self.c,
                self.delta,
            )
            .clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * acked
        };
        Increase::Packets(new_cwnd - cwnd)
    }

    fn ssthresh(&mut self, w: &WindowView, cause: Reduction) -> u64 {
        let cwnd = w.cwnd_pkts();
        let s = &mut *self.sub;
        match cause {
            Reduction::FastRecovery { .. } => {
                s.w_max_pkts = if cwnd < s.w_max_pkts {
                    cwnd * (1.0 + self.factor) / 2.0
                } else {
                    cwnd
                };
            }
            Reduction::Rto { .. } => s.w_max_pkts = 0.0,
        }
        s.cwnd_prior_pkts = cwnd;
        s.epoch = None;
        (self.factor * w.cwnd_bytes as f64) as u64
    }

    fn on_sent(&mut self, _w: &WindowView, now: Instant, was_idle: bool, _idle_for: Duration) {
        let s = &mut *self.sub;
        if was_idle && let (Some(last), Some(e)) = (s.last_sent, s.epoch.as_mut()) {
            e.start = (e.start + (now - last)).min(now);
        }
        s.last_sent = Some(now);
    }
}

impl MpCubic {
    fn rule<'a>(
        &self,
        m: &Members<MpCubicSub>,
        sub: &'a mut MpCubicSub,
        sf: SubflowId,
        views: &[SubflowCcView],
    ) -> MpCubicRule<'a> {
        let ws = member_windows(m, views);
        let w: Vec<f64> = ws.iter().map(|x| x.cwnd_pkts).collect();
        let r: Vec<f64> = ws.iter().map(|x| x.srtt.as_secs_f64().max(1e-6)).collect();
        let d = delta(&w, &r);
        sub.delta = d;
        MpCubicRule {
            sub,
            c: self.c,
            factor: self.factor,
            delta: d,
            reno_friendly: ws.len() <= 1,
            srtt: super::coupled::view_of(views, sf).map_or(Duration::ZERO, |v| v.srtt),
        }
    }
}

impl CoupledAlgo for MpCubic {
    type Sub = MpCubicSub;
    fn name(&self) -> &'static str {
        "mpcubic"
    }
    fn new_sub(&mut self, _init: &SubflowInit) -> MpCubicSub {
        MpCubicSub::default()
    }

    fn on_ack(
        &mut self,
        m: &mut Members<MpCubicSub>,
        sf: SubflowId,
        ack: &AckEvent,
        views: &[SubflowCcView],
    ) {
        let mut sub = m.get(sf).state;
        let mut rule = self.rule(m, &mut sub, sf, views);
        m.get_mut(sf).window.on_ack(ack, &mut rule);
        m.get_mut(sf).state = sub;
    }

    fn on_congestion(
        &mut self,
        m: &mut Members<MpCubicSub>,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        views: &[SubflowCcView],
    ) {
        let mut sub = m.get(sf).state;
        let mut rule = self.rule(m, &mut sub, sf, views);
        m.get_mut(sf).window.on_congestion(now, ev, &mut rule);
        if matches!(ev, CongestionEvent::Rto { .. }) {
            sub.epoch = None;
        }
        m.get_mut(sf).state = sub;
    }

    fn on_sent(
        &mut self,
        m: &mut Members<MpCubicSub>,
        sf: SubflowId,
        now: Instant,
        bytes: u64,
        inflight_bytes: u64,
    ) {
        let mut sub = m.get(sf).state;
        let mut rule = MpCubicRule {
            sub: &mut sub,
            c: self.c,
            factor: self.factor,
            delta: 1.0,
            reno_friendly: false,
            srtt: Duration::ZERO,
        };
        m.get_mut(sf)
            .window
            .on_sent(now, bytes, inflight_bytes, &mut rule);
        m.get_mut(sf).state = sub;
    }

    fn extra(&self, m: &Members<MpCubicSub>, sf: SubflowId, out: &mut Vec<(&'static str, f64)>) {
        let s = &m.get(sf).state;
        out.push(("mpcubic_delta", s.delta));
        out.push(("mpcubic_w_max_pkts", s.w_max_pkts));
        if let Some(e) = s.epoch {
            out.push(("mpcubic_k_s", e.k_s));
        }
    }
}

/// Registry constructor: options `beta` (multiplicative factor in (0, 1), default 0.8) and
/// `c` (> 0, default 0.4) plus the window machine's.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    let factor = cfg.number("beta", MPCUBIC_FACTOR)?;
    if !(factor > 0.0 && factor < 1.0) {
        return Err(RegistryError::BadOption {
            key: "beta".into(),
            value: factor.to_string(),
            valid: "a multiplicative factor in (0, 1), default 0.8 (original CUBIC β = 0.2)".into(),
        });
    }
    let c = cfg.number("c", MPCUBIC_C)?;
    if c <= 0.0 {
        return Err(RegistryError::BadOption {
            key: "c".into(),
            value: c.to_string(),
            valid: "a number > 0, default 0.4".into(),
        });
    }
    Ok(Box::new(Coupled::new(MpCubic { c, factor }, cfg)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled::testkit::{MSS, ack, view};

    #[test]
    fn delta_matches_the_worked_example() {
        // ŵ = (50, 200), RTT = (200.5, 24.02) ms (≈ 0.2 and 0.024 s): δ = 0.889.
        let d = delta(&[50.0, 200.0], &[0.2005, 0.02402]);
        assert!((d - 0.889).abs() < 5e-4, "{d}");
        assert_eq!(delta(&[30.0], &[0.1]), 1.0);
        // Two equal paths: (1/2)⁴.
        assert!((delta(&[10.0, 10.0], &[0.05, 0.05]) - 0.0625).abs() < 1e-12);
    }

    #[test]
    fn with_delta_one_it_is_the_cubic_curve() {
        // W_max = 100, factor 0.7: K = 4.217 s; W at 0, 1, 2, 6 s = 70, 86.68, 95.64, 102.27.
        let k = k_seconds(100.0, 70.0, 0.4);
        assert!((k - 4.217).abs() < 5e-4);
        for (t, w) in [(0.0, 70.0), (1.0, 86.68), (2.0, 95.64), (6.0, 102.27)] {
            assert!((w_target(t, k, 100.0, 0.4, 1.0) - w).abs() < 5e-3, "t {t}");
        }
        // δ scales only the growth above W_max.
        assert_eq!(
            w_target(1.0, k, 100.0, 0.4, 0.5),
            w_target(1.0, k, 100.0, 0.4, 1.0)
        );
        let above = w_target(6.0, k, 100.0, 0.4, 0.5) - 100.0;
        assert!((above - 0.5 * 2.2667).abs() < 1e-3, "{above}");
    }

    fn run_one_subflow(cc: &mut dyn CongestionController) -> Vec<u64> {
        let id = SubflowId(0);
        cc.add_subflow(id, Instant::ZERO, MSS);
        let views = [view(0, 10, 50)];
        let mut trace = Vec::new();
        for i in 0..4000u64 {
            let now_ms = i; // one ACK of 2 packets per ms
            cc.on_ack(id, &ack(now_ms, 2 * MSS, 50), &views);
            if i % 1000 == 999 {
                let loss = CongestionEvent::Loss {
                    lost_bytes: MSS,
                    largest_lost_sent_time: Instant::ZERO,
                    inflight_bytes: cc.cwnd_bytes(id),
                };
                cc.on_congestion(id, Instant::ZERO, &loss, &views);
                cc.on_recovery_exit(id, Instant::ZERO);
            }
            trace.push(cc.cwnd_bytes(id) / MSS);
        }
        trace
    }

    #[test]
    fn one_subflow_follows_cubic() {
        // MPCubic with RFC 9438's factor against the cubic CC without HyStart, same ACKs.
        let mut cfg = CcConfig::default();
        cfg.options.insert("beta".into(), "0.7".into());
        cfg.options.insert("hystart".into(), "false".into());
        let a = run_one_subflow(build(&cfg).unwrap().as_mut());
        let b = run_one_subflow(crate::cc::cubic::build(&cfg).unwrap().as_mut());
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let tol = (*y as f64 * 0.03).max(1.0);
            assert!(
                (*x as f64 - *y as f64).abs() <= tol,
                "ack {i}: mpcubic {x} cubic {y}"
            );
        }
        assert!(*b.last().unwrap() > 100);
    }

    #[test]
    fn the_slow_subflow_gets_delta_below_one_in_its_stats() {
        let mut cc = build(&CcConfig::default()).unwrap();
        cc.add_subflow(SubflowId(0), Instant::ZERO, MSS);
        cc.add_subflow(SubflowId(1), Instant::ZERO, MSS);
        let views = [view(0, 10, 10), view(1, 10, 100)];
        cc.on_ack(SubflowId(1), &ack(1, MSS, 100), &views);
        let snap = cc.snapshot(SubflowId(1));
        let d = snap
            .extra
            .iter()
            .find(|e| e.0 == "mpcubic_delta")
            .unwrap()
            .1;
        // Computed before the ACK grew the window: x = (1000, 100) packets/s → δ = (10/11)⁴.
        assert!((d - (1000.0f64 / 1100.0).powi(4)).abs() < 1e-9, "{d}");
    }
}
