//! AR&P, the Adaptively Redundant and Predictive packet scheduler (J. Han, Y. Zhang et al.,
//! "Leveraging Coupled BBR and Adaptive Packet Scheduling to Boost MPTCP", IEEE Transactions
//! on Wireless Communications 2021, section V). Two parts:
//!
//! # AR: which subflows carry new data (N) and which only copies (R)
//! Every min_i r_i (and whenever the set of usable subflows changes): sort the usable
//! subflows by x_i/r_i, descending (ties to the lower id); N = {first}. For each next
//! candidate j, with X = Σ_N x and Y = Σ_N x·r, put j in N iff
//! x_j/X > Σ_{i∈N} x_i(r_j − 2r_i)/Y and inflight_j ≥ 4 packets, otherwise in R. The
//! inequality is exactly "log(ΣX) − log(Σx·r/Σx) grows when j joins" (the paper's utility);
//! the first subflow never faces the inflight rule. Usable: established, an RTT sample, not
//! `pf`, not in RTO-Loss.
//!
//! # P: in-order pre-assignment by predicted arrival
//! While every subflow of N is in BBR's PROBE_BW (option `predict`), each new segment j goes
//! to argmin_{i∈N} A_i = t0 + bytes(L_i)/x_i + r_i/2, where L_i is what is already assigned to
//! i and not yet sent (the subflow's queue), and segments are pre-assigned only while
//! Σ_N bytes(L_i) < W = max_N r_i · Σ_N x_i (the scheduling window). A subflow of N may be
//! given segments while its cwnd is full: they wait in its queue, in order. Otherwise (not
//! all in PROBE_BW) new data goes round robin over the available subflows of N.
//!
//! Each decision carries a run of consecutive segments: all that go to the same subflow
//! before another subflow's A becomes smaller, (A_second − A_i)·x_i bytes (at least one
//! segment). So every segment's predicted arrival is below A_second, and the predicted
//! arrivals never decrease within a batch. A batch is a series of decisions at one instant
//! during which no queue of N shrank; x_i and r_i are frozen for the batch.
//!
//! Every pick of new data sends a copy to each subflow of R that can queue one (established,
//! not in RTO-Loss, not `pf`, less than a cwnd queued), as the redundant scheduler does; the
//! subflow's pacer spaces them.
//!
//! # Choices where the paper is silent
//! * x_i: the CC's bandwidth estimate BW_i (option `rate=bw`, default; the paper's β_i·BW_i
//!   needs Coupled BBR's β, which the scheduler does not see), or the pacing rate
//!   (`rate=pacing`). CCs without a bandwidth estimate use cwnd/SRTT.
//! * r_i: the path's smallest RTT seen, BBR's RTprop (option `rtt=min_rtt`, default: the
//!   paper has Coupled BBR measure the path), or SRTT (`rtt=srtt`). With SRTT, queueing
//!   delay moves r_i: on RTT 50 vs 150 ms with equal rates the split sits exactly on the
//!   utility's tie (x_j/X = 1 against 1.0) and flips with every SRTT wobble; measured in
//!   docs/algorithms/arp.md. Ties in the ranking go to the lower id.
//! * `predict=probe_bw` (default: the paper) or `always` (P with every CC and phase).
//! * `copies=on` (default) or `off` (R subflows idle instead of carrying copies).
//! * Retransmissions come from the reinjection queue and are placed by P (argmin A over N,
//!   whether or not that subflow carried the data, so the arrival order holds; a failed
//!   subflow has left N by then), without copies. Outside P they go to the lowest-SRTT
//!   available subflow that did not carry them.

use std::time::Duration;

use super::{
    PathView, SchedConfig, Scheduler, Selection, SendKind, Snapshot, WaitReason, best_available,
    by_srtt,
};
use crate::cc::{CcPhase, RegistryError};
use crate::units::{Instant, MAX_SUBFLOWS, PathMask, SubflowId};

/// Where x_i comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSource {
    Bandwidth,
    Pacing,
}

/// Where r_i comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttSource {
    /// The smallest RTT seen (BBR's RTprop), SRTT before there is one.
    MinRtt,
    Srtt,
}

/// When P-scheduling runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PredictWhen {
    ProbeBw,
    Always,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpConfig {
    pub rate: RateSource,
    pub rtt: RttSource,
    pub predict: PredictWhen,
    pub copies: bool,
    /// The AR inflight rule, in packets.
    pub min_inflight_pkts: u64,
}

impl Default for ArpConfig {
    fn default() -> Self {
        ArpConfig {
            rate: RateSource::Bandwidth,
            rtt: RttSource::MinRtt,
            predict: PredictWhen::ProbeBw,
            copies: true,
            min_inflight_pkts: 4,
        }
    }
}

pub fn build(cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    let rate = match cfg.choice("rate", &["bw", "pacing"], "bw")? {
        "pacing" => RateSource::Pacing,
        _ => RateSource::Bandwidth,
    };
    let predict = match cfg.choice("predict", &["probe_bw", "always"], "probe_bw")? {
        "always" => PredictWhen::Always,
        _ => PredictWhen::ProbeBw,
    };
    let rtt = match cfg.choice("rtt", &["min_rtt", "srtt"], "min_rtt")? {
        "srtt" => RttSource::Srtt,
        _ => RttSource::MinRtt,
    };
    let copies = cfg.flag("copies", true)?;
    Ok(Box::new(Arp::new(
        ArpConfig {
            rate,
            rtt,
            predict,
            copies,
            ..ArpConfig::default()
        },
        cfg.burst_bytes,
    )))
}

/// One subflow's AR input: sending rate x (bytes/s), RTT r (s), inflight (packets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArInput {
    pub id: SubflowId,
    pub x: f64,
    pub r: f64,
    pub inflight_pkts: u64,
}

/// The AR greedy split: (N, R).
pub fn ar_split(inputs: &[ArInput], min_inflight_pkts: u64) -> (PathMask, PathMask) {
    let mut order: Vec<&ArInput> = inputs.iter().filter(|i| i.r > 0.0).collect();
    order.sort_by(|a, b| {
        (b.x / b.r)
            .partial_cmp(&(a.x / a.r))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.id.cmp(&b.id))
    });
    let (mut n, mut r) = (PathMask::EMPTY, PathMask::EMPTY);
    let (mut sum_x, mut sum_xr) = (0.0, 0.0);
    let mut members: Vec<&ArInput> = Vec::new();
    for (k, j) in order.into_iter().enumerate() {
        let joins = k == 0 || {
            let rhs: f64 = members.iter().map(|i| i.x * (j.r - 2.0 * i.r)).sum::<f64>() / sum_xr;
            j.x / sum_x > rhs && j.inflight_pkts >= min_inflight_pkts
        };
        if joins {
            n = n.with(j.id);
            sum_x += j.x;
            sum_xr += j.x * j.r;
            members.push(j);
        } else {
            r = r.with(j.id);
        }
    }
    (n, r)
}

/// Frozen per-batch inputs of P.
#[derive(Clone, Copy, Debug)]
struct Batch {
    id: u64,
    now: Instant,
    rate: [f64; MAX_SUBFLOWS],
    rtt: [f64; MAX_SUBFLOWS],
    queued: [u64; MAX_SUBFLOWS],
    n_mask: PathMask,
}

/// AR&P state.
pub struct Arp {
    cfg: ArpConfig,
    burst_cap_bytes: u64,
    non_redundant: PathMask,
    redundant: PathMask,
    usable_at_last_split: PathMask,
    last_split: Option<Instant>,
    rr_next: u8,
    batch: Option<Batch>,
    batches: u64,
    predictive: bool,
    arrival_first_s: f64,
    arrival_bound_s: f64,
    window_bytes: f64,
    preassigned_bytes: u64,
}

fn usable(p: &PathView) -> bool {
    p.established && p.has_rtt_sample && !p.potentially_failed && !p.in_rto_loss
}

fn takes_copy(p: &PathView) -> bool {
    p.established
        && !p.in_rto_loss
        && !p.potentially_failed
        && p.queued_bytes < p.cwnd_bytes.max(p.mss)
}

impl Arp {
    pub fn new(cfg: ArpConfig, burst_cap_bytes: u64) -> Arp {
        Arp {
            cfg,
            burst_cap_bytes,
            non_redundant: PathMask::EMPTY,
            redundant: PathMask::EMPTY,
            usable_at_last_split: PathMask::EMPTY,
            last_split: None,
            rr_next: 0,
            batch: None,
            batches: 0,
            predictive: false,
            arrival_first_s: f64::NAN,
            arrival_bound_s: f64::NAN,
            window_bytes: 0.0,
            preassigned_bytes: 0,
        }
    }

    pub fn sets(&self) -> (PathMask, PathMask) {
        (self.non_redundant, self.redundant)
    }

    /// r_i.
    fn rtt(&self, p: &PathView) -> Duration {
        match self.cfg.rtt {
            RttSource::MinRtt if !p.min_rtt.is_zero() => p.min_rtt,
            _ => p.srtt,
        }
    }

    /// x_i in bytes/s.
    fn rate(&self, p: &PathView) -> f64 {
        let window_rate = || p.cwnd_bytes as f64 / p.srtt.as_secs_f64().max(1e-6);
        match self.cfg.rate {
            RateSource::Bandwidth => p.bw_estimate.map_or_else(window_rate, |b| b.bytes_per_s()),
            RateSource::Pacing => super::default_upstream::linux_pacing_rate(p)
                .map_or_else(window_rate, |b| b.bytes_per_s()),
        }
        .max(1.0)
    }

    fn maybe_split(&mut self, now: Instant, paths: &[PathView]) {
        let usable_mask = paths
            .iter()
            .filter(|p| usable(p))
            .fold(PathMask::EMPTY, |m, p| m.with(p.id));
        let min_rtt = paths
            .iter()
            .filter(|p| usable(p))
            .map(|p| self.rtt(p))
            .min()
            .unwrap_or(Duration::ZERO);
        let due = self
            .last_split
            .is_none_or(|t| now.saturating_duration_since(t) >= min_rtt);
        if !due && usable_mask == self.usable_at_last_split {
            return;
        }
        let inputs: Vec<ArInput> = paths
            .iter()
            .filter(|p| usable(p))
            .map(|p| ArInput {
                id: p.id,
                x: self.rate(p),
                r: self.rtt(p).as_secs_f64(),
                inflight_pkts: p.inflight_bytes / p.mss.max(1),
            })
            .collect();
        let (n, r) = ar_split(&inputs, self.cfg.min_inflight_pkts);
        if n != self.non_redundant {
            self.batch = None;
        }
        self.non_redundant = n;
        self.redundant = r;
        self.usable_at_last_split = usable_mask;
        self.last_split = Some(now);
    }

    fn copies_for(&self, paths: &[PathView], except: SubflowId) -> PathMask {
        if !self.cfg.copies {
            return PathMask::EMPTY;
        }
        paths
            .iter()
            .filter(|p| p.id != except && self.redundant.contains(p.id) && takes_copy(p))
            .fold(PathMask::EMPTY, |m, p| m.with(p.id))
    }

    /// The batch for this decision: continue the current one if nothing moved (same instant,
    /// same N, every queue of N at least what the last decision left in it).
    fn batch(&mut self, now: Instant, paths: &[PathView]) -> Batch {
        let n = self.non_redundant;
        if let Some(b) = self.batch
            && b.now == now
            && b.n_mask == n
            && paths
                .iter()
                .filter(|p| n.contains(p.id))
                .all(|p| p.queued_bytes >= b.queued[p.id.index()])
        {
            return b;
        }
        self.batches += 1;
        let mut b = Batch {
            id: self.batches,
            now,
            rate: [0.0; MAX_SUBFLOWS],
            rtt: [0.0; MAX_SUBFLOWS],
            queued: [0; MAX_SUBFLOWS],
            n_mask: n,
        };
        for p in paths.iter().filter(|p| n.contains(p.id)) {
            b.rate[p.id.index()] = self.rate(p);
            b.rtt[p.id.index()] = self.rtt(p).as_secs_f64();
        }
        b
    }

    /// P-scheduling pick: (subflow, bytes) or None when the scheduling window is full.
    fn predict(&mut self, now: Instant, paths: &[PathView]) -> Option<(SubflowId, u64)> {
        let mut b = self.batch(now, paths);
        let before: Vec<(usize, u64)> = paths
            .iter()
            .map(|p| (p.id.index(), p.queued_bytes))
            .collect();
        let t0 = now.as_nanos() as f64 / 1e9;
        let members: Vec<&PathView> = paths.iter().filter(|p| b.n_mask.contains(p.id)).collect();
        let window: f64 = members
            .iter()
            .map(|p| b.rtt[p.id.index()])
            .fold(0.0, f64::max)
            * members.iter().map(|p| b.rate[p.id.index()]).sum::<f64>();
        let preassigned: u64 = members.iter().map(|p| p.queued_bytes).sum();
        self.window_bytes = window;
        self.preassigned_bytes = preassigned;
        for (i, q) in before {
            b.queued[i] = q;
        }
        self.batch = Some(b);
        if preassigned as f64 >= window {
            return None;
        }
        let arrival = |p: &PathView| {
            let i = p.id.index();
            t0 + p.queued_bytes as f64 / b.rate[i] + b.rtt[i] / 2.0
        };
        let mut ranked: Vec<(f64, SubflowId)> =
            members.iter().map(|p| (arrival(p), p.id)).collect();
        // Arrivals within a nanosecond are a tie: the lower id first.
        ranked.sort_by(|a, b| {
            if (a.0 - b.0).abs() < 1e-9 {
                a.1.cmp(&b.1)
            } else {
                a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal)
            }
        });
        let &(a_best, best) = ranked.first()?;
        let room = window - preassigned as f64;
        let run = match ranked.get(1) {
            Some(&(a_second, _)) => ((a_second - a_best) * b.rate[best.index()]).min(room),
            None => room.min(self.burst_cap_bytes as f64),
        };
        let bytes = (run.floor() as u64).max(1);
        self.arrival_first_s = a_best;
        // The last segment of this run starts at most bytes − 1 after the first.
        self.arrival_bound_s = a_best + (bytes - 1) as f64 / b.rate[best.index()];
        // The core places at least `bytes` (whole segments) unless the data runs out; a queue
        // below that at the next decision means a segment left it: a new batch then.
        if let Some(bt) = self.batch.as_mut() {
            bt.queued[best.index()] += bytes;
        }
        Some((best, bytes))
    }

    fn round_robin<'a>(&mut self, paths: &'a [PathView]) -> Option<&'a PathView> {
        let mut members: Vec<&PathView> = paths
            .iter()
            .filter(|p| self.non_redundant.contains(p.id) && p.is_available())
            .collect();
        members.sort_by_key(|p| (p.id.0 < self.rr_next, p.id));
        let first = members.first().copied()?;
        self.rr_next = first.id.0.wrapping_add(1);
        Some(first)
    }
}

impl Scheduler for Arp {
    fn name(&self) -> &'static str {
        "arp"
    }

    fn select(&mut self, snap: &Snapshot<'_>) -> Selection {
        let Snapshot {
            now, kind, paths, ..
        } = *snap;
        self.maybe_split(now, paths);
        self.arrival_first_s = f64::NAN;
        self.arrival_bound_s = f64::NAN;
        if self.non_redundant.is_empty() {
            // No RTT sample yet anywhere: lowest SRTT, as minRTT.
            self.predictive = false;
            return best_available(paths, kind, by_srtt)
                .map_or(Selection::None, Selection::send_on);
        }
        self.predictive = match self.cfg.predict {
            PredictWhen::Always => true,
            PredictWhen::ProbeBw => paths
                .iter()
                .filter(|p| self.non_redundant.contains(p.id))
                .all(|p| p.cc_phase == CcPhase::ProbeBw),
        };
        let fresh = matches!(kind, SendKind::Fresh);
        if self.predictive {
            return match self.predict(now, paths) {
                None => Selection::Wait {
                    reason: WaitReason::PreAssigned,
                },
                Some((path, bytes)) => Selection::Send {
                    path,
                    copies: if fresh {
                        self.copies_for(paths, path)
                    } else {
                        PathMask::EMPTY
                    },
                    burst_bytes: bytes,
                },
            };
        }
        if !fresh {
            return best_available(paths, kind, by_srtt)
                .map_or(Selection::None, Selection::send_on);
        }
        match self.round_robin(paths) {
            None => Selection::None,
            Some(p) => Selection::Send {
                path: p.id,
                copies: self.copies_for(paths, p.id),
                burst_bytes: p.mss,
            },
        }
    }

    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("n_mask", self.non_redundant.0 as f64),
            ("r_mask", self.redundant.0 as f64),
            ("predictive", self.predictive as u8 as f64),
            ("batch", self.batch.map_or(0, |b| b.id) as f64),
            ("arrival_first_s", self.arrival_first_s),
            ("arrival_last_bound_s", self.arrival_bound_s),
            ("window_bytes", self.window_bytes),
            ("preassigned_bytes", self.preassigned_bytes as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::ConnView;
    use crate::sched::test_path;
    use crate::units::Bandwidth;
    use crate::units::Instant;

    fn input(id: u8, x_mbps: f64, r_ms: f64, inflight_pkts: u64) -> ArInput {
        ArInput {
            id: SubflowId(id),
            x: x_mbps * 1e6 / 8.0,
            r: r_ms / 1e3,
            inflight_pkts,
        }
    }

    fn mask(ids: &[u8]) -> PathMask {
        ids.iter()
            .fold(PathMask::EMPTY, |m, i| m.with(SubflowId(*i)))
    }

    #[test]
    fn ar_vectors() {
        // 60/20 Mbit/s, 50/150 ms: 0.333 ≤ 1.0 → the second is redundant.
        let two = [input(0, 60.0, 50.0, 100), input(1, 20.0, 150.0, 100)];
        assert_eq!(ar_split(&two, 4), (mask(&[0]), mask(&[1])));
        // 50/80 ms: the threshold is −0.4 → both carry new data, unless inflight < 4.
        let near = [input(0, 60.0, 50.0, 100), input(1, 20.0, 80.0, 100)];
        assert_eq!(ar_split(&near, 4), (mask(&[0, 1]), PathMask::EMPTY));
        let thin = [input(0, 60.0, 50.0, 100), input(1, 20.0, 80.0, 3)];
        assert_eq!(ar_split(&thin, 4), (mask(&[0]), mask(&[1])));
        // Three subflows: N = {1, 2}, R = {3}, the brute-force optimum.
        let three = [
            input(0, 50.0, 20.0, 100),
            input(1, 30.0, 40.0, 100),
            input(2, 20.0, 100.0, 100),
        ];
        assert_eq!(ar_split(&three, 4), (mask(&[0, 1]), mask(&[2])));
        // The top-ranked subflow never faces the inflight rule.
        let idle_top = [input(0, 60.0, 50.0, 0)];
        assert_eq!(ar_split(&idle_top, 4), (mask(&[0]), PathMask::EMPTY));
    }

    #[test]
    fn ar_greedy_equals_the_utility_on_three_paths() {
        let xs = [50.0, 30.0, 20.0];
        let rs = [20.0, 40.0, 100.0];
        let utility = |set: &[usize]| {
            let x: f64 = set.iter().map(|&i| xs[i]).sum();
            let xr: f64 = set.iter().map(|&i| xs[i] * rs[i]).sum();
            x.ln() - (xr / x).ln()
        };
        let subsets: [&[usize]; 7] = [&[0], &[1], &[2], &[0, 1], &[0, 2], &[1, 2], &[0, 1, 2]];
        let best = subsets
            .iter()
            .max_by(|a, b| utility(a).partial_cmp(&utility(b)).unwrap())
            .unwrap();
        assert_eq!(*best, &[0usize, 1][..]);
        assert!((utility(best) - 1.068).abs() < 1e-3, "{}", utility(best));
    }

    /// Two subflows in PROBE_BW with x = 7.5 MB/s, r = 50 / 80 ms; a stand-in for the core
    /// places 1500-byte segments until each decision's burst is covered.
    fn p_paths() -> Vec<PathView> {
        [(0u8, 50u64), (1, 80)]
            .iter()
            .map(|&(id, r)| {
                let mut p = test_path(id, r, 1000, 500);
                p.bw_estimate = Some(Bandwidth::from_bytes_per_s(7.5e6));
                p.cc_phase = CcPhase::ProbeBw;
                p
            })
            .collect()
    }

    #[test]
    fn p_assigns_0_to_75_then_76_then_alternates_and_fills_the_window() {
        let mut arp = Arp::new(ArpConfig::default(), 65_428);
        let mut paths = p_paths();
        let conn = ConnView::default();
        let mut assigned: Vec<u8> = Vec::new();
        let mut last_bound = f64::NEG_INFINITY;
        loop {
            let sel = arp.select(&Snapshot::new(Instant::ZERO, SendKind::Fresh, conn, &paths));
            let Selection::Send {
                path,
                copies,
                burst_bytes,
            } = sel
            else {
                assert_eq!(
                    sel,
                    Selection::Wait {
                        reason: WaitReason::PreAssigned
                    }
                );
                break;
            };
            assert!(copies.is_empty(), "both subflows are in N");
            assert!(
                arp.arrival_first_s >= last_bound - 1e-12,
                "arrival {} after bound {last_bound}",
                arp.arrival_first_s
            );
            last_bound = arp.arrival_bound_s;
            let mut placed = 0;
            while placed < burst_bytes {
                paths[path.index()].queued_bytes += 1500;
                placed += 1500;
                assigned.push(path.0);
            }
        }
        assert_eq!(arp.sets(), (mask(&[0, 1]), PathMask::EMPTY));
        assert!(
            assigned[..76].iter().all(|&p| p == 0),
            "{:?}",
            &assigned[..80]
        );
        assert_eq!(assigned[76], 1);
        assert_eq!(&assigned[77..83], &[0, 1, 0, 1, 0, 1]);
        // W = 80 ms × 15 MB/s = 1.2 MB = 800 segments.
        assert_eq!(assigned.len(), 800);
    }

    #[test]
    fn redundant_subflows_get_copies_and_rr_outside_probe_bw() {
        let mut arp = Arp::new(ArpConfig::default(), 65_428);
        let mut fast = test_path(0, 50, 100, 10);
        fast.bw_estimate = Some(Bandwidth::from_mbps(60.0));
        let mut slow = test_path(1, 150, 100, 10);
        slow.bw_estimate = Some(Bandwidth::from_mbps(20.0));
        let sel = arp.select(&Snapshot::of(Instant::ZERO, SendKind::Fresh, &[fast, slow]));
        assert_eq!(arp.sets(), (mask(&[0]), mask(&[1])));
        assert_eq!(
            sel,
            Selection::Send {
                path: SubflowId(0),
                copies: mask(&[1]),
                burst_bytes: 1448
            }
        );
    }

    #[test]
    fn ar_is_recomputed_every_min_rtt() {
        let mut arp = Arp::new(ArpConfig::default(), 65_428);
        let mut a = test_path(0, 50, 100, 10);
        a.bw_estimate = Some(Bandwidth::from_mbps(60.0));
        let mut b = test_path(1, 80, 100, 10);
        b.bw_estimate = Some(Bandwidth::from_mbps(20.0));
        let conn = ConnView::default();
        arp.select(&Snapshot::new(
            Instant::ZERO,
            SendKind::Fresh,
            conn,
            &[a.clone(), b.clone()],
        ));
        assert_eq!(arp.sets().0, mask(&[0, 1]));
        b.srtt = Duration::from_millis(150);
        b.min_rtt = Duration::from_millis(150);
        let soon = Instant::from_nanos(10_000_000);
        arp.select(&Snapshot::new(
            soon,
            SendKind::Fresh,
            conn,
            &[a.clone(), b.clone()],
        ));
        assert_eq!(
            arp.sets().0,
            mask(&[0, 1]),
            "not yet: 10 ms < min r = 50 ms"
        );
        let later = Instant::from_nanos(50_000_000);
        arp.select(&Snapshot::new(later, SendKind::Fresh, conn, &[a, b]));
        assert_eq!(arp.sets(), (mask(&[0]), mask(&[1])));
    }
}
