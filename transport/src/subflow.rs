//! Per-subflow state: packet numbers, sent-packet record, received ranges, RTT, timers,
//! delivery-rate sampler, pacer, the subflow's send queue and its counters. The logic that
//! needs the whole connection (loss → reinjection, CC calls) lives in `connection.rs`.

use std::collections::VecDeque;
use std::time::Duration;

use crate::cc::rate::{PacketRateStamp, RateSampler};
use crate::pacer::Pacer;
use crate::ranges::RangeSet;
use crate::rtt::{MAX_RTO, RttEstimator};
use crate::units::{Bandwidth, Instant, SubflowId};

/// Minimum tail-loss-probe timeout.
pub const MIN_TLP: Duration = Duration::from_millis(10);
/// Packet-reordering threshold (RFC 9002 kPacketThreshold).
pub const PACKET_THRESHOLD: u64 = 3;
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
    Reinject,
    RedundantCopy,
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
    pub is_retransmission: bool,
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
    pub spurious_losses_total: u64,
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
    pub sent: VecDeque<SentPacket>,
    pub inflight_bytes: u64,
    pub ack_eliciting_in_flight: u64,
    pub largest_acked: Option<u64>,
    pub rtt: RttEstimator,
    pub loss_time: Option<Instant>,
    /// Consecutive probe timeouts without an ACK (0 = next timeout is a tail-loss probe).
    pub pto_count: u32,
    pub last_ack_eliciting_sent: Instant,
    pub last_sent: Instant,
    pub rate: RateSampler,
    pub pacer: Pacer,
    pub queue: VecDeque<QueuedChunk>,
    pub queued_bytes: u64,
    /// Probe packets owed (tail-loss probe or RTO probe); sent ignoring cwnd.
    pub probes_pending: u32,
    pub hello_pending: bool,
    pub handshake_attempts: u32,
    pub close_pending: Option<u8>,

    // --- congestion state mirrored for views
    /// RFC 9002 congestion_recovery_start_time.
    pub recovery_start: Option<Instant>,
    pub in_recovery: bool,
    pub in_rto_loss: bool,
    /// Potentially failed: an RTO fired and no ACK arrived since.
    pub potentially_failed: bool,
    pub last_cwnd_limited: Option<Instant>,
    pub latest_delivery_rate: Option<Bandwidth>,
    pub srtt_min_seen: Duration,
    pub srtt_max_seen: Duration,

    // --- receiving
    pub received: RangeSet,
    pub largest_received_time: Instant,
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
    ) -> Self {
        Subflow {
            id,
            name: name.to_string(),
            backup,
            state,
            mss_bytes,
            next_pn: 0,
            sent: VecDeque::new(),
            inflight_bytes: 0,
            ack_eliciting_in_flight: 0,
            largest_acked: None,
            rtt: RttEstimator::default(),
            loss_time: None,
            pto_count: 0,
            last_ack_eliciting_sent: Instant::ZERO,
            last_sent: Instant::ZERO,
            rate: RateSampler::new(),
            pacer: Pacer::default(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            probes_pending: 0,
            hello_pending: state == SubflowState::Handshaking,
            handshake_attempts: 0,
            close_pending: None,
            recovery_start: None,
            in_recovery: false,
            in_rto_loss: false,
            potentially_failed: false,
            last_cwnd_limited: None,
            latest_delivery_rate: None,
            srtt_min_seen: Duration::ZERO,
            srtt_max_seen: Duration::ZERO,
            received: RangeSet::new(crate::wire::MAX_ACK_RANGES),
            largest_received_time: Instant::ZERO,
            ack_eliciting_since_ack: 0,
            ack_deadline: None,
            ack_now: false,
            counters: SubflowCounters::default(),
        }
    }

    pub fn is_established(&self) -> bool {
        self.state == SubflowState::Established
    }

    /// The sent-packet entry for `pn`, if still recorded.
    pub fn packet_mut(&mut self, pn: u64) -> Option<&mut SentPacket> {
        let front = self.sent.front()?.pn;
        if pn < front {
            return None;
        }
        self.sent.get_mut((pn - front) as usize)
    }

    /// Drops resolved packets from the front of the record.
    pub fn pop_resolved(&mut self) {
        while self
            .sent
            .front()
            .is_some_and(|p| p.state != PacketState::InFlight)
        {
            self.sent.pop_front();
        }
    }

    /// Probe timeout: a tail-loss probe first (2·SRTT + max ack delay, ≥ 10 ms), then the
    /// RFC 6298 RTO with exponential backoff. Handshake: 1 s doubling.
    pub fn pto_duration(&self, max_ack_delay: Duration) -> Duration {
        if self.state == SubflowState::Handshaking || !self.rtt.has_sample() {
            let shift = self.handshake_attempts.saturating_sub(1).min(6);
            return crate::rtt::INITIAL_RTO * (1u32 << shift);
        }
        if self.pto_count == 0 {
            return (self.rtt.srtt() * 2 + max_ack_delay).max(MIN_TLP);
        }
        let shift = (self.pto_count - 1).min(10);
        (self.rtt.rto() * (1u32 << shift)).min(MAX_RTO)
    }

    pub fn pto_deadline(&self, max_ack_delay: Duration) -> Option<Instant> {
        if self.state == SubflowState::Failed {
            return None;
        }
        if self.ack_eliciting_in_flight == 0 && self.state != SubflowState::Handshaking {
            return None;
        }
        Some(self.last_ack_eliciting_sent + self.pto_duration(max_ack_delay))
    }

    pub fn push_queue(&mut self, q: QueuedChunk) {
        self.queued_bytes += q.chunk.len as u64;
        self.queue.push_back(q);
    }

    pub fn pop_queue(&mut self) -> Option<QueuedChunk> {
        let q = self.queue.pop_front()?;
        self.queued_bytes -= q.chunk.len as u64;
        Some(q)
    }
}
