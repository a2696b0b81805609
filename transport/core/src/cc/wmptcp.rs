//! WMPTCP (weighted MPTCP): every subflow is a Reno flow whose additive increase is scaled
//! by a per-path weight ω_l, e.g. a low weight for a metered cellular path.
//!
//! # Model (windows in packets)
//! ```text
//!   congestion avoidance, per RTT of subflow l:  ΔW_l = ω_l        (per ACK: ω_l / W_l)
//!   loss:                                        W_l ← W_l / 2
//!   slow start:                                  Reno (W_l += acked)
//! ```
//! At a bottleneck shared with one Reno flow and with synchronised losses, a subflow gets
//! ω : 1 of the Reno flow's rate (both halve together and grow at ω and 1 per RTT); with
//! independent losses √ω : 1 (W = √(2ω/p) against √(2/p)).
//!
//! # Weights (options)
//! Read by the family's machine (`cc/per_rtt.rs`, `PathWeights`), so H-MPTCP takes them too.
//! * `weight.<path>=ω` for the path named `<path>` (the `--path` name, e.g.
//!   `--cc-opt weight.lte=0.25`), `weight=ω` for every path without its own weight.
//! * Default ω = 1/S, S = number of subflows with an RTT sample (the paper's experiments
//!   use 1/2 with two subflows). ω must be in (0, 1]: above 1 a subflow would be more
//!   aggressive than a single-path Reno flow.
//!
//! # Source
//! A. Singhal, X. Wang, Z. Wang, H. Che, H. Jiang, "Hybrid Multipath Congestion Control"
//! (eq. 2). Page: `docs/algorithms/hmptcp.md`.

use super::per_rtt::{PerRttCc, PerRttRule, WindowRtt};
use super::{CcConfig, CongestionController, RegistryError};

/// WMPTCP's congestion-avoidance increase per RTT, packets: ω.
pub fn increase_per_rtt(weight: f64) -> f64 {
    weight
}

/// WMPTCP as a rule of the family's machine (`cc/per_rtt.rs`, which reads the weights).
#[derive(Clone, Copy, Debug, Default)]
pub struct WmptcpRule;

impl PerRttRule for WmptcpRule {
    type Choice = ();
    fn name(&self) -> &'static str {
        "wmptcp"
    }
    fn increase_per_rtt(&self, _own: WindowRtt, _all: &[WindowRtt], weight: f64) -> (f64, ()) {
        (increase_per_rtt(weight), ())
    }
}

/// WMPTCP's controller.
pub type Wmptcp = PerRttCc<WmptcpRule>;

/// Registry constructor of `wmptcp`.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    Ok(Box::new(Wmptcp::new(WmptcpRule, cfg)?))
}
