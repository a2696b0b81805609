//! Coupled BBR: BBR v1 on every subflow, with a PROBE_BW gain cycle per subflow computed
//! from every subflow's bottleneck-bandwidth estimate, so that the connection as a whole
//! takes what one BBR flow would take on the best path.
//!
//! # Model
//! ```text
//!   at each round start of subflow i, with BW_j = BtlBw of every subflow j with a sample:
//!     β_i = BW_i · max_j BW_j / Σ_j BW_j²          (share of BW_i the subflow should use)
//!     α_i = (4 β_i − 1) / 3                        (cruise gain)
//!   PROBE_BW gain cycle of subflow i: [1.25, 0.75, α_i, α_i, α_i, α_i, α_i, α_i]
//!     mean gain = (1.25 + 0.75 + 6 α_i) / 8 = β_i
//!     ⇒ Σ_i β_i BW_i = max_j BW_j   and   β_i / BW_i is the same for every subflow
//!   α_i ≤ 0: the α phases send one packet every RTprop_i / 4 (4 packets per round trip)
//! ```
//! STARTUP, DRAIN, PROBE_RTT, loss handling and the cwnd rule are BBR's (`cc/bbr.rs`); only
//! the PROBE_BW cycle differs. The 1.25/0.75 phases keep BBR's probing, so BW_i still
//! measures the path, not the reduced sending rate.
//!
//! # Choices where the paper is silent or inconsistent
//! * The prose lists nine gains (1.25, 0.75, then α seven times), Algorithm 1 eight; this
//!   uses eight (BBR's cycle length), which is also the only one whose mean is β_i.
//!   Algorithm 1's "cycle_index > 2" is read 1-based (phases 3..8 are the α phases).
//! * α phases end on wall-clock time, one RTprop each. BBR's "a gain below 1 ends as soon as
//!   inflight ≤ BDP" would end them almost at once and break the mean of the cycle. The same
//!   switch holds the 0.75 phase for one RTprop too (so the mean is exactly β); ending that
//!   one BBR's way was tried and is no better against BBR flows (`docs/algorithms/coupled-bbr.md`).
//! * The fallback rate "4 packets per RTT" uses RTprop as RTT.
//! * cwnd is not discussed; BBR's 2·BDP cap is kept.
//! * A subflow without a bandwidth sample yet is left out of Σ and max; with a single
//!   subflow (or a single one with a sample) β = 1, α = 1: plain BBR.
//!
//! # Source
//! J. Han, K. Xue, Y. Xing, J. Li, W. Wei, D. S. L. Wei, G. Xue, "Leveraging Coupled BBR and
//! Adaptive Packet Scheduling to Boost MPTCP", IEEE Transactions on Wireless Communications,
//! 2021 (eqs. 1-2, Algorithm 1). Page: `docs/algorithms/coupled-bbr.md`.

use std::time::Duration;

use super::bbr::{Bbr, BbrConfig, Mode, ProbeBwCycle};
use super::{
    AckEvent, CcConfig, CcPhase, CcSnapshot, CongestionController, CongestionEvent, PerSubflowCc,
    RegistryError, SubflowCc, SubflowCcView, SubflowInit, SubflowSlots, delegate_to_subflow_cc,
};
use crate::units::{Bandwidth, Instant, SubflowId};

/// Gains of the first two PROBE_BW phases, kept from BBR so the subflow still probes.
pub const PROBE_GAIN: f64 = 1.25;
pub const DRAIN_PHASE_GAIN: f64 = 0.75;
/// Number of phases in the cycle (two probing phases, six α phases).
pub const CYCLE_LEN: usize = 8;
/// Packets per RTprop sent in an α phase when α ≤ 0.
pub const FALLBACK_PKTS_PER_RTT: f64 = 4.0;

/// β_i and α_i of one subflow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coupling {
    pub beta: f64,
    pub alpha: f64,
}

/// β_i = BW_i · max_j BW_j / Σ_j BW_j² and α_i = (4β_i − 1)/3 for every entry of `bw`
/// (any unit, the same for all). Entries that are not positive (no sample yet) get
/// β = α = 1 (uncoupled BBR) and are left out of the sums; if no entry is positive, all are.
pub fn coupling(bw: &[f64]) -> Vec<Coupling> {
    let max = bw.iter().copied().filter(|b| *b > 0.0).fold(0.0, f64::max);
    let sum_sq: f64 = bw.iter().filter(|b| **b > 0.0).map(|b| b * b).sum();
    bw.iter()
        .map(|&b| {
            if b > 0.0 && sum_sq > 0.0 {
                let beta = b * max / sum_sq;
                Coupling {
                    beta,
                    alpha: alpha_from_beta(beta),
                }
            } else {
                Coupling {
                    beta: 1.0,
                    alpha: 1.0,
                }
            }
        })
        .collect()
}

/// α = (4β − 1)/3: the gain of the six cruise phases that makes the cycle mean β.
pub fn alpha_from_beta(beta: f64) -> f64 {
    (4.0 * beta - 1.0) / 3.0
}

/// The PROBE_BW pacing-gain cycle of a subflow with cruise gain `alpha`. An α ≤ 0 is kept
/// as is; the pacing rule ([`alpha_phase_pacing_bytes_per_s`]) turns it into the fallback.
pub fn gain_cycle(alpha: f64) -> [f64; CYCLE_LEN] {
    let mut c = [alpha; CYCLE_LEN];
    c[0] = PROBE_GAIN;
    c[1] = DRAIN_PHASE_GAIN;
    c
}

/// Mean gain of a cycle (equals β when built by [`gain_cycle`] from α(β)).
pub fn cycle_mean(cycle: &[f64]) -> f64 {
    cycle.iter().sum::<f64>() / cycle.len() as f64
}

/// True for the α phases (0-based index 2..8; the paper's 1-based "cycle_index > 2").
pub fn is_alpha_phase(cycle_idx: usize) -> bool {
    cycle_idx >= 2
}

/// Pacing rate in an α phase, bytes/s: α·BW if α > 0, else one packet of `mss` every
/// RTprop/4.
pub fn alpha_phase_pacing_bytes_per_s(
    alpha: f64,
    bw_bytes_per_s: f64,
    rtprop: Duration,
    mss: u64,
) -> f64 {
    if alpha > 0.0 {
        alpha * bw_bytes_per_s
    } else {
        fallback_bytes_per_s(rtprop, mss)
    }
}

/// One packet every RTprop/4, bytes/s (RTprop floored at 1 ms so a zero RTT stays finite).
pub fn fallback_bytes_per_s(rtprop: Duration, mss: u64) -> f64 {
    let rtt_s = rtprop.as_secs_f64().max(1e-3);
    FALLBACK_PKTS_PER_RTT * mss as f64 / rtt_s
}

/// Mean sending rate over one cycle (two probing phases at their gains, six α phases at the
/// α-phase rate), bytes/s; with α > 0 this is β·BW.
pub fn cycle_mean_rate_bytes_per_s(
    alpha: f64,
    bw_bytes_per_s: f64,
    rtprop: Duration,
    mss: u64,
) -> f64 {
    let probe = (PROBE_GAIN + DRAIN_PHASE_GAIN) * bw_bytes_per_s;
    let cruise = 6.0 * alpha_phase_pacing_bytes_per_s(alpha, bw_bytes_per_s, rtprop, mss);
    (probe + cruise) / CYCLE_LEN as f64
}

/// Smallest pacing gain handed to BBR for an α ≤ 0 phase (BBR wants gains > 0); the pacing
/// floor of [`FALLBACK_PKTS_PER_RTT`] packets per RTprop then sets the rate.
const FALLBACK_GAIN: f64 = 1e-3;

/// The PROBE_BW cycle BBR runs for a coupling. β = 1 (alone, or the only subflow with a
/// bandwidth sample) is Linux's cycle unchanged, so one subflow is plain BBR.
pub fn probe_bw_cycle(c: Coupling) -> ProbeBwCycle {
    if c.beta >= 1.0 {
        return ProbeBwCycle::default();
    }
    ProbeBwCycle {
        pacing_gains: gain_cycle(c.alpha.max(FALLBACK_GAIN)),
        low_gain_ends_on_time: true,
        min_pkts_per_rtprop: if c.alpha <= 0.0 {
            FALLBACK_PKTS_PER_RTT
        } else {
            0.0
        },
    }
}

/// Registry constructor (`coupled-bbr`); BBR's options apply to every subflow.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    BbrConfig::from_cc_config(cfg, cfg.mss_bytes, cfg.seed)?;
    Ok(Box::new(CoupledBbr::new(cfg)))
}

struct Sub {
    bbr: Bbr,
    coupling: Coupling,
}

/// BBR per subflow with the coupled PROBE_BW cycle, recomputed at each round start of a
/// subflow from every subflow's current BtlBw.
pub struct CoupledBbr {
    cfg: CcConfig,
    subs: SubflowSlots<Sub>,
}

impl CoupledBbr {
    pub fn new(cfg: &CcConfig) -> CoupledBbr {
        CoupledBbr {
            cfg: cfg.clone(),
            subs: SubflowSlots::new("coupled-bbr"),
        }
    }

    /// β/α of subflow `sf` from every subflow's BtlBw (bytes/s; 0 = no sample yet).
    fn coupling_of(&self, sf: SubflowId) -> Coupling {
        let ids: Vec<SubflowId> = self.subs.iter().map(|(id, _)| id).collect();
        let bw: Vec<f64> = self
            .subs
            .iter()
            .map(|(_, s)| s.bbr.bw_estimate().map_or(0.0, |b| b.bytes_per_s()))
            .collect();
        let all = coupling(&bw);
        ids.iter().position(|id| *id == sf).map_or(
            Coupling {
                beta: 1.0,
                alpha: 1.0,
            },
            |k| all[k],
        )
    }
}

impl PerSubflowCc for CoupledBbr {
    type Cc = Bbr;
    fn subflow_cc(&self, sf: SubflowId) -> &Bbr {
        &self.subs.get(sf).bbr
    }
    fn subflow_cc_mut(&mut self, sf: SubflowId) -> &mut Bbr {
        &mut self.subs.get_mut(sf).bbr
    }
}

impl CongestionController for CoupledBbr {
    fn name(&self) -> &'static str {
        "coupled-bbr"
    }
    fn add_subflow(&mut self, sf: SubflowId, now: Instant, mss: u64) {
        let init = SubflowInit::new(self.cfg.seed, sf, now, mss);
        let sub = Sub {
            bbr: Bbr::from_config(&self.cfg, &init),
            coupling: Coupling {
                beta: 1.0,
                alpha: 1.0,
            },
        };
        self.subs.insert(sf, sub);
    }
    fn remove_subflow(&mut self, sf: SubflowId) {
        self.subs.remove(sf);
    }
    fn on_ack(&mut self, sf: SubflowId, ack: &AckEvent, _views: &[SubflowCcView]) {
        self.subs.get_mut(sf).bbr.on_ack(ack);
        if self.subs.get(sf).bbr.round_start() {
            let c = self.coupling_of(sf);
            let s = self.subs.get_mut(sf);
            s.coupling = c;
            s.bbr.set_probe_bw_cycle(probe_bw_cycle(c));
        }
    }
    fn snapshot(&self, sf: SubflowId) -> CcSnapshot {
        let s = self.subs.get(sf);
        let mut snap = s.bbr.snapshot();
        snap.extra.push(("coupled_beta", s.coupling.beta));
        snap.extra.push(("coupled_alpha", s.coupling.alpha));
        // The gain in force; in an α ≤ 0 phase the rate is the 4-packets-per-RTprop floor,
        // flagged by coupled_fallback = 1.
        let fallback = s.bbr.mode() == Mode::ProbeBw
            && is_alpha_phase(s.bbr.cycle_idx())
            && s.coupling.alpha <= 0.0
            && s.coupling.beta < 1.0;
        snap.extra.push(("coupled_gain", s.bbr.pacing_gain()));
        snap.extra
            .push(("coupled_fallback", if fallback { 1.0 } else { 0.0 }));
        snap
    }
    delegate_to_subflow_cc!();
}

#[cfg(test)]
mod math_tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn bandwidths_60_20() {
        let c = coupling(&[60.0, 20.0]);
        assert!(
            close(c[0].beta, 0.9, 1e-9) && close(c[1].beta, 0.3, 1e-9),
            "{c:?}"
        );
        assert!(close(c[0].alpha, 0.8667, 1e-4) && close(c[1].alpha, 0.0667, 1e-4));
        let rates: Vec<f64> = c
            .iter()
            .zip([60.0, 20.0])
            .map(|(k, bw)| cycle_mean_rate_bytes_per_s(k.alpha, bw, Duration::from_millis(50), 1))
            .collect();
        assert!(
            close(rates[0], 54.0, 1e-9) && close(rates[1], 6.0, 1e-9),
            "{rates:?}"
        );
        assert!(close(rates.iter().sum::<f64>(), 60.0, 1e-9));
    }

    #[test]
    fn bandwidths_60_10_fall_back_to_4_packets_per_rtt() {
        let c = coupling(&[60.0, 10.0]);
        assert!(close(c[1].alpha, -0.1171, 1e-4), "{c:?}");
        // 1500 B every 50 ms / 4 = 120 kB/s.
        let r = alpha_phase_pacing_bytes_per_s(c[1].alpha, 10e6, Duration::from_millis(50), 1500);
        assert!(close(r, 120_000.0, 1e-6), "{r}");
        assert!(close(
            alpha_phase_pacing_bytes_per_s(c[0].alpha, 60.0, Duration::from_millis(50), 1500),
            0.964 * 60.0,
            0.01
        ));
    }

    #[test]
    fn bandwidths_50_30_20() {
        let c = coupling(&[50.0, 30.0, 20.0]);
        let beta: Vec<f64> = c.iter().map(|k| k.beta).collect();
        let alpha: Vec<f64> = c.iter().map(|k| k.alpha).collect();
        for (got, want) in beta.iter().zip([0.6579, 0.3947, 0.2632]) {
            assert!(close(*got, want, 1e-4), "{beta:?}");
        }
        for (got, want) in alpha.iter().zip([0.5439, 0.1930, 0.0175]) {
            assert!(close(*got, want, 1e-4), "{alpha:?}");
        }
        let sum: f64 = beta
            .iter()
            .zip([50.0, 30.0, 20.0])
            .map(|(b, w)| b * w)
            .sum();
        assert!(close(sum, 50.0, 1e-9), "Σβ·BW = max BW, got {sum}");
        // β_i / BW_i equal across subflows (balanced congestion).
        assert!(close(beta[0] / 50.0, beta[2] / 20.0, 1e-12));
    }

    #[test]
    fn equal_bandwidths_give_alpha_one_third() {
        for k in coupling(&[50.0, 50.0]) {
            assert!(close(k.alpha, 1.0 / 3.0, 1e-12) && close(k.beta, 0.5, 1e-12));
        }
    }

    #[test]
    fn cycle_mean_is_beta_and_single_subflow_is_plain_bbr() {
        for beta in [0.3, 0.5, 0.9, 1.0] {
            let cyc = gain_cycle(alpha_from_beta(beta));
            assert!(close(cycle_mean(&cyc), beta, 1e-12));
            assert_eq!(&cyc[..2], &[1.25, 0.75]);
        }
        let one = coupling(&[42.0]);
        assert!(close(one[0].beta, 1.0, 1e-12) && close(one[0].alpha, 1.0, 1e-12));
        // A subflow without a sample does not count; the other behaves as if alone.
        let c = coupling(&[42.0, 0.0]);
        assert!(close(c[0].beta, 1.0, 1e-12) && close(c[1].alpha, 1.0, 1e-12));
        assert!(!is_alpha_phase(0) && !is_alpha_phase(1) && is_alpha_phase(2));
        assert!(is_alpha_phase(7));
    }

    #[test]
    fn coupling_maps_onto_bbrs_probe_bw_cycle() {
        // Alone: Linux's cycle, untouched.
        assert_eq!(
            probe_bw_cycle(Coupling {
                beta: 1.0,
                alpha: 1.0
            }),
            ProbeBwCycle::default()
        );
        // (60, 20) Mbit/s, subflow 2: α = 0.067, phases end on time, no floor.
        let c = coupling(&[60.0, 20.0])[1];
        let cyc = probe_bw_cycle(c);
        assert_eq!(cyc.pacing_gains, gain_cycle(c.alpha));
        assert!(cyc.low_gain_ends_on_time);
        assert_eq!(cyc.min_pkts_per_rtprop, 0.0);
        // (60, 10): α₂ < 0 → a tiny positive gain and the 4-packets-per-RTprop floor.
        let c = coupling(&[60.0, 10.0])[1];
        let cyc = probe_bw_cycle(c);
        assert!(cyc.pacing_gains[2..].iter().all(|g| *g > 0.0 && *g < 0.01));
        assert_eq!(cyc.min_pkts_per_rtprop, FALLBACK_PKTS_PER_RTT);
    }
}
