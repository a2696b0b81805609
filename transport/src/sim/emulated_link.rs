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

use linkemu::clock::earliest;
use std::collections::VecDeque;
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
    /// Sent but not yet entered the link: (time, token), in sending order. Arrival times
    /// never decrease (`send_tagged` holds a packet back behind the one before it) and tokens
    /// increase, so this order is the (time, token) order the link needs.
    arrivals: VecDeque<(Instant, u64)>,
    /// Packets from send until release or drop: token -> (payload, caller tag).
    packets: TokenSlots,
    /// Released tokens whose release time may still be ahead of the caller's `now`.
    released: VecDeque<(u64, u64)>,
    next_token: u64,
    /// Latest arrival time so far: packets enter in the order they were sent (FIFO).
    last_arrival: Instant,
    pool: Vec<Vec<u8>>,
    pub counters: LinkCounters,
    /// `next_delivery`'s answer, recomputed whenever the link changes: the simulator asks
    /// every link for it at every step, far more often than a link changes.
    next_event: Option<Instant>,
    /// The time the link was last run up to, while nothing was sent or changed since: running
    /// it to the same time again changes nothing (the network model polls a link until it has
    /// nothing more to release, so each poll would).
    advanced_to: Option<Instant>,
    /// linkemu's `next_wakeup`, asked again only after the inner link was run or changed:
    /// taking a released packet off `released` (most polls) leaves it as it was.
    inner_wakeup: Option<u64>,
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
        let mut link = Link {
            spec: None,
            inner: EmuLink::new(spec, seed, link_index)?,
            arrivals: VecDeque::new(),
            packets: TokenSlots::default(),
            released: VecDeque::new(),
            next_token: 0,
            last_arrival: Instant::ZERO,
            pool: Vec::new(),
            counters: LinkCounters::default(),
            next_event: None,
            advanced_to: None,
            inner_wakeup: None,
        };
        link.inner_wakeup = link.inner.next_wakeup();
        link.recompute_next_event();
        Ok(link)
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
        self.inner_wakeup = self.inner.next_wakeup();
        self.spec = Some(spec);
        self.advanced_to = None;
        self.recompute_next_event();
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
        self.arrivals.push_back((at, token));
        self.advanced_to = None;
        self.recompute_next_event();
    }

    /// Feeds arrivals and runs the link up to `now`.
    fn advance(&mut self, now: Instant) {
        while let Some(&(at, token)) = self.arrivals.front() {
            if at > now {
                break;
            }
            self.arrivals.pop_front();
            let len = self.packets.get(token).0.len() as u32;
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
        self.inner_wakeup = self.inner.next_wakeup();
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
        if let Some((buf, _)) = self.packets.remove(token) {
            self.recycle(buf);
        }
    }

    /// When something next happens on this link (a release, or internal work such as the end
    /// of a serialisation or a schedule step); `pop_due` at that time may return nothing.
    pub fn next_delivery(&self) -> Option<Instant> {
        self.next_event
    }

    fn recompute_next_event(&mut self) {
        self.next_event = earliest(
            earliest(self.released.front().map(|r| r.0), self.inner_wakeup),
            self.arrivals.front().map(|a| a.0.as_nanos()),
        )
        .map(Instant::from_nanos);
    }

    /// `next_delivery` computed from scratch, linkemu asked again: what the cached
    /// `next_event` and `inner_wakeup` must always equal.
    #[cfg(test)]
    fn fresh_next_event(&self) -> Option<Instant> {
        [
            self.released.front().map(|r| r.0),
            self.inner.next_wakeup(),
            self.arrivals.front().map(|a| a.0.as_nanos()),
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
        let ran = self.advanced_to != Some(now);
        if ran {
            self.advance(now);
            self.advanced_to = Some(now);
        }
        let popped = self.pop_released(now);
        if ran || popped.is_some() {
            self.recompute_next_event();
        }
        popped
    }

    fn pop_released(&mut self, now: Instant) -> Option<(Vec<u8>, u64)> {
        if self.released.front().is_some_and(|r| r.0 <= now.as_nanos()) {
            let (_, token) = self.released.pop_front()?;
            let (data, tag) = self.packets.remove(token)?;
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

/// The packets a link holds, by token. Tokens are handed out in increasing order and leave
/// nearly in that order (releases are FIFO; drops leave gaps), so a window of slots starting
/// at the oldest token still held replaces a hash map.
#[derive(Default)]
struct TokenSlots {
    first_token: u64,
    slots: VecDeque<Option<(Vec<u8>, u64)>>,
}

impl TokenSlots {
    /// Stores the packet of the next token (tokens must come in increasing order, one by one).
    fn insert(&mut self, token: u64, packet: (Vec<u8>, u64)) {
        if self.slots.is_empty() {
            self.first_token = token;
        }
        debug_assert_eq!(token, self.first_token + self.slots.len() as u64);
        self.slots.push_back(Some(packet));
    }

    fn get(&self, token: u64) -> &(Vec<u8>, u64) {
        self.slots[(token - self.first_token) as usize]
            .as_ref()
            .expect("a packet the link holds")
    }

    fn remove(&mut self, token: u64) -> Option<(Vec<u8>, u64)> {
        let index = usize::try_from(token.checked_sub(self.first_token)?).ok()?;
        let packet = self.slots.get_mut(index)?.take();
        while self.slots.front().is_some_and(Option::is_none) {
            self.slots.pop_front();
            self.first_token += 1;
        }
        packet
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
    fn token_slots_release_in_any_order_and_keep_the_window_short() {
        let mut slots = TokenSlots::default();
        for token in 5..10u64 {
            slots.insert(token, (vec![token as u8], token));
        }
        assert_eq!(slots.remove(7).map(|p| p.1), Some(7)); // a drop from the middle
        assert_eq!(slots.remove(7), None);
        assert_eq!(slots.remove(4), None); // before the window
        assert_eq!(slots.remove(5).map(|p| p.1), Some(5));
        assert_eq!(slots.get(6).1, 6);
        assert_eq!(slots.remove(6).map(|p| p.1), Some(6));
        // 5, 6 and 7 gone: the window starts at 8.
        assert_eq!((slots.first_token, slots.slots.len()), (8, 2));
        assert_eq!(slots.remove(12), None); // past the window
        slots.remove(8);
        slots.remove(9);
        assert!(slots.slots.is_empty());
        slots.insert(10, (Vec::new(), 10)); // an empty window restarts at the next token
        assert_eq!(slots.get(10).1, 10);
    }

    /// A packet sent after the link was run to `now` enters it when polled at that same `now`
    /// (the link does not skip a run it has already made while something new came in).
    #[test]
    fn a_packet_sent_after_a_poll_at_the_same_time_is_not_skipped() {
        let spec = LinkSpec {
            rate: None,
            delay: Duration::ZERO,
            loss: 0.0,
            queue_limit_bytes: 15_000,
        };
        let mut l = Link::new(spec, 1);
        let t = Instant::from_nanos(5_000);
        assert!(l.pop_due(t).is_none());
        l.send(t, &[7u8; 100]);
        assert_eq!(l.next_delivery(), Some(t));
        assert_eq!(l.pop_due(t).as_deref(), Some(&[7u8; 100][..]));
    }

    /// The cached next event is what the link would compute afresh, whatever the sequence of
    /// sends (some ahead of time), polls and spec changes.
    #[test]
    fn the_cached_next_event_matches_a_fresh_computation() {
        let spec = LinkSpec::bdp_queue(Bandwidth::from_mbps(20.0), Duration::from_millis(7), 0.05);
        let mut l = Link::new(spec, 11);
        let mut rng = crate::rng::Rng::new(4);
        let mut now = Instant::ZERO;
        let fresh = |l: &Link| assert_eq!(l.next_delivery(), l.fresh_next_event());
        for step in 0..20_000u64 {
            now = Instant::from_nanos(now.as_nanos() + rng.next_u64() % 300_000);
            match rng.next_u64() % 4 {
                0 | 1 => {
                    let ahead = rng.next_u64() % 2_000_000;
                    l.send(Instant::from_nanos(now.as_nanos() + ahead), &[0u8; 1200]);
                }
                2 => while l.pop_due(now).is_some() {},
                _ if step % 1000 == 3 => l.set_spec(LinkSpec { loss: 0.2, ..spec }),
                _ => {
                    l.pop_due(now);
                }
            }
            fresh(&l);
        }
        assert!(l.counters.pkts_out > 1000 && l.counters.drops_random > 0);
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
