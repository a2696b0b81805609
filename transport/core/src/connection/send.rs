//! Packets out: control packets (HELLO, ACK, PING, CLOSE), data from the subflow queues in
//! pacing order, the peer's DATA_ACK (which frees the send buffer), and the bookkeeping of
//! every sent packet.
//!
//! Pacing follows `SubflowCc::pacing_rate`: None = unpaced (Linux without the fq qdisc),
//! Some(rate) = released at that rate by the subflow's `Pacer`.

use std::collections::VecDeque;

use super::{Connection, Event, Lifecycle, Role, Transmit};
use crate::subflow::{ChunkRef, QueuedKind, SubflowState};
use crate::units::{Instant, SubflowId};
use crate::wire::{Header, Writer};

impl Connection {
    /// The peer's DATA_ACK: cumulative data ACK and receive window.
    pub(super) fn on_data_ack(&mut self, now: Instant, data_ack: u64, window: u64) {
        let sent_end = self.next_fresh + self.fin_assigned as u64;
        if data_ack > sent_end {
            return; // acknowledges data never sent: ignore
        }
        self.peer_window = window;
        self.peer_edge = self.peer_edge.max(data_ack.saturating_add(window));
        if data_ack <= self.peer_data_ack {
            if data_ack == self.peer_data_ack {
                self.sched_dirty = true;
            }
            return;
        }
        self.peer_data_ack = data_ack;
        self.chunks.on_data_ack(data_ack);
        // What the DATA_ACK covers may be the last data a subflow's loss episode waits for
        // (original packets that arrived after their RTO had written them off).
        self.check_episodes(None, now);
        let data_end = self.send_base + self.send_buf.len() as u64;
        let new_base = data_ack.min(data_end);
        if new_base > self.send_base {
            self.send_buf.drain(..(new_base - self.send_base) as usize);
            self.send_base = new_base;
            if self.write_blocked {
                self.write_blocked = false;
                self.events.push_back(Event::Writable);
            }
        }
        self.sched_dirty = true;
    }

    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        if self.lifecycle == Lifecycle::Closed {
            // Flush a pending CLOSE (abort) once.
            for i in 0..self.subflows.len() {
                if let Some(code) = self.subflows[i].close_pending.take() {
                    return Some(self.send_control(i, now, buf, Control::Close(code)));
                }
            }
            return None;
        }
        let buf = &mut buf[..self.cfg.max_datagram_bytes];
        let n = self.subflows.len();
        for k in 0..n {
            let i = (self.rr_cursor + k) % n;
            let s = &self.subflows[i];
            if matches!(s.state, SubflowState::Failed | SubflowState::AwaitingHello) {
                continue;
            }
            if s.hello_pending {
                self.rr_cursor = (i + 1) % n;
                return Some(self.send_control(i, now, buf, Control::Hello));
            }
            if let Some(code) = s.close_pending {
                self.subflows[i].close_pending = None;
                return Some(self.send_control(i, now, buf, Control::Close(code)));
            }
            // A probe carries the pending ACK (a data probe when it fits). With nothing queued
            // it retransmits the newest data in flight, else it is a PING.
            if s.probes_pending > 0 && s.is_established() {
                let s = &mut self.subflows[i];
                s.probes_pending -= 1;
                if !s.has_queued()
                    && let Some(c) = s.newest_in_flight_data()
                {
                    s.push_retransmit(c);
                }
                self.rr_cursor = (i + 1) % n;
                if let Some(t) = self.send_data(i, now, buf) {
                    return Some(t);
                }
                return Some(self.send_control(i, now, buf, Control::Ping));
            }
            if s.ack_now || s.ack_deadline.is_some_and(|d| now >= d) {
                self.rr_cursor = (i + 1) % n;
                return Some(self.send_control(i, now, buf, Control::Ack));
            }
        }
        if self.window_update_pending
            && let Some(i) = self.subflows.iter().position(|s| s.is_established())
        {
            self.window_update_pending = false;
            return Some(self.send_control(i, now, buf, Control::Ack));
        }
        if self.sched_dirty {
            self.schedule(now);
        }
        // Data: the sendable subflow with the earliest pacing release. Stale queue entries
        // (data acked meanwhile) are skipped inside send_data; retry while that happens.
        let horizon = now + self.cfg.pacing_horizon;
        loop {
            let mut best: Option<(Instant, usize)> = None;
            for i in 0..n {
                // The CC is asked (pure getters) only about subflows with something to send.
                let s = &self.subflows[i];
                if !s.has_queued() || !s.is_established() {
                    continue;
                }
                let id = SubflowId(i as u8);
                let cwnd = self.cc.cwnd_bytes(id);
                let s = &mut self.subflows[i];
                if s.inflight_bytes >= cwnd {
                    s.last_cwnd_limited = Some(now);
                    continue;
                }
                let rate = self.cc.pacing_rate(id);
                let release = self.subflows[i].pacer.release_time(now, rate);
                if release <= horizon && best.is_none_or(|(t, _)| release < t) {
                    best = Some((release, i));
                }
            }
            let (release, i) = best?;
            if let Some(t) = self.send_data(i, release.max(now), buf) {
                return Some(t);
            }
            // Subflow i's queue held only stale entries: the scheduler may place data there
            // now (otherwise, with nothing in flight, no ACK would come to ask it again).
            if self.sched_dirty {
                self.schedule(now);
            }
        }
    }

    fn next_header(&mut self, i: usize) -> Header {
        let s = &mut self.subflows[i];
        let pn = s.next_pn;
        s.next_pn += 1;
        Header {
            conn_id: self.conn_id,
            subflow: i as u8,
            pn,
        }
    }

    fn write_ack_frames(&mut self, i: usize, now: Instant, w: &mut Writer<'_>, with_ranges: bool) {
        if with_ranges {
            let s = &mut self.subflows[i];
            if let Some(largest) = s.received.largest() {
                let delay_us = s
                    .largest_received_time
                    .map_or(0, |t| now.saturating_duration_since(t).as_micros());
                if w.push_ack(
                    largest,
                    delay_us.min(u32::MAX as u128) as u32,
                    s.received.iter_desc(),
                ) {
                    s.ack_now = false;
                    s.ack_deadline = None;
                    s.ack_eliciting_since_ack = 0;
                }
            }
        }
        let edge = self.window_edge().max(self.advertised_edge);
        if w.push_data_ack(self.recv_next, edge - self.recv_next) {
            self.advertised_edge = edge;
        }
    }

    fn send_control(&mut self, i: usize, now: Instant, buf: &mut [u8], what: Control) -> Transmit {
        let h = self.next_header(i);
        let mut w = Writer::new(buf, h);
        let eliciting = match what {
            Control::Hello => {
                let s = &self.subflows[i];
                w.push_hello(s.backup, &s.name);
                self.subflows[i].hello_pending = false;
                true
            }
            Control::Ping => {
                w.push_ping();
                true
            }
            Control::Close(code) => {
                w.push_close(code);
                false
            }
            Control::Ack => false,
        };
        if !matches!(what, Control::Hello) || self.role == Role::Server {
            self.write_ack_frames(i, now, &mut w, true);
        }
        let len = w.len();
        self.record_sent(i, now, h.pn, len, eliciting, None);
        Transmit {
            path: SubflowId(i as u8),
            len,
            send_at: now,
        }
    }

    /// Sends the head of subflow i's queues (retransmissions first, skipping data delivered
    /// meanwhile). The caller checked cwnd and pacer, or this is a probe that ignores them.
    fn send_data(&mut self, i: usize, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let q = loop {
            let Some(q) = self.subflows[i].pop_queue() else {
                // Only stale entries were left: the queue's room is the scheduler's again.
                self.sched_dirty = true;
                return None;
            };
            let acked = q.chunk.end() <= self.peer_data_ack || q.chunk.dsn < self.send_base;
            let stale =
                acked || (q.kind != QueuedKind::Fresh && self.chunks.is_delivered(q.chunk.dsn));
            if !stale {
                break q;
            }
        };
        let h = self.next_header(i);
        let mut w = Writer::new(buf, h);
        let c = q.chunk;
        let off = (c.dsn - self.send_base) as usize;
        let len = c.len as usize;
        let dst = w
            .push_data_with(c.dsn, c.fin, len)
            .expect("chunk ≤ payload mss fits");
        copy_from_deque(&self.send_buf, off, dst);
        let ack_due = {
            let s = &self.subflows[i];
            s.ack_now || s.ack_deadline.is_some_and(|d| now >= d)
        };
        self.write_ack_frames(i, now, &mut w, false);
        if ack_due {
            // Piggyback the subflow ACK when it fits.
            self.write_ack_frames(i, now, &mut w, true);
        }
        let total = w.len();
        if !self.subflows[i].has_queued() {
            // Room may have opened for the scheduler to place more.
            self.sched_dirty = true;
        }
        let retrans = q.kind != QueuedKind::Fresh;
        self.record_sent(i, now, h.pn, total, true, Some(c));
        let s = &mut self.subflows[i];
        s.counters.data_bytes_sent_total += len as u64;
        if retrans {
            s.counters.bytes_retrans_total += total as u64;
            s.counters.pkts_retrans_total += 1;
        }
        Some(Transmit {
            path: SubflowId(i as u8),
            len: total,
            send_at: now,
        })
    }

    /// Books a sent packet: counters, the sent record, pacer, idle restart, cwnd-limited
    /// mark and the CC's `on_sent`. `data` None and not `ack_eliciting`: an untracked
    /// ACK/CLOSE.
    fn record_sent(
        &mut self,
        i: usize,
        now: Instant,
        pn: u64,
        len: usize,
        ack_eliciting: bool,
        data: Option<ChunkRef>,
    ) {
        let id = SubflowId(i as u8);
        let s = &mut self.subflows[i];
        s.counters.pkts_sent_total += 1;
        s.counters.bytes_sent_total += len as u64;
        if !ack_eliciting {
            s.on_untracked_sent(now, pn);
            return;
        }
        // (Pure CC getters: asked only for packets the pacer books.)
        let rate = self.cc.pacing_rate(id);
        let burst = self.cc.pacing_burst_bytes(id);
        let s = &mut self.subflows[i];
        // Linux `tcp_cwnd_restart`: data after more than one RTO with nothing in flight.
        let idle_restart = data.is_some()
            && s.inflight_bytes == 0
            && s.last_sent
                .is_some_and(|t| now.saturating_duration_since(t) > s.rtt.rto());
        s.on_packet_sent(now, pn, len as u64, data);
        if data.is_some() {
            s.pacer.on_sent(now, len as u64, s.mss_bytes, rate, burst);
        }
        let inflight = s.inflight_bytes;
        if idle_restart {
            self.cc.on_idle_restart(id, now);
        }
        if inflight >= self.cc.cwnd_bytes(id) {
            self.subflows[i].last_cwnd_limited = Some(now);
        }
        self.cc.on_sent(id, now, len as u64, inflight);
    }
}

#[derive(Clone, Copy, Debug)]
enum Control {
    Hello,
    Ack,
    Ping,
    Close(u8),
}

/// Copies `dst.len()` bytes starting at `off` out of a ring buffer.
fn copy_from_deque(src: &VecDeque<u8>, off: usize, dst: &mut [u8]) {
    let (a, b) = src.as_slices();
    let len = dst.len();
    if off >= a.len() {
        dst.copy_from_slice(&b[off - a.len()..off - a.len() + len]);
    } else {
        let from_a = len.min(a.len() - off);
        dst[..from_a].copy_from_slice(&a[off..off + from_a]);
        dst[from_a..].copy_from_slice(&b[..len - from_a]);
    }
}
