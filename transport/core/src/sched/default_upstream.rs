//! Upstream Linux default scheduler (`mptcp_subflow_get_send` and
//! `mptcp_subflow_get_retrans` in `net/mptcp/protocol.c`, Linux ≥ 5.19).
//!
//! # New data
//! * Every active subflow (established, not stale) has a linger time
//!   wmem/avg_pacing_rate: the bytes it holds (queued plus unacknowledged) over its averaged
//!   pacing rate. The minimum among non-backup subflows wins; a backup only when no
//!   non-backup subflow is active. A subflow without a pacing rate yet is skipped.
//! * If the winner's send buffer is full, nothing is sent. **There is no cwnd test**: the
//!   subflow's own cwnd and pacing drain what it was given.
//! * burst = min(65 428 B, free peer window); the pick carries that much (at most what its
//!   send buffer still takes). Then avg ← (avg·wmem + pacing·burst)/(burst + wmem).
//!
//! # Retransmission
//! A reinjection goes to the first active non-backup subflow whose queues are empty
//! (nothing in flight, nothing queued); a backup only if every busy subflow has been stale
//! for more than one check. The kernel otherwise leaves the data for the next retransmission
//! timer while new data keeps flowing; here the reinjection queue is served before new data,
//! so holding it would stall the connection (measured: one packet per round trip after a
//! path break). When no subflow is idle, the reinjection goes where new data would go (the
//! shortest linger), up to one burst.
//!
//! # Model choices
//! * The pacing rate is the CC's when it paces (BBR); otherwise Linux's
//!   `tcp_update_pacing_rate`: MSS·max(cwnd, packets_out)/SRTT × 2.0 while cwnd <
//!   ssthresh/2 (or no ssthresh yet), else × 1.2.
//! * The subflow send buffer is `sndbuf_factor` (option, default 2) × cwnd, as Linux's
//!   `tcp_sndbuf_expand` sizes it (two windows of segments).
//! * "Stale" (`mptcp_pm_subflow_chk_stale`: several retransmission-timer checks with data
//!   outstanding and nothing received) is read as the `pf` flag: an RTO fired and no ACK came
//!   since. A subflow in RTO-Loss whose RTO fired again counts as stale for more than one
//!   check.

use std::time::Duration;

use super::{PathView, SchedConfig, Scheduler, Selection, SendKind, Snapshot};
use crate::cc::RegistryError;
use crate::pacer::window_pacing_rate;
use crate::units::{Bandwidth, MAX_SUBFLOWS};

/// Linux's MPTCP_SEND_BURST_SIZE.
pub const SEND_BURST_BYTES: u64 = 65_428;

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    let sndbuf_factor = match cfg.options.get("sndbuf_factor") {
        None => 2.0,
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 1.0)
            .ok_or_else(|| RegistryError::BadOption {
                key: "sndbuf_factor".into(),
                value: v.clone(),
                valid: "a number ≥ 1, default 2".into(),
            })?,
    };
    Ok(Box::new(DefaultUpstream {
        sndbuf_factor,
        avg_pacing_bytes_per_s: [0.0; MAX_SUBFLOWS],
        last_linger_ms: [f64::NAN; MAX_SUBFLOWS],
    }))
}

/// Upstream default state: the averaged pacing rate per subflow.
pub struct DefaultUpstream {
    sndbuf_factor: f64,
    avg_pacing_bytes_per_s: [f64; MAX_SUBFLOWS],
    last_linger_ms: [f64; MAX_SUBFLOWS],
}

/// The subflow's pacing rate as Linux would set it (see "Model choices").
pub fn linux_pacing_rate(p: &PathView) -> Option<Bandwidth> {
    if let Some(r) = p.pacing_rate {
        return Some(r);
    }
    // Before the first sample the SRTT is the initial guess, as Linux paces from its
    // initial RTO-derived estimate until one arrives.
    let slow_start = p.ssthresh_bytes.is_none_or(|ss| p.cwnd_bytes < ss / 2);
    Some(window_pacing_rate(
        p.cwnd_bytes.max(p.inflight_bytes),
        p.srtt.max(Duration::from_micros(1)),
        slow_start,
    ))
}

/// Active in the upstream sense: can send, join done, not stale.
fn active(p: &PathView) -> bool {
    p.established && !p.potentially_failed
}

fn wmem(p: &PathView) -> u64 {
    p.inflight_bytes + p.queued_bytes
}

/// avg ← (avg·wmem + pacing·burst)/(burst + wmem).
pub fn averaged_pacing(avg: f64, wmem_bytes: u64, pacing: f64, burst_bytes: u64) -> f64 {
    let (w, b) = (wmem_bytes as f64, burst_bytes as f64);
    if w + b == 0.0 {
        return pacing;
    }
    (avg * w + pacing * b) / (b + w)
}

impl DefaultUpstream {
    fn sndbuf(&self, p: &PathView) -> u64 {
        ((p.cwnd_bytes as f64 * self.sndbuf_factor) as u64).max(2 * p.mss)
    }

    fn pick_fresh<'a>(&mut self, paths: &'a [PathView]) -> Option<&'a PathView> {
        let mut best: [Option<(f64, &PathView)>; 2] = [None, None];
        let mut nr_active = 0;
        for p in paths.iter().filter(|p| active(p)) {
            nr_active += !p.backup as usize;
            let slot = &mut self.avg_pacing_bytes_per_s[p.id.index()];
            if *slot <= 0.0 {
                *slot = linux_pacing_rate(p).map_or(0.0, |r| r.bytes_per_s());
            }
            if *slot <= 0.0 {
                continue;
            }
            let linger = wmem(p) as f64 / *slot;
            self.last_linger_ms[p.id.index()] = linger * 1e3;
            let b = &mut best[p.backup as usize];
            if b.is_none_or(|(l, _)| linger < l) {
                *b = Some((linger, p));
            }
        }
        let chosen = if nr_active == 0 { best[1] } else { best[0] };
        chosen.map(|(_, p)| p)
    }

    fn pick_retrans<'a>(&self, paths: &'a [PathView]) -> Option<&'a PathView> {
        let mut backup = None;
        let mut min_stale_checks = u32::MAX;
        for p in paths.iter().filter(|p| p.established) {
            let stale_checks = match (p.potentially_failed, p.in_rto_loss) {
                (false, _) => 0,
                (true, false) => 1,
                (true, true) => 2,
            };
            if wmem(p) > 0 {
                min_stale_checks = min_stale_checks.min(stale_checks);
                continue;
            }
            if p.potentially_failed {
                continue;
            }
            if p.backup {
                backup = backup.or(Some(p));
                continue;
            }
            return Some(p);
        }
        if min_stale_checks > 1 { backup } else { None }
    }
}

impl Scheduler for DefaultUpstream {
    fn name(&self) -> &'static str {
        "default-upstream"
    }

    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        let Snapshot {
            kind, conn, paths, ..
        } = *snap;
        if let SendKind::Reinject { .. } = kind {
            // The kernel's retransmission pick; when every subflow is busy, the subflow new
            // data would take (see "Retransmission" above).
            let pick = self.pick_retrans(paths).or_else(|| self.pick_fresh(paths));
            return pick.map_or(Selection::None, |p| {
                Selection::send_burst_on(p, SEND_BURST_BYTES)
            });
        }
        let Some(p) = self.pick_fresh(paths) else {
            return Selection::None;
        };
        let held = wmem(p);
        let sndbuf = self.sndbuf(p);
        if held >= sndbuf {
            return Selection::None; // sk_stream_memory_free() fails
        }
        let burst = SEND_BURST_BYTES.min(conn.peer_window_free_bytes).max(p.mss);
        let pacing = linux_pacing_rate(p).map_or(0.0, |r| r.bytes_per_s());
        let slot = &mut self.avg_pacing_bytes_per_s[p.id.index()];
        *slot = averaged_pacing(*slot, held, pacing, burst);
        Selection::Send {
            path: p.id,
            copies: crate::units::PathMask::EMPTY,
            burst_bytes: burst.min(sndbuf - held).max(p.mss),
        }
    }

    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        const AVG: [&str; MAX_SUBFLOWS] = [
            "avg_pacing_0",
            "avg_pacing_1",
            "avg_pacing_2",
            "avg_pacing_3",
            "avg_pacing_4",
            "avg_pacing_5",
            "avg_pacing_6",
            "avg_pacing_7",
        ];
        const LINGER: [&str; MAX_SUBFLOWS] = [
            "linger_ms_0",
            "linger_ms_1",
            "linger_ms_2",
            "linger_ms_3",
            "linger_ms_4",
            "linger_ms_5",
            "linger_ms_6",
            "linger_ms_7",
        ];
        let mut v = Vec::new();
        for i in 0..MAX_SUBFLOWS {
            if self.avg_pacing_bytes_per_s[i] > 0.0 {
                v.push((AVG[i], self.avg_pacing_bytes_per_s[i]));
                v.push((LINGER[i], self.last_linger_ms[i]));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::ConnView;
    use crate::sched::test_path;
    use crate::units::Instant;
    use crate::units::{PathMask, SubflowId};

    fn upstream() -> DefaultUpstream {
        DefaultUpstream {
            sndbuf_factor: 2.0,
            avg_pacing_bytes_per_s: [0.0; MAX_SUBFLOWS],
            last_linger_ms: [f64::NAN; MAX_SUBFLOWS],
        }
    }

    fn conn() -> ConnView {
        ConnView {
            unsent_bytes: 1 << 20,
            peer_window_free_bytes: 1 << 20,
            ..ConnView::default()
        }
    }

    #[test]
    fn picks_the_shortest_linger_not_the_lowest_rtt() {
        // 64 KiB at 100 Mbit/s lingers 5.24 ms; 16 KiB at 10 Mbit/s 13.1 ms.
        let mut a = test_path(0, 80, 100, 0);
        a.queued_bytes = 65_536;
        a.pacing_rate = Some(Bandwidth::from_mbps(100.0));
        let mut b = test_path(1, 10, 100, 0);
        b.queued_bytes = 16_384;
        b.pacing_rate = Some(Bandwidth::from_mbps(10.0));
        let mut s = upstream();
        match s.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn(),
            &[a, b],
        )) {
            Selection::Send {
                path, burst_bytes, ..
            } => {
                assert_eq!(path, SubflowId(0));
                assert_eq!(burst_bytes, SEND_BURST_BYTES);
            }
            other => panic!("{other:?}"),
        }
        assert!((s.last_linger_ms[0] - 5.24288).abs() < 1e-3);
        assert!((s.last_linger_ms[1] - 13.1072).abs() < 1e-3);
    }

    #[test]
    fn averaged_pacing_follows_the_kernel() {
        let avg = averaged_pacing(12.5e6, 65_536, 10e6, 65_428);
        assert!((avg - 11.251_03e6).abs() < 100.0, "{avg}");
    }

    #[test]
    fn no_cwnd_test_but_a_full_send_buffer_stops() {
        let mut full_cwnd = test_path(0, 20, 10, 10);
        full_cwnd.pacing_rate = Some(Bandwidth::from_mbps(10.0));
        let mut s = upstream();
        assert!(matches!(
            s.select(&Snapshot::new(
                Instant::ZERO,
                SendKind::Fresh,
                conn(),
                &[full_cwnd.clone()]
            )),
            Selection::Send { .. }
        ));
        full_cwnd.queued_bytes = full_cwnd.cwnd_bytes; // wmem = 2 × cwnd
        assert_eq!(
            s.select(&Snapshot::new(
                Instant::ZERO,
                SendKind::Fresh,
                conn(),
                &[full_cwnd]
            )),
            Selection::None
        );
    }

    #[test]
    fn window_pacing_for_non_paced_ccs() {
        let mut p = test_path(0, 100, 10, 0);
        p.ssthresh_bytes = Some(100 * 1448);
        // cwnd 10 < ssthresh/2: × 2.0 → 289 600 B/s.
        let r = linux_pacing_rate(&p).unwrap().bytes_per_s();
        assert!((r - 289_600.0).abs() < 1.0, "{r}");
        p.ssthresh_bytes = Some(10 * 1448);
        let r = linux_pacing_rate(&p).unwrap().bytes_per_s();
        assert!((r - 173_760.0).abs() < 1.0, "{r}");
    }

    #[test]
    fn backup_only_when_no_active_and_retransmission_needs_an_idle_subflow() {
        let mut bk = test_path(1, 10, 10, 0);
        bk.backup = true;
        bk.pacing_rate = Some(Bandwidth::from_mbps(10.0));
        let mut a = test_path(0, 50, 10, 5);
        a.pacing_rate = Some(Bandwidth::from_mbps(1.0));
        let mut s = upstream();
        let sel = s.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn(),
            &[a.clone(), bk.clone()],
        ));
        assert_eq!(crate::sched::sent_on(sel), Some(0), "{sel:?}");
        let re = SendKind::Reinject {
            already_on: PathMask::single(SubflowId(0)),
        };
        // The active subflow is busy and not stale: not the idle backup; where new data goes.
        let sel = s.select(&Snapshot::new(
            Instant::ZERO,
            re,
            conn(),
            &[a.clone(), bk.clone()],
        ));
        assert_eq!(crate::sched::sent_on(sel), Some(0), "{sel:?}");
        // Stale for more than one check: the backup takes it.
        a.potentially_failed = true;
        a.in_rto_loss = true;
        let sel = s.select(&Snapshot::new(
            Instant::ZERO,
            re,
            conn(),
            &[a.clone(), bk.clone()],
        ));
        assert_eq!(crate::sched::sent_on(sel), Some(1), "{sel:?}");
        // An idle active subflow takes it first.
        let idle = test_path(2, 90, 10, 0);
        let sel = s.select(&Snapshot::new(Instant::ZERO, re, conn(), &[a, bk, idle]));
        assert_eq!(crate::sched::sent_on(sel), Some(2), "{sel:?}");
    }
}
