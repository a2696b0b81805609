//! BLEST, blocking estimation (S. Ferlin, Ö. Alay, O. Mehani, R. Boreli, "BLEST: Blocking
//! Estimation-based MPTCP Scheduler for Heterogeneous Networks", IFIP Networking 2016;
//! out-of-tree kernel `net/mptcp/mptcp_blest.c`).
//!
//! Let f be the lowest-SRTT established subflow (its cwnd ignored) and s the out-of-tree
//! default's choice ([`super::default_oot::oot_choice`]). If s = f, send on f. Otherwise,
//! with the smallest and largest SRTT seen per subflow (`min`, `max`):
//! * linger_s = max(SRTT_s, min_s + (max_s − min_s)·(inflight_s + 1)/cwnd_s) in packets, or
//!   max_s when inflight_s + 1 ≥ cwnd_s;
//! * n = ⌊linger_s / avg_f⌋ + 1 with avg_f = (min_f + max_f)/2;
//! * packets f sends meanwhile: cwnd_f·(2ⁿ − 1) in the initial slow start (no ssthresh yet,
//!   n capped at 16), else (c + ⌊(n − 1)/2⌋)·n with c = max(cwnd_f, ssthresh_f + 1);
//! * fast_bytes = packets·MSS_f·λ. If fast_bytes > snd_wnd − (one segment + bytes s has in
//!   flight or queued), sending on s would block the connection window: wait
//!   ([`WaitReason::WindowBlocked`]).
//!
//! λ starts at 1.2 and stays in [1.0, 1.3]. It is updated on a decision where s ≠ f, at most
//! once per min_s: +0.04 if the peer's window blocked new data since the last update (the
//! kernel's `retrans_flag`, set when `mptcp_rcv_buf_optimization` runs; here the connection's
//! [`SchedEvent::WindowBlocked`]), else −0.01.
//!
//! Reinjections are not held back ([`super::default_oot::slower_choice`] says why).
//!
//! One packet per decision (the kernel asks per segment), so the next segment is tested with
//! s's inflight grown. Options: `lambda` (initial, default 1.2), `lambda_min` (1.0),
//! `lambda_max` (1.3), `lambda_up` (0.04), `lambda_down` (0.01).

use std::time::Duration;

use super::default_oot::{Opportunistic, SlowerChoice, slower_choice};
use super::{PathView, SchedConfig, SchedEvent, Scheduler, Selection, Snapshot, WaitReason};
use crate::cc::RegistryError;
use crate::units::Instant;

/// Settings; `Default` is the kernel module's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlestConfig {
    pub lambda: f64,
    pub lambda_min: f64,
    pub lambda_max: f64,
    pub lambda_up: f64,
    pub lambda_down: f64,
}

impl Default for BlestConfig {
    fn default() -> Self {
        BlestConfig {
            lambda: 1.2,
            lambda_min: 1.0,
            lambda_max: 1.3,
            lambda_up: 0.04,
            lambda_down: 0.01,
        }
    }
}

fn float_option(cfg: &SchedConfig, key: &str, default: f64) -> Result<f64, RegistryError> {
    match cfg.options.get(key) {
        None => Ok(default),
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| RegistryError::BadOption {
                key: key.to_string(),
                value: v.clone(),
                valid: format!("a number ≥ 0, default {default}"),
            }),
    }
}

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    let d = BlestConfig::default();
    let c = BlestConfig {
        lambda: float_option(cfg, "lambda", d.lambda)?,
        lambda_min: float_option(cfg, "lambda_min", d.lambda_min)?,
        lambda_max: float_option(cfg, "lambda_max", d.lambda_max)?,
        lambda_up: float_option(cfg, "lambda_up", d.lambda_up)?,
        lambda_down: float_option(cfg, "lambda_down", d.lambda_down)?,
    };
    if c.lambda_min > c.lambda_max {
        return Err(RegistryError::BadOption {
            key: "lambda_min".into(),
            value: c.lambda_min.to_string(),
            valid: format!("at most lambda_max ({})", c.lambda_max),
        });
    }
    let mut blest = Blest::new(c);
    blest.opportunistic = Opportunistic::from_config(cfg)?;
    Ok(Box::new(blest))
}

/// BLEST state: λ, the window-blocked flag, the last λ update, the last estimate (trace).
pub struct Blest {
    cfg: BlestConfig,
    lambda: f64,
    retrans_flag: bool,
    last_lambda_update: Option<Instant>,
    last_fast_bytes: f64,
    last_avail_bytes: f64,
    last_waited: bool,
    opportunistic: Opportunistic,
}

impl Blest {
    pub fn new(cfg: BlestConfig) -> Blest {
        Blest {
            cfg,
            lambda: cfg.lambda,
            retrans_flag: false,
            last_lambda_update: None,
            last_fast_bytes: 0.0,
            last_avail_bytes: 0.0,
            last_waited: false,
            opportunistic: Opportunistic::default(),
        }
    }

    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    fn update_lambda(&mut self, now: Instant, slow: &PathView) {
        if let Some(t) = self.last_lambda_update
            && now.saturating_duration_since(t) < slow.srtt_min_seen
        {
            return;
        }
        if self.retrans_flag {
            self.lambda += self.cfg.lambda_up;
        } else {
            self.lambda -= self.cfg.lambda_down;
        }
        self.retrans_flag = false;
        self.lambda = self.lambda.clamp(self.cfg.lambda_min, self.cfg.lambda_max);
        self.last_lambda_update = Some(now);
    }
}

/// Estimated time until a segment sent now on `s` is acknowledged.
pub fn linger_time(s: &PathView) -> Duration {
    let mss = s.mss.max(1);
    let inflight_pkts = s.inflight_bytes / mss + 1;
    let cwnd_pkts = (s.cwnd_bytes / mss).max(1);
    let (min, max) = (s.srtt_min_seen, s.srtt_max_seen.max(s.srtt_min_seen));
    let estimate = if inflight_pkts >= cwnd_pkts {
        max
    } else {
        min + (max - min).mul_f64(inflight_pkts as f64 / cwnd_pkts as f64)
    };
    s.srtt.max(estimate)
}

/// Bytes `f` is expected to send during `time`, λ not applied.
pub fn fast_path_bytes(f: &PathView, time: Duration) -> u64 {
    let mss = f.mss.max(1);
    let avg = (f.srtt_min_seen + f.srtt_max_seen) / 2;
    let num_rtts = if avg.is_zero() {
        1
    } else {
        (time.as_nanos() / avg.as_nanos()) as u64 + 1
    };
    let cwnd_pkts = f.cwnd_bytes / mss;
    let packets = match f.ssthresh_bytes {
        None => cwnd_pkts * ((1u64 << num_rtts.min(16)) - 1),
        Some(ssthresh) => {
            let ca_cwnd = cwnd_pkts.max(ssthresh / mss + 1);
            (ca_cwnd + (num_rtts - 1) / 2) * num_rtts
        }
    };
    packets * mss
}

impl Scheduler for Blest {
    fn name(&self) -> &'static str {
        "blest"
    }

    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        self.last_waited = false;
        let (fast, best) = match slower_choice(snap.kind, snap.paths) {
            SlowerChoice::Decided(sel) => return sel,
            SlowerChoice::Test { fast, slow } => (fast, slow),
        };
        self.update_lambda(snap.now, best);
        let fast_bytes = fast_path_bytes(fast, linger_time(best)) as f64 * self.lambda;
        let slow_bytes = best.mss + best.inflight_bytes + best.queued_bytes;
        let avail = snap.conn.send_window_bytes.saturating_sub(slow_bytes) as f64;
        self.last_fast_bytes = fast_bytes;
        self.last_avail_bytes = avail;
        if fast_bytes > avail {
            self.last_waited = true;
            return Selection::Wait {
                reason: WaitReason::WindowBlocked,
            };
        }
        Selection::send_on(best)
    }

    fn on_event(&mut self, ev: &SchedEvent) {
        if let SchedEvent::WindowBlocked { .. } = ev {
            self.retrans_flag = true;
        }
    }

    fn rcv_buf_optimization(&mut self) -> Option<&mut Opportunistic> {
        Some(&mut self.opportunistic)
    }

    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("lambda", self.lambda),
            ("fast_bytes_estimate", self.last_fast_bytes),
            ("window_avail_bytes", self.last_avail_bytes),
            ("waiting", self.last_waited as u8 as f64),
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

    /// f in congestion avoidance (cwnd 10, ssthresh 8, SRTT seen 20–30 ms); s at 100 ms
    /// (seen 90–110 ms), cwnd 10, inflight 4; MSS 1448.
    fn vector_paths() -> [PathView; 2] {
        let mut f = test_path(0, 25, 10, 10);
        f.ssthresh_bytes = Some(8 * 1448);
        f.srtt_min_seen = Duration::from_millis(20);
        f.srtt_max_seen = Duration::from_millis(30);
        let mut s = test_path(1, 100, 10, 4);
        s.srtt_min_seen = Duration::from_millis(90);
        s.srtt_max_seen = Duration::from_millis(110);
        [f, s]
    }

    fn conn(send_window_bytes: u64) -> ConnView {
        ConnView {
            unsent_bytes: 1 << 20,
            send_window_bytes,
            ..ConnView::default()
        }
    }

    #[test]
    fn estimate_matches_the_kernel_arithmetic() {
        let [f, s] = vector_paths();
        assert_eq!(linger_time(&s), Duration::from_millis(100));
        // n = ⌊100/25⌋ + 1 = 5; (max(10, 9) + 2)·5 = 60 packets.
        assert_eq!(fast_path_bytes(&f, linger_time(&s)), 60 * 1448);
        let blest = Blest::new(BlestConfig::default());
        let with_lambda = fast_path_bytes(&f, linger_time(&s)) as f64 * blest.lambda();
        assert!((with_lambda - 104_256.0).abs() < 1e-6, "{with_lambda}");
    }

    #[test]
    fn waits_when_the_meta_window_is_too_small_else_sends_on_the_slow_path() {
        let paths = vector_paths();
        // λ is updated on the first s ≠ f decision (1.2 − 0.01); the vector's 104 256 B uses
        // 1.2, and 1.19 gives 103 387 B: both above 100 kB − 7 240 B, both below 200 kB.
        let mut s = Blest::new(BlestConfig::default());
        s.last_lambda_update = Some(Instant::ZERO);
        assert_eq!(
            s.select(&Snapshot::new(
                Instant::ZERO,
                SendKind::Fresh,
                conn(100_000),
                &paths
            )),
            Selection::Wait {
                reason: WaitReason::WindowBlocked
            }
        );
        assert!((s.last_fast_bytes - 104_256.0).abs() < 1e-6);
        assert_eq!(
            s.select(&Snapshot::new(
                Instant::ZERO,
                SendKind::Fresh,
                conn(200_000),
                &paths
            )),
            Selection::Send {
                path: SubflowId(1),
                copies: PathMask::EMPTY,
                burst_bytes: 1448
            }
        );
    }

    #[test]
    fn the_fast_path_is_used_directly_when_available() {
        let [mut f, s] = vector_paths();
        f.inflight_bytes = 2 * 1448;
        let mut b = Blest::new(BlestConfig::default());
        match b.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn(10_000),
            &[f, s],
        )) {
            Selection::Send {
                path, burst_bytes, ..
            } => {
                assert_eq!(path, SubflowId(0));
                assert_eq!(burst_bytes, 1448, "one packet per decision");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lambda_rises_after_window_blocking_and_decays_otherwise_within_bounds() {
        let paths = vector_paths();
        let mut b = Blest::new(BlestConfig::default());
        let min_s = paths[1].srtt_min_seen;
        let mut now = Instant::ZERO;
        let big = conn(10_000_000);
        b.select(&Snapshot::new(now, SendKind::Fresh, big, &paths));
        assert!((b.lambda() - 1.19).abs() < 1e-9);
        // Within min_s: no update.
        b.on_event(&SchedEvent::WindowBlocked { now });
        b.select(&Snapshot::new(
            now + min_s / 2,
            SendKind::Fresh,
            big,
            &paths,
        ));
        assert!((b.lambda() - 1.19).abs() < 1e-9);
        now += min_s;
        b.select(&Snapshot::new(now, SendKind::Fresh, big, &paths));
        assert!((b.lambda() - 1.23).abs() < 1e-9, "{}", b.lambda());
        for _ in 0..20 {
            b.on_event(&SchedEvent::WindowBlocked { now });
            now += min_s;
            b.select(&Snapshot::new(now, SendKind::Fresh, big, &paths));
        }
        assert!((b.lambda() - 1.3).abs() < 1e-9, "capped at lambda_max");
        for _ in 0..100 {
            now += min_s;
            b.select(&Snapshot::new(now, SendKind::Fresh, big, &paths));
        }
        assert!((b.lambda() - 1.0).abs() < 1e-9, "floored at lambda_min");
    }

    #[test]
    fn initial_slow_start_doubles_per_round() {
        let [mut f, s] = vector_paths();
        f.ssthresh_bytes = None;
        // n = 5: 10·(2⁵ − 1) = 310 packets.
        assert_eq!(fast_path_bytes(&f, linger_time(&s)), 310 * 1448);
    }
}
