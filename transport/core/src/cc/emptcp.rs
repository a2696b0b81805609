//! EMPTCP ("equal-bandwidth" MPTCP, here the semi-coupled algorithm): every subflow's
//! additive increase is its share of the connection's rate, so the connection as a whole
//! grows like one Reno flow.
//!
//! # Model (windows in packets, RTTs in seconds)
//! ```text
//!   congestion avoidance, per RTT of subflow l:  ΔW_l = W_l / (τ_l · Σ_j W_j/τ_j)
//!                          i.e. per ACK:         ΔW_l = 1 / (τ_l · Σ_j W_j/τ_j)
//!   loss:                                        W_l ← W_l / 2
//!   slow start:                                  Reno (W_l += acked)
//! ```
//! With one subflow ΔW = 1 per RTT: Reno. Summed over subflows with equal RTTs the increase
//! is one packet per RTT, which is why a connection never takes more than one Reno flow at
//! a shared bottleneck.
//!
//! # Choices where the paper is silent
//! * τ is the smoothed RTT; subflows without an RTT sample are left out of Σ.
//! * The per-ACK form is exact for any number of acked packets: increase × acked/MSS.
//!
//! # Source
//! A. Singhal, X. Wang, Z. Wang, H. Che, H. Jiang, "Hybrid Multipath Congestion Control"
//! (eq. 1; the paper takes semi-coupled from Peng et al., "Multipath TCP: Analysis, Design,
//! and Implementation", IEEE/ACM ToN 2016, as its EMPTCP). Page: `docs/algorithms/hmptcp.md`.

pub use super::per_rtt::WindowRtt;
use super::per_rtt::{PerRttCc, PerRttRule};
use super::{CcConfig, CongestionController, RegistryError};

/// The worked example of `docs/algorithms/hmptcp.md`: W = (20, 10) packets, τ = (50, 100) ms
/// (unit tests of EMPTCP and H-MPTCP).
#[cfg(test)]
pub(crate) const EXAMPLE_W_20_10_TAU_50_100: [WindowRtt; 2] = [
    WindowRtt {
        w_pkts: 20.0,
        rtt_s: 0.05,
    },
    WindowRtt {
        w_pkts: 10.0,
        rtt_s: 0.1,
    },
];

/// Σ_j W_j/τ_j over subflows with a positive RTT, packets per second.
pub fn total_rate_pkts_per_s(all: &[WindowRtt]) -> f64 {
    all.iter()
        .filter(|s| s.rtt_s > 0.0)
        .map(|s| s.w_pkts / s.rtt_s)
        .sum()
}

/// EMPTCP's congestion-avoidance increase of subflow `own` per RTT, packets:
/// W_l / (τ_l · Σ_j W_j/τ_j). 1 (Reno) when the sum is empty.
pub fn increase_per_rtt(own: WindowRtt, all: &[WindowRtt]) -> f64 {
    let total = total_rate_pkts_per_s(all);
    if total <= 0.0 || own.rtt_s <= 0.0 {
        return 1.0;
    }
    own.w_pkts / (own.rtt_s * total)
}

/// EMPTCP as a rule of the family's machine (`cc/per_rtt.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct EmptcpRule;

impl PerRttRule for EmptcpRule {
    type Choice = ();
    fn name(&self) -> &'static str {
        "emptcp"
    }
    fn increase_per_rtt(&self, own: WindowRtt, all: &[WindowRtt], _weight: f64) -> (f64, ()) {
        (increase_per_rtt(own, all), ())
    }
}

/// EMPTCP's controller.
pub type Emptcp = PerRttCc<EmptcpRule>;

/// Registry constructor of `emptcp`.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    Ok(Box::new(Emptcp::new(EmptcpRule, cfg)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn example_w_20_10_tau_50_100() {
        let all = EXAMPLE_W_20_10_TAU_50_100;
        assert!(close(increase_per_rtt(all[0], &all), 0.8));
        assert!(close(increase_per_rtt(all[1], &all), 0.2));
    }

    #[test]
    fn one_subflow_is_reno_and_equal_rtts_sum_to_one() {
        let one = [WindowRtt {
            w_pkts: 37.0,
            rtt_s: 0.03,
        }];
        assert!(close(increase_per_rtt(one[0], &one), 1.0));
        let all = [
            WindowRtt {
                w_pkts: 30.0,
                rtt_s: 0.04,
            },
            WindowRtt {
                w_pkts: 5.0,
                rtt_s: 0.04,
            },
            WindowRtt {
                w_pkts: 65.0,
                rtt_s: 0.04,
            },
        ];
        let sum: f64 = all.iter().map(|s| increase_per_rtt(*s, &all)).sum();
        assert!(close(sum, 1.0), "{sum}");
    }

    #[test]
    fn never_grows_faster_than_one_reno_flow_on_the_best_path() {
        // Rate growth dx_l/dt = ΔW_l/τ_l² summed over subflows is a weighted mean of 1/τ_l²,
        // so at most 1/τ_min²: one Reno flow on the shortest-RTT path.
        let cases = [
            vec![(20.0, 0.05), (10.0, 0.1)],
            vec![(1.0, 0.01), (500.0, 0.2), (30.0, 0.05)],
            vec![(64.0, 0.02), (64.0, 0.02)],
            vec![(3.0, 0.3), (200.0, 0.015), (50.0, 0.04), (9.0, 0.1)],
        ];
        for c in cases {
            let all: Vec<WindowRtt> = c
                .iter()
                .map(|&(w_pkts, rtt_s)| WindowRtt { w_pkts, rtt_s })
                .collect();
            let growth: f64 = all
                .iter()
                .map(|s| increase_per_rtt(*s, &all) / (s.rtt_s * s.rtt_s))
                .sum();
            let best = all
                .iter()
                .map(|s| 1.0 / (s.rtt_s * s.rtt_s))
                .fold(0.0, f64::max);
            assert!(growth <= best * (1.0 + 1e-12), "{c:?}: {growth} > {best}");
        }
    }
}
