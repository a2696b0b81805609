//! One direction of a simulated path: Bernoulli loss on entry, a drop-tail queue with a byte
//! limit, serialisation at a rate, then a fixed propagation delay. FIFO, so deliveries keep
//! their order. Virtual time only.

use std::collections::VecDeque;
use std::time::Duration;

use crate::rng::Rng;
use crate::units::{Bandwidth, Instant};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// None = unlimited (no serialisation delay, no queue).
    pub rate: Option<Bandwidth>,
    pub delay: Duration,
    /// Random loss probability per packet.
    pub loss: f64,
    /// Drop-tail limit of the bottleneck queue (bytes waiting for serialisation).
    pub queue_limit_bytes: u64,
}

impl LinkSpec {
    /// A link whose queue holds one bandwidth-delay product of the path's round trip
    /// (2 × `delay`), at least 10 packets.
    pub fn bdp_queue(rate: Bandwidth, delay: Duration, loss: f64) -> LinkSpec {
        let bdp = rate.bytes_in(delay * 2) as u64;
        LinkSpec {
            rate: Some(rate),
            delay,
            loss,
            queue_limit_bytes: bdp.max(15_000),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounters {
    pub pkts_in: u64,
    pub bytes_in: u64,
    pub pkts_out: u64,
    pub bytes_out: u64,
    pub drops_random: u64,
    pub drops_queue: u64,
}

pub struct Link {
    pub spec: LinkSpec,
    rng: Rng,
    /// When the serialiser is free again.
    busy_until: Instant,
    in_transit: VecDeque<(Instant, Vec<u8>)>,
    pool: Vec<Vec<u8>>,
    pub counters: LinkCounters,
}

impl Link {
    pub fn new(spec: LinkSpec, seed: u64) -> Link {
        Link {
            spec,
            rng: Rng::new(seed),
            busy_until: Instant::ZERO,
            in_transit: VecDeque::new(),
            pool: Vec::new(),
            counters: LinkCounters::default(),
        }
    }

    /// A packet enters the link at `at`.
    pub fn send(&mut self, at: Instant, data: &[u8]) {
        self.counters.pkts_in += 1;
        self.counters.bytes_in += data.len() as u64;
        if self.rng.chance(self.spec.loss) {
            self.counters.drops_random += 1;
            return;
        }
        let depart = match self.spec.rate {
            None => at,
            Some(rate) => {
                let start = self.busy_until.max(at);
                let backlog_bytes = rate.bytes_in(start - at) as u64;
                if backlog_bytes + data.len() as u64 > self.spec.queue_limit_bytes {
                    self.counters.drops_queue += 1;
                    return;
                }
                // IP + UDP headers are on the wire too.
                let end = start + rate.transfer_time(data.len() as u64 + 28);
                self.busy_until = end;
                end
            }
        };
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        let arrive =
            (depart + self.spec.delay).max(self.in_transit.back().map_or(Instant::ZERO, |p| p.0));
        self.in_transit.push_back((arrive, buf));
    }

    pub fn next_delivery(&self) -> Option<Instant> {
        self.in_transit.front().map(|p| p.0)
    }

    /// The next packet due at or before `now`; give the buffer back with `recycle`.
    pub fn pop_due(&mut self, now: Instant) -> Option<Vec<u8>> {
        if self.in_transit.front().is_some_and(|p| p.0 <= now) {
            let (_, data) = self.in_transit.pop_front()?;
            self.counters.pkts_out += 1;
            self.counters.bytes_out += data.len() as u64;
            return Some(data);
        }
        None
    }

    pub fn recycle(&mut self, buf: Vec<u8>) {
        if self.pool.len() < 1024 {
            self.pool.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_delays_and_drops_at_the_queue_limit() {
        let spec = LinkSpec {
            rate: Some(Bandwidth::from_bps(8e6)), // 1 B/µs
            delay: Duration::from_millis(10),
            loss: 0.0,
            queue_limit_bytes: 3000,
        };
        let mut l = Link::new(spec, 1);
        let t0 = Instant::from_nanos(0);
        for _ in 0..5 {
            l.send(t0, &[0u8; 972]); // 1000 B on the wire
        }
        // Backlog at entry: 0, 1000, 2000 → accepted; 3000 + 972 > 3000 → dropped.
        assert_eq!(l.counters.drops_queue, 2);
        assert_eq!(l.next_delivery(), Some(Instant::from_nanos(11_000_000)));
        assert!(l.pop_due(Instant::from_nanos(10_999_999)).is_none());
        assert!(l.pop_due(Instant::from_nanos(11_000_000)).is_some());
    }
}
