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
//! * `weight.<path>=ω` for the path named `<path>` (the `--path` name, e.g.
//!   `--cc-opt weight.lte=0.25`), `weight=ω` for every path without its own weight.
//! * Default ω = 1/S, S = number of subflows with an RTT sample (the paper's experiments
//!   use 1/2 with two subflows). ω must be in (0, 1]: above 1 a subflow would be more
//!   aggressive than a single-path Reno flow.
//!
//! # Source
//! A. Singhal, X. Wang, Z. Wang, H. Che, H. Jiang, "Hybrid Multipath Congestion Control"
//! (eq. 2). Page: `docs/algorithms/hmptcp.md`.

use std::collections::BTreeMap;

use super::{CcConfig, RegistryError};

/// Option prefix of a per-path weight.
pub const WEIGHT_PREFIX: &str = "weight.";
/// Option key of the weight for every path without its own.
pub const WEIGHT_ALL: &str = "weight";

/// Per-path weights from the CC options.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathWeights {
    pub by_path: BTreeMap<String, f64>,
    pub all: Option<f64>,
}

impl PathWeights {
    /// Reads `weight` and `weight.<path>`; a value outside (0, 1] is an error naming the key.
    pub fn from_cc_config(cfg: &CcConfig) -> Result<PathWeights, RegistryError> {
        let mut w = PathWeights::default();
        for key in cfg.options.keys() {
            let path = if key == WEIGHT_ALL {
                None
            } else if let Some(p) = key.strip_prefix(WEIGHT_PREFIX) {
                Some(p)
            } else {
                continue;
            };
            let v = cfg.number(key, 1.0)?;
            if !(v > 0.0 && v <= 1.0) {
                return Err(RegistryError::BadOption {
                    key: key.clone(),
                    value: cfg.options[key].clone(),
                    valid: "a weight in (0, 1]".to_string(),
                });
            }
            match path {
                None => w.all = Some(v),
                Some("") => {
                    return Err(RegistryError::BadOption {
                        key: key.clone(),
                        value: cfg.options[key].clone(),
                        valid: "weight.<path name>=<weight>, e.g. weight.lte=0.25".to_string(),
                    });
                }
                Some(p) => {
                    w.by_path.insert(p.to_string(), v);
                }
            }
        }
        Ok(w)
    }

    /// ω of the path named `path` (None: not known yet) when `subflows` subflows count.
    pub fn weight(&self, path: Option<&str>, subflows: usize) -> f64 {
        path.and_then(|p| self.by_path.get(p).copied())
            .or(self.all)
            .unwrap_or(1.0 / subflows.max(1) as f64)
    }
}

/// WMPTCP's congestion-avoidance increase per RTT, packets: ω.
pub fn increase_per_rtt(weight: f64) -> f64 {
    weight
}

/// Registry constructor of `wmptcp` (the controller is shared with H-MPTCP, `cc/hmptcp.rs`).
pub fn build(
    cfg: &super::CcConfig,
) -> Result<Box<dyn super::CongestionController>, super::RegistryError> {
    Ok(Box::new(super::hmptcp::WeightedFamily::new(
        super::hmptcp::Family::Wmptcp,
        cfg,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(opts: &[(&str, &str)]) -> CcConfig {
        let mut c = CcConfig::default();
        for (k, v) in opts {
            c.options.insert(k.to_string(), v.to_string());
        }
        c
    }

    #[test]
    fn default_weight_is_one_over_s() {
        let w = PathWeights::from_cc_config(&cfg(&[])).unwrap();
        assert_eq!(increase_per_rtt(w.weight(Some("wifi"), 2)), 0.5);
        assert_eq!(w.weight(None, 1), 1.0);
    }

    #[test]
    fn per_path_and_global_weights() {
        let w = PathWeights::from_cc_config(&cfg(&[("weight.lte", "0.25"), ("weight", "0.75")]))
            .unwrap();
        assert_eq!(w.weight(Some("lte"), 2), 0.25);
        assert_eq!(w.weight(Some("wifi"), 2), 0.75);
        assert_eq!(w.weight(None, 2), 0.75);
    }

    #[test]
    fn bad_weights_name_the_key() {
        for (k, v) in [
            ("weight.lte", "0"),
            ("weight.lte", "1.5"),
            ("weight", "x"),
            ("weight.", "0.5"),
        ] {
            let e = PathWeights::from_cc_config(&cfg(&[(k, v)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(k), "{e}");
        }
        // Options of other algorithms are not ours to judge.
        assert!(PathWeights::from_cc_config(&cfg(&[("hystart", "off")])).is_ok());
    }
}
