//! HBDP scheme (Chung & Oh): a coupled, loss- and delay-based window control for high
//! bandwidth-delay-product paths. The increment per ACK depends on how full the bottleneck
//! queue looks (`diff`, as in TCP Vegas), is shifted between paths by their expected
//! throughput (ρ), and is capped in the logarithmic phase to stay friendly to one CUBIC flow
//! (δ).
//!
//! # Model (windows in packets, times in seconds)
//! ```text
//!   per ACK, congestion avoidance:  Δw_r = ρ_r · α_r / w_r · (δ_r < 1 and log phase ? δ_r : 1)
//!   queue estimate:   diff = (w/baseRTT − w/RTT) · baseRTT          (packets queued)
//!                     diff_max = diff at the last loss
//!   increment α_r = f(diff):
//!     multiplicative phase, diff ≤ diff_min:  √(w/4)
//!     logarithmic phase, otherwise:            c1 / (c2 + diff)
//!       c1 = Δ·α_max·α_min/(α_max − α_min),  c2 = Δ·α_min/(α_max − α_min) − diff_min,
//!       Δ = diff_max − diff_min               (α_max at diff_min, α_min at diff_max)
//!   fairness thresholds (logarithmic phase, once per round trip):
//!     F̂ = Δdiff/Δw over the round; outside [F̂_min, F̂_max] → α_max, α_min scaled by F̂
//!   load balancing:   Th_r = √(2/p_r)/RTT_r,  ρ_r = Th_r / mean_k(Th_k)
//!   CUBIC friendliness, K_r = C(4−β)RTT_r³/(4β), S = Σ_k ŵ_k/RTT_k:
//!     printed (eq. 19):  δ_r = ŵ_r² · max_k K_k^{1/4} / (ρ_r α_r β S^{4/3})
//!     re-derived:        δ_r = ŵ_r² · K_r^{1/3} / (ρ_r α_r β (RTT_r·S)^{4/3})
//!     re-derived with the decrease applied (β·ŵ per loss in eq. 15):
//!                        δ_r = β · ŵ_r² · K_r^{1/3} / (ρ_r α_r (RTT_r·S)^{4/3})
//!   loss:             w ← (1 − β)·w
//! ```
//!
//! # Choices where the paper is silent or inconsistent
//! * Eq. 14 reduces to ρ_r = Th_r / mean(Th) (ρ_max and ρ_min are Th_max/Th_avg and
//!   Th_min/Th_avg, and the line through them is Th_r/Th_avg).
//! * Eq. 19 as printed is not what eqs. 5, 16 and 17 give; option
//!   `delta_form=printed|derived|decrease` (default `derived`: the printed form mixes a max
//!   over paths of a ¼ power into a per-path term and is not dimensionally consistent).
//!   Eq. 15 balances the increase against a decrease of ŵ/β per loss, while the scheme cuts
//!   β·ŵ (Fig. 2: W_m → W_m(1 − β)); `derived` keeps eqs. 15–16 as printed, `decrease`
//!   re-derives with β·ŵ, which multiplies δ by β² (1/25 at β = 0.2).
//! * Not given, proposed here (options): `diff_min`=2 pkts, `alpha_max`=4, `alpha_min`=0.5,
//!   `fhat_min`=0.8, `fhat_max`=1.25, `beta`=0.2 (CUBIC's original constant, also used for the
//!   window cut), `cubic_c`=0.4; p_r = packets lost / packets sent over the last 10 round trips
//!   (floor 1e-6); diff_max = ∞ before the first loss (so f = α_max in the logarithmic
//!   phase); α = α_min whenever diff_max ≤ diff_min.
//! * Fig. 4 multiplies both thresholds by F̂ in either case while the prose says a flow above
//!   its share (F̂ > F̂_max, more queueing than expected) *decreases* them; multiplying by
//!   F̂ > 1 would increase them. Option `fhat_rule=printed|inverse|off`, default `inverse`
//!   (scale by 1/F̂, the prose's direction). The scaled thresholds are clamped to 1/16..16×
//!   their configured values so that "works continuously" cannot run away.
//! * With one subflow (or one with an RTT sample) ρ = 1 and δ is not applied: the scheme is
//!   then its own single-path base (δ exists to share with *other* flows' CUBIC).
//! * RTT in `diff` is the smallest RTT sample of the last round trip (as Vegas does, which
//!   filters ACK-timing noise); baseRTT is the smallest sample seen.
//! * ŵ in δ is the current window; δ applies only in the logarithmic phase (as the paper
//!   says) and only when it is below 1.
//!
//! # Source
//! K. Chung, J. Oh, "An Efficient MPTCP-Based Congestion Control Scheme for HBDP Networks"
//! (eqs. 9-19, Figs. 1 and 4). MPCubic: T. Le, C. Hong, S. Lee, "MPCubic: an extended Cubic
//! TCP for multiple paths over high bandwidth-delay networks", ICTC 2011.
//! Page: `docs/algorithms/hbdp.md`.

/// Proposed constants (the paper gives none); all are options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HbdpParams {
    /// Queue estimate (packets) below which the multiplicative phase runs.
    pub diff_min: f64,
    pub alpha_max: f64,
    pub alpha_min: f64,
    pub fhat_min: f64,
    pub fhat_max: f64,
    /// Multiplicative decrease factor: w ← (1 − β)·w on loss; also CUBIC's β in δ.
    pub beta: f64,
    /// CUBIC's C in δ.
    pub cubic_c: f64,
    pub delta_form: DeltaForm,
    pub fhat_rule: FhatRule,
}

impl Default for HbdpParams {
    fn default() -> Self {
        HbdpParams {
            diff_min: 2.0,
            alpha_max: 4.0,
            alpha_min: 0.5,
            fhat_min: 0.8,
            fhat_max: 1.25,
            beta: 0.2,
            cubic_c: 0.4,
            delta_form: DeltaForm::Derived,
            fhat_rule: FhatRule::Inverse,
        }
    }
}

/// Which δ_r formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeltaForm {
    /// Eq. 19 as printed.
    Printed,
    /// Re-derived from eqs. 5, 16 and 17.
    Derived,
    /// Re-derived from eqs. 5 and 17 with eq. 15 balancing the decrease the scheme applies
    /// (β·ŵ per loss) instead of the printed ŵ/β: `Derived` × β².
    Decrease,
}

/// How the fairness index F̂ scales the α thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FhatRule {
    /// Fig. 4: multiply by F̂.
    Printed,
    /// The prose's direction: divide by F̂ (a flow above its share slows down).
    Inverse,
    /// No fairness rule: α_max and α_min stay as configured.
    Off,
}

/// Packets queued at the bottleneck, Vegas' diff = (w/baseRTT − w/RTT)·baseRTT.
pub fn queue_diff(w_pkts: f64, base_rtt_s: f64, rtt_s: f64) -> f64 {
    if base_rtt_s <= 0.0 || rtt_s <= 0.0 {
        return 0.0;
    }
    ((w_pkts / base_rtt_s - w_pkts / rtt_s) * base_rtt_s).max(0.0)
}

/// (c1, c2) of the logarithmic phase for Δ = diff_max − diff_min.
pub fn log_phase_constants(
    diff_min: f64,
    diff_max: f64,
    alpha_max: f64,
    alpha_min: f64,
) -> (f64, f64) {
    let span = diff_max - diff_min;
    let denom = alpha_max - alpha_min;
    (
        span * alpha_max * alpha_min / denom,
        span * alpha_min / denom - diff_min,
    )
}

/// Which growth phase a diff falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrowthPhase {
    Multiplicative,
    Logarithmic,
}

/// α_r = f(diff) and the phase. `diff_max` = None before the first loss (read as ∞).
pub fn increment(
    diff: f64,
    w_pkts: f64,
    diff_min: f64,
    diff_max: Option<f64>,
    alpha_max: f64,
    alpha_min: f64,
) -> (f64, GrowthPhase) {
    if diff <= diff_min {
        return ((w_pkts / 4.0).max(0.0).sqrt(), GrowthPhase::Multiplicative);
    }
    let alpha = match diff_max {
        // Δ → ∞: c1/(c2 + diff) → α_max.
        None => alpha_max,
        Some(dmax) if dmax <= diff_min || alpha_max <= alpha_min => alpha_min,
        Some(dmax) => {
            let (c1, c2) = log_phase_constants(diff_min, dmax, alpha_max, alpha_min);
            c1 / (c2 + diff)
        }
    };
    (alpha, GrowthPhase::Logarithmic)
}

/// Expected throughput of a path, packets/s: √(2/p)/RTT.
pub fn expected_throughput(loss_rate: f64, rtt_s: f64) -> f64 {
    (2.0 / loss_rate.max(1e-6)).sqrt() / rtt_s.max(1e-6)
}

/// ρ_r = Th_r / mean(Th) for every path (eq. 14 collapsed); all 1 if the mean is 0.
pub fn load_balancing(th: &[f64]) -> Vec<f64> {
    let mean = th.iter().sum::<f64>() / th.len().max(1) as f64;
    th.iter()
        .map(|t| if mean > 0.0 { t / mean } else { 1.0 })
        .collect()
}

/// K = C(4−β)RTT³/(4β) of CUBIC's average window (eq. 17 without p).
fn cubic_k(c: f64, beta: f64, rtt_s: f64) -> f64 {
    c * (4.0 - beta) * rtt_s.powi(3) / (4.0 * beta)
}

/// δ_r for path `r` given every path's (ŵ packets, RTT s), ρ_r and α_r.
pub fn delta(
    form: DeltaForm,
    r: usize,
    paths: &[(f64, f64)],
    rho_r: f64,
    alpha_r: f64,
    beta: f64,
    c: f64,
) -> f64 {
    let sum: f64 = paths
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|(w, rtt)| w / rtt)
        .sum();
    let (w_r, rtt_r) = paths[r];
    let denom_common = rho_r * alpha_r * beta;
    if sum <= 0.0 || denom_common <= 0.0 {
        return 1.0;
    }
    match form {
        DeltaForm::Printed => {
            let max_k = paths
                .iter()
                .map(|p| cubic_k(c, beta, p.1).powf(0.25))
                .fold(0.0, f64::max);
            w_r * w_r * max_k / (denom_common * sum.powf(4.0 / 3.0))
        }
        DeltaForm::Derived => {
            w_r * w_r * cubic_k(c, beta, rtt_r).powf(1.0 / 3.0)
                / (denom_common * (rtt_r * sum).powf(4.0 / 3.0))
        }
        DeltaForm::Decrease => {
            beta * w_r * w_r * cubic_k(c, beta, rtt_r).powf(1.0 / 3.0)
                / (rho_r * alpha_r * (rtt_r * sum).powf(4.0 / 3.0))
        }
    }
}

/// The fairness-threshold rule (logarithmic phase): the factor by which α_max and α_min are
/// scaled, 1 inside [F̂_min, F̂_max] or when F̂ is undefined.
pub fn threshold_scale(fhat: Option<f64>, p: &HbdpParams) -> f64 {
    match fhat {
        Some(f) if f > 0.0 && f.is_finite() && (f < p.fhat_min || f > p.fhat_max) => {
            match p.fhat_rule {
                FhatRule::Printed => f,
                FhatRule::Inverse => 1.0 / f,
                FhatRule::Off => 1.0,
            }
        }
        _ => 1.0,
    }
}

// ---- the controller --------------------------------------------------------------------

use std::collections::VecDeque;
use std::time::Duration;

use super::coupled::{Coupled, CoupledAlgo, Members, is_member, member_windows, view_of};
use super::window::{
    Increase, MIN_SSTHRESH_PKTS, Reduction, WindowRule, WindowView, per_rtt_increase,
};
use super::{
    AckEvent, CcConfig, CongestionController, CongestionEvent, RegistryError, SubflowCcView,
    SubflowInit,
};
use crate::units::{Instant, SubflowId};

/// Round trips over which p_r is estimated.
pub const LOSS_WINDOW_ROUNDS: usize = 10;
/// Floor of p_r (no loss seen yet).
pub const LOSS_RATE_FLOOR: f64 = 1e-6;
/// The fairness rule never moves a threshold further than this factor from its setting.
pub const THRESHOLD_SCALE_LIMIT: f64 = 16.0;

impl HbdpParams {
    /// Reads the options; a value outside its range is an error naming the key.
    pub fn from_cc_config(cfg: &CcConfig) -> Result<HbdpParams, RegistryError> {
        let d = HbdpParams::default();
        let bad = |key: &str, valid: &str| RegistryError::BadOption {
            key: key.to_string(),
            value: cfg.options.get(key).cloned().unwrap_or_default(),
            valid: valid.to_string(),
        };
        let positive = |key: &str, dflt: f64| -> Result<f64, RegistryError> {
            let v = cfg.number(key, dflt)?;
            if v > 0.0 {
                Ok(v)
            } else {
                Err(bad(key, "a number > 0"))
            }
        };
        let p = HbdpParams {
            diff_min: positive("diff_min", d.diff_min)?,
            alpha_max: positive("alpha_max", d.alpha_max)?,
            alpha_min: positive("alpha_min", d.alpha_min)?,
            fhat_min: positive("fhat_min", d.fhat_min)?,
            fhat_max: positive("fhat_max", d.fhat_max)?,
            beta: positive("beta", d.beta)?,
            cubic_c: positive("cubic_c", d.cubic_c)?,
            delta_form: match cfg.options.get("delta_form").map(|s| s.as_str()) {
                None | Some("derived") => DeltaForm::Derived,
                Some("printed") => DeltaForm::Printed,
                Some("decrease") => DeltaForm::Decrease,
                Some(_) => return Err(bad("delta_form", "printed|derived|decrease")),
            },
            fhat_rule: match cfg.options.get("fhat_rule").map(|s| s.as_str()) {
                None | Some("inverse") => FhatRule::Inverse,
                Some("printed") => FhatRule::Printed,
                Some("off") => FhatRule::Off,
                Some(_) => return Err(bad("fhat_rule", "printed|inverse|off")),
            },
        };
        if p.alpha_min >= p.alpha_max {
            return Err(bad("alpha_min", "a number below alpha_max"));
        }
        if p.fhat_min > p.fhat_max {
            return Err(bad("fhat_min", "a number ≤ fhat_max"));
        }
        if p.beta >= 1.0 {
            return Err(bad("beta", "a number in (0, 1)"));
        }
        Ok(p)
    }
}

/// Registry constructor (`hbdp`).
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    let params = HbdpParams::from_cc_config(cfg)?;
    Ok(Box::new(Coupled::new(Hbdp { params }, cfg)?))
}

/// Connection state: the parameters (everything else is per subflow).
pub struct Hbdp {
    pub params: HbdpParams,
}

/// Per-subflow state of HBDP.
#[derive(Clone, Debug)]
pub struct HbdpSub {
    base_rtt: Option<Duration>,
    /// Smallest RTT sample of the round in progress and of the last complete round.
    round_min_rtt: Option<Duration>,
    last_round_min_rtt: Option<Duration>,
    diff: f64,
    diff_max: Option<f64>,
    /// Thresholds after the fairness rule.
    alpha_max: f64,
    alpha_min: f64,
    /// (diff, w) at the last round start, for F̂.
    round_start_diff_w: Option<(f64, f64)>,
    /// (sent, lost) byte totals at each of the last round starts, for p_r.
    loss_marks: VecDeque<(u64, u64)>,
    loss_rate: f64,
    // Last values used, for the stats.
    alpha: f64,
    phase: GrowthPhase,
    rho: f64,
    delta: f64,
    fhat: f64,
}

/// The rule handed to the window machine: the per-ACK increase and (1 − β) on loss.
struct HbdpRule {
    per_rtt: f64,
    beta: f64,
}

impl WindowRule for HbdpRule {
    fn increase(&mut self, w: &WindowView, _ack: &AckEvent, acked_bytes: u64) -> Increase {
        per_rtt_increase(self.per_rtt, w, acked_bytes)
    }
    fn ssthresh(&mut self, w: &WindowView, _cause: Reduction) -> u64 {
        let cut = ((1.0 - self.beta) * w.cwnd_bytes as f64) as u64;
        cut.max(MIN_SSTHRESH_PKTS * w.mss_bytes)
    }
}

impl Hbdp {
    fn rule(&self, per_rtt: f64) -> HbdpRule {
        HbdpRule {
            per_rtt,
            beta: self.params.beta,
        }
    }

    /// Updates subflow `sf`'s delay and loss estimates from one ACK.
    fn observe(
        &self,
        m: &mut Members<HbdpSub>,
        sf: SubflowId,
        ack: &AckEvent,
        views: &[SubflowCcView],
    ) {
        let p = &self.params;
        let member = m.get_mut(sf);
        let w_pkts = member.window.cwnd_bytes() as f64 / member.window.config().mss_bytes as f64;
        let s = &mut member.state;
        if let Some(r) = ack.rtt_sample.filter(|r| !r.is_zero()) {
            s.base_rtt = Some(s.base_rtt.map_or(r, |b| b.min(r)));
            s.round_min_rtt = Some(s.round_min_rtt.map_or(r, |b| b.min(r)));
        }
        if ack.round_start {
            if s.round_min_rtt.is_some() {
                s.last_round_min_rtt = s.round_min_rtt.take();
            }
            if let Some(v) = view_of(views, sf) {
                s.loss_marks
                    .push_back((v.sent_bytes_total, v.lost_bytes_total));
                while s.loss_marks.len() > LOSS_WINDOW_ROUNDS + 1 {
                    s.loss_marks.pop_front();
                }
                let (sent0, lost0) = *s.loss_marks.front().expect("just pushed");
                let sent = v.sent_bytes_total.saturating_sub(sent0);
                let lost = v.lost_bytes_total.saturating_sub(lost0);
                s.loss_rate = if sent > 0 {
                    (lost as f64 / sent as f64).max(LOSS_RATE_FLOOR)
                } else {
                    LOSS_RATE_FLOOR
                };
            }
        }
        let rtt = s.last_round_min_rtt.or(s.round_min_rtt).or(ack.rtt_sample);
        if let (Some(base), Some(rtt)) = (s.base_rtt, rtt) {
            s.diff = queue_diff(w_pkts, base.as_secs_f64(), rtt.as_secs_f64());
        }
        // Fairness thresholds, once per round trip in the logarithmic phase.
        if ack.round_start {
            if let Some((d0, w0)) = s.round_start_diff_w {
                let dw = w_pkts - w0;
                s.fhat = if dw > 0.0 {
                    (s.diff - d0) / dw
                } else {
                    f64::NAN
                };
                if s.diff > p.diff_min && dw > 0.0 {
                    let k = threshold_scale(Some(s.fhat), p);
                    let lo = 1.0 / THRESHOLD_SCALE_LIMIT;
                    let hi = THRESHOLD_SCALE_LIMIT;
                    s.alpha_max = (s.alpha_max * k).clamp(p.alpha_max * lo, p.alpha_max * hi);
                    s.alpha_min = (s.alpha_min * k).clamp(p.alpha_min * lo, p.alpha_min * hi);
                }
            }
            s.round_start_diff_w = Some((s.diff, w_pkts));
        }
    }

    /// Increase per RTT (packets) of `sf` = ρ·α·(δ in the log phase, if < 1); records the
    /// parts for the stats.
    fn increase_per_rtt(
        &self,
        m: &mut Members<HbdpSub>,
        sf: SubflowId,
        views: &[SubflowCcView],
    ) -> f64 {
        let p = &self.params;
        let members = member_windows(m, views);
        let coupled = members.len() > 1 && is_member(views, sf);
        let (alpha, phase) = {
            let me = m.get(sf);
            let w = me.window.cwnd_bytes() as f64 / me.window.config().mss_bytes as f64;
            let s = &me.state;
            increment(s.diff, w, p.diff_min, s.diff_max, s.alpha_max, s.alpha_min)
        };
        let (mut rho, mut dlt) = (1.0, 1.0);
        if coupled {
            let th: Vec<f64> = members
                .iter()
                .map(|x| expected_throughput(m.get(x.id).state.loss_rate, x.srtt.as_secs_f64()))
                .collect();
            let r = members
                .iter()
                .position(|x| x.id == sf)
                .expect("sf is a member");
            rho = load_balancing(&th)[r];
            if phase == GrowthPhase::Logarithmic {
                let paths: Vec<(f64, f64)> = members
                    .iter()
                    .map(|x| (x.cwnd_pkts, x.srtt.as_secs_f64()))
                    .collect();
                dlt = delta(p.delta_form, r, &paths, rho, alpha, p.beta, p.cubic_c);
            }
        }
        let s = &mut m.get_mut(sf).state;
        s.alpha = alpha;
        s.phase = phase;
        s.rho = rho;
        s.delta = dlt;
        rho * alpha * dlt.min(1.0)
    }
}

impl CoupledAlgo for Hbdp {
    type Sub = HbdpSub;
    fn name(&self) -> &'static str {
        "hbdp"
    }
    fn new_sub(&mut self, _init: &SubflowInit) -> HbdpSub {
        HbdpSub {
            base_rtt: None,
            round_min_rtt: None,
            last_round_min_rtt: None,
            diff: 0.0,
            diff_max: None,
            alpha_max: self.params.alpha_max,
            alpha_min: self.params.alpha_min,
            round_start_diff_w: None,
            loss_marks: VecDeque::new(),
            loss_rate: LOSS_RATE_FLOOR,
            alpha: 0.0,
            phase: GrowthPhase::Multiplicative,
            rho: 1.0,
            delta: 1.0,
            fhat: f64::NAN,
        }
    }
    fn on_ack(
        &mut self,
        m: &mut Members<HbdpSub>,
        sf: SubflowId,
        ack: &AckEvent,
        views: &[SubflowCcView],
    ) {
        self.observe(m, sf, ack, views);
        let per_rtt = self.increase_per_rtt(m, sf, views);
        let mut rule = self.rule(per_rtt);
        m.get_mut(sf).window.on_ack(ack, &mut rule);
    }
    fn on_congestion(
        &mut self,
        m: &mut Members<HbdpSub>,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        _views: &[SubflowCcView],
    ) {
        let member = m.get_mut(sf);
        if matches!(ev, CongestionEvent::Loss { .. }) {
            // The queue was full: remember how full the estimate says it was.
            member.state.diff_max = Some(member.state.diff);
        }
        let mut rule = HbdpRule {
            per_rtt: 0.0,
            beta: self.params.beta,
        };
        member.window.on_congestion(now, ev, &mut rule);
    }
    fn on_recovery_exit(&mut self, m: &mut Members<HbdpSub>, sf: SubflowId, now: Instant) {
        let mut rule = self.rule(0.0);
        m.get_mut(sf).window.on_recovery_exit(now, &mut rule);
    }
    fn extra(&self, m: &Members<HbdpSub>, sf: SubflowId, out: &mut Vec<(&'static str, f64)>) {
        let s = &m.get(sf).state;
        out.push(("hbdp_diff_pkts", s.diff));
        out.push(("hbdp_diff_max_pkts", s.diff_max.unwrap_or(f64::INFINITY)));
        out.push(("hbdp_alpha", s.alpha));
        out.push((
            "hbdp_phase",
            match s.phase {
                GrowthPhase::Multiplicative => 0.0,
                GrowthPhase::Logarithmic => 1.0,
            },
        ));
        out.push(("hbdp_rho", s.rho));
        out.push(("hbdp_delta", s.delta));
        out.push(("hbdp_loss_rate", s.loss_rate));
        out.push(("hbdp_alpha_max", s.alpha_max));
        out.push(("hbdp_alpha_min", s.alpha_min));
    }
}

#[cfg(test)]
mod math_tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn log_phase_constants_and_f() {
        let (c1, c2) = log_phase_constants(2.0, 20.0, 4.0, 0.5);
        assert!(
            close(c1, 10.286, 1e-3) && close(c2, 0.571, 1e-3),
            "{c1} {c2}"
        );
        for (d, want) in [(5.0, 1.846), (10.0, 0.973), (20.0, 0.5)] {
            let (a, ph) = increment(d, 100.0, 2.0, Some(20.0), 4.0, 0.5);
            assert!(
                close(a, want, 1e-3) && ph == GrowthPhase::Logarithmic,
                "f({d}) = {a}"
            );
        }
        // diff = diff_min is still the multiplicative phase; c1/(c2+2) = α_max at the edge.
        assert!(close(c1 / (c2 + 2.0), 4.0, 1e-12));
    }

    #[test]
    fn multiplicative_phase_and_proposed_edges() {
        let (a, ph) = increment(1.0, 100.0, 2.0, Some(20.0), 4.0, 0.5);
        assert!(close(a, 5.0, 1e-12) && ph == GrowthPhase::Multiplicative);
        assert_eq!(increment(5.0, 100.0, 2.0, None, 4.0, 0.5).0, 4.0);
        assert_eq!(increment(5.0, 100.0, 2.0, Some(1.5), 4.0, 0.5).0, 0.5);
    }

    #[test]
    fn rho_from_expected_throughput() {
        let rho = load_balancing(&[223.0, 1075.0]);
        assert!(
            close(rho[0], 0.344, 1e-3) && close(rho[1], 1.656, 1e-3),
            "{rho:?}"
        );
        // Th from loss and RTT: the seed's paths (p 0.001, RTT 0.2005 s) → 223 pkt/s.
        assert!(close(expected_throughput(0.001, 0.2005), 223.0, 0.1));
        assert!(close(expected_throughput(0.003, 0.02402), 1075.0, 0.1));
    }

    #[test]
    fn printed_delta_example() {
        let paths = [(50.0, 0.2005), (200.0, 0.02402)];
        let rho = load_balancing(&[223.0, 1075.0]);
        let d0 = delta(DeltaForm::Printed, 0, &paths, rho[0], 1.0, 0.2, 0.4);
        let d1 = delta(DeltaForm::Printed, 1, &paths, rho[1], 1.0, 0.2, 0.4);
        assert!(
            close(d0, 0.073, 1e-3) && close(d1, 0.242, 1e-3),
            "{d0} {d1}"
        );
    }

    #[test]
    fn derived_delta_makes_the_path_window_equal_cubics() {
        // With δ from the derived form, eq. 16's p and eq. 17 give ŵ_cubic/RTT_r = Σ ŵ/RTT.
        let paths = [(50.0, 0.2005), (200.0, 0.02402)];
        let (rho, alpha, beta, c) = (0.344, 1.0, 0.2, 0.4);
        let d = delta(DeltaForm::Derived, 0, &paths, rho, alpha, beta, c);
        let p = d * rho * alpha * beta / (50.0f64 * 50.0);
        let w_cubic = (c * (4.0 - beta) * 0.2005f64.powi(3) / (4.0 * beta * p.powi(3))).powf(0.25);
        let sum = 50.0 / 0.2005 + 200.0 / 0.02402;
        assert!(
            close(w_cubic / 0.2005, sum, 1e-6 * sum),
            "{} vs {sum}",
            w_cubic / 0.2005
        );
    }

    #[test]
    fn decrease_form_balances_the_cut_the_scheme_applies() {
        // ŵ = (50, 100) packets, RTT = (0.1, 0.05) s, ρ = α = 1, β = 0.2, C = 0.4:
        // S = 500 + 2000 = 2500 /s, K_0 = 0.4·3.8·0.1³/0.8 = 0.0019, K_0^⅓ = 0.123856,
        // (RTT_0·S)^{4/3} = 250^{4/3} = 1574.90; derived δ_0 = 50²·0.123856/(0.2·1574.90)
        // = 0.98305 and with the decrease β·ŵ: 0.2·50²·0.123856/1574.90 = 0.039322 (× β²).
        let paths = [(50.0, 0.1), (100.0, 0.05)];
        let d = delta(DeltaForm::Derived, 0, &paths, 1.0, 1.0, 0.2, 0.4);
        let dd = delta(DeltaForm::Decrease, 0, &paths, 1.0, 1.0, 0.2, 0.4);
        assert!(close(d, 0.98305, 1e-4), "{d}");
        assert!(close(dd, 0.039322, 1e-5), "{dd}");
        // With it, eq. 15 balanced against β·ŵ (p = δρα/(βŵ²)) and eq. 17 give
        // ŵ_cubic/RTT_0 = S.
        let p = dd / (0.2 * 50.0 * 50.0);
        let w_cubic = (0.0019 / p.powi(3)).powf(0.25);
        assert!(
            close(w_cubic / 0.1, 2500.0, 1e-6 * 2500.0),
            "{}",
            w_cubic / 0.1
        );
    }

    #[test]
    fn queue_diff_and_threshold_rule() {
        // 100 pkts, base 100 ms, RTT 110 ms → 9.09 pkts queued.
        assert!(close(queue_diff(100.0, 0.1, 0.11), 9.0909, 1e-3));
        assert_eq!(queue_diff(100.0, 0.1, 0.1), 0.0);
        let mut p = HbdpParams::default();
        assert_eq!(threshold_scale(Some(1.0), &p), 1.0);
        assert_eq!(threshold_scale(None, &p), 1.0);
        assert_eq!(threshold_scale(Some(2.0), &p), 0.5);
        p.fhat_rule = FhatRule::Printed;
        assert_eq!(threshold_scale(Some(2.0), &p), 2.0);
        assert_eq!(threshold_scale(Some(0.5), &p), 0.5);
    }

    use crate::cc::coupled::testkit::{MSS, ack, grow_then_lose, view};
    use crate::cc::{CcConfig, CongestionEvent};
    use crate::units::{Instant, SubflowId};

    /// Slow start to ⌈w/0.8⌉ packets, then a loss: HBDP's 0.8 cut leaves about w packets in
    /// congestion avoidance.
    fn force_ca(cc: &mut dyn CongestionController, sf: u8, w: u64, views: &[SubflowCcView]) {
        grow_then_lose(cc, sf, (w * 5).div_ceil(4), views);
        let id = SubflowId(sf);
        assert!(
            (cc.cwnd_bytes(id) / MSS).abs_diff(w) <= 1,
            "{}",
            cc.cwnd_bytes(id) / MSS
        );
    }

    fn extra(cc: &dyn CongestionController, sf: u8, key: &str) -> f64 {
        cc.snapshot(SubflowId(sf))
            .extra
            .iter()
            .find(|e| e.0 == key)
            .unwrap_or_else(|| panic!("no {key}"))
            .1
    }

    #[test]
    fn loss_records_diff_max_and_cuts_by_beta() {
        let mut cc = build(&CcConfig::default()).unwrap();
        let views = [view(0, 100, 100)];
        cc.add_subflow(SubflowId(0), Instant::ZERO, MSS);
        force_ca(cc.as_mut(), 0, 100, &views);
        // The loss above recorded diff_max = 0 (no queue yet), which is ≤ diff_min.
        assert_eq!(extra(cc.as_ref(), 0, "hbdp_diff_max_pkts"), 0.0);
        // Base RTT 100 ms, then a round at 110 ms: 100 packets → 9.09 queued.
        let mut a = ack(1, MSS, 100);
        a.round_start = true;
        cc.on_ack(SubflowId(0), &a, &views);
        let mut a = ack(2, MSS, 110);
        a.rtt_sample = Some(Duration::from_millis(110));
        cc.on_ack(SubflowId(0), &a, &views);
        let mut a = ack(3, MSS, 110);
        a.round_start = true;
        a.rtt_sample = Some(Duration::from_millis(110));
        cc.on_ack(SubflowId(0), &a, &views);
        let diff = extra(cc.as_ref(), 0, "hbdp_diff_pkts");
        assert!((diff - 9.09).abs() < 0.05, "diff {diff}");
        assert_eq!(extra(cc.as_ref(), 0, "hbdp_phase"), 1.0);
        // diff_max ≤ diff_min → α = α_min; alone: ρ = 1, δ not applied.
        assert_eq!(extra(cc.as_ref(), 0, "hbdp_alpha"), 0.5);
        assert_eq!(extra(cc.as_ref(), 0, "hbdp_rho"), 1.0);
        assert_eq!(extra(cc.as_ref(), 0, "hbdp_delta"), 1.0);
        let w = cc.cwnd_bytes(SubflowId(0));
        let loss = CongestionEvent::Loss {
            lost_bytes: MSS,
            largest_lost_sent_time: Instant::ZERO,
            inflight_bytes: w,
        };
        cc.on_congestion(SubflowId(0), Instant::ZERO, &loss, &views);
        cc.on_recovery_exit(SubflowId(0), Instant::ZERO);
        assert!((extra(cc.as_ref(), 0, "hbdp_diff_max_pkts") - diff).abs() < 1e-9);
        let after = cc.cwnd_bytes(SubflowId(0)) as f64;
        assert!((after / w as f64 - 0.8).abs() < 0.02, "{after} / {w}");
    }

    #[test]
    fn two_subflows_get_rho_from_expected_throughput() {
        let mut cc = build(&CcConfig::default()).unwrap();
        cc.add_subflow(SubflowId(0), Instant::ZERO, MSS);
        cc.add_subflow(SubflowId(1), Instant::ZERO, MSS);
        // Equal loss estimates (the floor): Th ∝ 1/RTT → ρ = (2·1/0.05, 2·1/0.1)/(sum) = (4/3, 2/3).
        let views = [view(0, 20, 50), view(1, 10, 100)];
        force_ca(cc.as_mut(), 0, 20, &views);
        force_ca(cc.as_mut(), 1, 10, &views);
        cc.on_ack(SubflowId(0), &ack(1, MSS, 50), &views);
        cc.on_ack(SubflowId(1), &ack(1, MSS, 100), &views);
        assert!((extra(cc.as_ref(), 0, "hbdp_rho") - 4.0 / 3.0).abs() < 1e-9);
        assert!((extra(cc.as_ref(), 1, "hbdp_rho") - 2.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn options_are_validated() {
        for (k, v) in [
            ("alpha_min", "5"),
            ("beta", "1.5"),
            ("delta_form", "eq19"),
            ("fhat_rule", "sometimes"),
            ("diff_min", "-1"),
        ] {
            let mut cfg = CcConfig::default();
            cfg.options.insert(k.into(), v.into());
            let e = build(&cfg).err().expect("rejected").to_string();
            assert!(e.contains(k), "{e}");
        }
        let mut cfg = CcConfig::default();
        cfg.options.insert("delta_form".into(), "printed".into());
        cfg.options.insert("fhat_rule".into(), "off".into());
        let p = HbdpParams::from_cc_config(&cfg).unwrap();
        assert_eq!(
            (p.delta_form, p.fhat_rule),
            (DeltaForm::Printed, FhatRule::Off)
        );
    }
}
