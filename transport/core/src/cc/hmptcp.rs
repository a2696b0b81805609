//! H-MPTCP (hybrid MPTCP): each subflow takes the larger of the EMPTCP (semi-coupled) and
//! the WMPTCP (weighted) additive increase, so the connection is at least as good as the
//! best single-path flow (EMPTCP's guarantee) while a cheap path can still be preferred
//! through its weight (WMPTCP's price awareness).
//!
//! # Model (windows in packets, RTTs in seconds)
//! ```text
//!   congestion avoidance, per RTT of subflow l:
//!       ΔW_l = max( W_l / (τ_l · Σ_j W_j/τ_j) ,  ω_l )        (per ACK: ΔW_l / W_l)
//!   loss:        W_l ← W_l / 2
//!   slow start:  Reno (W_l += acked)
//! ```
//! ω_l defaults to 1/S and is set per path with `weight.<path>=ω` (see `cc/wmptcp.rs`).
//! The stats record, per subflow, the increase per RTT in force and which half gave it.
//! Runs on the family's machine (`cc/per_rtt.rs`) as EMPTCP and WMPTCP do.
//!
//! # Choices where the paper is silent
//! * "Which half won" is decided per ACK; a tie counts as EMPTCP.
//! * τ is the smoothed RTT; subflows without an RTT sample are left out of Σ and S.
//!
//! # Source
//! A. Singhal, X. Wang, Z. Wang, H. Che, H. Jiang, "Hybrid Multipath Congestion Control"
//! (eqs. 3-5). Page: `docs/algorithms/hmptcp.md`.

use super::emptcp;
use super::per_rtt::{PerRttCc, PerRttRule, WindowRtt};
use super::{CcConfig, CongestionController, RegistryError};

/// Which rule gave H-MPTCP's increase (EMPTCP until a congestion-avoidance increase says).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Half {
    #[default]
    Emptcp,
    Wmptcp,
}

impl Half {
    /// Logged as a number: 0 = EMPTCP, 1 = WMPTCP.
    pub fn code(self) -> f64 {
        match self {
            Half::Emptcp => 0.0,
            Half::Wmptcp => 1.0,
        }
    }
}

/// H-MPTCP's congestion-avoidance increase per RTT (packets) and the half that gave it.
pub fn increase_per_rtt(own: WindowRtt, all: &[WindowRtt], weight: f64) -> (f64, Half) {
    let equal = emptcp::increase_per_rtt(own, all);
    if weight > equal {
        (weight, Half::Wmptcp)
    } else {
        (equal, Half::Emptcp)
    }
}

/// H-MPTCP as a rule of the family's machine (`cc/per_rtt.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct HmptcpRule;

impl PerRttRule for HmptcpRule {
    type Choice = Half;
    fn name(&self) -> &'static str {
        "hmptcp"
    }
    fn increase_per_rtt(&self, own: WindowRtt, all: &[WindowRtt], weight: f64) -> (f64, Half) {
        increase_per_rtt(own, all, weight)
    }
    fn extra(&self, half: Half, out: &mut Vec<(&'static str, f64)>) {
        // 0 = EMPTCP's increase won, 1 = WMPTCP's.
        out.push(("hmptcp_half", half.code()));
    }
}

/// H-MPTCP's controller.
pub type Hmptcp = PerRttCc<HmptcpRule>;

/// Registry constructor of `hmptcp`.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    Ok(Box::new(Hmptcp::new(HmptcpRule, cfg)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::SubflowCcView;
    use crate::cc::coupled::testkit::{MSS, ack, force_ca, side_by_side_with_reno, view};
    use crate::units::{Instant, SubflowId};

    /// Acks `n` single packets on subflow `sf`; returns the cwnd (packets) after each.
    fn ack_n(
        cc: &mut dyn CongestionController,
        sf: u8,
        n: u64,
        srtt_ms: u64,
        views: &[SubflowCcView],
    ) -> Vec<u64> {
        (0..n)
            .map(|i| {
                cc.on_ack(SubflowId(sf), &ack(i, MSS, srtt_ms), views);
                cc.cwnd_bytes(SubflowId(sf)) / MSS
            })
            .collect()
    }

    fn two_in_ca(
        name: &str,
        opts: &[(&str, &str)],
    ) -> (Box<dyn CongestionController>, [SubflowCcView; 2]) {
        let mut cfg = CcConfig::default();
        for (k, v) in opts {
            cfg.options.insert(k.to_string(), v.to_string());
        }
        let mut cc = crate::cc::build(name, &cfg).unwrap();
        cc.add_subflow(SubflowId(0), Instant::ZERO, MSS);
        cc.add_subflow(SubflowId(1), Instant::ZERO, MSS);
        cc.set_subflow_name(SubflowId(0), "wifi");
        cc.set_subflow_name(SubflowId(1), "lte");
        let views = [view(0, 20, 50), view(1, 10, 100)];
        force_ca(cc.as_mut(), 0, 20, &views);
        force_ca(cc.as_mut(), 1, 10, &views);
        (cc, views)
    }

    /// Packets acknowledged until the window first grows by one.
    fn acks_to_grow(
        cc: &mut dyn CongestionController,
        sf: u8,
        srtt_ms: u64,
        views: &[SubflowCcView],
    ) -> usize {
        let start = cc.cwnd_bytes(SubflowId(sf)) / MSS;
        1 + ack_n(cc, sf, 200, srtt_ms, views)
            .iter()
            .position(|w| *w > start)
            .expect("grows within 200 packets")
    }

    #[test]
    fn example_through_the_controllers() {
        // W = (20, 10), τ = (50, 100) ms. Per ACK: EMPTCP (0.04, 0.02), WMPTCP (0.025, 0.05),
        // H-MPTCP (0.04, 0.05): +1 packet after 25, 50, 40, 20, 25, 20 packets.
        for (name, sf, srtt, want) in [
            ("emptcp", 0, 50, 25),
            ("emptcp", 1, 100, 50),
            ("wmptcp", 0, 50, 40),
            ("wmptcp", 1, 100, 20),
            ("hmptcp", 0, 50, 25),
            ("hmptcp", 1, 100, 20),
        ] {
            let (mut cc, views) = two_in_ca(name, &[]);
            let got = acks_to_grow(cc.as_mut(), sf, srtt, &views);
            // 25 × 0.04 may land a hair below 1.0 in floating point: allow one more packet.
            assert!(
                got == want || got == want + 1,
                "{name} sf{sf}: +1 after {got}, want {want}"
            );
        }
        let (mut cc, views) = two_in_ca("hmptcp", &[]);
        ack_n(cc.as_mut(), 0, 3, 50, &views);
        ack_n(cc.as_mut(), 1, 3, 100, &views);
        let extra = |cc: &dyn CongestionController, sf: u8, key: &str| {
            cc.snapshot(SubflowId(sf))
                .extra
                .iter()
                .find(|e| e.0 == key)
                .unwrap()
                .1
        };
        assert!((extra(cc.as_ref(), 0, "dw_per_rtt_pkts") - 0.8).abs() < 1e-9);
        assert_eq!(extra(cc.as_ref(), 0, "hmptcp_half"), Half::Emptcp.code());
        assert!((extra(cc.as_ref(), 1, "dw_per_rtt_pkts") - 0.5).abs() < 1e-9);
        assert_eq!(extra(cc.as_ref(), 1, "hmptcp_half"), Half::Wmptcp.code());
    }

    #[test]
    fn weight_option_follows_the_path_name() {
        // weight.lte = 0.25 on subflow 1 (W 10): 0.025 per ACK → +1 after 40 packets.
        let (mut cc, views) = two_in_ca("wmptcp", &[("weight.lte", "0.25")]);
        let got = acks_to_grow(cc.as_mut(), 1, 100, &views);
        assert!(got == 40 || got == 41, "{got}");
        // wifi keeps the default 1/S = 0.5.
        let got = acks_to_grow(cc.as_mut(), 0, 50, &views);
        assert!(got == 40 || got == 41, "{got}");
        let bad = CcConfig {
            options: [("weight.lte".to_string(), "2".to_string())].into(),
            ..CcConfig::default()
        };
        assert!(crate::cc::build("hmptcp", &bad).is_err());
    }

    #[test]
    fn one_subflow_is_reno_for_all_three() {
        for name in ["emptcp", "wmptcp", "hmptcp"] {
            let mut cc = crate::cc::build(name, &CcConfig::default()).unwrap();
            let windows = side_by_side_with_reno(cc.as_mut(), 3000, |i| MSS * (1 + i % 3), 700);
            for (i, (a, b)) in windows.iter().enumerate() {
                // Reno counts whole windows of bytes, the family adds fractions: equal to
                // within one packet.
                let (a, b) = (a / MSS, b / MSS);
                assert!(a.abs_diff(b) <= 1, "{name} ack {i}: {a} vs {b}");
            }
            assert!(windows.last().unwrap().0 > 20 * MSS);
        }
    }

    #[test]
    fn example_w_20_10_tau_50_100() {
        let all = emptcp::EXAMPLE_W_20_10_TAU_50_100;
        let (d0, h0) = increase_per_rtt(all[0], &all, 0.5);
        let (d1, h1) = increase_per_rtt(all[1], &all, 0.5);
        assert!((d0 - 0.8).abs() < 1e-9 && h0 == Half::Emptcp);
        assert!((d1 - 0.5).abs() < 1e-9 && h1 == Half::Wmptcp);
        // Per ACK: ΔW / W = (0.04, 0.05).
        assert!((d0 / 20.0 - 0.04).abs() < 1e-12 && (d1 / 10.0 - 0.05).abs() < 1e-12);
    }
}
