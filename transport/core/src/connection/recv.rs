//! Packets in: frame dispatch, the server side of the HELLO handshake, ACK policy, and
//! reassembly of the incoming stream (read buffer + out-of-order queue, window edge).

use super::{CloseReason, Connection, Event, Lifecycle, OFO_SPARE_BUFFERS, Role};
use crate::subflow::SubflowState;
use crate::units::{Instant, SubflowId};
use crate::wire::{self, Frame, WireError};

impl Connection {
    /// Processes one received datagram. Malformed ones are counted and dropped (Err).
    /// Returns the subflow the datagram arrived on.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        datagram: &[u8],
    ) -> Result<SubflowId, WireError> {
        let r = self.handle_datagram_inner(now, datagram);
        if r.is_err() {
            self.counters.malformed_datagrams_total += 1;
        }
        r
    }

    fn handle_datagram_inner(&mut self, now: Instant, d: &[u8]) -> Result<SubflowId, WireError> {
        let (h, payload) = wire::parse_header(d)?;
        if h.conn_id != self.conn_id {
            return Err(WireError::BadSubflow(h.subflow));
        }
        let frames = wire::parse_valid(payload)?;
        if self.lifecycle == Lifecycle::Closed {
            return Ok(SubflowId(h.subflow));
        }
        let id = SubflowId(h.subflow);
        let awaiting = self
            .subflows
            .get(id.index())
            .is_none_or(|s| s.state == SubflowState::AwaitingHello);
        if awaiting {
            // Server: a subflow starts with HELLO (ids may arrive out of order).
            let hello = wire::frames(payload).find_map(|f| match f {
                Ok(Frame::Hello { backup, name }) => Some((backup, name.to_string())),
                _ => None,
            });
            let (Role::Server, Some((backup, name))) = (self.role, hello) else {
                return Err(WireError::BadSubflow(h.subflow));
            };
            while self.subflows.len() < id.index() {
                let gap = SubflowId(self.subflows.len() as u8);
                self.add_subflow(now, gap, "?", false, SubflowState::AwaitingHello);
            }
            if id.index() == self.subflows.len() {
                self.add_subflow(now, id, &name, backup, SubflowState::Established);
            } else {
                let s = &mut self.subflows[id.index()];
                s.state = SubflowState::Established;
                s.name = name.clone();
                s.backup = backup;
                self.cc.set_subflow_name(id, &name);
                self.views[id.index()].name = name;
                self.views[id.index()].backup = backup;
                self.on_established(id);
            }
        }
        self.last_recv = now;
        let s = &mut self.subflows[id.index()];
        if s.state == SubflowState::Failed {
            return Ok(id);
        }
        // Data beyond the window we offered: drop the whole datagram *unacknowledged*, so the
        // sender sees a loss and sends it again once the window allows (acknowledging it
        // and dropping the data would lose it for good).
        let edge = self.advertised_edge.max(self.window_edge());
        let beyond = frames.iter().any(
            |f| matches!(f, Frame::Data { dsn, payload, .. } if dsn + payload.len() as u64 > edge),
        );
        if beyond {
            self.counters.beyond_window_drops_total += 1;
            return Ok(id);
        }
        let s = &mut self.subflows[id.index()];
        let prev_largest = s.received.largest();
        if !s.received.insert(h.pn) {
            self.counters.duplicate_pkts_total += 1;
            s.ack_now = true;
            return Ok(id);
        }
        let in_order = prev_largest.map_or(h.pn == 0, |l| h.pn == l + 1);
        if s.received.largest() == Some(h.pn) {
            s.largest_received_time = Some(now);
        }
        let mut ack_eliciting = false;
        for f in frames.iter() {
            ack_eliciting |= f.is_ack_eliciting();
            match f {
                Frame::Hello { .. } => {
                    let s = &mut self.subflows[id.index()];
                    s.ack_now = true;
                    if self.role == Role::Server && s.is_established() {
                        // Answer with an ack-eliciting packet (PING + ACK): its ACK gives the
                        // server its first RTT sample, as the kernel gets one from the
                        // SYN/ACK's ACK.
                        s.probes_pending = s.probes_pending.max(1);
                    }
                }
                Frame::Ack(a) => self.on_ack_frame(id, now, &a),
                Frame::DataAck { data_ack, window } => self.on_data_ack(now, data_ack, window),
                Frame::Data { dsn, fin, payload } => {
                    let c = &mut self.subflows[id.index()].counters;
                    c.data_pkts_received_total += 1;
                    c.data_bytes_received_total += payload.len() as u64;
                    self.on_data(dsn, fin, payload)
                }
                // A probe (handshake answer, tail-loss or persist probe): ACK at once, so
                // that the sample it yields carries no ACK delay (TCP ACKs a SYN/ACK and a
                // window probe immediately).
                Frame::Ping => self.subflows[id.index()].ack_now = true,
                Frame::Close { code } => {
                    if code == 0 {
                        if self.lifecycle == Lifecycle::Open {
                            // Answer with our own CLOSE so the peer can stop draining now.
                            for s in &mut self.subflows {
                                if s.is_established() {
                                    s.close_pending = Some(0);
                                }
                            }
                        }
                        self.close(CloseReason::Clean);
                    } else {
                        self.close(CloseReason::Aborted);
                    }
                    return Ok(id);
                }
            }
        }
        let s = &mut self.subflows[id.index()];
        if ack_eliciting {
            s.ack_eliciting_since_ack += 1;
            if s.ack_eliciting_since_ack >= self.cfg.ack_every_pkts || !in_order {
                s.ack_now = true;
            } else if s.ack_deadline.is_none() {
                s.ack_deadline = Some(now + self.cfg.max_ack_delay);
            }
        }
        self.sched_dirty = true;
        self.check_complete(now);
        Ok(id)
    }

    pub(super) fn window_edge(&self) -> u64 {
        let used = self.recv_buf.len() as u64 + self.counters.ofo_queue_bytes;
        self.recv_next + self.rcvbuf.window_bytes().saturating_sub(used)
    }

    fn on_data(&mut self, dsn: u64, fin: bool, payload: &[u8]) {
        let end = dsn + payload.len() as u64;
        if end > self.advertised_edge.max(self.window_edge()) {
            return; // beyond any window we offered: a misbehaving peer
        }
        if fin {
            match self.peer_fin_dsn {
                None => self.peer_fin_dsn = Some(end),
                Some(f) if f != end => return, // conflicting FIN: ignore
                _ => {}
            }
        }
        if end > self.recv_next || (fin && !self.peer_finished) {
            if dsn <= self.recv_next {
                let was_empty = self.recv_buf.is_empty();
                let skip = (self.recv_next - dsn) as usize;
                self.recv_buf.extend(&payload[skip.min(payload.len())..]);
                self.counters.bytes_delivered_total += end.saturating_sub(self.recv_next);
                self.recv_next = self.recv_next.max(end);
                self.drain_ofo();
                self.rcvbuf.on_in_order_data(self.last_recv, self.recv_next);
                if was_empty && !self.recv_buf.is_empty() {
                    self.events.push_back(Event::Readable);
                }
            } else if !payload.is_empty() && !self.ofo.contains_key(&dsn) {
                // (Readable is announced only when in-order bytes arrive.)
                self.counters.ofo_queue_bytes += payload.len() as u64;
                self.counters.ofo_queue_max_bytes = self
                    .counters
                    .ofo_queue_max_bytes
                    .max(self.counters.ofo_queue_bytes);
                let mut buf = self.ofo_spare.pop().unwrap_or_default();
                buf.clear();
                buf.extend_from_slice(payload);
                self.ofo.insert(dsn, buf);
            }
        }
        if let Some(f) = self.peer_fin_dsn
            && !self.peer_finished
            && self.recv_next == f
        {
            self.peer_finished = true;
            self.recv_next = f + 1;
            self.events.push_back(Event::PeerFinished);
        }
        self.advertised_edge = self.advertised_edge.max(self.window_edge());
    }

    fn drain_ofo(&mut self) {
        while let Some(entry) = self.ofo.first_entry() {
            let dsn = *entry.key();
            if dsn > self.recv_next {
                break;
            }
            let data = entry.remove();
            self.counters.ofo_queue_bytes -= data.len() as u64;
            let end = dsn + data.len() as u64;
            if end > self.recv_next {
                let skip = (self.recv_next - dsn) as usize;
                self.recv_buf.extend(&data[skip..]);
                self.counters.bytes_delivered_total += end - self.recv_next;
                self.recv_next = end;
            }
            if self.ofo_spare.len() < OFO_SPARE_BUFFERS {
                self.ofo_spare.push(data);
            }
        }
    }

    /// Both streams done → CLOSE and drain.
    fn check_complete(&mut self, now: Instant) {
        if self.lifecycle != Lifecycle::Open || !self.send_complete() || !self.peer_finished {
            return;
        }
        let until = now + self.drain_period();
        for s in &mut self.subflows {
            if s.is_established() {
                s.close_pending = Some(0);
            }
        }
        self.lifecycle = Lifecycle::Draining { until };
    }
}
