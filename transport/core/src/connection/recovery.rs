//! ACK processing, loss detection and a subflow's two congestion episodes, as Linux's
//! `tcp_fastretrans_alert`/`tcp_enter_loss` (`net/ipv4/tcp_input.c`) with the out-of-tree
//! MPTCP's reinjection (`mptcp_reinject_data` on a subflow's RTO):
//!
//! * **Fast recovery** (CA_Recovery): starts when a packet- or time-threshold loss is
//!   detected outside an episode; the CC gets `CongestionEvent::Loss` once. Lost data is
//!   retransmitted on the same subflow (its retransmission queue is served before anything
//!   the scheduler assigned). Further losses do not start another episode. It ends when
//!   nothing sent before it began (`high_pn`, Linux `high_seq`) is outstanding: no such
//!   packet in flight and all data lost from them delivered; the CC gets
//!   `on_recovery_exit`.
//! * **RTO-loss** (CA_Loss): the retransmission timeout declares the whole flight lost, the
//!   CC gets `CongestionEvent::Rto { repeat }` (repeat = the timeout fired again with no ACK
//!   since the previous one, or during fast recovery: Linux then does not lower ssthresh
//!   again), the subflow retransmits its lost data itself and the connection also queues
//!   every undelivered chunk of the subflow for reinjection elsewhere. The state ends, with
//!   `on_recovery_exit`, when every chunk lost at the (latest) timeout is delivered and a
//!   packet was acknowledged on the subflow since that timeout.

use std::time::Duration;

use super::chunks::ChunkTable;
use super::{CloseReason, Connection, Event};
use crate::cc::rate::AckRate;
use crate::cc::{AckEvent, CcPhase, CongestionEvent};
use crate::sched::SchedEvent;
use crate::subflow::{
    ChunkRef, EpisodeKind, LossEpisode, LostPackets, MAX_HANDSHAKE_ATTEMPTS, SubflowState,
};
use crate::units::{Instant, SubflowId};
use crate::wire;

/// A sender counts as cwnd-limited for this long after it last filled its window, in SRTTs
/// (Linux `tcp_is_cwnd_limited` looks back over the last window's worth of sends).
const CWND_LIMITED_MEMORY_SRTTS: u32 = 2;

/// In slow start the sender counts as cwnd-limited once the flight reaches this fraction
/// of cwnd (1/2, Linux `tcp_is_cwnd_limited`: cwnd < 2 · max_packets_out).
const SLOW_START_LIMITED_FRACTION: u64 = 2;

/// What an ACK frame acknowledged (nothing for the loss timer).
struct AckedNow {
    acked_bytes: u64,
    rtt_sample: Option<Duration>,
    snd_una_advanced: bool,
}

/// What one ACK frame (or loss timer) amounted to, for the CC's `AckEvent`.
struct AckSummary {
    acked_bytes: u64,
    rtt_sample: Option<Duration>,
    prior_inflight: u64,
    largest_acked_sent_time: Instant,
    rate: AckRate,
    round_start: bool,
    snd_una_advanced: bool,
}

impl Connection {
    pub(super) fn on_ack_frame(&mut self, id: SubflowId, now: Instant, a: &wire::AckFrame<'_>) {
        let max_ack_delay = self.cfg.max_ack_delay;
        let s = &mut self.subflows[id.index()];
        if a.largest >= s.next_pn {
            return; // acknowledges a packet never sent: ignore the frame
        }
        if s.state == SubflowState::Handshaking {
            s.state = SubflowState::Established;
            s.hello_pending = false;
            s.handshake_attempts = 0;
            self.on_established(id);
        }
        // In fast recovery, PRR needs Linux's FLAG_SND_UNA_ADVANCED: did the subflow's
        // cumulative point move?
        let una_before = self.subflows[id.index()]
            .in_recovery()
            .then(|| self.snd_una_dsn(id));
        let s = &mut self.subflows[id.index()];
        let prior_inflight = s.inflight_bytes;
        let acked = s.on_ack_ranges(now, a.ranges());
        if s.largest_acked.is_none_or(|l| a.largest > l) {
            s.largest_acked = Some(a.largest);
        }
        let mut rtt_sample = None;
        if let Some((pn, sent_time, eliciting)) = acked.largest {
            if s.largest_acked == Some(pn) {
                s.largest_acked_sent_time = Some(sent_time);
            }
            if pn == a.largest && eliciting {
                let sample = now - sent_time;
                let ack_delay = Duration::from_micros(a.ack_delay_us as u64).min(max_ack_delay);
                s.rtt.update(sample, ack_delay, a.largest, s.next_pn);
                s.rtt_samples_this_round += 1;
                rtt_sample = Some(sample);
                let srtt = s.rtt.srtt();
                s.srtt_min_seen = Some(s.srtt_min_seen.map_or(srtt, |m| m.min(srtt)));
                s.srtt_max_seen = Some(s.srtt_max_seen.map_or(srtt, |m| m.max(srtt)));
            }
            // The path works: leave the potentially-failed state, stop probing.
            s.pto_count = 0;
            s.potentially_failed = false;
            s.probes_pending = 0;
            if let Some(e) = s.episode.as_mut() {
                e.acked_since_timeout = true;
            }
        }
        s.counters.bytes_acked_total += acked.acked_bytes;
        for c in &acked.delivered {
            self.chunks.mark_delivered(*c);
        }
        // Outside fast recovery there is no hole the ACK could leave in place that matters:
        // an ACK of new data counts as advancing (Linux FLAG_DATA_ACKED).
        let snd_una_advanced = match una_before {
            Some(before) => {
                let advanced = before.is_some_and(|lowest| !self.still_owes(id, lowest));
                if cfg!(test) {
                    assert_eq!(advanced, before.is_some() && self.snd_una_dsn(id) != before);
                }
                advanced
            }
            None => acked.acked_bytes > 0,
        };
        if !acked.delivered.is_empty() {
            self.check_episodes(Some(id), now);
        }
        let lost = self.subflows[id.index()].detect_losses(now);
        let ack = AckedNow {
            acked_bytes: acked.acked_bytes,
            rtt_sample,
            snd_una_advanced,
        };
        self.after_ack_or_loss_timer(id, now, prior_inflight, lost, ack);
        if acked.acked_bytes > 0 {
            self.sched.on_event(&SchedEvent::Acked {
                path: id,
                bytes: acked.acked_bytes,
                now,
            });
        }
    }

    /// RFC 9002 loss timer: packets may now be lost by the time threshold.
    pub(super) fn on_loss_timer(&mut self, id: SubflowId, now: Instant) {
        let s = &mut self.subflows[id.index()];
        let prior_inflight = s.inflight_bytes;
        let lost = s.detect_losses(now);
        if lost.pkts > 0 {
            let ack = AckedNow {
                acked_bytes: 0,
                rtt_sample: None,
                snd_una_advanced: false,
            };
            self.after_ack_or_loss_timer(id, now, prior_inflight, lost, ack);
        }
    }

    /// Data delivered by subflow `except`'s ACK, or covered by the peer's DATA_ACK (`except`
    /// None), may be what another subflow's episode waits for: its data reinjected after its
    /// RTO (its own copy then discarded as stale), or original packets that arrived after
    /// the RTO wrote them off and whose record `pop_resolved` has dropped, so that no subflow
    /// ACK can deliver them any more. Such a subflow may get no ACK of its own again (nothing
    /// of it in flight), so its exit is checked now; otherwise it would stay in the RTO-loss
    /// state, which no scheduler sends new data to, for good (Linux leaves `TCP_CA_Loss` once
    /// `snd_una` passes `high_seq`, `tcp_fastretrans_alert`).
    pub(super) fn check_episodes(&mut self, except: Option<SubflowId>, now: Instant) {
        for j in 0..self.subflows.len() {
            let other = SubflowId(j as u8);
            if Some(other) == except || self.subflows[j].episode.is_none() {
                continue;
            }
            if let Some(still_lost) = self.check_episode_exit(other, now)
                && !still_lost.is_empty()
            {
                let inflight = self.subflows[j].inflight_bytes;
                let none = LostPackets::default();
                self.enter_fast_recovery(other, now, inflight, &none, still_lost);
            }
        }
    }

    /// The chunk needs no more sending: delivered by some subflow, or covered by the peer's
    /// connection-level DATA_ACK (which may arrive before the subflow ACK that carried it,
    /// or instead of it when the chunk was reinjected elsewhere).
    fn chunk_done(&self, c: &ChunkRef) -> bool {
        chunk_done(&self.chunks, self.peer_data_ack, self.send_base, c)
    }

    /// The lowest data sequence number the subflow still owes (its `snd_una` in TCP terms);
    /// None when it owes nothing.
    fn snd_una_dsn(&self, id: SubflowId) -> Option<u64> {
        // The lowest outstanding DSN not delivered. Only a DSN below the lowest found so far
        // can change the answer, so only those are looked up in the chunk table (a binary
        // search): along the packets in flight DSNs mostly rise, and this runs twice per ACK
        // in fast recovery over every packet in flight.
        let mut lowest: Option<u64> = None;
        for dsn in self.subflows[id.index()].outstanding_dsns() {
            if lowest.is_none_or(|l| dsn < l) && !self.chunks.is_delivered(dsn) {
                lowest = Some(dsn);
            }
        }
        lowest
    }

    /// Whether the subflow still owes `dsn`: some packet in flight or queued retransmission
    /// carries it and it is not delivered. Between the two `snd_una_dsn` points of an ACK
    /// (packets only leave flight, chunks only become delivered) the owed set only shrinks,
    /// so `snd_una_dsn` stayed at its earlier value exactly when that value is still owed;
    /// this answers that with a walk that stops at the first carrier (DSNs mostly rise
    /// along the packets, so it is near the front) instead of a walk over all of them.
    fn still_owes(&self, id: SubflowId, dsn: u64) -> bool {
        !self.chunks.is_delivered(dsn)
            && self.subflows[id.index()]
                .outstanding_dsns()
                .any(|d| d == dsn)
    }

    /// The common tail of an ACK and of the loss timer: losses, episode exit and start, the
    /// rate sample, the round, then `on_ack` (the order `cc/mod.rs` documents).
    fn after_ack_or_loss_timer(
        &mut self,
        id: SubflowId,
        now: Instant,
        prior_inflight: u64,
        lost: LostPackets,
        acked: AckedNow,
    ) {
        let mut lost_data = self.record_losses(id, now, &lost);
        if let Some(still_lost) = self.check_episode_exit(id, now) {
            // Linux: Open again with packets still marked lost → Recovery again at once
            // (their bytes left inflight when they were declared lost).
            for c in still_lost {
                if !lost_data.contains(&c) {
                    lost_data.push(c);
                }
            }
        }
        if !lost_data.is_empty() && self.subflows[id.index()].episode.is_none() {
            self.enter_fast_recovery(id, now, prior_inflight, &lost, lost_data);
        }
        let s = &mut self.subflows[id.index()];
        let rate = s.rate.take_ack(now, s.rtt.min_rtt());
        let round_start = rate
            .prior_delivered_bytes
            .is_some_and(|p| p >= s.round_end_delivered);
        if round_start {
            s.round_end_delivered = s.rate.delivered_bytes();
        }
        let summary = AckSummary {
            acked_bytes: acked.acked_bytes,
            rtt_sample: acked.rtt_sample,
            snd_una_advanced: acked.snd_una_advanced,
            prior_inflight,
            largest_acked_sent_time: s.largest_acked_sent_time.unwrap_or(now),
            rate,
            round_start,
        };
        if rate.prior_delivered_bytes.is_some() || lost.pkts > 0 {
            let views = self.build_cc_views();
            let ack = self.ack_event(id, now, &summary);
            self.cc.on_ack(id, &ack, &views);
        }
        if round_start {
            self.subflows[id.index()].rtt_samples_this_round = 0;
        }
    }

    fn ack_event(&self, id: SubflowId, now: Instant, a: &AckSummary) -> AckEvent {
        let s = &self.subflows[id.index()];
        let cwnd = self.cc.cwnd_bytes(id);
        let srtt = s.rtt.srtt();
        let recently_limited = s
            .last_cwnd_limited
            .is_some_and(|t| now.saturating_duration_since(t) <= srtt * CWND_LIMITED_MEMORY_SRTTS);
        let slow_start = matches!(self.cc.phase(id), CcPhase::SlowStart | CcPhase::Startup);
        let is_cwnd_limited = recently_limited
            || a.prior_inflight + s.mss_bytes >= cwnd
            || (slow_start && a.prior_inflight * SLOW_START_LIMITED_FRACTION >= cwnd);
        AckEvent {
            now,
            acked_bytes: a.acked_bytes,
            rtt_sample: a.rtt_sample,
            srtt,
            min_rtt: s.rtt.min_rtt(),
            inflight_bytes: s.inflight_bytes,
            prior_inflight_bytes: a.prior_inflight,
            is_cwnd_limited,
            in_recovery: s.in_recovery(),
            largest_acked_sent_time: a.largest_acked_sent_time,
            rate: a.rate.sample,
            delivered_bytes_total: s.rate.delivered_bytes(),
            mss: s.mss_bytes,
            newly_lost_bytes: a.rate.newly_lost_bytes,
            in_rto_loss: s.in_rto_loss(),
            round_start: a.round_start,
            rttvar: s.rtt.rttvar(),
            snd_una_advanced: a.snd_una_advanced,
            // detect_losses ran for this ACK: a loss time is pending exactly when a packet
            // below the largest acknowledged one is still in flight.
            disorder: s.loss_time.is_some(),
        }
    }

    /// Events, and where the lost data goes: retransmitted on the same subflow (Linux), or
    /// into the reinjection queue with `Config::reinject_fast_losses`. Data lost from packets
    /// sent before the current episode began is added to it. Returns the lost data that was
    /// not delivered by another packet: only such a loss is one TCP would see (a lost PING or
    /// a lost copy of data acknowledged meanwhile has no sequence-space hole).
    fn record_losses(&mut self, id: SubflowId, now: Instant, lost: &LostPackets) -> Vec<ChunkRef> {
        let mut lost_data = Vec::new();
        if lost.pkts == 0 {
            return lost_data;
        }
        self.events.push_back(Event::Loss {
            path: id,
            pkts: lost.pkts,
        });
        self.sched.on_event(&SchedEvent::Lost {
            path: id,
            bytes: lost.bytes,
            now,
        });
        for &(_, c) in &lost.chunks {
            if self.chunks.is_delivered(c.dsn) {
                continue;
            }
            lost_data.push(c);
            if self.cfg.reinject_fast_losses {
                self.chunks.queue_reinjection(c.dsn);
            } else {
                self.subflows[id.index()].push_retransmit(c);
            }
        }
        let s = &mut self.subflows[id.index()];
        if let Some(e) = s.episode.as_mut() {
            let high_pn = e.high_pn;
            for &(pn, c) in &lost.chunks {
                if lost_data.contains(&c) {
                    if pn < high_pn {
                        e.undelivered.push(c);
                    } else {
                        e.lost_after.push(c);
                    }
                }
            }
        }
        self.sched_dirty = true;
        lost_data
    }

    fn enter_fast_recovery(
        &mut self,
        id: SubflowId,
        now: Instant,
        prior_inflight: u64,
        lost: &LostPackets,
        lost_data: Vec<ChunkRef>,
    ) {
        let s = &mut self.subflows[id.index()];
        s.counters.recoveries_total += 1;
        s.episode = Some(LossEpisode {
            kind: EpisodeKind::FastRecovery,
            high_pn: s.next_pn,
            undelivered: lost_data,
            lost_after: Vec::new(),
            acked_since_timeout: false,
        });
        let ev = CongestionEvent::Loss {
            lost_bytes: lost.bytes,
            largest_lost_sent_time: lost.largest_sent_time.unwrap_or(now),
            inflight_bytes: prior_inflight,
        };
        let views = self.build_cc_views();
        self.cc.on_congestion(id, now, &ev, &views);
    }

    /// Ends the subflow's episode once nothing sent before `high_pn` is outstanding (and, in
    /// the RTO-loss state, an ACK arrived since the latest timeout). Returns, when it ended,
    /// the data lost during it from later packets that is still undelivered.
    fn check_episode_exit(&mut self, id: SubflowId, now: Instant) -> Option<Vec<ChunkRef>> {
        let s = &mut self.subflows[id.index()];
        let in_flight_below = s.in_flight_below(s.episode.as_ref()?.high_pn);
        let e = s.episode.as_mut()?;
        // Filtered in place (same elements, same order as a filtered copy): a chunk once done
        // stays done, so what is dropped here would be dropped on every later call too.
        let (chunks, peer_data_ack, send_base) = (&self.chunks, self.peer_data_ack, self.send_base);
        e.undelivered
            .retain(|c| !chunk_done(chunks, peer_data_ack, send_base, c));
        let acked_ok = e.kind == EpisodeKind::FastRecovery || e.acked_since_timeout;
        if e.undelivered.is_empty() && !in_flight_below && acked_ok {
            let lost_after = s.episode.take().map_or(Vec::new(), |e| e.lost_after);
            self.cc.on_recovery_exit(id, now);
            self.sched_dirty = true;
            Some(
                lost_after
                    .into_iter()
                    .filter(|c| !self.chunk_done(c))
                    .collect(),
            )
        } else {
            None
        }
    }

    /// The probe timer: handshake retry, tail-loss probe, or retransmission timeout.
    pub(super) fn on_pto(&mut self, id: SubflowId, now: Instant) {
        let s = &mut self.subflows[id.index()];
        if s.state == SubflowState::Handshaking {
            s.handshake_attempts += 1;
            if s.handshake_attempts >= MAX_HANDSHAKE_ATTEMPTS {
                s.state = SubflowState::Failed;
                self.events.push_back(Event::SubflowFailed { path: id });
                self.sched.on_event(&SchedEvent::PathDown { path: id, now });
                if self
                    .subflows
                    .iter()
                    .all(|s| s.state == SubflowState::Failed)
                {
                    self.close(CloseReason::HandshakeFailed);
                }
            } else {
                s.hello_pending = true;
                s.last_ack_eliciting_sent = Some(now);
            }
            return;
        }
        if s.tlp_allowed() {
            // Tail-loss probe: one packet, no window reduction.
            s.pto_count = 1;
            s.probes_pending = 1;
            s.counters.tlp_total += 1;
            s.last_ack_eliciting_sent = Some(now);
            return;
        }
        self.on_rto(id, now);
    }

    /// Retransmission timeout (`tcp_retransmit_timer` → `tcp_enter_loss`).
    fn on_rto(&mut self, id: SubflowId, now: Instant) {
        let s = &mut self.subflows[id.index()];
        let repeat = match &s.episode {
            None => false,
            Some(e) => e.kind == EpisodeKind::FastRecovery || !e.acked_since_timeout,
        };
        // The first RTO without a probe before it counts as two timeouts, so that the next
        // one is backed off (Linux doubles the RTO from the first timeout on).
        s.pto_count = s.pto_count.max(1) + 1;
        s.counters.rto_total += 1;
        let prior_inflight = s.inflight_bytes;
        let lost = s.declare_flight_lost(now);
        let mut undelivered = s.episode.take().map_or(Vec::new(), |e| e.undelivered);
        undelivered.extend(lost.chunks.iter().map(|&(_, c)| c));
        s.episode = Some(LossEpisode {
            kind: EpisodeKind::RtoLoss,
            high_pn: s.next_pn,
            undelivered,
            lost_after: Vec::new(),
            acked_since_timeout: false,
        });
        s.potentially_failed = true;
        s.probes_pending = 1;
        s.last_ack_eliciting_sent = Some(now);
        // The subflow retransmits its lost data itself (its first retransmission is the
        // probe), and the connection reinjects everything undelivered that it holds.
        for &(_, c) in &lost.chunks {
            if !self.chunks.is_delivered(c.dsn) {
                s.push_retransmit(c);
            }
        }
        let mut reinject: Vec<u64> = s.pending_retransmissions().map(|c| c.dsn).collect();
        reinject.extend(s.drain_assigned().iter().map(|c| c.dsn));
        for dsn in reinject {
            self.chunks.queue_reinjection(dsn);
        }
        self.sched_dirty = true;
        let views = self.build_cc_views();
        let ev = CongestionEvent::Rto {
            inflight_bytes: prior_inflight,
            repeat,
        };
        self.cc.on_congestion(id, now, &ev, &views);
        self.events.push_back(Event::Rto { path: id });
        if lost.pkts > 0 {
            self.events.push_back(Event::Loss {
                path: id,
                pkts: lost.pkts,
            });
        }
        self.sched.on_event(&SchedEvent::Rto { path: id, now });
    }
}

/// [`Connection::chunk_done`] on the parts it reads (callable while a subflow is borrowed).
/// The two comparisons go first: they settle most chunks without a chunk-table lookup, and
/// all three tests are pure, so the order does not change the answer.
fn chunk_done(chunks: &ChunkTable, peer_data_ack: u64, send_base: u64, c: &ChunkRef) -> bool {
    c.end() <= peer_data_ack || c.dsn < send_base || chunks.is_delivered(c.dsn)
}
