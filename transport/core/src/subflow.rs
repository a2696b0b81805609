//! Per-subflow state: packet numbers, sent-packet record, received ranges, RTT, timers,
//! delivery-rate sampler, pacer, the subflow's send and retransmission queues, its loss
//! episode and its counters. Packet-state transitions (acked, lost, the whole flight lost on
//! a timeout) are methods here; the logic that needs the whole connection (chunk delivery,
//! reinjection, CC calls) lives in `connection/recovery.rs`.

use std::collections::VecDeque;
use std::time::Duration;

use crate::cc::rate::{PacketRateStamp, RateSampler};
use crate::pacer::Pacer;
use crate::ranges::RangeSet;
use crate::rtt::{INITIAL_RTO, MAX_RTO, RtoForm, RttEstimator};
use crate::units::{Instant, SubflowId};

/// Added to 2·SRTT for a tail-loss probe with more than one packet in flight (Linux
/// `TCP_TIMEOUT_MIN_US`).
pub const TLP_EXTRA: Duration = Duration::from_millis(2);
/// Added instead with a single packet in flight, for the peer's delayed ACK (Linux
/// `tcp_rto_min_us`, 200 ms).
pub const TLP_EXTRA_ONE_PACKET: Duration = Duration::from_millis(200);
/// Packet-reordering threshold (RFC 9002 kPacketThreshold; Linux `tcp_reordering` = 3).
pub const PACKET_THRESHOLD: u64 = 3;
/// Time threshold: a packet is lost when sent this fraction of max(SRTT, latest RTT) before
/// a later acknowledged one (RFC 9002 kTimeThreshold = 9/8).
pub const TIME_THRESHOLD_NUM: u32 = 9;
pub const TIME_THRESHOLD_DEN: u32 = 8;
/// Smallest time-threshold delay (RFC 9002 kGranularity).
pub const LOSS_DELAY_GRANULARITY: Duration = Duration::from_millis(1);
/// Largest backoff exponent of the RTO (and of the handshake timer).
const MAX_RTO_BACKOFF_SHIFT: u32 = 10;
const MAX_HANDSHAKE_BACKOFF_SHIFT: u32 = 6;
/// Handshake attempts (1 s, 2 s, 4 s, ... backoff) before a subflow is given up.
pub const MAX_HANDSHAKE_ATTEMPTS: u32 = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubflowState {
    /// Client: HELLO sent, not yet acknowledged.
    Handshaking,
    Established,
    /// Server: a higher subflow id said HELLO first; this one has not yet.
    AwaitingHello,
    /// Handshake failed or the connection closed.
    Failed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketState {
    InFlight,
    Acked,
    Lost,
}

/// Stream data carried by a packet or waiting in a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRef {
    pub dsn: u64,
    pub len: u32,
    pub fin: bool,
}

impl ChunkRef {
    /// One past the last data sequence number it occupies (a FIN takes one).
    pub fn end(&self) -> u64 {
        self.dsn + self.len as u64 + self.fin as u64
    }
}

/// Why a chunk sits in a subflow queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueuedKind {
    Fresh,
    /// Placed again by the scheduler after an RTO elsewhere (connection-level reinjection).
    Reinject,
    RedundantCopy,
    /// Lost on this subflow and sent again on it (TCP's own retransmission).
    Retransmit,
}

#[derive(Clone, Copy, Debug)]
pub struct QueuedChunk {
    pub chunk: ChunkRef,
    pub kind: QueuedKind,
}

#[derive(Clone, Copy, Debug)]
pub struct SentPacket {
    pub pn: u64,
    pub sent_time: Instant,
    pub size_bytes: u32,
    pub ack_eliciting: bool,
    pub state: PacketState,
    pub data: Option<ChunkRef>,
    pub stamp: PacketRateStamp,
}

/// Counters of one subflow (CONTRACTS §5.2 `subflow` line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowCounters {
    pub bytes_sent_total: u64,
    pub bytes_acked_total: u64,
    pub bytes_retrans_total: u64,
    pub pkts_sent_total: u64,
    pub pkts_lost_total: u64,
    pub pkts_retrans_total: u64,
    pub sched_picks_total: u64,
    pub data_bytes_sent_total: u64,
    pub data_pkts_received_total: u64,
    pub data_bytes_received_total: u64,
    pub rto_total: u64,
    pub tlp_total: u64,
    /// Fast-recovery episodes entered (Linux `TcpExtTCPSackRecovery`).
    pub recoveries_total: u64,
    pub spurious_losses_total: u64,
    /// Bytes (whole packets) declared lost, by threshold or timeout.
    pub bytes_lost_total: u64,
}

/// Wire size of a DATA packet carrying `payload` bytes: header + DATA frame, plus the
/// DATA_ACK that rides along when it fits in `max_datagram` (see `send.rs`).
pub fn data_packet_bytes(payload: u64, max_datagram: u64) -> u64 {
    let bare = payload + crate::wire::DATA_PACKET_OVERHEAD_BYTES as u64;
    let with_data_ack = bare + crate::wire::DATA_ACK_FRAME_BYTES as u64;
    if with_data_ack <= max_datagram {
        with_data_ack
    } else {
        bare
    }
}

/// A congestion episode in progress, as Linux's CA_Recovery and CA_Loss states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LossEpisode {
    pub kind: EpisodeKind,
    /// Linux `high_seq`: the next packet number when the episode began (or, for the RTO-loss
    /// state, when the latest timeout fired). The episode lasts until nothing sent below it is
    /// outstanding.
    pub high_pn: u64,
    /// Data lost from packets numbered below `high_pn`, not yet delivered anywhere.
    pub undelivered: Vec<ChunkRef>,
    /// Data lost during the episode from packets numbered `high_pn` or above (sent during
    /// it). If any is still undelivered when the episode ends, a new fast recovery starts at
    /// once: Linux re-enters Recovery on the exit ACK while `lost_out` > 0
    /// (`tcp_fastretrans_alert` → `tcp_time_to_recover`).
    pub lost_after: Vec<ChunkRef>,
    /// A packet was newly acknowledged since the episode began or, in the RTO-loss state, since
    /// the latest timeout (Linux resets `icsk_retransmits` then).
    pub acked_since_timeout: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpisodeKind {
    /// Fast recovery after a packet- or time-threshold loss (CA_Recovery).
    FastRecovery,
    /// After a retransmission timeout (CA_Loss).
    RtoLoss,
}

/// Packets one ACK frame newly resolved.
#[derive(Clone, Debug, Default)]
pub struct AckedPackets {
    /// Bytes of packets that were in flight.
    pub acked_bytes: u64,
    /// (pn, send time, ack-eliciting) of the largest newly acknowledged packet.
    pub largest: Option<(u64, Instant, bool)>,
    /// Data carried by every newly acknowledged packet (late ACKs of lost ones included).
    pub delivered: Vec<ChunkRef>,
}

/// Packets declared lost at once.
#[derive(Clone, Debug, Default)]
pub struct LostPackets {
    pub pkts: u64,
    pub bytes: u64,
    /// Send time of the newest lost packet.
    pub largest_sent_time: Option<Instant>,
    /// (pn, data) of every lost packet that carried data, oldest first.
    pub chunks: Vec<(u64, ChunkRef)>,
}

pub struct Subflow {
    pub id: SubflowId,
    pub name: String,
    pub backup: bool,
    pub state: SubflowState,
    pub mss_bytes: u64,

    // --- sending
    pub next_pn: u64,
    /// Packets from the oldest unresolved one up to next_pn − 1, contiguous by pn.
    sent: VecDeque<SentPacket>,
    /// No packet numbered below this one is in flight. Packets only leave flight (a new one
    /// gets a higher number), so the walks over the record start here instead of at its
    /// front, which a lost packet kept for one RTO can hold a window's length behind.
    first_inflight_pn: u64,
    /// Packet numbers of the record's packets declared lost (kept for a late ACK), ascending:
    /// with the cursor, an ACK visits only the packets it can change instead of every packet
    /// its ranges cover.
    lost_pns: VecDeque<u64>,
    pub inflight_bytes: u64,
    pub ack_eliciting_in_flight: u64,
    pub largest_acked: Option<u64>,
    /// Send time of the largest acknowledged packet.
    pub largest_acked_sent_time: Option<Instant>,
    pub rtt: RttEstimator,
    pub loss_time: Option<Instant>,
    /// Consecutive probe timeouts without an ACK (0 = next timeout is a tail-loss probe).
    pub pto_count: u32,
    pub last_ack_eliciting_sent: Option<Instant>,
    pub last_sent: Option<Instant>,
    pub rate: RateSampler,
    pub pacer: Pacer,
    /// Data the scheduler assigned here, not yet sent.
    queue: VecDeque<QueuedChunk>,
    /// Data lost on this subflow, sent again here before anything in `queue`.
    retransmit_queue: VecDeque<ChunkRef>,
    /// Wire bytes of everything in `queue` and `retransmit_queue`.
    queued_bytes: u64,
    /// Probe packets owed (tail-loss probe or RTO probe); sent ignoring cwnd.
    pub probes_pending: u32,
    pub hello_pending: bool,
    pub handshake_attempts: u32,
    pub close_pending: Option<u8>,

    // --- congestion state
    pub episode: Option<LossEpisode>,
    /// Potentially failed: an RTO fired and no ACK arrived since.
    pub potentially_failed: bool,
    pub last_cwnd_limited: Option<Instant>,
    pub srtt_min_seen: Option<Duration>,
    pub srtt_max_seen: Option<Duration>,
    /// Delivered bytes at which the current packet-timed round ends (`tcp_bbr.c`
    /// `next_rtt_delivered`).
    pub round_end_delivered: u64,
    pub rtt_samples_this_round: u32,

    // --- receiving
    pub received: RangeSet,
    pub largest_received_time: Option<Instant>,
    pub ack_eliciting_since_ack: u32,
    pub ack_deadline: Option<Instant>,
    pub ack_now: bool,

    pub counters: SubflowCounters,
}

impl Subflow {
    pub fn new(
        id: SubflowId,
        name: &str,
        backup: bool,
        state: SubflowState,
        mss_bytes: u64,
        rto_form: RtoForm,
    ) -> Self {
        Subflow {
            id,
            name: name.to_string(),
            backup,
            state,
            mss_bytes,
            next_pn: 0,
            sent: VecDeque::new(),
            first_inflight_pn: 0,
            lost_pns: VecDeque::new(),
            inflight_bytes: 0,
            ack_eliciting_in_flight: 0,
            largest_acked: None,
            largest_acked_sent_time: None,
            rtt: RttEstimator::new(rto_form),
            loss_time: None,
            pto_count: 0,
            last_ack_eliciting_sent: None,
            last_sent: None,
            rate: RateSampler::new(),
            pacer: Pacer::default(),
            queue: VecDeque::new(),
            retransmit_queue: VecDeque::new(),
            queued_bytes: 0,
            probes_pending: 0,
            hello_pending: state == SubflowState::Handshaking,
            handshake_attempts: 0,
            close_pending: None,
            episode: None,
            potentially_failed: false,
            last_cwnd_limited: None,
            srtt_min_seen: None,
            srtt_max_seen: None,
            round_end_delivered: 0,
            rtt_samples_this_round: 0,
            received: RangeSet::new(crate::wire::MAX_ACK_RANGES),
            largest_received_time: None,
            ack_eliciting_since_ack: 0,
            ack_deadline: None,
            ack_now: false,
            counters: SubflowCounters::default(),
        }
    }

    pub fn is_established(&self) -> bool {
        self.state == SubflowState::Established
    }

    pub fn in_recovery(&self) -> bool {
        self.episode
            .as_ref()
            .is_some_and(|e| e.kind == EpisodeKind::FastRecovery)
    }

    pub fn in_rto_loss(&self) -> bool {
        self.episode
            .as_ref()
            .is_some_and(|e| e.kind == EpisodeKind::RtoLoss)
    }

    // ------------------------------------------------------------ packet state transitions

    /// Records an ack-eliciting packet of `size_bytes` sent at `now` (in flight from now on).
    pub fn on_packet_sent(
        &mut self,
        now: Instant,
        pn: u64,
        size_bytes: u64,
        data: Option<ChunkRef>,
    ) {
        let stamp = self.rate.on_sent(now, self.inflight_bytes);
        self.sent.push_back(SentPacket {
            pn,
            sent_time: now,
            size_bytes: size_bytes as u32,
            ack_eliciting: true,
            state: PacketState::InFlight,
            data,
            stamp,
        });
        self.inflight_bytes += size_bytes;
        self.ack_eliciting_in_flight += 1;
        self.last_ack_eliciting_sent = Some(now);
        self.last_sent = Some(now);
    }

    /// Records a packet that is not tracked (ACK-only, CLOSE): a resolved placeholder keeps
    /// the record contiguous by packet number.
    pub fn on_untracked_sent(&mut self, now: Instant, pn: u64) {
        if self.sent.is_empty() {
            return; // the record simply starts at the next tracked packet
        }
        self.sent.push_back(SentPacket {
            pn,
            sent_time: now,
            size_bytes: 0,
            ack_eliciting: false,
            state: PacketState::Acked,
            data: None,
            stamp: Default::default(),
        });
    }

    /// Marks the packets in `ranges` (inclusive, descending as in an ACK frame) acknowledged.
    /// A packet already declared lost is delivered all the same (a late ACK: counted as
    /// spurious and, as `tcp_rate.c` does, as delivered).
    pub fn on_ack_ranges(
        &mut self,
        now: Instant,
        ranges: impl Iterator<Item = (u64, u64)>,
    ) -> AckedPackets {
        let mut out = AckedPackets::default();
        let Some(front) = self.sent.front().map(|p| p.pn) else {
            return out;
        };
        // Below the cursor a packet is acknowledged already or declared lost: only the lost
        // ones can change, so the walk visits those, then every packet from the cursor on,
        // in the order of the ranges and, within one, of packet numbers.
        let cursor = front + self.inflight_start() as u64;
        for (first, last) in ranges {
            if last < front {
                break;
            }
            if first < cursor {
                let (lo, hi) = (first.max(front), last.min(cursor - 1));
                // Acknowledging a listed packet takes it off the list: the next one in the
                // range moves to the same index.
                let from = self.lost_pns.partition_point(|&pn| pn < lo);
                while let Some(&pn) = self.lost_pns.get(from).filter(|&&pn| pn <= hi) {
                    self.ack_packet((pn - front) as usize, now, &mut out);
                }
            }
            for pn in first.max(cursor)..=last {
                let i = (pn - front) as usize;
                let Some(p) = self.sent.get(i) else {
                    break;
                };
                if p.state != PacketState::Acked {
                    self.ack_packet(i, now, &mut out);
                }
            }
        }
        out
    }

    /// Acknowledges the record's packet `i`, in flight or declared lost (a lost one also
    /// leaves `lost_pns`). Callers skip packets acknowledged already.
    fn ack_packet(&mut self, i: usize, now: Instant, out: &mut AckedPackets) {
        let p = &mut self.sent[i];
        let size = p.size_bytes as u64;
        match p.state {
            PacketState::Acked => unreachable!("packet {} acknowledged twice", p.pn),
            PacketState::InFlight => {
                self.inflight_bytes -= size;
                if p.ack_eliciting {
                    self.ack_eliciting_in_flight -= 1;
                }
                out.acked_bytes += size;
            }
            PacketState::Lost => {
                self.counters.spurious_losses_total += 1;
                let k = self
                    .lost_pns
                    .binary_search(&p.pn)
                    .expect("a lost packet is listed");
                self.lost_pns.remove(k);
            }
        }
        p.state = PacketState::Acked;
        self.rate.on_packet_delivered(now, &p.stamp, size);
        if out.largest.is_none_or(|(l, _, _)| p.pn > l) {
            out.largest = Some((p.pn, p.sent_time, p.ack_eliciting));
        }
        if let Some(c) = p.data {
            out.delivered.push(c);
        }
    }

    /// RFC 9002 §6.1 loss detection on the packets below the largest acknowledged one:
    /// packet threshold [`PACKET_THRESHOLD`], time threshold 9/8 · max(SRTT, latest RTT).
    /// Sets `loss_time` for the earliest packet that may still be declared lost by time.
    pub fn detect_losses(&mut self, now: Instant) -> LostPackets {
        self.loss_time = None;
        let mut out = LostPackets::default();
        let Some(largest_acked) = self.largest_acked else {
            return out;
        };
        let rtt = self.rtt.latest().max(self.rtt.srtt());
        let loss_delay =
            (rtt * TIME_THRESHOLD_NUM / TIME_THRESHOLD_DEN).max(LOSS_DELAY_GRANULARITY);
        let lost_send_time = now.checked_sub(loss_delay);
        let start = self.advance_inflight_cursor();
        for i in start..self.sent.len() {
            let p = self.sent[i];
            if p.pn > largest_acked {
                break;
            }
            if p.state != PacketState::InFlight {
                continue;
            }
            let by_time = lost_send_time.is_some_and(|t| p.sent_time <= t);
            let by_count = largest_acked >= p.pn + PACKET_THRESHOLD;
            if by_time || by_count {
                self.mark_lost(i, &mut out);
            } else {
                let t = p.sent_time + loss_delay;
                self.loss_time = Some(self.loss_time.map_or(t, |lt| lt.min(t)));
            }
        }
        self.pop_resolved(now);
        out
    }

    /// Retransmission timeout: every packet in flight is lost (`tcp_timeout_mark_lost`).
    pub fn declare_flight_lost(&mut self, now: Instant) -> LostPackets {
        let mut out = LostPackets::default();
        let start = self.advance_inflight_cursor();
        for i in start..self.sent.len() {
            if self.sent[i].state == PacketState::InFlight {
                self.mark_lost(i, &mut out);
            }
        }
        self.pop_resolved(now);
        self.loss_time = None;
        out
    }

    fn mark_lost(&mut self, i: usize, out: &mut LostPackets) {
        let p = &mut self.sent[i];
        p.state = PacketState::Lost;
        match self.lost_pns.back() {
            Some(&b) if b > p.pn => {
                let k = self.lost_pns.partition_point(|&pn| pn < p.pn);
                self.lost_pns.insert(k, p.pn);
            }
            _ => self.lost_pns.push_back(p.pn),
        }
        let size = p.size_bytes as u64;
        self.inflight_bytes -= size;
        if p.ack_eliciting {
            self.ack_eliciting_in_flight -= 1;
        }
        self.rate.on_packet_lost(size);
        self.counters.pkts_lost_total += 1;
        self.counters.bytes_lost_total += size;
        out.pkts += 1;
        out.bytes += size;
        out.largest_sent_time = Some(
            out.largest_sent_time
                .map_or(p.sent_time, |t| t.max(p.sent_time)),
        );
        if let Some(c) = p.data {
            out.chunks.push((p.pn, c));
        }
    }

    /// Index in the record of the first packet that may be in flight (the record's length if
    /// none is), read from the cursor without moving it.
    fn inflight_start(&self) -> usize {
        let front = self.sent.front().map_or(self.first_inflight_pn, |p| p.pn);
        let start = (self.first_inflight_pn.saturating_sub(front) as usize).min(self.sent.len());
        // The cursor's invariant, checked against the whole record in every unit test.
        #[cfg(test)]
        assert!(
            self.sent
                .range(..start)
                .all(|p| p.state != PacketState::InFlight),
            "a packet below the in-flight cursor is in flight"
        );
        #[cfg(test)]
        assert!(
            self.sent
                .iter()
                .filter(|p| p.state == PacketState::Lost)
                .map(|p| p.pn)
                .eq(self.lost_pns.iter().copied()),
            "lost_pns lists exactly the record's lost packets, ascending"
        );
        start
    }

    /// Moves the cursor to the first packet in flight (or past the record) and returns its
    /// index in the record.
    fn advance_inflight_cursor(&mut self) -> usize {
        let mut i = self.inflight_start();
        while self
            .sent
            .get(i)
            .is_some_and(|p| p.state != PacketState::InFlight)
        {
            i += 1;
        }
        if let Some(front) = self.sent.front() {
            self.first_inflight_pn = front.pn + i as u64;
        }
        i
    }

    /// Drops resolved packets from the front of the record. A lost packet is kept for one
    /// RTO after it was sent, so that a late ACK can still deliver it.
    fn pop_resolved(&mut self, now: Instant) {
        let keep_lost = self.rtt.rto();
        while let Some(p) = self.sent.front() {
            let late_ack_possible = p.state == PacketState::Lost
                && now.saturating_duration_since(p.sent_time) < keep_lost;
            if p.state == PacketState::InFlight || late_ack_possible {
                break;
            }
            if p.state == PacketState::Lost {
                let listed = self.lost_pns.pop_front();
                debug_assert_eq!(listed, Some(p.pn));
            }
            self.sent.pop_front();
        }
    }

    /// Data of the newest packet still in flight (a tail-loss probe with nothing new to send
    /// retransmits it, as Linux `tcp_send_loss_probe` does).
    pub fn newest_in_flight_data(&self) -> Option<ChunkRef> {
        self.sent
            .iter()
            .rev()
            .find(|p| p.state == PacketState::InFlight && p.data.is_some())
            .and_then(|p| p.data)
    }

    /// Whether a packet numbered below `pn` is still in flight (Linux: snd_una below high_seq).
    /// Data sequence numbers this subflow still owes: chunks of packets in flight and chunks
    /// waiting for their retransmission here. Their minimum (once delivered ones are left
    /// out) is the subflow's `snd_una` in TCP terms.
    pub fn outstanding_dsns(&self) -> impl Iterator<Item = u64> + '_ {
        self.sent
            .range(self.inflight_start()..)
            .filter(|p| p.state == PacketState::InFlight)
            .filter_map(|p| p.data.map(|c| c.dsn))
            .chain(self.retransmit_queue.iter().map(|c| c.dsn))
    }

    pub fn in_flight_below(&self, pn: u64) -> bool {
        self.sent
            .range(self.inflight_start()..)
            .take_while(|p| p.pn < pn)
            .any(|p| p.state == PacketState::InFlight)
    }

    // ------------------------------------------------------------ timers

    /// Probe timeout: a tail-loss probe first, then the RTO with exponential backoff.
    /// Handshake: 1 s doubling. The probe follows Linux `tcp_schedule_loss_probe`: only
    /// outside a loss episode (CA_Open; none in fast recovery or the RTO-loss state, where the
    /// RTO comes directly), after 2·SRTT + 2 ms, or 2·SRTT + 200 ms with a single packet in
    /// flight, and never later than the RTO.
    pub fn pto_duration(&self, _max_ack_delay: Duration) -> Duration {
        if self.state == SubflowState::Handshaking || !self.rtt.has_sample() {
            let shift = self
                .handshake_attempts
                .saturating_sub(1)
                .min(MAX_HANDSHAKE_BACKOFF_SHIFT);
            return INITIAL_RTO * (1u32 << shift);
        }
        if self.tlp_allowed() {
            let extra = if self.ack_eliciting_in_flight == 1 {
                TLP_EXTRA_ONE_PACKET
            } else {
                TLP_EXTRA
            };
            return (self.rtt.srtt() * 2 + extra).min(self.rtt.rto());
        }
        // pto_count counts the probe as the first timeout (see `on_pto`).
        let shift = self.pto_count.saturating_sub(1).min(MAX_RTO_BACKOFF_SHIFT);
        (self.rtt.rto() * (1u32 << shift)).min(MAX_RTO)
    }

    /// The next probe timeout is a tail-loss probe: none yet since the last ACK, and no
    /// loss episode.
    pub fn tlp_allowed(&self) -> bool {
        self.pto_count == 0 && self.episode.is_none()
    }

    pub fn pto_deadline(&self, max_ack_delay: Duration) -> Option<Instant> {
        if self.state == SubflowState::Failed {
            return None;
        }
        if self.ack_eliciting_in_flight == 0 && self.state != SubflowState::Handshaking {
            return None;
        }
        Some(self.last_ack_eliciting_sent? + self.pto_duration(max_ack_delay))
    }

    // ------------------------------------------------------------ queues

    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }

    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty() || !self.retransmit_queue.is_empty()
    }

    pub fn push_queue(&mut self, q: QueuedChunk) {
        self.queued_bytes += data_packet_bytes(q.chunk.len as u64, self.mss_bytes);
        self.queue.push_back(q);
    }

    /// Queues lost data for retransmission here, in data-sequence order, once.
    pub fn push_retransmit(&mut self, c: ChunkRef) {
        let at = self.retransmit_queue.partition_point(|q| q.dsn < c.dsn);
        if self
            .retransmit_queue
            .get(at)
            .is_some_and(|q| q.dsn == c.dsn)
        {
            return;
        }
        self.queued_bytes += data_packet_bytes(c.len as u64, self.mss_bytes);
        self.retransmit_queue.insert(at, c);
    }

    /// Next chunk to send: retransmissions first, then the scheduler's assignments.
    pub fn pop_queue(&mut self) -> Option<QueuedChunk> {
        let q = match self.retransmit_queue.pop_front() {
            Some(chunk) => QueuedChunk {
                chunk,
                kind: QueuedKind::Retransmit,
            },
            None => self.queue.pop_front()?,
        };
        self.queued_bytes -= data_packet_bytes(q.chunk.len as u64, self.mss_bytes);
        Some(q)
    }

    /// Empties the scheduler's assignments (after an RTO they go back to the connection).
    pub fn drain_assigned(&mut self) -> Vec<ChunkRef> {
        let out: Vec<ChunkRef> = self.queue.drain(..).map(|q| q.chunk).collect();
        for c in &out {
            self.queued_bytes -= data_packet_bytes(c.len as u64, self.mss_bytes);
        }
        out
    }

    /// Lost data waiting to be retransmitted here.
    pub fn pending_retransmissions(&self) -> impl Iterator<Item = &ChunkRef> {
        self.retransmit_queue.iter()
    }
}
