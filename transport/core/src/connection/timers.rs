//! The connection's timers, in one table: [`Connection::poll_timeout`] returns its earliest
//! deadline and [`Connection::handle_timeout`] fires every entry that is due, re-reading each
//! deadline just before firing it (firing one may move another, e.g. a loss declared by the
//! time threshold stops the probe timer).

use std::time::Duration;

use super::{CloseReason, Connection, Lifecycle};
use crate::subflow::SubflowState;
use crate::units::{Instant, MAX_SUBFLOWS, SubflowId};

/// Shortest draining period after both streams completed.
const MIN_DRAIN: Duration = Duration::from_millis(10);
/// Longest draining period (it is [`DRAIN_RTOS`] RTOs otherwise).
const MAX_DRAIN: Duration = Duration::from_secs(3);
const DRAIN_RTOS: u32 = 3;
/// Entries of [`Connection::timer_table`]: Idle, Draining and Persist, and four per subflow.
const MAX_TIMERS: usize = 3 + 4 * MAX_SUBFLOWS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    /// Nothing received for `idle_timeout`: close.
    Idle,
    /// The draining period after CLOSE ended: close cleanly.
    Draining,
    /// Zero-window persist probe (a PING on the first established subflow).
    Persist,
    /// A delayed ACK is due on the subflow.
    DelayedAck(SubflowId),
    /// RFC 9002 loss time: a packet may now be declared lost by the time threshold.
    LossDetection(SubflowId),
    /// Handshake retry, tail-loss probe or retransmission timeout.
    Probe(SubflowId),
    /// The pacer releases the subflow's next packet (handled by `poll_transmit`).
    PacingRelease(SubflowId),
}

impl Connection {
    /// Every timer and its deadline, None when it is not armed.
    fn timer_table(&self) -> impl Iterator<Item = (Timer, Option<Instant>)> + '_ {
        let conn = [Timer::Idle, Timer::Draining]
            .into_iter()
            .map(|t| (t, self.deadline(t)));
        let per_subflow = self.subflows.iter().flat_map(move |s| {
            [
                Timer::DelayedAck(s.id),
                Timer::LossDetection(s.id),
                Timer::Probe(s.id),
                Timer::PacingRelease(s.id),
            ]
            .into_iter()
            .map(|t| (t, self.deadline(t)))
        });
        let persist = std::iter::once((Timer::Persist, self.deadline(Timer::Persist)));
        conn.chain(per_subflow).chain(persist)
    }

    fn deadline(&self, t: Timer) -> Option<Instant> {
        let subflow = |id: SubflowId| {
            self.subflows
                .get(id.index())
                .filter(|s| s.state != SubflowState::Failed)
        };
        match t {
            Timer::Idle => Some(self.last_recv.max(self.created) + self.cfg.idle_timeout),
            Timer::Draining => match self.lifecycle {
                Lifecycle::Draining { until } => Some(until),
                _ => None,
            },
            Timer::Persist => self.persist_deadline().map(|(at, _)| at),
            Timer::DelayedAck(id) => subflow(id)?.ack_deadline,
            Timer::LossDetection(id) => subflow(id)?.loss_time,
            Timer::Probe(id) => subflow(id)?.pto_deadline(self.cfg.max_ack_delay),
            Timer::PacingRelease(id) => {
                let s = subflow(id)?;
                let waiting = s.is_established()
                    && s.has_queued()
                    && s.inflight_bytes < self.cc.cwnd_bytes(id);
                let paced = self.cc.pacing_rate(id).is_some();
                (waiting && paced).then(|| s.pacer.next_release())
            }
        }
    }

    /// Earliest time `handle_timeout` (or a paced `poll_transmit`) has work to do: the
    /// minimum over [`Self::timer_table`], computed without building the table (the simulator
    /// asks this several times per event; same result).
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.lifecycle == Lifecycle::Closed {
            return None;
        }
        let mut earliest = self.deadline(Timer::Idle);
        let mut consider = |at: Option<Instant>| {
            if let Some(at) = at
                && earliest.is_none_or(|e| at < e)
            {
                earliest = Some(at);
            }
        };
        consider(self.deadline(Timer::Draining));
        for s in self
            .subflows
            .iter()
            .filter(|s| s.state != SubflowState::Failed)
        {
            consider(s.ack_deadline);
            consider(s.loss_time);
            consider(s.pto_deadline(self.cfg.max_ack_delay));
            // Timer::PacingRelease, its cheap conditions first.
            if s.is_established()
                && s.has_queued()
                && s.inflight_bytes < self.cc.cwnd_bytes(s.id)
                && self.cc.pacing_rate(s.id).is_some()
            {
                consider(Some(s.pacer.next_release()));
            }
        }
        consider(self.deadline(Timer::Persist));
        earliest
    }

    /// Fires every timer that is due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.lifecycle == Lifecycle::Closed {
            return;
        }
        // The due timers, collected before firing any (on the stack: this runs per event).
        let mut due = [Timer::Idle; MAX_TIMERS];
        let mut n_due = 0;
        for (t, at) in self.timer_table() {
            if at.is_some_and(|at| now >= at) {
                due[n_due] = t;
                n_due += 1;
            }
        }
        for &t in &due[..n_due] {
            if self.lifecycle == Lifecycle::Closed {
                return;
            }
            if self.deadline(t).is_some_and(|at| now >= at) {
                self.fire(t, now);
            }
        }
        self.sched_dirty = true;
    }

    fn fire(&mut self, t: Timer, now: Instant) {
        match t {
            Timer::Idle => self.close(CloseReason::IdleTimeout),
            Timer::Draining => self.close(CloseReason::Clean),
            Timer::Persist => {
                if let Some((_, i)) = self.persist_deadline() {
                    // The probe (a PING) elicits an ACK carrying the current window.
                    self.subflows[i].probes_pending = 1;
                    self.subflows[i].last_ack_eliciting_sent = Some(now);
                }
            }
            Timer::DelayedAck(id) => self.subflows[id.index()].ack_now = true,
            Timer::LossDetection(id) => self.on_loss_timer(id, now),
            Timer::Probe(id) => self.on_pto(id, now),
            Timer::PacingRelease(_) => {}
        }
    }

    /// Zero-window persist: fresh data waits only for the peer's window and nothing is in
    /// flight to bring a window update. Returns when to probe (one RTO after the last
    /// ack-eliciting send) and on which subflow.
    fn persist_deadline(&self) -> Option<(Instant, usize)> {
        let data_end = self.send_base + self.send_buf.len() as u64;
        let blocked = self.next_fresh < data_end
            && self.next_fresh >= self.peer_edge
            && self.chunks.reinject_bytes() == 0
            && self
                .subflows
                .iter()
                .all(|s| s.ack_eliciting_in_flight == 0 && s.probes_pending == 0);
        if !blocked {
            return None;
        }
        let i = self.subflows.iter().position(|s| s.is_established())?;
        let last = self
            .subflows
            .iter()
            .filter_map(|s| s.last_ack_eliciting_sent)
            .max()?;
        Some((last + self.subflows[i].rtt.rto(), i))
    }

    /// How long to drain after both streams completed: 3 RTOs of the slowest subflow,
    /// between [`MIN_DRAIN`] and [`MAX_DRAIN`].
    pub(super) fn drain_period(&self) -> Duration {
        self.subflows
            .iter()
            .filter(|s| s.is_established())
            .map(|s| s.rtt.rto() * DRAIN_RTOS)
            .fold(MIN_DRAIN, Duration::max)
            .min(MAX_DRAIN)
    }
}
