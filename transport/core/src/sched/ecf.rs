//! ECF, earliest completion first (Y. Lim, E. M. Nahum, D. Towsley, R. J. Gibbens, "ECF: An
//! MPTCP Path Scheduler to Manage Heterogeneous Paths", ACM CoNEXT 2017; out-of-tree kernel
//! `net/mptcp/mptcp_ecf.c`).
//!
//! Let f be the lowest-SRTT established subflow and s the out-of-tree default's choice
//! ([`super::default_oot::oot_choice`]); if there is no s or s = f, use s. Otherwise, with
//! k = bytes not yet handed to any subflow, x_f = max(k, cwnd_f·MSS), x_s = max(k, cwnd_s·MSS),
//! δ = max(σ_f, σ_s), β = 1/4 and the `waiting` bit:
//! * if SRTT_f·(x_f/(cwnd_f·MSS) + 1) < (1 + waiting·β)·(SRTT_s + δ) — waiting for f
//!   finishes k sooner than using s — then
//!   * if SRTT_s·x_s/(cwnd_s·MSS) ≥ 2·SRTT_f + δ: waiting = 1, send nothing
//!     ([`WaitReason::FasterPathSoon`]);
//!   * otherwise send on s (the bit is left as it is);
//! * else waiting = 0, send on s.
//!
//! The comparison is done in the kernel's cross-multiplied form (`r_beta·lhs < r_beta·rhs +
//! waiting·rhs`, r_beta = 4).
//!
//! σ (option `delta`): `kernel` (default) takes `rttvar_us >> 1` of each subflow, as
//! `ecf_get_available_subflow` in `mptcp_ecf.c` does (`delta = max(rttvar_f, rttvar_s)` with
//! `rttvar_x = tcp_sk(x)->rttvar_us >> 1`; no other floor in the module). Linux's `rttvar_us`
//! (`tcp_rtt_estimator`) is four mean deviations and never below `tcp_rto_min_us(sk)`
//! (200 ms) while it decays, so the kernel's δ is about 100 ms or more. A larger δ makes the
//! first test (waiting for f finishes sooner) hold more often and the second (s is too slow to
//! be worth using) less often, so which way the decisions move depends on the paths. `paper`
//! takes the RTT variation of RFC 6298 (RTTVAR), the paper's σ.
//!
//! Reinjections are not held back ([`super::default_oot::slower_choice`] says why).
//!
//! One packet per decision, as the kernel asks per segment.

use std::time::Duration;

use super::default_oot::{Opportunistic, SlowerChoice, slower_choice};
use super::{PathView, SchedConfig, Scheduler, Selection, Snapshot, WaitReason};
use crate::cc::RegistryError;

/// Which RTT variation feeds δ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeltaSource {
    /// RFC 6298 RTTVAR (the paper's σ).
    Paper,
    /// The kernel's `rttvar_us >> 1` (`mptcp_ecf.c`, the default).
    Kernel,
}

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    let delta = match cfg.choice("delta", &["kernel", "paper"], "kernel")? {
        "paper" => DeltaSource::Paper,
        _ => DeltaSource::Kernel,
    };
    let mut ecf = Ecf::new(delta);
    ecf.opportunistic = Opportunistic::from_config(cfg)?;
    Ok(Box::new(ecf))
}

/// ECF state: the waiting bit (the kernel's `switching_margin`).
pub struct Ecf {
    delta: DeltaSource,
    waiting: bool,
    last_delta: Duration,
    opportunistic: Opportunistic,
}

impl Ecf {
    pub fn new(delta: DeltaSource) -> Ecf {
        Ecf {
            delta,
            waiting: false,
            last_delta: Duration::ZERO,
            opportunistic: Opportunistic::default(),
        }
    }

    pub fn waiting(&self) -> bool {
        self.waiting
    }

    fn sigma(&self, p: &PathView) -> Duration {
        match self.delta {
            DeltaSource::Paper => p.rttvar,
            DeltaSource::Kernel => kernel_rttvar(p) / 2,
        }
    }
}

/// Linux's `rttvar_us`: four mean deviations, at least the 200 ms minimum RTO
/// (`tcp_rtt_estimator`), as the connection reports it.
fn kernel_rttvar(p: &PathView) -> Duration {
    p.rttvar_kernel
}

/// ECF's test for one decision, in microseconds and bytes as the kernel computes it. Returns
/// `Some(true)` to wait, `Some(false)` to use the slow subflow, and updates `waiting`.
pub fn ecf_wait(
    fast: &PathView,
    slow: &PathView,
    unsent_bytes: u64,
    delta: Duration,
    waiting: &mut bool,
) -> bool {
    let us = |d: Duration| d.as_micros();
    let mss = slow.mss.max(1) as u128;
    let cwnd_f = (fast.cwnd_bytes as u128 / fast.mss.max(1) as u128).max(1);
    let cwnd_s = (slow.cwnd_bytes as u128 / mss).max(1);
    let (srtt_f, srtt_s, delta) = (us(fast.srtt), us(slow.srtt), us(delta));
    let k = unsent_bytes as u128;
    let x_f = k.max(cwnd_f * mss);
    let lhs = srtt_f * (x_f + cwnd_f * mss);
    let rhs = cwnd_f * mss * (srtt_s + delta);
    const R_BETA: u128 = 4;
    if R_BETA * lhs < R_BETA * rhs + (*waiting as u128) * rhs {
        let x_s = k.max(cwnd_s * mss);
        let lhs_s = srtt_s * x_s;
        let rhs_s = cwnd_s * mss * (2 * srtt_f + delta);
        if lhs_s >= rhs_s {
            *waiting = true;
            return true;
        }
        false
    } else {
        *waiting = false;
        false
    }
}

impl Scheduler for Ecf {
    fn name(&self) -> &'static str {
        "ecf"
    }

    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        let (fast, best) = match slower_choice(snap.kind, snap.paths) {
            SlowerChoice::Decided(sel) => return sel,
            SlowerChoice::Test { fast, slow } => (fast, slow),
        };
        let delta = self.sigma(fast).max(self.sigma(best));
        self.last_delta = delta;
        if ecf_wait(fast, best, snap.conn.unsent_bytes, delta, &mut self.waiting) {
            return Selection::Wait {
                reason: WaitReason::FasterPathSoon,
            };
        }
        Selection::send_on(best)
    }

    fn rcv_buf_optimization(&mut self) -> Option<&mut Opportunistic> {
        Some(&mut self.opportunistic)
    }

    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("waiting", self.waiting as u8 as f64),
            ("delta_ms", self.last_delta.as_secs_f64() * 1e3),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::ConnView;
    use crate::sched::SendKind;
    use crate::sched::test_path;
    use crate::units::Instant;
    use crate::units::PathMask;
    use crate::units::SubflowId;

    const MSS: u64 = 1448;

    /// cwnd 10/10, SRTT 20/100 ms, the fast one cwnd-full, σ = 5 ms.
    fn vector_paths() -> [PathView; 2] {
        let mut f = test_path(0, 20, 10, 10);
        let mut s = test_path(1, 100, 10, 0);
        f.rttvar = Duration::from_millis(5);
        s.rttvar = Duration::from_millis(5);
        [f, s]
    }

    fn decide(k_pkts: u64, waiting: bool) -> (Selection, bool) {
        let mut e = Ecf::new(DeltaSource::Paper);
        e.waiting = waiting;
        let conn = ConnView {
            unsent_bytes: k_pkts * MSS,
            ..ConnView::default()
        };
        let sel = e.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn,
            &vector_paths(),
        ));
        (sel, e.waiting())
    }

    fn slow() -> Selection {
        Selection::Send {
            path: SubflowId(1),
            copies: PathMask::EMPTY,
            burst_bytes: MSS,
        }
    }

    #[test]
    fn waits_up_to_42_packets_then_uses_the_slow_path() {
        let wait = Selection::Wait {
            reason: WaitReason::FasterPathSoon,
        };
        for k in [5, 40, 42] {
            assert_eq!(decide(k, false), (wait, true), "k = {k}");
        }
        for k in [43, 50, 100] {
            assert_eq!(decide(k, false), (slow(), false), "k = {k}");
        }
    }

    #[test]
    fn the_waiting_bit_extends_the_wait_to_55_packets() {
        let wait = Selection::Wait {
            reason: WaitReason::FasterPathSoon,
        };
        for k in [43, 50, 55] {
            assert_eq!(decide(k, true), (wait, true), "k = {k}");
        }
        assert_eq!(decide(56, true), (slow(), false));
    }

    #[test]
    fn kernel_delta_is_half_the_kernel_rttvar_and_waits_longer() {
        let mut paths = vector_paths();
        for p in &mut paths {
            p.rttvar_kernel = Duration::from_millis(200);
        }
        let mut e = Ecf::new(DeltaSource::Kernel);
        let conn = ConnView {
            unsent_bytes: 60 * MSS,
            ..ConnView::default()
        };
        // δ = 200 ms / 2 = 100 ms: 20·(60 + 10) = 1400 < 10·(100 + 100) = 2000 and
        // 100·60 ≥ 10·(40 + 100): wait, where δ = 5 ms sends on the slow path (1400 ≥ 1050).
        let sel = e.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths));
        assert!(matches!(sel, Selection::Wait { .. }), "{sel:?}");
        assert_eq!(e.last_delta, Duration::from_millis(100));
        let mut p = Ecf::new(DeltaSource::Paper);
        assert_eq!(
            p.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths)),
            slow()
        );
    }

    #[test]
    fn the_default_delta_is_the_kernels() {
        // A registry-built ECF on the kernel-δ vector above (rttvar_us 200 ms → δ 100 ms):
        // waits at k = 60 packets where RFC 6298's δ = 5 ms would send on the slow path.
        let mut paths = vector_paths();
        for p in &mut paths {
            p.rttvar_kernel = Duration::from_millis(200);
        }
        let conn = ConnView {
            unsent_bytes: 60 * MSS,
            ..ConnView::default()
        };
        let mut e = build(&SchedConfig::default()).expect("default options");
        let sel = e.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths));
        assert!(matches!(sel, Selection::Wait { .. }), "{sel:?}");
        let mut paper = SchedConfig::default();
        paper.options.insert("delta".into(), "paper".into());
        let mut p = build(&paper).expect("delta=paper");
        assert_eq!(
            p.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths)),
            slow()
        );
    }

    #[test]
    fn the_fastest_path_is_used_when_free() {
        let [mut f, s] = vector_paths();
        f.inflight_bytes = 0;
        let mut e = Ecf::new(DeltaSource::Paper);
        let sel = e.select(&Snapshot::of(Instant::ZERO, SendKind::Fresh, &[f, s]));
        assert!(matches!(
            sel,
            Selection::Send {
                path: SubflowId(0),
                ..
            }
        ));
    }
}
