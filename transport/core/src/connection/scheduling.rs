//! Scheduler calls and placement: the views the scheduler and the CC see, fresh chunks cut
//! from the send buffer, and `place`, which assigns whole chunks to a subflow's queue.
//!
//! A decision covers `burst_bytes` of *wire* bytes (what cwnd and inflight count): chunks are
//! placed while the bytes placed so far are below it, so no chunk starts beyond the burst
//! (and, since schedulers size bursts by the free window, none starts beyond the window,
//! which is what the subflow's send gate `inflight < cwnd` lets out).

use super::{Connection, Event, Lifecycle};
use crate::cc::SubflowCcView;
use crate::sched::{ConnView, Selection, SendKind};
use crate::subflow::{ChunkRef, QueuedChunk, QueuedKind, data_packet_bytes};
use crate::units::{PathMask, SubflowId};

/// Most scheduler decisions in one `schedule` call (each places at least one chunk or
/// stops, so this only bounds the work of one call).
const MAX_DECISIONS_PER_CALL: usize = 4096;

impl Connection {
    pub(super) fn build_cc_views(&self) -> Vec<SubflowCcView> {
        // Small (≤ 8 entries); uncoupled CCs never look at it.
        self.subflows
            .iter()
            .map(|s| SubflowCcView {
                id: s.id,
                established: s.is_established() && s.rtt.has_sample(),
                cwnd_bytes: self.cc.cwnd_bytes(s.id),
                srtt: s.rtt.srtt(),
                min_rtt: s.rtt.min_rtt(),
                inflight_bytes: s.inflight_bytes,
                phase: self.cc.phase(s.id),
                bw_estimate: self.cc.bw_estimate(s.id),
                mss: s.mss_bytes,
                in_recovery: s.in_recovery(),
                in_rto_loss: s.in_rto_loss(),
                rttvar: s.rtt.rttvar(),
                delivery_rate: s.rate.delivery_rate(),
                ssthresh_bytes: self.cc.ssthresh_bytes(s.id),
                sent_bytes_total: s.counters.bytes_sent_total,
                lost_bytes_total: s.counters.bytes_lost_total,
                delivered_bytes_total: s.rate.delivered_bytes(),
                rtt_samples_this_round: s.rtt_samples_this_round,
                last_rtt_sample: s.rtt.has_sample().then(|| s.rtt.latest()),
            })
            .collect()
    }

    fn refresh_views(&mut self) {
        let peer_rwnd = self.peer_edge.saturating_sub(self.next_fresh);
        for (v, s) in self.views.iter_mut().zip(&self.subflows) {
            v.established = s.is_established();
            v.potentially_failed = s.potentially_failed;
            v.in_rto_loss = s.in_rto_loss();
            v.in_recovery = s.in_recovery();
            v.srtt = s.rtt.srtt();
            v.rttvar = s.rtt.rttvar();
            v.rttvar_kernel = s.rtt.rttvar_kernel();
            v.min_rtt = s.rtt.min_rtt();
            v.has_rtt_sample = s.rtt.has_sample();
            v.cwnd_bytes = self.cc.cwnd_bytes(s.id);
            v.inflight_bytes = s.inflight_bytes;
            v.pacing_rate = self.cc.pacing_rate(s.id);
            v.bw_estimate = self.cc.bw_estimate(s.id);
            v.delivery_rate = s.rate.delivery_rate();
            v.cc_phase = self.cc.phase(s.id);
            v.queued_bytes = s.queued_bytes();
            v.ssthresh_bytes = self.cc.ssthresh_bytes(s.id);
            v.srtt_min_seen = s.srtt_min_seen.unwrap_or_default();
            v.srtt_max_seen = s.srtt_max_seen.unwrap_or_default();
            v.sent_bytes_total = s.counters.bytes_sent_total;
            v.lost_bytes_total = s.counters.bytes_lost_total;
            v.peer_rwnd_bytes = peer_rwnd;
        }
    }

    fn fresh_available(&self) -> bool {
        let data_end = self.send_base + self.send_buf.len() as u64;
        if self.next_fresh < data_end {
            return self.next_fresh < self.peer_edge;
        }
        self.fin_requested && !self.fin_assigned
    }

    /// Next fresh chunk within the peer's window.
    fn take_fresh_chunk(&mut self) -> Option<ChunkRef> {
        let data_end = self.send_base + self.send_buf.len() as u64;
        if self.next_fresh < data_end {
            let room = self.peer_edge.saturating_sub(self.next_fresh);
            if room == 0 {
                self.counters.window_blocked_total += 1;
                return None;
            }
            let len = self.payload_mss.min(data_end - self.next_fresh).min(room);
            let fin = self.fin_requested && self.next_fresh + len == data_end;
            let r = ChunkRef {
                dsn: self.next_fresh,
                len: len as u32,
                fin,
            };
            self.next_fresh += len;
            self.fin_assigned |= fin;
            return Some(r);
        }
        if self.fin_requested && !self.fin_assigned {
            self.fin_assigned = true;
            return Some(ChunkRef {
                dsn: self.next_fresh,
                len: 0,
                fin: true,
            });
        }
        None
    }

    /// The connection as the scheduler sees it, with `queued_total` bytes on subflow queues.
    fn conn_view(&self, queued_total: u64) -> ConnView {
        ConnView {
            unsent_bytes: (self.send_base + self.send_buf.len() as u64) - self.next_fresh,
            reinject_queue_bytes: self.chunks.reinject_bytes(),
            unacked_bytes: self.next_fresh - self.peer_data_ack.min(self.next_fresh),
            peer_window_free_bytes: self.peer_edge.saturating_sub(self.next_fresh),
            send_window_bytes: self.peer_window,
            queued_bytes: queued_total,
        }
    }

    /// Asks the scheduler to place data until it declines or the queues are full enough.
    pub(super) fn schedule(&mut self, now: crate::units::Instant) {
        if self.lifecycle != Lifecycle::Open || !self.any_established {
            return;
        }
        for _ in 0..MAX_DECISIONS_PER_CALL {
            let reinject_carriers = self.chunks.reinject_head();
            let data_end = self.send_base + self.send_buf.len() as u64;
            let window_blocked = self.next_fresh < data_end && self.next_fresh >= self.peer_edge;
            if window_blocked && !self.window_blocked_signalled {
                self.sched
                    .on_event(&crate::sched::SchedEvent::WindowBlocked { now });
            }
            self.window_blocked_signalled = window_blocked;
            if window_blocked && reinject_carriers.is_none() {
                self.opportunistic_retransmit(now);
            }
            if reinject_carriers.is_none() && !self.fresh_available() {
                // Nothing to send. The subflows are not marked application-limited, as in
                // Linux MPTCP: its subflows are fed by the MPTCP layer
                // (`__subflow_push_pending`, `mptcp_sendmsg_frag`, `tcp_push`), never by
                // `tcp_sendmsg`, so `tcp_rate_check_app_limited` never runs on them. Marking
                // them here made every round of a video flow (one segment per round, after
                // an idle gap) app-limited: BBR then never detected a full pipe and stayed in
                // STARTUP (gain 2.89), overflowing short bottleneck queues
                // (tests/bbr_app_limited.rs).
                return;
            }
            self.refresh_views();
            // Bound pre-assignment: never more queued than one window per subflow plus a
            // burst (window schedulers stay far below; AR&P-style pre-assignment cannot grow
            // without limit).
            let cwnd_total: u64 = self
                .views
                .iter()
                .filter(|v| v.established)
                .map(|v| v.cwnd_bytes)
                .sum();
            let queued_total: u64 = self.subflows.iter().map(|s| s.queued_bytes()).sum();
            if queued_total > cwnd_total + self.cfg.sched_config.burst_bytes {
                return;
            }
            let kind = match reinject_carriers {
                Some(already_on) => SendKind::Reinject { already_on },
                None => SendKind::Fresh,
            };
            let conn = self.conn_view(queued_total);
            self.counters.sched_decisions_total += 1;
            let selection = self.sched.select(&crate::sched::Snapshot {
                now,
                kind,
                conn,
                paths: &self.views,
            });
            let trace_from = (self.next_fresh, self.counters.reinjected_bytes_total);
            if let Some(t) = self.sched_trace.as_mut() {
                let mut r = crate::sched::trace::DecisionRecord::new(
                    now,
                    kind,
                    selection,
                    &self.views,
                    self.sched.trace_state(),
                );
                r.dsn = match kind {
                    SendKind::Fresh => self.next_fresh,
                    SendKind::Reinject { .. } => self.chunks.reinject_front_dsn().unwrap_or(0),
                };
                t.push(r);
            }
            let (path, copies, burst_bytes) = match selection {
                Selection::None => {
                    self.sched_dirty = false;
                    return;
                }
                Selection::Wait { .. } => {
                    self.counters.sched_waits_total += 1;
                    self.sched_dirty = false;
                    return;
                }
                Selection::Send {
                    path,
                    copies,
                    burst_bytes,
                } => (path, copies, burst_bytes),
            };
            let valid = self
                .subflows
                .get(path.index())
                .is_some_and(|s| s.is_established());
            if !valid {
                self.sched_dirty = false;
                return;
            }
            let copies = copies.without(path);
            if let Some(prev) = self.last_pick
                && prev != path
            {
                self.events.push_back(Event::SchedSwitch {
                    from: prev,
                    to: path,
                });
            }
            self.last_pick = Some(path);
            self.subflows[path.index()].counters.sched_picks_total += 1;
            let placed = self.place(path, copies, burst_bytes.max(1), reinject_carriers);
            if let Some(r) = self.sched_trace.as_mut().and_then(|t| t.last_mut()) {
                r.placed_bytes = (self.next_fresh - trace_from.0)
                    + (self.counters.reinjected_bytes_total - trace_from.1);
            }
            if placed == 0 {
                self.sched_dirty = false;
                return;
            }
        }
    }

    /// The peer's window blocks new data: the scheduler may resend the oldest undelivered
    /// chunk on one subflow that has not carried it (out-of-tree MPTCP's
    /// `mptcp_rcv_buf_optimization`; counted in `reinjected_bytes_total`) and have the
    /// slower subflows that carried it halve their congestion windows.
    fn opportunistic_retransmit(&mut self, now: crate::units::Instant) {
        let Some((r, carriers)) = self.chunks.oldest_undelivered() else {
            return;
        };
        self.refresh_views();
        let queued_total: u64 = self.subflows.iter().map(|s| s.queued_bytes()).sum();
        let snap = crate::sched::Snapshot::new(
            now,
            SendKind::Fresh,
            self.conn_view(queued_total),
            &self.views,
        );
        let action = self.sched.opportunistic_retransmit(&snap, carriers);
        // Halve the slower carriers' windows (CCs without a window machine decline).
        for sf in action.penalise.iter() {
            if self
                .subflows
                .get(sf.index())
                .is_some_and(|s| s.is_established())
            {
                self.cc.penalise_cwnd(sf);
            }
        }
        let Some(path) = action.resend_on else {
            return;
        };
        let usable = self
            .subflows
            .get(path.index())
            .is_some_and(|s| s.is_established());
        if carriers.contains(path) || !usable {
            return;
        }
        self.subflows[path.index()].push_queue(QueuedChunk {
            chunk: r,
            kind: QueuedKind::Reinject,
        });
        self.chunks.add_carrier(r.dsn, path);
        self.counters.reinjected_bytes_total += r.len as u64;
    }

    /// Assigns whole chunks to `path` (+ redundant `copies`) while the wire bytes placed are
    /// below `burst` (at least one chunk). `reinject`: take them from the reinjection queue
    /// (only those carried by exactly these subflows). Returns the number of chunks placed.
    fn place(
        &mut self,
        path: SubflowId,
        copies: PathMask,
        burst: u64,
        reinject: Option<PathMask>,
    ) -> usize {
        let max_datagram = self.cfg.max_datagram_bytes as u64;
        let mut placed_bytes = 0u64;
        let mut placed = 0usize;
        while placed_bytes < burst {
            let (r, kind) = match reinject {
                Some(carriers) => {
                    let Some(r) = self.chunks.take_reinjection(path, carriers) else {
                        break;
                    };
                    self.counters.reinjected_bytes_total += r.len as u64;
                    (r, QueuedKind::Reinject)
                }
                None => {
                    let Some(r) = self.take_fresh_chunk() else {
                        break;
                    };
                    self.chunks.push_fresh(r, path);
                    (r, QueuedKind::Fresh)
                }
            };
            self.subflows[path.index()].push_queue(QueuedChunk { chunk: r, kind });
            for c in copies.iter() {
                if self
                    .subflows
                    .get(c.index())
                    .is_some_and(|s| s.is_established())
                {
                    self.subflows[c.index()].push_queue(QueuedChunk {
                        chunk: r,
                        kind: QueuedKind::RedundantCopy,
                    });
                    self.counters.redundant_bytes_total += r.len as u64;
                    self.chunks.add_carrier(r.dsn, c);
                }
            }
            placed += 1;
            placed_bytes += data_packet_bytes(r.len as u64, max_datagram);
        }
        placed
    }
}
