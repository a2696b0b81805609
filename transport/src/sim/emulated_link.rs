//! One direction of a simulated path, modelled by the emulator's own link (`linkemu::link::Link`:
//! outage, random loss, drop-tail queue, serialisation at a constant or trace rate, delay with
//! jitter, schedules), driven in virtual time. The simulator and the emulator therefore share
//! one link model and one RNG layout: a link built from a scenario with `(seed, link_index)`
//! draws the same loss pattern as `linkemu --seed <seed>` for the same packet arrivals.
//!
//! This wrapper only carries the datagrams: linkemu sees a token and a length, the wrapper keeps
//! the bytes (and a caller tag, e.g. the flow a packet belongs to) until linkemu releases or
//! drops the token. Packets may be sent with a future time (pacing, ACK jitter); they enter the
//! link when virtual time reaches them.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use linkemu::link::{Counters, Decision, DropReason, Link as EmuLink, Verdict};
use linkemu::network::{LinkEvent, NetLink};
use linkemu::scenario::{LinkSpec as EmuSpec, LossSpec, QueueSpec, RateSpec};

use crate::units::{Bandwidth, Instant};

/// IP + UDP headers: on the emulated wire a datagram of `n` payload bytes is `n + 28` bytes,
/// as linkemu sees it on NFQUEUE.
pub const IP_UDP_HEADER_BYTES: u32 = 28;

/// A constant-rate link in the simulator's units; converted to linkemu's spec (Bernoulli loss,
/// byte-limited drop-tail queue). Scenario files give the full linkemu spec instead
/// ([`Link::from_emulator_spec`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// None = unlimited (no serialisation delay, no queue).
    pub rate: Option<Bandwidth>,
    pub delay: Duration,
    /// Random loss probability per packet.
    pub loss: f64,
    /// Drop-tail limit of the bottleneck queue (bytes, IP headers included; at least 1500).
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

    /// The same link in linkemu's terms.
    pub fn to_emulator_spec(&self) -> EmuSpec {
        EmuSpec {
            rate: match self.rate {
                Some(r) => RateSpec::Constant { bps: r.bps() },
                None => RateSpec::Unlimited,
            },
            delay_ms: self.delay.as_secs_f64() * 1e3,
            jitter_ms: 0.0,
            // Bernoulli even at p = 0, so `set_spec` can raise the loss later.
            loss: LossSpec::Bernoulli {
                p: self.loss.clamp(0.0, 1.0),
            },
            queue: QueueSpec::Bytes {
                limit: self.queue_limit_bytes.max(1500),
            },
            schedule: Vec::new(),
        }
    }
}

/// A link's counters: packets, bytes and drops by cause in linkemu's own counter struct, but
/// counted here, as the transport sent and received them: payload bytes (without the IP/UDP
/// header), a packet counted in when sent (it may enter the link later) and out when
/// delivered; the sojourn fields stay 0. Read them through `Deref` (`c.pkts_in`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkCounters {
    pub packets: Counters,
    /// Random drops expected from the loss probability in force at each packet's arrival
    /// (schedules included; 0 for Gilbert-Elliott links, whose probability is a state).
    pub expected_random_drops: f64,
}

impl std::ops::Deref for LinkCounters {
    type Target = Counters;
    fn deref(&self) -> &Counters {
        &self.packets
    }
}

pub struct Link {
    /// The simple spec this link was built from (None for a scenario link).
    spec: Option<LinkSpec>,
    inner: EmuLink,
    /// Sent but not yet entered the link: (time, sequence) -> token.
    arrivals: BTreeMap<(Instant, u64), u64>,
    /// Token -> (payload, caller tag), from send until release or drop.
    packets: HashMap<u64, (Vec<u8>, u64)>,
    /// Released tokens whose release time may still be ahead of the caller's `now`.
    released: VecDeque<(u64, u64)>,
    next_token: u64,
    /// Latest arrival time so far: packets enter in the order they were sent (FIFO).
    last_arrival: Instant,
    pool: Vec<Vec<u8>>,
    pub counters: LinkCounters,
}

impl Link {
    /// A link from the simulator's simple spec; `seed` picks its RNG streams.
    pub fn new(spec: LinkSpec, seed: u64) -> Link {
        let mut l = Link::from_emulator_spec(&spec.to_emulator_spec(), seed, 0)
            .expect("a LinkSpec converts to a valid linkemu spec");
        l.spec = Some(spec);
        l
    }

    /// A link from a scenario's link spec, seeded as linkemu seeds link `link_index`
    /// (its position in `Scenario::links()`) for trial seed `seed`.
    pub fn from_emulator_spec(spec: &EmuSpec, seed: u64, link_index: u64) -> Result<Link, String> {
        Ok(Link {
            spec: None,
            inner: EmuLink::new(spec, seed, link_index)?,
            arrivals: BTreeMap::new(),
            packets: HashMap::new(),
            released: VecDeque::new(),
            next_token: 0,
            last_arrival: Instant::ZERO,
            pool: Vec::new(),
            counters: LinkCounters::default(),
        })
    }

    /// The simple spec in force (None for a scenario link).
    pub fn spec(&self) -> Option<LinkSpec> {
        self.spec
    }

    /// Changes rate, delay and loss from the link's current time on; packets already queued or
    /// in transit keep their fate. The queue limit stays as built.
    pub fn set_spec(&mut self, spec: LinkSpec) {
        let mut params = self.inner.params();
        params.rate_bps = spec.rate.map(|r| r.bps());
        params.delay_ms = spec.delay.as_secs_f64() * 1e3;
        params.loss_p = Some(spec.loss.clamp(0.0, 1.0));
        self.inner.set_params(params);
        self.spec = Some(spec);
    }

    /// A packet enters the link at `at` (which may lie ahead of the link's time), but never
    /// before a packet sent earlier.
    pub fn send(&mut self, at: Instant, data: &[u8]) {
        self.send_tagged(at, data, 0);
    }

    /// As `send`, with a tag that comes back with the packet from `pop_due_tagged`.
    pub fn send_tagged(&mut self, at: Instant, data: &[u8], tag: u64) {
        self.counters.packets.pkts_in += 1;
        self.counters.packets.bytes_in += data.len() as u64;
        let token = self.next_token;
        self.next_token += 1;
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        self.packets.insert(token, (buf, tag));
        let at = at.max(self.last_arrival);
        self.last_arrival = at;
        self.arrivals.insert((at, token), token);
    }

    /// Feeds arrivals and runs the link up to `now`.
    fn advance(&mut self, now: Instant) {
        while let Some((&(at, _), _)) = self.arrivals.first_key_value() {
            if at > now {
                break;
            }
            let ((at, _), token) = self.arrivals.pop_first().expect("checked non-empty");
            let len = self.packets[&token].0.len() as u32;
            self.inner.advance_to(at.as_nanos());
            self.counters.expected_random_drops += self.inner.params().loss_p.unwrap_or(0.0);
            match self
                .inner
                .enqueue(token, len + IP_UDP_HEADER_BYTES, at.as_nanos())
            {
                Verdict::Queued => {}
                Verdict::Dropped(reason) => self.dropped(token, reason),
            }
            self.collect();
        }
        self.inner.advance_to(now.as_nanos());
        self.collect();
    }

    fn collect(&mut self) {
        while let Some(out) = self.inner.poll_output() {
            match out.decision {
                Decision::Accept => self.released.push_back((out.at_ns, out.token)),
                Decision::Drop(reason) => self.dropped(out.token, reason),
            }
        }
    }

    fn dropped(&mut self, token: u64, reason: DropReason) {
        match reason {
            DropReason::Random => self.counters.packets.drops_random += 1,
            DropReason::Queue => self.counters.packets.drops_queue += 1,
            DropReason::Outage => self.counters.packets.drops_outage += 1,
        }
        if let Some((buf, _)) = self.packets.remove(&token) {
            self.recycle(buf);
        }
    }

    /// When something next happens on this link (a release, or internal work such as the end
    /// of a serialisation or a schedule step); `pop_due` at that time may return nothing.
    pub fn next_delivery(&self) -> Option<Instant> {
        [
            self.released.front().map(|r| r.0),
            self.inner.next_wakeup(),
            self.arrivals.first_key_value().map(|(k, _)| k.0.as_nanos()),
        ]
        .into_iter()
        .flatten()
        .min()
        .map(Instant::from_nanos)
    }

    /// The next packet due at or before `now`; give the buffer back with `recycle`.
    pub fn pop_due(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.pop_due_tagged(now).map(|(data, _)| data)
    }

    /// As `pop_due`, with the packet's tag.
    pub fn pop_due_tagged(&mut self, now: Instant) -> Option<(Vec<u8>, u64)> {
        self.advance(now);
        if self.released.front().is_some_and(|r| r.0 <= now.as_nanos()) {
            let (_, token) = self.released.pop_front()?;
            let (data, tag) = self.packets.remove(&token)?;
            self.counters.packets.pkts_out += 1;
            self.counters.packets.bytes_out += data.len() as u64;
            return Some((data, tag));
        }
        None
    }

    pub fn recycle(&mut self, buf: Vec<u8>) {
        if self.pool.len() < 1024 {
            self.pool.push(buf);
        }
    }
}

/// The simulator's link in linkemu's network model (`linkemu::network`): a packet is a
/// datagram and its tag. A release is reported at the time the simulation polls it (the
/// simulator steps to each link's next event, so that is when the link released it).
impl NetLink for Link {
    type Packet = (Vec<u8>, u64);

    fn due(&self, now_ns: u64) -> bool {
        self.next_delivery().is_some_and(|t| t.as_nanos() <= now_ns)
    }

    fn poll(&mut self, now_ns: u64) -> Option<LinkEvent<(Vec<u8>, u64)>> {
        let packet = self.pop_due_tagged(Instant::from_nanos(now_ns))?;
        Some(LinkEvent::Released {
            at_ns: now_ns,
            packet,
        })
    }

    fn hand_in(&mut self, at_ns: u64, (data, tag): (Vec<u8>, u64)) {
        self.send_tagged(Instant::from_nanos(at_ns), &data, tag);
        self.recycle(data);
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
        // Three 1000 B packets fill the 3000 B queue; the other two are dropped.
        assert!(l.pop_due(t0).is_none());
        assert_eq!(l.counters.drops_queue, 2);
        // The first leaves after 1 ms of serialisation and 10 ms of delay.
        assert_eq!(l.next_delivery(), Some(Instant::from_nanos(1_000_000)));
        assert!(l.pop_due(Instant::from_nanos(10_999_999)).is_none());
        assert!(l.pop_due(Instant::from_nanos(11_000_000)).is_some());
        assert!(l.pop_due(Instant::from_nanos(12_000_000)).is_some());
    }

    #[test]
    fn set_spec_cuts_the_link() {
        let spec = LinkSpec::bdp_queue(Bandwidth::from_mbps(10.0), Duration::from_millis(5), 0.0);
        let mut l = Link::new(spec, 3);
        l.set_spec(LinkSpec { loss: 1.0, ..spec });
        for i in 0..100u64 {
            l.send(Instant::from_nanos(i * 1000), &[0u8; 1000]);
        }
        assert!(l.pop_due(Instant::from_nanos(1_000_000_000)).is_none());
        assert_eq!(l.counters.drops_random, 100);
    }
}
