//! Units live in types: simulated-or-real time (`Instant`), rates (`Bandwidth`) and ids.
//!
//! The core never reads a clock. Every `Instant` is handed in by the caller: the proxy
//! passes `CLOCK_MONOTONIC` nanoseconds, the simulator its virtual time. Durations are
//! `std::time::Duration`.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time, nanoseconds since an origin chosen by the caller (monotonic, never
/// decreasing between calls into one connection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);
    /// Far future; used as "no deadline" inside min() computations.
    pub const NEVER: Instant = Instant(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Instant {
        Instant(ns)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// `self - earlier`, or zero when `earlier` is later (never panics).
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    pub fn checked_sub(self, d: Duration) -> Option<Instant> {
        self.0.checked_sub(duration_nanos(d)).map(Instant)
    }
    pub fn saturating_sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration_nanos(d)))
    }
}

fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_nanos(d)))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier minus a later instant is zero.
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.0 as f64 / 1e9)
    }
}

/// A data rate. Stored as bits per second (f64), so that gains (×1.25, ×2.885) keep precision.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Bandwidth {
    bits_per_s: f64,
}

impl Bandwidth {
    pub const ZERO: Bandwidth = Bandwidth { bits_per_s: 0.0 };

    pub fn from_bps(bits_per_s: f64) -> Bandwidth {
        Bandwidth {
            bits_per_s: bits_per_s.max(0.0),
        }
    }
    pub fn from_mbps(mbits_per_s: f64) -> Bandwidth {
        Bandwidth::from_bps(mbits_per_s * 1e6)
    }
    pub fn from_bytes_per_s(bytes_per_s: f64) -> Bandwidth {
        Bandwidth::from_bps(bytes_per_s * 8.0)
    }
    /// `bytes` delivered over `interval`; zero when the interval is zero.
    pub fn from_bytes_and_duration(bytes: u64, interval: Duration) -> Bandwidth {
        let secs = interval.as_secs_f64();
        if secs <= 0.0 {
            Bandwidth::ZERO
        } else {
            Bandwidth::from_bytes_per_s(bytes as f64 / secs)
        }
    }
    pub fn bps(self) -> f64 {
        self.bits_per_s
    }
    pub fn bytes_per_s(self) -> f64 {
        self.bits_per_s / 8.0
    }
    /// Time to serialise `bytes` at this rate; `Duration::MAX` at zero rate.
    pub fn transfer_time(self, bytes: u64) -> Duration {
        if self.bits_per_s <= 0.0 {
            return Duration::MAX;
        }
        Duration::from_secs_f64((bytes as f64 * 8.0 / self.bits_per_s).min(1e9))
    }
    /// Bytes sent at this rate during `d` (bandwidth-delay product when `d` is an RTT).
    pub fn bytes_in(self, d: Duration) -> f64 {
        self.bytes_per_s() * d.as_secs_f64()
    }
    pub fn scaled(self, gain: f64) -> Bandwidth {
        Bandwidth::from_bps(self.bits_per_s * gain)
    }
    pub fn max(self, other: Bandwidth) -> Bandwidth {
        if other.bits_per_s > self.bits_per_s {
            other
        } else {
            self
        }
    }
    pub fn min(self, other: Bandwidth) -> Bandwidth {
        if other.bits_per_s < self.bits_per_s {
            other
        } else {
            self
        }
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} Mbit/s", self.bits_per_s / 1e6)
    }
}

/// Index of a subflow (one per path) inside a connection, 0-based, < `MAX_SUBFLOWS`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubflowId(pub u8);

pub const MAX_SUBFLOWS: usize = 8;

impl SubflowId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl fmt::Display for SubflowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sf{}", self.0)
    }
}

/// A set of subflows (bit i = subflow i).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PathMask(pub u8);

impl PathMask {
    pub const EMPTY: PathMask = PathMask(0);
    pub fn single(id: SubflowId) -> PathMask {
        PathMask(1u8 << id.0)
    }
    pub fn contains(self, id: SubflowId) -> bool {
        self.0 & (1u8 << id.0) != 0
    }
    pub fn with(self, id: SubflowId) -> PathMask {
        PathMask(self.0 | (1u8 << id.0))
    }
    pub fn without(self, id: SubflowId) -> PathMask {
        PathMask(self.0 & !(1u8 << id.0))
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
    pub fn iter(self) -> impl Iterator<Item = SubflowId> {
        (0..MAX_SUBFLOWS as u8)
            .filter(move |i| self.0 & (1 << i) != 0)
            .map(SubflowId)
    }
}

/// Default segment size as counted in cwnd and inflight: the largest datagram (UDP payload)
/// on a 1500 B MTU path (1500 − 20 IPv4 − 8 UDP). Stream payload per packet is smaller by
/// the wire overhead (`wire::DATA_PACKET_OVERHEAD_BYTES`).
pub const DEFAULT_MSS_BYTES: u64 = 1472;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_conversions_keep_units() {
        let b = Bandwidth::from_mbps(100.0);
        assert_eq!(b.bytes_per_s(), 12_500_000.0);
        assert_eq!(b.transfer_time(1_250_000), Duration::from_millis(100));
        assert!((b.bytes_in(Duration::from_millis(50)) - 625_000.0).abs() < 1e-6);
        assert_eq!(Bandwidth::ZERO.transfer_time(1), Duration::MAX);
    }

    #[test]
    fn instant_arithmetic_saturates() {
        let a = Instant::from_nanos(5);
        let b = Instant::from_nanos(10);
        assert_eq!(a - b, Duration::ZERO);
        assert_eq!(b - a, Duration::from_nanos(5));
        assert_eq!(Instant::NEVER + Duration::from_secs(1), Instant::NEVER);
    }

    #[test]
    fn path_mask_sets() {
        let m = PathMask::EMPTY.with(SubflowId(0)).with(SubflowId(3));
        assert!(m.contains(SubflowId(3)) && !m.contains(SubflowId(1)));
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            vec![SubflowId(0), SubflowId(3)]
        );
        assert_eq!(m.without(SubflowId(0)).len(), 1);
    }
}
