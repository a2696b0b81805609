//! The machine of the EMPTCP family (EMPTCP, WMPTCP, H-MPTCP): a Reno window per subflow
//! whose congestion-avoidance increase per RTT a rule sets from every member's window and
//! RTT and the path's weight. Slow start, fast recovery (the Reno halving), RTO and idle
//! restart are the base window machine's (`window.rs`), as for Reno.
//!
//! An algorithm implements [`PerRttRule`] (`emptcp.rs`, `wmptcp.rs`, `hmptcp.rs`);
//! [`PerRttCc`] turns it into a [`CongestionController`], as `window.rs`'s `WindowCc` does
//! for a `WindowRule`. Not built on the coupled plumbing (`coupled.rs`) because WMPTCP's
//! weights are keyed on path names (`set_subflow_name`).
//!
//! Members are the subflows that are established and have an RTT sample; a subflow that is
//! not one yet grows as Reno (1 packet per RTT), as with one subflow. The stats record, per
//! subflow, the increase per RTT in force, the weight, and what the rule adds
//! ([`PerRttRule::extra`]).

use std::collections::BTreeMap;

use super::coupled::{is_member, view_of};
use super::reno::{Reno, RenoRule};
use super::window::{Increase, WindowConfig, WindowRule, WindowView, per_rtt_increase};
use super::{
    AckEvent, CcConfig, CcPhase, CcSnapshot, CongestionController, CongestionEvent, PerSubflowCc,
    RegistryError, SubflowCc, SubflowCcView, SubflowSlots, delegate_to_subflow_cc,
};
use crate::units::{Bandwidth, Instant, SubflowId};

/// One subflow's window (packets) and RTT (seconds), as the coupled rule sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowRtt {
    pub w_pkts: f64,
    pub rtt_s: f64,
}

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

/// One algorithm of the family: its name and its congestion-avoidance increase.
pub trait PerRttRule: Send + 'static {
    /// What the rule tells the stats about how it decided (H-MPTCP: which half won); `()`
    /// when nothing. `Default` is what a subflow shows before its first increase.
    type Choice: Copy + Default + Send;
    fn name(&self) -> &'static str;
    /// The increase per RTT of member `own` (packets), given every member (`own` among
    /// them) and `own`'s weight ω, and how it was decided.
    fn increase_per_rtt(
        &self,
        own: WindowRtt,
        all: &[WindowRtt],
        weight: f64,
    ) -> (f64, Self::Choice);
    /// Per-subflow stats of the rule, after the increase and the weight.
    fn extra(&self, _choice: Self::Choice, _out: &mut Vec<(&'static str, f64)>) {}
}

/// Per-subflow state: the base window machine with Reno's rule, the path name and what the
/// last congestion-avoidance ACK used (for the stats).
struct Sub<C> {
    reno: Reno,
    name: Option<String>,
    last_dw_per_rtt: f64,
    last_choice: C,
    last_weight: f64,
}

/// A [`PerRttRule`] as a [`CongestionController`].
pub struct PerRttCc<R: PerRttRule> {
    rule: R,
    weights: PathWeights,
    window_cfg: WindowConfig,
    subs: SubflowSlots<Sub<R::Choice>>,
}

/// The congestion-avoidance rule for one ACK: `dw_per_rtt` packets per window of ACKs.
struct PerRttWindowRule {
    dw_per_rtt: f64,
}

impl WindowRule for PerRttWindowRule {
    fn increase(&mut self, w: &WindowView, _ack: &AckEvent, acked_bytes: u64) -> Increase {
        per_rtt_increase(self.dw_per_rtt, w, acked_bytes)
    }
}

impl<R: PerRttRule> PerRttCc<R> {
    /// Validates the window machine's options and the weights (`weight`, `weight.<path>`).
    pub fn new(rule: R, cfg: &CcConfig) -> Result<PerRttCc<R>, RegistryError> {
        let name = rule.name();
        Ok(PerRttCc {
            rule,
            weights: PathWeights::from_cc_config(cfg)?,
            window_cfg: WindowConfig::from_cc_config(cfg, cfg.mss_bytes)?,
            subs: SubflowSlots::new(name),
        })
    }

    /// (W packets, τ seconds) of every member (established, with an RTT sample).
    fn members(&self, views: &[SubflowCcView]) -> Vec<(SubflowId, WindowRtt)> {
        self.subs
            .iter()
            .filter(|(id, _)| is_member(views, *id))
            .map(|(id, s)| {
                let window = &s.reno.window;
                let mss = window.config().mss_bytes as f64;
                let rtt = view_of(views, id).map_or(0.0, |v| v.srtt.as_secs_f64());
                (
                    id,
                    WindowRtt {
                        w_pkts: window.cwnd_bytes() as f64 / mss,
                        rtt_s: rtt,
                    },
                )
            })
            .collect()
    }

    /// Increase per RTT (packets), how the rule decided, and the weight, for subflow `sf`.
    fn increase_for(&self, sf: SubflowId, views: &[SubflowCcView]) -> (f64, R::Choice, f64) {
        let members = self.members(views);
        let all: Vec<WindowRtt> = members.iter().map(|m| m.1).collect();
        let weight = self
            .weights
            .weight(self.subs.get(sf).name.as_deref(), members.len().max(1));
        let Some(own) = members.iter().find(|m| m.0 == sf).map(|m| m.1) else {
            // Not a member yet (no RTT sample): Reno, as with one subflow.
            return (1.0, R::Choice::default(), weight);
        };
        let (dw, choice) = self.rule.increase_per_rtt(own, &all, weight);
        (dw, choice, weight)
    }
}

impl<R: PerRttRule> PerSubflowCc for PerRttCc<R> {
    type Cc = Reno;
    fn subflow_cc(&self, sf: SubflowId) -> &Reno {
        &self.subs.get(sf).reno
    }
    fn subflow_cc_mut(&mut self, sf: SubflowId) -> &mut Reno {
        &mut self.subs.get_mut(sf).reno
    }
}

impl<R: PerRttRule> CongestionController for PerRttCc<R> {
    fn name(&self) -> &'static str {
        self.rule.name()
    }
    fn add_subflow(&mut self, sf: SubflowId, _now: Instant, mss: u64) {
        let window_cfg = WindowConfig {
            mss_bytes: mss,
            ..self.window_cfg
        };
        let sub = Sub {
            reno: Reno::new(window_cfg, RenoRule),
            name: None,
            last_dw_per_rtt: 1.0,
            last_choice: R::Choice::default(),
            last_weight: 1.0,
        };
        self.subs.insert(sf, sub);
    }
    fn set_subflow_name(&mut self, sf: SubflowId, name: &str) {
        if let Some(s) = self.subs.find_mut(sf) {
            s.name = Some(name.to_string());
        }
    }
    fn remove_subflow(&mut self, sf: SubflowId) {
        self.subs.remove(sf);
    }
    fn on_ack(&mut self, sf: SubflowId, ack: &AckEvent, views: &[SubflowCcView]) {
        let (dw, choice, weight) = self.increase_for(sf, views);
        let s = self.subs.get_mut(sf);
        s.last_weight = weight;
        let before = s.reno.window.cwnd_bytes();
        let in_ca = !s.reno.window.in_slow_start();
        s.reno
            .window
            .on_ack(ack, &mut PerRttWindowRule { dw_per_rtt: dw });
        if in_ca && s.reno.window.cwnd_bytes() >= before {
            s.last_dw_per_rtt = dw;
            s.last_choice = choice;
        }
    }
    fn snapshot(&self, sf: SubflowId) -> CcSnapshot {
        let s = self.subs.get(sf);
        let mut snap = s.reno.snapshot();
        snap.extra.push(("dw_per_rtt_pkts", s.last_dw_per_rtt));
        snap.extra.push(("weight", s.last_weight));
        self.rule.extra(s.last_choice, &mut snap.extra);
        snap
    }
    delegate_to_subflow_cc!();
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
        assert_eq!(w.weight(Some("wifi"), 2), 0.5);
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
