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
//!
//! # Choices where the paper is silent
//! * "Which half won" is decided per ACK; a tie counts as EMPTCP.
//! * τ is the smoothed RTT; subflows without an RTT sample are left out of Σ and S.
//!
//! # Source
//! A. Singhal, X. Wang, Z. Wang, H. Che, H. Jiang, "Hybrid Multipath Congestion Control"
//! (eqs. 3-5). Page: `docs/algorithms/hmptcp.md`.

use super::emptcp::{self, WindowRtt};

/// Which rule gave H-MPTCP's increase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a11_vector() {
        let all = [
            WindowRtt { w_pkts: 20.0, rtt_s: 0.05 },
            WindowRtt { w_pkts: 10.0, rtt_s: 0.1 },
        ];
        let (d0, h0) = increase_per_rtt(all[0], &all, 0.5);
        let (d1, h1) = increase_per_rtt(all[1], &all, 0.5);
        assert!((d0 - 0.8).abs() < 1e-9 && h0 == Half::Emptcp);
        assert!((d1 - 0.5).abs() < 1e-9 && h1 == Half::Wmptcp);
        // Per ACK: ΔW / W = (0.04, 0.05).
        assert!((d0 / 20.0 - 0.04).abs() < 1e-12 && (d1 / 10.0 - 0.05).abs() < 1e-12);
    }
}
