//! The sans-IO multipath connection: a byte stream each way over several subflows.
//!
//! No sockets, no clock, no sleeping: the caller passes `now` into every call.
//!
//! # Methods
//! * inputs: [`Connection::handle_datagram`], [`Connection::handle_timeout`];
//! * application commands: [`Connection::write`], [`Connection::finish`],
//!   [`Connection::read`], [`Connection::abort`];
//! * outputs: [`Connection::poll_transmit`], [`Connection::poll_timeout`],
//!   [`Connection::poll_event`];
//! * getters: stats, views.
//!
//! # Order
//! After any input or command, call `poll_transmit` until it returns None (send each
//! datagram at its `send_at`), then `poll_timeout` (call `handle_timeout` when it is reached),
//! then drain `poll_event`. `now` must never decrease.
//!
//! # Model (docs/TRANSPORT.md has the long form)
//! * Data sequence space (DSN) per direction; a FIN takes one DSN after the last byte.
//! * Sender: the send buffer holds bytes from the peer's data ACK onward. The scheduler
//!   places chunks (≤ one packet of payload each, fixed boundaries) on subflow queues; a
//!   chunk is *delivered* once any packet carrying it is acknowledged at subflow level.
//! * Each subflow: packet numbers, ACK ranges, RFC 6298 RTT, RFC 9002 loss detection
//!   (packet threshold 3, time threshold 9/8·RTT), a tail-loss probe then an RTO with
//!   backoff; an RTO collapses cwnd, marks the subflow potentially failed and reinjects its
//!   undelivered data (ALGORITHMS.md "Reinjection model").
//! * Lost, undelivered chunks go to the reinjection queue, served before fresh data, on
//!   whichever subflow the scheduler picks.
//! * Receiver: in-order bytes go to the read buffer, others to the out-of-order queue (its
//!   occupancy is logged); data ACK + window are carried in every ACK and data packet.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use crate::cc::{
    self, AckEvent, CcConfig, CcPhase, CongestionController, CongestionEvent, RegistryError,
    SubflowCcView,
};
use crate::pacer::window_pacing_rate;
use crate::sched::{
    self, ConnView, PathView, SchedConfig, SchedEvent, Scheduler, Selection, SendKind,
};
use crate::subflow::{
    ChunkRef, MAX_HANDSHAKE_ATTEMPTS, PACKET_THRESHOLD, PacketState, QueuedChunk, QueuedKind,
    SentPacket, Subflow, SubflowCounters, SubflowState,
};
use crate::units::{Bandwidth, Instant, MAX_SUBFLOWS, PathMask, SubflowId};
use crate::wire::{self, Frame, Header, WireError, Writer};

/// The smallest receive window a connection offers (`Config::recv_window_bytes` is raised
/// to it); a sender assumes it until the peer's first DATA_ACK.
pub const MIN_RECV_WINDOW_BYTES: u64 = 64 * 1024;

/// Connection settings.
#[derive(Clone, Debug)]
pub struct Config {
    pub cc: String,
    pub sched: String,
    pub cc_config: CcConfig,
    pub sched_config: SchedConfig,
    /// Largest datagram (UDP payload) sent; also the segment size given to CCs.
    pub max_datagram_bytes: usize,
    /// Receive buffer: read buffer + out-of-order queue, advertised as the data window.
    pub recv_window_bytes: u64,
    /// Most bytes `write` accepts that are not yet data-acked.
    pub send_buffer_bytes: u64,
    /// ACK at least every this many ack-eliciting packets...
    pub ack_every_pkts: u32,
    /// ...or this long after the first unacknowledged one.
    pub max_ack_delay: Duration,
    pub idle_timeout: Duration,
    /// poll_transmit releases packets whose pacing time is at most this far ahead (lets a
    /// runtime batch sends); 0 in the simulator.
    pub pacing_horizon: Duration,
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cc: "reno".into(),
            sched: "lrf".into(),
            cc_config: CcConfig::default(),
            sched_config: SchedConfig::default(),
            max_datagram_bytes: crate::units::DEFAULT_MSS_BYTES as usize,
            recv_window_bytes: 16 << 20,
            send_buffer_bytes: 16 << 20,
            ack_every_pkts: 2,
            max_ack_delay: Duration::from_millis(5),
            idle_timeout: Duration::from_secs(30),
            pacing_horizon: Duration::ZERO,
            seed: 1,
        }
    }
}

/// One path of a client connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathConfig {
    pub name: String,
    pub backup: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// Both streams finished and acknowledged.
    Clean,
    /// Aborted by either side.
    Aborted,
    IdleTimeout,
    /// No subflow completed its handshake.
    HandshakeFailed,
}

impl CloseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::Clean => "clean",
            CloseReason::Aborted => "aborted",
            CloseReason::IdleTimeout => "idle_timeout",
            CloseReason::HandshakeFailed => "handshake_failed",
        }
    }
}

/// Things the application or the log wants to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    SubflowEstablished {
        path: SubflowId,
        name: String,
    },
    SubflowFailed {
        path: SubflowId,
    },
    /// New in-order bytes can be read.
    Readable,
    /// Send buffer space freed.
    Writable,
    /// The peer finished its stream (all of it is readable now).
    PeerFinished,
    Loss {
        path: SubflowId,
        pkts: u64,
    },
    Rto {
        path: SubflowId,
    },
    SchedSwitch {
        from: SubflowId,
        to: SubflowId,
    },
    Closed {
        reason: CloseReason,
    },
}

/// A datagram to send: `len` bytes written to the caller's buffer, on subflow `path`, not
/// before `send_at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub path: SubflowId,
    pub len: usize,
    pub send_at: Instant,
}

/// Connection-level counters (CONTRACTS §5.2 `conn` line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnCounters {
    pub ofo_queue_bytes: u64,
    pub ofo_queue_max_bytes: u64,
    pub bytes_delivered_total: u64,
    pub bytes_written_total: u64,
    pub reinjected_bytes_total: u64,
    pub redundant_bytes_total: u64,
    pub sched_waits_total: u64,
    pub sched_decisions_total: u64,
    pub malformed_datagrams_total: u64,
    pub duplicate_pkts_total: u64,
    pub window_blocked_total: u64,
    pub beyond_window_drops_total: u64,
}

/// A snapshot of one subflow for logs.
#[derive(Clone, Debug, PartialEq)]
pub struct SubflowStats {
    pub id: SubflowId,
    pub name: String,
    pub established: bool,
    pub cwnd_bytes: u64,
    pub inflight_bytes: u64,
    pub srtt: Duration,
    pub rttvar: Duration,
    pub min_rtt: Duration,
    pub pacing_rate: Option<Bandwidth>,
    pub bw_estimate: Option<Bandwidth>,
    pub delivery_rate: Option<Bandwidth>,
    pub cc_phase: CcPhase,
    pub cc_snapshot: cc::CcSnapshot,
    pub counters: SubflowCounters,
}

/// State of one chunk of the outgoing stream.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    r: ChunkRef,
    carriers: PathMask,
    delivered: bool,
    reinject_pending: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lifecycle {
    Open,
    /// Both streams complete; CLOSE sent; answering stragglers until the deadline.
    Draining {
        until: Instant,
    },
    Closed,
}

pub struct Connection {
    role: Role,
    conn_id: u64,
    cfg: Config,
    payload_mss: u64,
    subflows: Vec<Subflow>,
    cc: Box<dyn CongestionController>,
    sched: Box<dyn Scheduler>,
    cc_name: &'static str,
    sched_name: &'static str,
    views: Vec<PathView>,
    cc_views: Vec<SubflowCcView>,
    events: VecDeque<Event>,
    lifecycle: Lifecycle,
    last_recv: Instant,
    created: Instant,
    rr_cursor: usize,
    last_pick: Option<SubflowId>,
    sched_dirty: bool,
    any_established: bool,
    /// Per-decision scheduler trace, kept only when enabled (sched/trace.rs).
    sched_trace: Option<Vec<crate::sched::trace::DecisionRecord>>,
    /// New data is blocked by the peer's window and the scheduler was told.
    window_blocked_signalled: bool,

    // --- send side
    send_buf: VecDeque<u8>,
    /// DSN of send_buf[0] (= the peer's data ACK, capped at the FIN).
    send_base: u64,
    next_fresh: u64,
    fin_requested: bool,
    fin_assigned: bool,
    chunks: VecDeque<Chunk>,
    reinject: VecDeque<u64>,
    reinject_bytes: u64,
    peer_data_ack: u64,
    peer_window: u64,
    /// Right edge of the peer's window (data_ack + window); never moves back, so a
    /// reordered old DATA_ACK cannot shrink it.
    peer_edge: u64,
    write_blocked: bool,

    // --- receive side
    recv_buf: VecDeque<u8>,
    recv_next: u64,
    ofo: BTreeMap<u64, Vec<u8>>,
    peer_fin_dsn: Option<u64>,
    peer_finished: bool,
    advertised_edge: u64,
    window_update_pending: bool,

    counters: ConnCounters,
}

impl Connection {
    /// A client connection with one subflow per path (ids 0, 1, ... in `paths` order).
    pub fn client(
        now: Instant,
        conn_id: u64,
        cfg: Config,
        paths: &[PathConfig],
    ) -> Result<Connection, RegistryError> {
        let mut c = Connection::new(now, Role::Client, conn_id, cfg)?;
        assert!(
            !paths.is_empty() && paths.len() <= MAX_SUBFLOWS,
            "1..={MAX_SUBFLOWS} paths required"
        );
        for (i, p) in paths.iter().enumerate() {
            c.add_subflow(
                now,
                SubflowId(i as u8),
                &p.name,
                p.backup,
                SubflowState::Handshaking,
            );
        }
        Ok(c)
    }

    /// A server connection; subflows appear as their HELLOs arrive. Create it for the first
    /// datagram of an unknown connection id that [`is_hello`] accepts, then pass that
    /// datagram to `handle_datagram`.
    pub fn server(now: Instant, conn_id: u64, cfg: Config) -> Result<Connection, RegistryError> {
        Connection::new(now, Role::Server, conn_id, cfg)
    }

    fn new(
        now: Instant,
        role: Role,
        conn_id: u64,
        cfg: Config,
    ) -> Result<Connection, RegistryError> {
        let mut cc_cfg = cfg.cc_config.clone();
        cc_cfg.mss_bytes = cfg.max_datagram_bytes as u64;
        cc_cfg.seed = cfg.seed;
        let cc = cc::build(&cfg.cc, &cc_cfg)?;
        let mut sched_cfg = cfg.sched_config.clone();
        sched_cfg.seed = cfg.seed;
        let sched = sched::build(&cfg.sched, &sched_cfg)?;
        // A full data packet is header + DATA frame; the DATA_ACK rides along only when there
        // is room (ACK packets always carry it), which buys 1.2 % of goodput.
        let payload_mss =
            (cfg.max_datagram_bytes - wire::HEADER_BYTES - wire::DATA_FRAME_OVERHEAD_BYTES) as u64;
        let cc_name = cc.name();
        let sched_name = sched.name();
        let mut cfg = cfg;
        cfg.recv_window_bytes = cfg.recv_window_bytes.max(MIN_RECV_WINDOW_BYTES);
        let advertised_edge = cfg.recv_window_bytes;
        Ok(Connection {
            role,
            conn_id,
            payload_mss,
            subflows: Vec::new(),
            cc,
            sched,
            cc_name,
            sched_name,
            views: Vec::new(),
            cc_views: Vec::new(),
            events: VecDeque::new(),
            lifecycle: Lifecycle::Open,
            last_recv: now,
            created: now,
            rr_cursor: 0,
            last_pick: None,
            sched_dirty: true,
            any_established: false,
            sched_trace: None,
            window_blocked_signalled: false,
            send_buf: VecDeque::new(),
            send_base: 0,
            next_fresh: 0,
            fin_requested: false,
            fin_assigned: false,
            chunks: VecDeque::new(),
            reinject: VecDeque::new(),
            reinject_bytes: 0,
            peer_data_ack: 0,
            // Until the peer's first DATA_ACK: assume the smallest window a peer may offer.
            peer_window: MIN_RECV_WINDOW_BYTES,
            peer_edge: MIN_RECV_WINDOW_BYTES,
            write_blocked: false,
            recv_buf: VecDeque::new(),
            recv_next: 0,
            ofo: BTreeMap::new(),
            peer_fin_dsn: None,
            peer_finished: false,
            advertised_edge,
            window_update_pending: false,
            counters: ConnCounters::default(),
            cfg,
        })
    }

    fn add_subflow(
        &mut self,
        now: Instant,
        id: SubflowId,
        name: &str,
        backup: bool,
        st: SubflowState,
    ) {
        let mss = self.cfg.max_datagram_bytes as u64;
        let sf = Subflow::new(id, name, backup, st, mss);
        self.cc.add_subflow(id, now, mss);
        self.views.push(PathView {
            id,
            name: name.to_string(),
            established: false,
            backup,
            potentially_failed: false,
            in_rto_loss: false,
            srtt: sf.rtt.srtt(),
            rttvar: sf.rtt.rttvar(),
            min_rtt: Duration::ZERO,
            has_rtt_sample: false,
            cwnd_bytes: 0,
            inflight_bytes: 0,
            mss,
            pacing_rate: None,
            bw_estimate: None,
            cc_phase: CcPhase::SlowStart,
            queued_bytes: 0,
            ssthresh_bytes: None,
            srtt_min_seen: Duration::ZERO,
            srtt_max_seen: Duration::ZERO,
        });
        self.subflows.push(sf);
        if st == SubflowState::Established {
            self.on_established(id);
        }
    }

    fn on_established(&mut self, id: SubflowId) {
        let name = self.subflows[id.index()].name.clone();
        self.any_established = true;
        self.events
            .push_back(Event::SubflowEstablished { path: id, name });
        self.sched.on_event(&SchedEvent::PathUp {
            path: id,
            now: self.last_recv,
        });
        self.sched_dirty = true;
    }

    // ------------------------------------------------------------------ getters

    pub fn role(&self) -> Role {
        self.role
    }
    pub fn conn_id(&self) -> u64 {
        self.conn_id
    }
    pub fn cc_name(&self) -> &'static str {
        self.cc_name
    }
    pub fn sched_name(&self) -> &'static str {
        self.sched_name
    }
    /// Keep a record of every scheduler decision from now on (sched/trace.rs).
    pub fn enable_sched_trace(&mut self) {
        self.sched_trace.get_or_insert_with(Vec::new);
    }
    /// The decisions recorded since the last call (empty when tracing is off).
    pub fn drain_sched_trace(&mut self) -> Vec<crate::sched::trace::DecisionRecord> {
        self.sched_trace.as_mut().map(std::mem::take).unwrap_or_default()
    }
    /// Path names by subflow id, for traces.
    pub fn path_names(&self) -> Vec<String> {
        self.views.iter().map(|v| v.name.clone()).collect()
    }
    pub fn is_closed(&self) -> bool {
        self.lifecycle == Lifecycle::Closed
    }
    pub fn is_established(&self) -> bool {
        self.any_established
    }
    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }
    pub fn subflow_name(&self, id: SubflowId) -> Option<&str> {
        self.subflows.get(id.index()).map(|s| s.name.as_str())
    }
    pub fn counters(&self) -> ConnCounters {
        self.counters
    }
    /// Bytes `write` would accept now.
    pub fn send_capacity(&self) -> u64 {
        if self.fin_requested || self.lifecycle != Lifecycle::Open {
            return 0;
        }
        self.cfg
            .send_buffer_bytes
            .saturating_sub(self.send_buf.len() as u64)
    }
    /// In-order bytes ready for `read`.
    pub fn readable_bytes(&self) -> usize {
        self.recv_buf.len()
    }
    /// The peer finished its stream and everything has been read.
    pub fn peer_finished(&self) -> bool {
        self.peer_finished && self.recv_buf.is_empty()
    }
    /// Our stream is finished and the peer acknowledged all of it, FIN included.
    pub fn send_complete(&self) -> bool {
        self.fin_requested && self.fin_assigned && self.chunks.is_empty()
    }
    pub fn unacked_bytes(&self) -> u64 {
        self.next_fresh - self.send_base
    }

    pub fn subflow_stats(&self) -> Vec<SubflowStats> {
        self.subflows
            .iter()
            .map(|s| SubflowStats {
                id: s.id,
                name: s.name.clone(),
                established: s.is_established(),
                cwnd_bytes: self.cc.cwnd_bytes(s.id),
                inflight_bytes: s.inflight_bytes,
                srtt: s.rtt.srtt(),
                rttvar: s.rtt.rttvar(),
                min_rtt: s.rtt.min_rtt(),
                pacing_rate: self.effective_pacing_rate(s.id),
                bw_estimate: self.cc.bw_estimate(s.id),
                delivery_rate: s.latest_delivery_rate,
                cc_phase: self.cc.phase(s.id),
                cc_snapshot: self.cc.snapshot(s.id),
                counters: s.counters,
            })
            .collect()
    }

    /// Replaces the scheduler (tests and experiments: e.g. a wrapper that checks invariants).
    pub fn replace_scheduler(&mut self, sched: Box<dyn Scheduler>) {
        self.sched_name = sched.name();
        self.sched = sched;
    }

    // ------------------------------------------------------------------ app commands

    /// Appends to the outgoing stream; returns how many bytes were accepted.
    pub fn write(&mut self, data: &[u8]) -> usize {
        let n = (self.send_capacity() as usize).min(data.len());
        if n < data.len() {
            self.write_blocked = true;
        }
        self.send_buf.extend(&data[..n]);
        self.counters.bytes_written_total += n as u64;
        if n > 0 {
            self.sched_dirty = true;
        }
        n
    }

    /// Ends the outgoing stream after the bytes written so far.
    pub fn finish(&mut self) {
        if !self.fin_requested {
            self.fin_requested = true;
            self.sched_dirty = true;
        }
    }

    /// Reads in-order bytes.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.recv_buf.len());
        let (a, b) = self.recv_buf.as_slices();
        let from_a = n.min(a.len());
        out[..from_a].copy_from_slice(&a[..from_a]);
        out[from_a..n].copy_from_slice(&b[..n - from_a]);
        self.recv_buf.drain(..n);
        if n > 0 {
            let edge = self.window_edge();
            if edge >= self.advertised_edge + (self.cfg.recv_window_bytes / 4).max(1) {
                self.window_update_pending = true;
            }
        }
        n
    }

    /// Aborts both directions (the peer sees Closed{Aborted}).
    pub fn abort(&mut self) {
        if self.lifecycle == Lifecycle::Closed {
            return;
        }
        for s in &mut self.subflows {
            if s.is_established() {
                s.close_pending = Some(1);
            }
        }
        self.close(CloseReason::Aborted);
    }

    fn close(&mut self, reason: CloseReason) {
        if self.lifecycle != Lifecycle::Closed {
            self.lifecycle = Lifecycle::Closed;
            self.events.push_back(Event::Closed { reason });
        }
    }

    // ------------------------------------------------------------------ outputs

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Earliest time `handle_timeout` (or a paced `poll_transmit`) has work to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.lifecycle == Lifecycle::Closed {
            return None;
        }
        let mut t = self.last_recv.max(self.created) + self.cfg.idle_timeout;
        if let Lifecycle::Draining { until } = self.lifecycle {
            t = t.min(until);
        }
        if let Some((p, _)) = self.persist_deadline() {
            t = t.min(p);
        }
        for s in &self.subflows {
            if s.state == SubflowState::Failed {
                continue;
            }
            if let Some(d) = s.ack_deadline {
                t = t.min(d);
            }
            if let Some(lt) = s.loss_time {
                t = t.min(lt);
            }
            if let Some(p) = s.pto_deadline(self.cfg.max_ack_delay) {
                t = t.min(p);
            }
            if s.is_established()
                && !s.queue.is_empty()
                && s.inflight_bytes < self.cc.cwnd_bytes(s.id)
                && self.effective_pacing_rate(s.id).is_some()
            {
                t = t.min(s.pacer.next_release());
            }
        }
        Some(t)
    }

    /// Zero-window persist: fresh data waits only for the peer's window and nothing is in
    /// flight to bring a window update. Returns when to probe (one RTO after the last
    /// ack-eliciting send) and on which subflow.
    fn persist_deadline(&self) -> Option<(Instant, usize)> {
        let data_end = self.send_base + self.send_buf.len() as u64;
        let blocked = self.next_fresh < data_end
            && self.next_fresh >= self.peer_edge
            && self.reinject.is_empty()
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
            .map(|s| s.last_ack_eliciting_sent)
            .max()?;
        Some((last + self.subflows[i].rtt.rto(), i))
    }

    /// Handles expired timers (loss time, probe timeout, delayed ACK, idle, draining).
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.lifecycle == Lifecycle::Closed {
            return;
        }
        if now >= self.last_recv.max(self.created) + self.cfg.idle_timeout {
            self.close(CloseReason::IdleTimeout);
            return;
        }
        if let Lifecycle::Draining { until } = self.lifecycle
            && now >= until
        {
            self.close(CloseReason::Clean);
            return;
        }
        for i in 0..self.subflows.len() {
            let id = SubflowId(i as u8);
            if self.subflows[i].state == SubflowState::Failed {
                continue;
            }
            if self.subflows[i].ack_deadline.is_some_and(|d| now >= d) {
                self.subflows[i].ack_now = true;
            }
            if self.subflows[i].loss_time.is_some_and(|lt| now >= lt) {
                self.subflows[i].loss_time = None;
                let prior = self.subflows[i].inflight_bytes;
                let (lost_pkts, lost_bytes, largest_lost) = self.detect_losses(id, now);
                self.after_losses(id, now, prior, lost_pkts, lost_bytes, largest_lost);
                if lost_bytes > 0 {
                    let views = self.build_cc_views();
                    let ack = self.ack_event(id, now, 0, None, prior, Instant::ZERO, None);
                    self.cc.on_ack(id, &ack, &views);
                }
            }
            if self.subflows[i]
                .pto_deadline(self.cfg.max_ack_delay)
                .is_some_and(|d| now >= d)
            {
                self.on_pto(id, now);
            }
        }
        if let Some((deadline, i)) = self.persist_deadline()
            && now >= deadline
        {
            // The probe (a PING) elicits an ACK carrying the current window.
            self.subflows[i].probes_pending = 1;
            self.subflows[i].last_ack_eliciting_sent = now;
        }
        self.sched_dirty = true;
    }

    fn on_pto(&mut self, id: SubflowId, now: Instant) {
        let s = &mut self.subflows[id.index()];
        if s.state == SubflowState::Handshaking {
            s.handshake_attempts += 1;
            if s.handshake_attempts >= MAX_HANDSHAKE_ATTEMPTS {
                s.state = SubflowState::Failed;
                self.events.push_back(Event::SubflowFailed { path: id });
                if self
                    .subflows
                    .iter()
                    .all(|s| s.state == SubflowState::Failed)
                {
                    self.close(CloseReason::HandshakeFailed);
                }
            } else {
                s.hello_pending = true;
                s.last_ack_eliciting_sent = now;
            }
            return;
        }
        if s.pto_count == 0 {
            // Tail-loss probe: one packet, no window reduction.
            s.pto_count = 1;
            s.probes_pending = 1;
            s.counters.tlp_total += 1;
            s.last_ack_eliciting_sent = now;
            return;
        }
        // Retransmission timeout: the whole flight is lost.
        s.pto_count += 1;
        s.counters.rto_total += 1;
        let prior = s.inflight_bytes;
        let mut lost_pkts = 0;
        let mut lost_chunks: Vec<ChunkRef> = Vec::new();
        for p in s.sent.iter_mut() {
            if p.state == PacketState::InFlight {
                p.state = PacketState::Lost;
                s.inflight_bytes -= p.size_bytes as u64;
                if p.ack_eliciting {
                    s.ack_eliciting_in_flight -= 1;
                }
                lost_pkts += 1;
                s.rate.on_packet_lost(p.size_bytes as u64);
                if let Some(c) = p.data {
                    lost_chunks.push(c);
                }
            }
        }
        s.pop_resolved();
        s.loss_time = None;
        s.counters.pkts_lost_total += lost_pkts;
        s.in_rto_loss = true;
        s.potentially_failed = true;
        s.in_recovery = false;
        s.recovery_start = Some(now);
        s.probes_pending = 1;
        s.last_ack_eliciting_sent = now;
        // Unsent chunks queued on this subflow go back to be placed elsewhere.
        let mut requeue = Vec::new();
        while let Some(q) = s.pop_queue() {
            requeue.push(q.chunk);
        }
        // As TCP does, the RTO retransmits the oldest lost data on this subflow itself (the
        // probe); the reinjection queue may also send it elsewhere.
        let probe = lost_chunks.iter().min_by_key(|c| c.dsn).copied();
        for c in lost_chunks.into_iter().chain(requeue) {
            self.queue_reinjection(c.dsn);
        }
        if let Some(c) = probe
            && self
                .chunk_index(c.dsn)
                .is_some_and(|i| !self.chunks[i].delivered)
        {
            self.subflows[id.index()].push_queue(QueuedChunk {
                chunk: c,
                kind: QueuedKind::Reinject,
            });
        }
        let views = self.build_cc_views();
        self.cc.on_congestion(
            id,
            now,
            &CongestionEvent::Rto {
                inflight_bytes: prior,
            },
            &views,
        );
        self.events.push_back(Event::Rto { path: id });
        if lost_pkts > 0 {
            self.events.push_back(Event::Loss {
                path: id,
                pkts: lost_pkts,
            });
        }
        self.sched.on_event(&SchedEvent::Rto { path: id, now });
    }

    // ------------------------------------------------------------------ input

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
        wire::validate(payload)?;
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
        let beyond = wire::frames(payload).any(|f| {
            matches!(f, Ok(Frame::Data { dsn, payload, .. }) if dsn + payload.len() as u64 > edge)
        });
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
            s.largest_received_time = now;
        }
        let mut ack_eliciting = false;
        for f in wire::frames(payload) {
            let f = f?; // validated above
            ack_eliciting |= f.is_ack_eliciting();
            match f {
                Frame::Hello { .. } => {
                    self.subflows[id.index()].ack_now = true;
                }
                Frame::Ack(a) => self.on_ack_frame(id, now, &a),
                Frame::DataAck { data_ack, window } => self.on_data_ack(data_ack, window),
                Frame::Data { dsn, fin, payload } => {
                    let c = &mut self.subflows[id.index()].counters;
                    c.data_pkts_received_total += 1;
                    c.data_bytes_received_total += payload.len() as u64;
                    self.on_data(dsn, fin, payload)
                }
                Frame::Ping => {}
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

    fn on_ack_frame(&mut self, id: SubflowId, now: Instant, a: &wire::AckFrame<'_>) {
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
        let s = &mut self.subflows[id.index()];
        let prior_inflight = s.inflight_bytes;
        let mut acked_bytes = 0u64;
        let mut largest_newly: Option<(u64, Instant, bool)> = None;
        let front = s.sent.front().map(|p| p.pn);
        let mut newly_delivered: Vec<ChunkRef> = Vec::new();
        if let Some(front) = front {
            for (first, last) in a.ranges() {
                if last < front {
                    break;
                }
                let lo = first.max(front);
                for pn in lo..=last {
                    let Some(p) = s.sent.get_mut((pn - front) as usize) else {
                        break;
                    };
                    match p.state {
                        PacketState::InFlight => {
                            p.state = PacketState::Acked;
                            s.inflight_bytes -= p.size_bytes as u64;
                            if p.ack_eliciting {
                                s.ack_eliciting_in_flight -= 1;
                            }
                            acked_bytes += p.size_bytes as u64;
                            s.rate.on_packet_acked(now, &p.stamp, p.size_bytes as u64);
                            if largest_newly.is_none_or(|(l, _, _)| pn > l) {
                                largest_newly = Some((pn, p.sent_time, p.ack_eliciting));
                            }
                            if let Some(c) = p.data {
                                newly_delivered.push(c);
                            }
                        }
                        PacketState::Lost => {
                            p.state = PacketState::Acked;
                            s.counters.spurious_losses_total += 1;
                            if let Some(c) = p.data {
                                newly_delivered.push(c);
                            }
                        }
                        PacketState::Acked => {}
                    }
                }
            }
        }
        s.largest_acked = Some(s.largest_acked.map_or(a.largest, |l| l.max(a.largest)));
        let mut rtt_sample = None;
        if let Some((pn, sent_time, eliciting)) = largest_newly
            && pn == a.largest
            && eliciting
        {
            let sample = now - sent_time;
            let ack_delay = Duration::from_micros(a.ack_delay_us as u64).min(max_ack_delay);
            s.rtt.update(sample, ack_delay);
            rtt_sample = Some(sample);
            let srtt = s.rtt.srtt();
            s.srtt_min_seen = if s.srtt_min_seen.is_zero() {
                srtt
            } else {
                s.srtt_min_seen.min(srtt)
            };
            s.srtt_max_seen = s.srtt_max_seen.max(srtt);
        }
        if acked_bytes > 0 {
            s.counters.bytes_acked_total += acked_bytes;
            s.pto_count = 0;
            s.potentially_failed = false;
            s.in_rto_loss = false;
            s.probes_pending = 0;
        }
        for c in newly_delivered {
            self.mark_delivered(c);
        }
        let (lost_pkts, lost_bytes, largest_lost) = self.detect_losses(id, now);
        let Some((_, largest_sent_time, _)) = largest_newly else {
            self.after_losses(id, now, prior_inflight, lost_pkts, lost_bytes, largest_lost);
            if lost_bytes > 0 {
                let views = self.build_cc_views();
                let ack = self.ack_event(id, now, 0, None, prior_inflight, Instant::ZERO, None);
                self.cc.on_ack(id, &ack, &views);
            }
            return;
        };
        // Recovery exit: a packet sent after the episode began is acknowledged.
        let s = &mut self.subflows[id.index()];
        if s.in_recovery && s.recovery_start.is_some_and(|rs| largest_sent_time > rs) {
            s.in_recovery = false;
            self.cc.on_recovery_exit(id, now);
        }
        self.after_losses(id, now, prior_inflight, lost_pkts, lost_bytes, largest_lost);
        let s = &mut self.subflows[id.index()];
        let min_rtt = s.rtt.min_rtt();
        let sample = s.rate.take_sample(min_rtt);
        if let Some(r) = sample {
            s.latest_delivery_rate = Some(r.delivery_rate);
        }
        let views = self.build_cc_views();
        let ack = self.ack_event(
            id,
            now,
            acked_bytes,
            rtt_sample,
            prior_inflight,
            largest_sent_time,
            sample,
        );
        self.cc.on_ack(id, &ack, &views);
        if acked_bytes > 0 {
            self.sched.on_event(&SchedEvent::Acked {
                path: id,
                bytes: acked_bytes,
                now,
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn ack_event(
        &self,
        id: SubflowId,
        now: Instant,
        acked_bytes: u64,
        rtt_sample: Option<Duration>,
        prior_inflight: u64,
        largest_acked_sent_time: Instant,
        rate: Option<cc::RateSample>,
    ) -> AckEvent {
        let s = &self.subflows[id.index()];
        let cwnd = self.cc.cwnd_bytes(id);
        let srtt = s.rtt.srtt();
        let recently_limited = s
            .last_cwnd_limited
            .is_some_and(|t| now.saturating_duration_since(t) <= srtt * 2);
        let slow_start = matches!(self.cc.phase(id), CcPhase::SlowStart | CcPhase::Startup);
        let is_cwnd_limited = recently_limited
            || prior_inflight + s.mss_bytes >= cwnd
            || (slow_start && prior_inflight * 2 >= cwnd);
        AckEvent {
            now,
            acked_bytes,
            rtt_sample,
            srtt,
            min_rtt: s.rtt.min_rtt(),
            inflight_bytes: s.inflight_bytes,
            prior_inflight_bytes: prior_inflight,
            is_cwnd_limited,
            in_recovery: s.in_recovery,
            largest_acked_sent_time,
            rate,
            delivered_bytes_total: s.rate.delivered_bytes(),
            mss: s.mss_bytes,
        }
    }

    /// RFC 9002 §6.1 on subflow `id`: packet and time thresholds. Returns (pkts, bytes,
    /// largest lost send time) and queues undelivered data for reinjection.
    fn detect_losses(&mut self, id: SubflowId, now: Instant) -> (u64, u64, Instant) {
        let s = &mut self.subflows[id.index()];
        s.loss_time = None;
        let Some(largest_acked) = s.largest_acked else {
            return (0, 0, Instant::ZERO);
        };
        let rtt = s.rtt.latest().max(s.rtt.srtt());
        let loss_delay = (rtt * 9 / 8).max(Duration::from_millis(1));
        let lost_send_time = now.checked_sub(loss_delay);
        let mut lost_pkts = 0u64;
        let mut lost_bytes = 0u64;
        let mut largest_lost = Instant::ZERO;
        let mut lost_chunks: Vec<ChunkRef> = Vec::new();
        for p in s.sent.iter_mut() {
            if p.pn > largest_acked {
                break;
            }
            if p.state != PacketState::InFlight {
                continue;
            }
            let by_time = lost_send_time.is_some_and(|t| p.sent_time <= t);
            let by_count = largest_acked >= p.pn + PACKET_THRESHOLD;
            if by_time || by_count {
                p.state = PacketState::Lost;
                s.inflight_bytes -= p.size_bytes as u64;
                if p.ack_eliciting {
                    s.ack_eliciting_in_flight -= 1;
                }
                s.rate.on_packet_lost(p.size_bytes as u64);
                lost_pkts += 1;
                lost_bytes += p.size_bytes as u64;
                largest_lost = largest_lost.max(p.sent_time);
                if let Some(c) = p.data {
                    lost_chunks.push(c);
                }
            } else {
                let t = p.sent_time + loss_delay;
                s.loss_time = Some(s.loss_time.map_or(t, |lt| lt.min(t)));
            }
        }
        s.pop_resolved();
        s.counters.pkts_lost_total += lost_pkts;
        for c in lost_chunks {
            self.queue_reinjection(c.dsn);
        }
        (lost_pkts, lost_bytes, largest_lost)
    }

    /// Starts a recovery episode if the losses are newer than the current one.
    fn after_losses(
        &mut self,
        id: SubflowId,
        now: Instant,
        prior_inflight: u64,
        lost_pkts: u64,
        lost_bytes: u64,
        largest_lost: Instant,
    ) {
        if lost_pkts == 0 {
            return;
        }
        self.events.push_back(Event::Loss {
            path: id,
            pkts: lost_pkts,
        });
        self.sched.on_event(&SchedEvent::Lost {
            path: id,
            bytes: lost_bytes,
            now,
        });
        let s = &mut self.subflows[id.index()];
        if s.recovery_start.is_some_and(|rs| largest_lost <= rs) {
            return;
        }
        s.recovery_start = Some(now);
        s.in_recovery = true;
        let views = self.build_cc_views();
        let ev = CongestionEvent::Loss {
            lost_bytes,
            largest_lost_sent_time: largest_lost,
            inflight_bytes: prior_inflight,
        };
        self.cc.on_congestion(id, now, &ev, &views);
    }

    fn chunk_index(&self, dsn: u64) -> Option<usize> {
        let i = self.chunks.partition_point(|c| c.r.dsn < dsn);
        (i < self.chunks.len() && self.chunks[i].r.dsn == dsn).then_some(i)
    }

    fn mark_delivered(&mut self, c: ChunkRef) {
        if let Some(i) = self.chunk_index(c.dsn) {
            self.chunks[i].delivered = true;
        }
    }

    fn queue_reinjection(&mut self, dsn: u64) {
        if let Some(i) = self.chunk_index(dsn) {
            let ch = &mut self.chunks[i];
            if !ch.delivered && !ch.reinject_pending {
                ch.reinject_pending = true;
                self.reinject_bytes += ch.r.len as u64;
                self.reinject.push_back(dsn);
                self.sched_dirty = true;
            }
        }
    }

    fn on_data_ack(&mut self, data_ack: u64, window: u64) {
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
        while self.chunks.front().is_some_and(|c| c.r.end() <= data_ack) {
            let c = self.chunks.pop_front().expect("front exists");
            if c.reinject_pending {
                self.reinject_bytes -= c.r.len as u64;
            }
        }
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

    fn window_edge(&self) -> u64 {
        let used = self.recv_buf.len() as u64 + self.counters.ofo_queue_bytes;
        self.recv_next + self.cfg.recv_window_bytes.saturating_sub(used)
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
                self.ofo.insert(dsn, payload.to_vec());
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
        }
    }

    /// Both streams done → CLOSE and drain.
    fn check_complete(&mut self, now: Instant) {
        if self.lifecycle != Lifecycle::Open || !self.send_complete() || !self.peer_finished {
            return;
        }
        let mut drain = Duration::from_millis(10);
        for s in &mut self.subflows {
            if s.is_established() {
                s.close_pending = Some(0);
                drain = drain.max(s.rtt.rto() * 3);
            }
        }
        self.lifecycle = Lifecycle::Draining {
            until: now + drain.min(Duration::from_secs(3)),
        };
    }

    // ------------------------------------------------------------------ scheduling

    fn effective_pacing_rate(&self, id: SubflowId) -> Option<Bandwidth> {
        if let Some(r) = self.cc.pacing_rate(id) {
            return Some(r);
        }
        let s = &self.subflows[id.index()];
        if !s.rtt.has_sample() {
            return None;
        }
        let slow_start = matches!(self.cc.phase(id), CcPhase::SlowStart | CcPhase::Startup);
        let cwnd = self.cc.cwnd_bytes(id).max(s.inflight_bytes);
        Some(window_pacing_rate(cwnd, s.rtt.srtt(), slow_start))
    }

    fn build_cc_views(&self) -> Vec<SubflowCcView> {
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
            })
            .collect()
    }

    fn refresh_views(&mut self) {
        for (v, s) in self.views.iter_mut().zip(&self.subflows) {
            v.established = s.is_established();
            v.potentially_failed = s.potentially_failed;
            v.in_rto_loss = s.in_rto_loss;
            v.srtt = s.rtt.srtt();
            v.rttvar = s.rtt.rttvar();
            v.min_rtt = s.rtt.min_rtt();
            v.has_rtt_sample = s.rtt.has_sample();
            v.cwnd_bytes = self.cc.cwnd_bytes(s.id);
            v.inflight_bytes = s.inflight_bytes;
            v.pacing_rate = self.cc.pacing_rate(s.id);
            v.bw_estimate = self.cc.bw_estimate(s.id);
            v.cc_phase = self.cc.phase(s.id);
            v.queued_bytes = s.queued_bytes;
            v.ssthresh_bytes = self.cc.ssthresh_bytes(s.id);
            v.srtt_min_seen = s.srtt_min_seen;
            v.srtt_max_seen = s.srtt_max_seen;
        }
        self.cc_views.clear();
    }

    fn fresh_available(&self) -> bool {
        let data_end = self.send_base + self.send_buf.len() as u64;
        if self.next_fresh < data_end {
            let window_end = self.peer_edge;
            return self.next_fresh < window_end;
        }
        self.fin_requested && !self.fin_assigned
    }

    /// Next fresh chunk within the peer's window.
    fn take_fresh_chunk(&mut self) -> Option<ChunkRef> {
        let data_end = self.send_base + self.send_buf.len() as u64;
        let window_end = self.peer_edge;
        if self.next_fresh < data_end {
            let room = window_end.saturating_sub(self.next_fresh);
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

    /// Asks the scheduler to place data until it declines or the queues are full enough.
    fn schedule(&mut self, now: Instant) {
        if self.lifecycle != Lifecycle::Open || !self.any_established {
            return;
        }
        let mut rounds = 0;
        loop {
            rounds += 1;
            if rounds > 4096 {
                break;
            }
            // Drop reinjection entries that no longer need it.
            while let Some(&dsn) = self.reinject.front() {
                match self.chunk_index(dsn) {
                    Some(i) if !self.chunks[i].delivered => break,
                    Some(i) => {
                        self.chunks[i].reinject_pending = false;
                        self.reinject_bytes -= self.chunks[i].r.len as u64;
                        self.reinject.pop_front();
                    }
                    None => {
                        self.reinject.pop_front();
                    }
                }
            }
            let reinject_head = self.reinject.front().and_then(|&d| self.chunk_index(d));
            let data_end = self.send_base + self.send_buf.len() as u64;
            let window_blocked = self.next_fresh < data_end && self.next_fresh >= self.peer_edge;
            if window_blocked && !self.window_blocked_signalled {
                self.sched.on_event(&SchedEvent::WindowBlocked { now });
            }
            self.window_blocked_signalled = window_blocked;
            if reinject_head.is_none() && !self.fresh_available() {
                // Nothing to send: samples taken now are app-limited.
                for s in &mut self.subflows {
                    if s.queue.is_empty() && s.inflight_bytes < self.cc.cwnd_bytes(s.id) {
                        s.rate.on_app_limited(s.inflight_bytes);
                    }
                }
                return;
            }
            self.refresh_views();
            // Bound pre-assignment: never more queued than one window per subflow plus a
            // burst (window schedulers such as LRF stay far below; AR&P-style pre-assignment
            // cannot grow without limit).
            let cwnd_total: u64 = self
                .views
                .iter()
                .filter(|v| v.established)
                .map(|v| v.cwnd_bytes)
                .sum();
            let queued_total: u64 = self.subflows.iter().map(|s| s.queued_bytes).sum();
            if queued_total > cwnd_total + self.cfg.sched_config.burst_bytes {
                return;
            }
            let kind = match reinject_head {
                Some(i) => SendKind::Reinject {
                    already_on: self.chunks[i].carriers,
                },
                None => SendKind::Fresh,
            };
            let conn = ConnView {
                unsent_bytes: (self.send_base + self.send_buf.len() as u64) - self.next_fresh,
                reinject_queue_bytes: self.reinject_bytes,
                unacked_bytes: self.next_fresh - self.peer_data_ack.min(self.next_fresh),
                peer_window_free_bytes: (self.peer_edge).saturating_sub(self.next_fresh),
                send_window_bytes: self.peer_window,
                queued_bytes: queued_total,
            };
            self.counters.sched_decisions_total += 1;
            let sel = self.sched.select(now, kind, &conn, &self.views);
            let trace_from = (self.next_fresh, self.counters.reinjected_bytes_total);
            let trace_dsn = reinject_head.map_or(self.next_fresh, |i| self.chunks[i].r.dsn);
            if let Some(t) = self.sched_trace.as_mut() {
                let state = self.sched.trace_state();
                t.push(crate::sched::trace::DecisionRecord::new(
                    now,
                    kind,
                    sel,
                    &self.views,
                    state,
                ));
            }
            match sel {
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
                } => {
                    let valid = |p: SubflowId| {
                        self.subflows
                            .get(p.index())
                            .is_some_and(|s| s.is_established())
                    };
                    if !valid(path) {
                        self.sched_dirty = false;
                        return;
                    }
                    let copies = PathMask(copies.0 & !PathMask::single(path).0);
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
                    let placed =
                        self.place(path, copies, burst_bytes.max(1), reinject_head.is_some());
                    if let Some(r) = self.sched_trace.as_mut().and_then(|t| t.last_mut()) {
                        r.dsn = trace_dsn;
                        r.placed_bytes = (self.next_fresh - trace_from.0)
                            + (self.counters.reinjected_bytes_total - trace_from.1);
                    }
                    if placed == 0 {
                        self.sched_dirty = false;
                        return;
                    }
                }
            }
        }
    }

    /// Assigns up to `burst` bytes (at least one chunk) to `path` (+ copies); returns the
    /// number of chunks placed.
    fn place(&mut self, path: SubflowId, copies: PathMask, burst: u64, reinject: bool) -> usize {
        let mut placed_bytes = 0u64;
        let mut placed = 0usize;
        let mut first_carriers: Option<PathMask> = None;
        loop {
            let (r, kind) = if reinject {
                let Some(&dsn) = self.reinject.front() else {
                    break;
                };
                let Some(i) = self.chunk_index(dsn) else {
                    self.reinject.pop_front();
                    continue;
                };
                let ch = &mut self.chunks[i];
                if ch.delivered {
                    break; // the next schedule() round drops it
                }
                // Several reinjections share one decision only if they were on the same
                // subflows (the scheduler saw that `already_on`).
                if first_carriers.is_some_and(|fc| fc != ch.carriers) {
                    break;
                }
                first_carriers.get_or_insert(ch.carriers);
                ch.reinject_pending = false;
                ch.carriers = ch.carriers.with(path);
                let r = ch.r;
                self.reinject_bytes -= r.len as u64;
                self.reinject.pop_front();
                self.counters.reinjected_bytes_total += r.len as u64;
                (r, QueuedKind::Reinject)
            } else {
                let Some(r) = self.take_fresh_chunk() else {
                    break;
                };
                self.chunks.push_back(Chunk {
                    r,
                    carriers: PathMask::single(path),
                    delivered: false,
                    reinject_pending: false,
                });
                (r, QueuedKind::Fresh)
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
                    if let Some(i) = self.chunk_index(r.dsn) {
                        self.chunks[i].carriers = self.chunks[i].carriers.with(c);
                    }
                }
            }
            placed += 1;
            placed_bytes += (r.len as u64).max(1);
            if placed_bytes >= burst {
                break;
            }
        }
        placed
    }

    /// Writes the next datagram into `buf` (≥ max_datagram_bytes). Returns None when nothing
    /// is due; see `poll_timeout` for when to call again.
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
            if s.ack_now || s.ack_deadline.is_some_and(|d| now >= d) {
                self.rr_cursor = (i + 1) % n;
                return Some(self.send_control(i, now, buf, Control::Ack));
            }
            if s.probes_pending > 0 && s.is_established() {
                self.subflows[i].probes_pending -= 1;
                self.rr_cursor = (i + 1) % n;
                if let Some(t) = self.send_data(i, now, buf, true) {
                    return Some(t);
                }
                return Some(self.send_control(i, now, buf, Control::Ping));
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
                let cwnd = self.cc.cwnd_bytes(SubflowId(i as u8));
                let rate = self.effective_pacing_rate(SubflowId(i as u8));
                let s = &mut self.subflows[i];
                if s.queue.is_empty() || !s.is_established() {
                    continue;
                }
                if s.inflight_bytes >= cwnd {
                    s.last_cwnd_limited = Some(now);
                    continue;
                }
                let release = s.pacer.release_time(now, rate);
                if release <= horizon && best.is_none_or(|(t, _)| release < t) {
                    best = Some((release, i));
                }
            }
            let (release, i) = best?;
            if let Some(t) = self.send_data(i, release.max(now), buf, false) {
                return Some(t);
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
                let delay_us = now
                    .saturating_duration_since(s.largest_received_time)
                    .as_micros();
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
        self.record_sent(i, now, h.pn, len, eliciting, None, false);
        Transmit {
            path: SubflowId(i as u8),
            len,
            send_at: now,
        }
    }

    /// Sends the head of subflow i's queue (skipping stale entries). `probe`: ignore cwnd.
    fn send_data(
        &mut self,
        i: usize,
        now: Instant,
        buf: &mut [u8],
        probe: bool,
    ) -> Option<Transmit> {
        let q = loop {
            let q = self.subflows[i].pop_queue()?;
            let acked = q.chunk.end() <= self.peer_data_ack || q.chunk.dsn < self.send_base;
            let stale = acked
                || (q.kind != QueuedKind::Fresh
                    && self
                        .chunk_index(q.chunk.dsn)
                        .is_none_or(|c| self.chunks[c].delivered));
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
        if self.subflows[i].queue.is_empty() {
            // Room may have opened for the scheduler to place more.
            self.sched_dirty = true;
        }
        let retrans = q.kind != QueuedKind::Fresh;
        self.record_sent(i, now, h.pn, total, true, Some(c), retrans);
        let s = &mut self.subflows[i];
        s.counters.data_bytes_sent_total += len as u64;
        if retrans {
            s.counters.bytes_retrans_total += total as u64;
            s.counters.pkts_retrans_total += 1;
        }
        let _ = probe;
        Some(Transmit {
            path: SubflowId(i as u8),
            len: total,
            send_at: now,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn record_sent(
        &mut self,
        i: usize,
        now: Instant,
        pn: u64,
        len: usize,
        ack_eliciting: bool,
        data: Option<ChunkRef>,
        is_retransmission: bool,
    ) {
        let id = SubflowId(i as u8);
        let rate = self.effective_pacing_rate(id);
        let rto = self.subflows[i].rtt.rto();
        let s = &mut self.subflows[i];
        s.counters.pkts_sent_total += 1;
        s.counters.bytes_sent_total += len as u64;
        if !ack_eliciting {
            // ACK-only and CLOSE packets are not tracked (no retransmission, not in flight);
            // keep the record contiguous with a resolved placeholder.
            if !s.sent.is_empty() {
                s.sent.push_back(SentPacket {
                    pn,
                    sent_time: now,
                    size_bytes: 0,
                    ack_eliciting: false,
                    state: PacketState::Acked,
                    data: None,
                    is_retransmission: false,
                    stamp: Default::default(),
                });
            }
            return;
        }
        let idle_restart = s.inflight_bytes == 0
            && s.counters.pkts_sent_total > 1
            && now.saturating_duration_since(s.last_sent) > rto
            && data.is_some();
        let stamp = s.rate.on_sent(now, s.inflight_bytes);
        if s.sent.is_empty() {
            // Placeholder-free start: the record begins at this pn.
        }
        s.sent.push_back(SentPacket {
            pn,
            sent_time: now,
            size_bytes: len as u32,
            ack_eliciting: true,
            state: PacketState::InFlight,
            data,
            is_retransmission,
            stamp,
        });
        s.inflight_bytes += len as u64;
        s.ack_eliciting_in_flight += 1;
        s.last_ack_eliciting_sent = now;
        s.last_sent = now;
        if data.is_some() {
            s.pacer.on_sent(now, len as u64, s.mss_bytes, rate);
        }
        let inflight = s.inflight_bytes;
        if idle_restart {
            self.cc.on_idle_restart(id, now);
        }
        let cwnd = self.cc.cwnd_bytes(id);
        if inflight >= cwnd {
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

/// True if `datagram` is a well-formed first packet of a new connection (carries HELLO on
/// subflow 0 or later). Servers use it to decide whether to create a connection.
pub fn is_hello(datagram: &[u8]) -> bool {
    let Ok((_, payload)) = wire::parse_header(datagram) else {
        return false;
    };
    wire::validate(payload).is_ok()
        && wire::frames(payload).any(|f| matches!(f, Ok(Frame::Hello { .. })))
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
