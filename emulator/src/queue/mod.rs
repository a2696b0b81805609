//! Packet queues in front of the link's serialiser (after Mahimahi's
//! `AbstractPacketQueue` / `DroppingPacketQueue` split): one trait, one shared
//! base that owns and checks the limit, one file per policy.

pub mod drop_tail;

use crate::spec::QueueSpec;

/// A packet as the emulator sees it: an opaque token (the NFQUEUE packet id),
/// its length on the wire and when it arrived (virtual time, ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub token: u64,
    pub bytes: u32,
    pub arrival_ns: u64,
}

/// What a queue limit counts. Zero is invalid (never "unlimited").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
    /// Longest time, in ms, a newly queued packet may wait until its
    /// serialisation ends, at the rate the link drains now.
    Ms(f64),
}

impl QueueLimit {
    pub fn from_spec(spec: &QueueSpec) -> Result<QueueLimit, String> {
        match *spec {
            QueueSpec::Packets { limit } if limit >= 1 => Ok(QueueLimit::Packets(limit)),
            QueueSpec::Bytes { limit } if limit >= 1500 => Ok(QueueLimit::Bytes(limit)),
            QueueSpec::Ms { limit } if limit.is_finite() && limit > 0.0 => {
                Ok(QueueLimit::Ms(limit))
            }
            QueueSpec::Packets { limit } => {
                Err(format!("is {limit}, a packet limit must be at least 1"))
            }
            QueueSpec::Bytes { limit } => Err(format!(
                "is {limit}, a byte limit must be at least 1500 (one MTU)"
            )),
            QueueSpec::Ms { limit } => Err(format!("is {limit}, a ms limit must be > 0")),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            QueueLimit::Packets(n) => format!("packets={n}"),
            QueueLimit::Bytes(n) => format!("bytes={n}"),
            QueueLimit::Ms(ms) => format!("ms={ms}"),
        }
    }
}

/// How much the queue holds right now, and how fast the link drains it.
#[derive(Debug, Clone, Copy)]
pub struct Occupancy {
    pub packets: u64,
    pub bytes: u64,
    /// None: the link has no rate limit (the queue never builds up).
    pub drain_rate_bps: Option<f64>,
}

/// The shared base every dropping queue uses: does a packet of `bytes` fit?
pub fn fits(limit: &QueueLimit, occupancy: Occupancy, bytes: u32) -> bool {
    match *limit {
        QueueLimit::Packets(n) => occupancy.packets < n,
        QueueLimit::Bytes(n) => occupancy.bytes + u64::from(bytes) <= n,
        QueueLimit::Ms(limit_ms) => match occupancy.drain_rate_bps {
            None => true,
            Some(rate_bps) => {
                let wait_ms = (occupancy.bytes + u64::from(bytes)) as f64 * 8.0 * 1e3 / rate_bps;
                wait_ms <= limit_ms
            }
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFull;

pub trait PacketQueue {
    /// Queues `pkt` or refuses it because the queue is full.
    fn enqueue(&mut self, pkt: Packet, drain_rate_bps: Option<f64>) -> Result<(), QueueFull>;
    fn dequeue(&mut self) -> Option<Packet>;
    fn front(&self) -> Option<&Packet>;
    fn packets(&self) -> u64;
    fn bytes(&self) -> u64;
    /// Echoes the configuration, e.g. `droptail [packets=100]`.
    fn describe(&self) -> String;
}
