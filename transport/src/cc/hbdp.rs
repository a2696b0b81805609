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
//!   loss:             w ← (1 − β)·w
//! ```
//!
//! # Choices where the paper is silent or inconsistent
//! * Eq. 14 reduces to ρ_r = Th_r / mean(Th) (ρ_max and ρ_min are Th_max/Th_avg and
//!   Th_min/Th_avg, and the line through them is Th_r/Th_avg).
//! * Eq. 19 as printed is not what eqs. 5, 16 and 17 give; option `delta_form=printed|derived`
//!   (default `derived`: the printed form mixes a max over paths of a ¼ power into a per-path
//!   term and is not dimensionally consistent).
//! * Not given, proposed here (options): `diff_min`=2 pkts, `alpha_max`=4, `alpha_min`=0.5,
//!   `fhat_min`=0.8, `fhat_max`=1.25, `beta`=0.2 (CUBIC's original constant, also used for the
//!   window cut), `cubic_c`=0.4; p_r = packets lost / packets sent over the last 10 round trips
//!   (floor 1e-6); diff_max = ∞ before the first loss (so f = α_max in the logarithmic
//!   phase); α = α_min whenever diff_max ≤ diff_min.
//! * Fig. 4 multiplies both thresholds by F̂ in either case while the prose says a flow above
//!   its share (F̂ > F̂_max, more queueing than expected) *decreases* them; multiplying by
//!   F̂ > 1 would increase them. Option `fhat_rule=printed|inverse`, default `inverse`
//!   (scale by 1/F̂, the prose's direction). The scaled thresholds are clamped to 1/16..16×
//!   their configured values so that "works continuously" cannot run away.
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
}

/// How the fairness index F̂ scales the α thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FhatRule {
    /// Fig. 4: multiply by F̂.
    Printed,
    /// The prose's direction: divide by F̂ (a flow above its share slows down).
    Inverse,
}

/// Packets queued at the bottleneck, Vegas' diff = (w/baseRTT − w/RTT)·baseRTT.
pub fn queue_diff(w_pkts: f64, base_rtt_s: f64, rtt_s: f64) -> f64 {
    if base_rtt_s <= 0.0 || rtt_s <= 0.0 {
        return 0.0;
    }
    ((w_pkts / base_rtt_s - w_pkts / rtt_s) * base_rtt_s).max(0.0)
}

/// (c1, c2) of the logarithmic phase for Δ = diff_max − diff_min.
pub fn log_phase_constants(diff_min: f64, diff_max: f64, alpha_max: f64, alpha_min: f64) -> (f64, f64) {
    let span = diff_max - diff_min;
    let denom = alpha_max - alpha_min;
    (span * alpha_max * alpha_min / denom, span * alpha_min / denom - diff_min)
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
    }
}

/// The fairness-threshold rule (logarithmic phase): the factor by which α_max and α_min are
/// scaled, 1 inside [F̂_min, F̂_max] or when F̂ is undefined.
pub fn threshold_scale(fhat: Option<f64>, p: &HbdpParams) -> f64 {
    match fhat {
        Some(f) if f > 0.0 && f.is_finite() && (f < p.fhat_min || f > p.fhat_max) => match p.fhat_rule {
            FhatRule::Printed => f,
            FhatRule::Inverse => 1.0 / f,
        },
        _ => 1.0,
    }
}

#[cfg(test)]
mod math_tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn a13_log_phase_constants_and_f() {
        let (c1, c2) = log_phase_constants(2.0, 20.0, 4.0, 0.5);
        assert!(close(c1, 10.286, 1e-3) && close(c2, 0.571, 1e-3), "{c1} {c2}");
        for (d, want) in [(5.0, 1.846), (10.0, 0.973), (20.0, 0.5)] {
            let (a, ph) = increment(d, 100.0, 2.0, Some(20.0), 4.0, 0.5);
            assert!(close(a, want, 1e-3) && ph == GrowthPhase::Logarithmic, "f({d}) = {a}");
        }
        // diff = diff_min is still the multiplicative phase; c1/(c2+2) = α_max at the edge.
        assert!(close(c1 / (c2 + 2.0), 4.0, 1e-12));
    }

    #[test]
    fn a13_multiplicative_phase_and_proposed_edges() {
        let (a, ph) = increment(1.0, 100.0, 2.0, Some(20.0), 4.0, 0.5);
        assert!(close(a, 5.0, 1e-12) && ph == GrowthPhase::Multiplicative);
        assert_eq!(increment(5.0, 100.0, 2.0, None, 4.0, 0.5).0, 4.0);
        assert_eq!(increment(5.0, 100.0, 2.0, Some(1.5), 4.0, 0.5).0, 0.5);
    }

    #[test]
    fn a13_load_balancing() {
        let rho = load_balancing(&[223.0, 1075.0]);
        assert!(close(rho[0], 0.344, 1e-3) && close(rho[1], 1.656, 1e-3), "{rho:?}");
        // Th from loss and RTT: the seed's paths (p 0.001, RTT 0.2005 s) → 223 pkt/s.
        assert!(close(expected_throughput(0.001, 0.2005), 223.0, 0.1));
        assert!(close(expected_throughput(0.003, 0.02402), 1075.0, 0.1));
    }

    #[test]
    fn a13_printed_delta() {
        let paths = [(50.0, 0.2005), (200.0, 0.02402)];
        let rho = load_balancing(&[223.0, 1075.0]);
        let d0 = delta(DeltaForm::Printed, 0, &paths, rho[0], 1.0, 0.2, 0.4);
        let d1 = delta(DeltaForm::Printed, 1, &paths, rho[1], 1.0, 0.2, 0.4);
        assert!(close(d0, 0.073, 1e-3) && close(d1, 0.242, 1e-3), "{d0} {d1}");
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
        assert!(close(w_cubic / 0.2005, sum, 1e-6 * sum), "{} vs {sum}", w_cubic / 0.2005);
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
}
