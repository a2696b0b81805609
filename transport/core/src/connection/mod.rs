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
//! * Each subflow: packet numbers, ACK ranges, the Linux RTT estimator and RTO
//!   (`rtt.rs`), RFC 9002 loss detection (packet threshold 3, time threshold 9/8·RTT), a
//!   tail-loss probe then an RTO with backoff.
//! * Loss recovery as Linux MPTCP: data lost by packet or time threshold is retransmitted on
//!   the same subflow (fast recovery, `recovery.rs`); an RTO collapses cwnd, marks the
//!   subflow potentially failed, retransmits on it and also reinjects its undelivered data
//!   into the connection-level reinjection queue, which the scheduler serves before fresh
//!   data and preferably on another subflow.
//! * Receiver: in-order bytes go to the read buffer, others to the out-of-order queue (its
//!   occupancy is logged); data ACK + window are carried in every ACK and data packet.
//!
//! # Parts
//! `timers.rs` (the one timer table), `recovery.rs` (ACKs, loss detection, recovery and
//! RTO-loss episodes), `scheduling.rs` (scheduler calls and placement), `send.rs` (packets
//! out), `recv.rs` (packets in, reassembly), `chunks.rs` (the outgoing stream's chunks and
//! reinjection queue).

mod chunks;
mod rcvbuf;
mod recovery;
mod recv;
mod scheduling;
mod send;
mod timers;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use crate::cc::{self, CcConfig, CcPhase, CongestionController, RegistryError};
use crate::rtt::RtoForm;
use crate::sched::{self, PathView, SchedConfig, SchedEvent, Scheduler};
use crate::subflow::{Subflow, SubflowCounters, SubflowState};
use crate::units::{Bandwidth, Instant, MAX_SUBFLOWS, SubflowId};
use crate::wire::{self, Frame};

use chunks::ChunkTable;
use rcvbuf::RecvBuffer;

/// The smallest receive window a connection offers (a fixed `Config::recv_window_bytes` is
/// raised to it; the autotuned one starts there); a sender assumes it until the peer's first
/// DATA_ACK.
pub const MIN_RECV_WINDOW_BYTES: u64 = 64 * 1024;

/// A window update is sent on its own once reading has moved the window's right edge by this
/// fraction of the receive window (otherwise it rides on the next ACK).
const WINDOW_UPDATE_FRACTION: u64 = 4;

/// Most spare out-of-order segment buffers kept for reuse (`Connection::ofo_spare`).
const OFO_SPARE_BUFFERS: usize = 256;

/// Connection settings.
#[derive(Clone, Debug)]
pub struct Config {
    pub cc: String,
    pub sched: String,
    pub cc_config: CcConfig,
    pub sched_config: SchedConfig,
    /// Largest datagram (UDP payload) sent; also the segment size given to CCs.
    pub max_datagram_bytes: usize,
    /// Receive buffer (read buffer + out-of-order queue, advertised as the data window).
    /// None (default): autotuned as Linux does at the MPTCP meta socket, `tcp_rmem`'s defaults
    /// (`rcvbuf.rs`); Some(w): a fixed window of w bytes.
    pub recv_window_bytes: Option<u64>,
    /// Most bytes `write` accepts that are not yet data-acked.
    pub send_buffer_bytes: u64,
    /// ACK at least every this many ack-eliciting packets...
    pub ack_every_pkts: u32,
    /// ...or this long after the first unacknowledged one.
    pub max_ack_delay: Duration,
    /// Nothing received for this long: close ([`DEFAULT_IDLE_TIMEOUT`]).
    pub idle_timeout: Duration,
    /// poll_transmit releases packets whose pacing time is at most this far ahead (lets a
    /// runtime batch sends); 0 in the simulator.
    pub pacing_horizon: Duration,
    pub seed: u64,
    /// RTO rule: Linux's SRTT + max(4·RTTVAR, 200 ms) (default) or RFC 6298's.
    pub rto_form: RtoForm,
    /// Where data lost by packet or time threshold is sent again. Default (false): on the same
    /// subflow, as both Linux MPTCP lines do. true: into the reinjection queue, where the
    /// scheduler prefers a subflow that did not carry it (this transport's behaviour before
    /// the Linux-like recovery; skews per-path retransmission counts, see docs/TRANSPORT.md).
    pub reinject_fast_losses: bool,
}

/// The idle timeout of both engines (mpproxy's `--idle-timeout-s` default, mpsim's only
/// value). Linux has no such timer: a receiver waits for ever, and a sender gives up after
/// `tcp_retries2` (15) retransmission timeouts, about 924.6 s with `TCP_RTO_MAX` 120 s
/// (`tcp_write_timeout`, net/ipv4/tcp_timer.c). 600 s exceeds every trial's length (mpsim's
/// virtual-time limit for a 180 s video is 600 s), so neither engine closes a connection
/// that a kernel would keep; the earlier 30 s closed connections whose RTO had backed off.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

impl Default for Config {
    fn default() -> Self {
        Config {
            cc: "reno".into(),
            sched: "lrf".into(),
            cc_config: CcConfig::default(),
            sched_config: SchedConfig::default(),
            max_datagram_bytes: crate::units::DEFAULT_MSS_BYTES as usize,
            recv_window_bytes: None,
            send_buffer_bytes: 16 << 20,
            ack_every_pkts: 2,
            max_ack_delay: Duration::from_millis(5),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            pacing_horizon: Duration::ZERO,
            seed: 1,
            rto_form: RtoForm::Linux,
            reinject_fast_losses: false,
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
    chunks: ChunkTable,
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
    /// Buffers of out-of-order segments already delivered, reused for the next ones (an
    /// allocation per segment otherwise); at most [`OFO_SPARE_BUFFERS`].
    ofo_spare: Vec<Vec<u8>>,
    peer_fin_dsn: Option<u64>,
    peer_finished: bool,
    advertised_edge: u64,
    rcvbuf: RecvBuffer,
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
        cfg.recv_window_bytes = cfg.recv_window_bytes.map(|w| w.max(MIN_RECV_WINDOW_BYTES));
        let rcvbuf = RecvBuffer::new(cfg.recv_window_bytes, payload_mss);
        let advertised_edge = rcvbuf.window_bytes();
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
            chunks: ChunkTable::default(),
            peer_data_ack: 0,
            // Until the peer's first DATA_ACK: assume the smallest window a peer may offer.
            peer_window: MIN_RECV_WINDOW_BYTES,
            peer_edge: MIN_RECV_WINDOW_BYTES,
            write_blocked: false,
            recv_buf: VecDeque::new(),
            recv_next: 0,
            ofo: BTreeMap::new(),
            ofo_spare: Vec::new(),
            peer_fin_dsn: None,
            peer_finished: false,
            advertised_edge,
            rcvbuf,
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
        let sf = Subflow::new(id, name, backup, st, mss, self.cfg.rto_form);
        self.cc.add_subflow(id, now, mss);
        self.cc.set_subflow_name(id, name);
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
            in_recovery: false,
            rttvar_kernel: sf.rtt.rttvar_kernel(),
            delivery_rate: None,
            sent_bytes_total: 0,
            lost_bytes_total: 0,
            peer_rwnd_bytes: 0,
        });
        self.subflows.push(sf);
        if st == SubflowState::Established {
            self.on_established(id);
        }
    }

    fn on_established(&mut self, id: SubflowId) {
        let name = self.subflows[id.index()].name.clone();
        self.any_established = true;
        self.rcvbuf.on_subflow_joined();
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
        self.sched_trace
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
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
    /// The receive window this side offers now (autotuned unless fixed by the config).
    pub fn recv_window_bytes(&self) -> u64 {
        self.rcvbuf.window_bytes()
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

    /// Stats of every subflow that has a name: a server-side placeholder for a subflow id
    /// whose HELLO has not arrived (ids may arrive out of order) is left out, since it has
    /// carried nothing and would show up as a path "?" in the logs.
    pub fn subflow_stats(&self) -> Vec<SubflowStats> {
        self.subflows
            .iter()
            .filter(|s| s.state != SubflowState::AwaitingHello)
            .map(|s| SubflowStats {
                id: s.id,
                name: s.name.clone(),
                established: s.is_established(),
                cwnd_bytes: self.cc.cwnd_bytes(s.id),
                inflight_bytes: s.inflight_bytes,
                srtt: s.rtt.srtt(),
                rttvar: s.rtt.rttvar(),
                min_rtt: s.rtt.min_rtt(),
                pacing_rate: self.cc.pacing_rate(s.id),
                bw_estimate: self.cc.bw_estimate(s.id),
                delivery_rate: s.rate.delivery_rate(),
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
            self.rcvbuf.on_read(self.last_recv, n as u64);
            let edge = self.window_edge();
            let step = (self.rcvbuf.window_bytes() / WINDOW_UPDATE_FRACTION).max(1);
            if edge >= self.advertised_edge + step {
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

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
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

impl Connection {
    /// The sender and receiver state in one paragraph, for error messages about a connection
    /// that stopped making progress (e.g. the simulator's watchdog): stream offsets, peer
    /// window, and per subflow its window, flight, episode and timers.
    pub fn describe_state(&self) -> String {
        let data_end = self.send_base + self.send_buf.len() as u64;
        let mut s = format!(
            "{:?} {:?}: unsent {} B, unacked {} B, reinjection queue {} B, peer window edge {} \
             (next fresh {}), received in order {} B, out-of-order segments {}, next timer {:?}",
            self.role,
            self.lifecycle,
            data_end - self.next_fresh,
            self.next_fresh - self.send_base,
            self.chunks.reinject_bytes(),
            self.peer_edge,
            self.next_fresh,
            self.recv_next,
            self.ofo.len(),
            self.poll_timeout()
        );
        for f in &self.subflows {
            let episode = match &f.episode {
                None => "none".to_string(),
                Some(e) => format!("{:?} until pn {}", e.kind, e.high_pn),
            };
            s += &format!(
                "; subflow {} {:?}: cwnd {} B, in flight {} B, queued {} B, episode {episode}, \
                 potentially failed {}, loss timer {:?}, probe timer {:?}",
                f.name,
                f.state,
                self.cc.cwnd_bytes(f.id),
                f.inflight_bytes,
                f.queued_bytes(),
                f.potentially_failed,
                f.loss_time,
                f.pto_deadline(self.cfg.max_ack_delay),
            );
        }
        s
    }
}
