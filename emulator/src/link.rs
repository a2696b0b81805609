//! One emulated link (one path, one direction), sans-IO on injected time.
//!
//! A packet goes through, in this order:
//! 1. outage check (drop, `drops_outage`);
//! 2. random loss draw (drop, `drops_random`); the draw is made for every
//!    arriving packet, so the pattern depends only on the seed and the
//!    arrival order;
//! 3. drop-tail queue (drop, `drops_queue`);
//! 4. serialisation at the link rate (the packet stays in the queue until
//!    its last bit is out; a packet that finishes inside an outage is dropped);
//! 5. propagation: release at finish + delay + U(−jitter, +jitter), floored
//!    at finish, and never before the previous packet's release (jitter never
//!    reorders).
//!
//! The caller feeds arrivals with `enqueue(token, bytes, now)`, calls
//! `advance_to(now)`, takes decisions with `poll_output()` and sleeps until
//! `next_wakeup()`. `now` must never decrease. The link owns no clock and no
//! socket; tests drive it on virtual time.

use crate::clock::earliest;
use crate::loss::{self, uniform, LossModel};
use crate::queue::{drop_tail::DropTail, Packet, PacketQueue, QueueLimit};
use crate::rate::{self, RateModel};
use crate::schedule::{AppliedChange, Params, Schedule};
use crate::spec::LinkSpec;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    Random,
    Queue,
    Outage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Queued,
    Dropped(DropReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Let the packet go (at its release time, which has passed).
    Accept,
    Drop(DropReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    pub token: u64,
    pub decision: Decision,
    /// When the decision took effect on virtual time (release or drop).
    pub at_ns: u64,
}

/// One line of the optional per-packet event log (Mahimahi-style: arrival,
/// departure with its sojourn, drop with its reason, trace opportunity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketEvent {
    Arrival {
        t_ns: u64,
        bytes: u32,
    },
    Departure {
        t_ns: u64,
        bytes: u32,
        sojourn_ns: u64,
    },
    Drop {
        t_ns: u64,
        bytes: u32,
        reason: DropReason,
    },
    /// A trace link's delivery opportunity (used or not).
    Opportunity {
        t_ns: u64,
        bytes: u32,
    },
}

/// Counters of one interval (or since start, for totals).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub pkts_in: u64,
    pub bytes_in: u64,
    pub pkts_out: u64,
    pub bytes_out: u64,
    pub drops_random: u64,
    pub drops_queue: u64,
    pub drops_outage: u64,
    pub sojourn_sum_ns: u64,
    pub sojourn_max_ns: u64,
}

impl Counters {
    fn add(&mut self, other: &Counters) {
        self.pkts_in += other.pkts_in;
        self.bytes_in += other.bytes_in;
        self.pkts_out += other.pkts_out;
        self.bytes_out += other.bytes_out;
        self.drops_random += other.drops_random;
        self.drops_queue += other.drops_queue;
        self.drops_outage += other.drops_outage;
        self.sojourn_sum_ns += other.sojourn_sum_ns;
        self.sojourn_max_ns = self.sojourn_max_ns.max(other.sojourn_max_ns);
    }
}

/// What the 100 ms `link_stats` line reports (CONTRACTS §5.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalStats {
    pub counters: Counters,
    pub queue_pkts: u64,
    pub queue_bytes: u64,
    pub params: Params,
}

/// Derives independent per-link RNG seeds from the trial seed (SplitMix64).
pub fn sub_seed(seed: u64, link_index: u64, stream: u64) -> u64 {
    let mut z =
        seed.wrapping_add(0x9E37_79B9_7F4A_7C15_u64.wrapping_mul(1 + link_index * 16 + stream));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub struct Link {
    queue: Box<dyn PacketQueue>,
    rate: Box<dyn RateModel>,
    loss: Box<dyn LossModel>,
    schedule: Schedule,
    params: Params,
    loss_rng: ChaCha8Rng,
    jitter_rng: ChaCha8Rng,
    /// When the packet at the head of the queue finishes serialisation.
    head_finish_ns: Option<u64>,
    /// Packets in flight on the wire, in release order.
    delay_line: VecDeque<(u64, Packet)>,
    last_release_ns: u64,
    outputs: VecDeque<Output>,
    now_ns: u64,
    interval: Counters,
    totals: Counters,
    changes: Vec<AppliedChange>,
    /// Per-packet events, kept only when `record_packet_events` is on.
    packet_events: Option<Vec<PacketEvent>>,
    /// Opportunities before this time are already in `packet_events`.
    opportunities_logged_ns: u64,
    /// The rate and loss models hold `params` (a full `apply_schedule` ran since `params`
    /// last changed): while the schedule is idle, applying it again would change nothing.
    models_hold_params: bool,
    /// Tests only: never skip an `apply_schedule` (the reference the skip is checked against).
    #[cfg(test)]
    apply_always: bool,
}

impl Link {
    /// Builds a link from a validated spec; `seed`/`link_index` pick its RNG streams.
    pub fn new(spec: &LinkSpec, seed: u64, link_index: u64) -> Result<Link, String> {
        let rate = rate::from_spec(&spec.rate)?;
        let loss = loss::from_spec(&spec.loss);
        let limit = QueueLimit::from_spec(&spec.queue)?;
        let params = Params {
            rate_bps: rate.rate_bps(),
            delay_ms: spec.delay_ms,
            jitter_ms: spec.jitter_ms,
            loss_p: loss.loss_p(),
        };
        Ok(Link {
            queue: Box::new(DropTail::new(limit)),
            rate,
            loss,
            schedule: Schedule::new(&spec.schedule),
            params,
            loss_rng: ChaCha8Rng::seed_from_u64(sub_seed(seed, link_index, 0)),
            jitter_rng: ChaCha8Rng::seed_from_u64(sub_seed(seed, link_index, 1)),
            head_finish_ns: None,
            delay_line: VecDeque::new(),
            last_release_ns: 0,
            outputs: VecDeque::new(),
            now_ns: 0,
            interval: Counters::default(),
            totals: Counters::default(),
            changes: Vec::new(),
            packet_events: None,
            opportunities_logged_ns: 0,
            models_hold_params: false,
            #[cfg(test)]
            apply_always: false,
        })
    }

    /// Starts keeping per-packet events (for `take_packet_events`).
    pub fn record_packet_events(&mut self) {
        self.packet_events.get_or_insert_with(Vec::new);
        self.opportunities_logged_ns = self.now_ns;
    }

    /// Per-packet events since the last call (empty unless recording).
    pub fn take_packet_events(&mut self) -> Vec<PacketEvent> {
        self.packet_events
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn note(&mut self, event: PacketEvent) {
        if let Some(events) = self.packet_events.as_mut() {
            events.push(event);
        }
    }

    /// One line describing the configuration, for the start of the log.
    pub fn describe(&self) -> String {
        format!(
            "queue={} rate={} loss={} delay_ms={} jitter_ms={}",
            self.queue.describe(),
            self.rate.describe(),
            self.loss.describe(),
            self.params.delay_ms,
            self.params.jitter_ms
        )
    }

    /// A packet arrives at `now_ns`. Drops are decided at once; a queued
    /// packet comes out later through `poll_output`.
    pub fn enqueue(&mut self, token: u64, bytes: u32, now_ns: u64) -> Verdict {
        self.advance_to(now_ns);
        let now_ns = self.now_ns;
        self.interval.pkts_in += 1;
        self.interval.bytes_in += u64::from(bytes);
        self.note(PacketEvent::Arrival {
            t_ns: now_ns,
            bytes,
        });
        // Draw before anything else so the loss pattern is the same whatever
        // the queue and outage do.
        let lost = self.loss.lose(&mut self.loss_rng);
        if self.schedule.in_outage(now_ns) {
            self.interval.drops_outage += 1;
            self.note(PacketEvent::Drop {
                t_ns: now_ns,
                bytes,
                reason: DropReason::Outage,
            });
            return Verdict::Dropped(DropReason::Outage);
        }
        if lost {
            self.interval.drops_random += 1;
            self.note(PacketEvent::Drop {
                t_ns: now_ns,
                bytes,
                reason: DropReason::Random,
            });
            return Verdict::Dropped(DropReason::Random);
        }
        let pkt = Packet {
            token,
            bytes,
            arrival_ns: now_ns,
        };
        let was_empty = self.queue.packets() == 0;
        if self.queue.enqueue(pkt, self.rate.drain_rate_bps()).is_err() {
            self.interval.drops_queue += 1;
            self.note(PacketEvent::Drop {
                t_ns: now_ns,
                bytes,
                reason: DropReason::Queue,
            });
            return Verdict::Dropped(DropReason::Queue);
        }
        if was_empty {
            self.head_finish_ns = Some(self.rate.finish_ns(bytes, now_ns));
        }
        Verdict::Queued
    }

    /// Runs every internal event (schedule changes, serialisation ends,
    /// releases) up to `now_ns`, in time order.
    pub fn advance_to(&mut self, now_ns: u64) {
        let now_ns = now_ns.max(self.now_ns);
        loop {
            let next_change = self.schedule.next_event_ns().filter(|&t| t <= now_ns);
            let next_finish = self.head_finish_ns.filter(|&t| t <= now_ns);
            match (next_change, next_finish) {
                (Some(c), Some(f)) if c <= f => self.apply_schedule(c),
                (Some(c), None) => self.apply_schedule(c),
                (_, Some(f)) => self.finish_head(f),
                (None, None) => break,
            }
        }
        self.apply_schedule(now_ns);
        while let Some(&(release_ns, pkt)) = self.delay_line.front() {
            if release_ns > now_ns {
                break;
            }
            self.delay_line.pop_front();
            let sojourn_ns = release_ns - pkt.arrival_ns;
            self.interval.pkts_out += 1;
            self.interval.bytes_out += u64::from(pkt.bytes);
            self.interval.sojourn_sum_ns += sojourn_ns;
            self.interval.sojourn_max_ns = self.interval.sojourn_max_ns.max(sojourn_ns);
            self.note(PacketEvent::Departure {
                t_ns: release_ns,
                bytes: pkt.bytes,
                sojourn_ns,
            });
            self.outputs.push_back(Output {
                token: pkt.token,
                decision: Decision::Accept,
                at_ns: release_ns,
            });
        }
        if let (Some(events), Some(bytes)) =
            (self.packet_events.as_mut(), self.rate.opportunity_bytes())
        {
            let mut times = Vec::new();
            self.rate
                .opportunities_in(self.opportunities_logged_ns, now_ns, &mut times);
            events.extend(
                times
                    .into_iter()
                    .map(|t_ns| PacketEvent::Opportunity { t_ns, bytes }),
            );
            self.opportunities_logged_ns = now_ns;
        }
        self.now_ns = now_ns;
    }

    fn apply_schedule(&mut self, at_ns: u64) {
        // Called two or three times per `advance_to`; on a link without a schedule (most) or
        // between its events it would only hand the models the values they already hold.
        #[cfg(test)]
        let skip_allowed = !self.apply_always;
        #[cfg(not(test))]
        let skip_allowed = true;
        if skip_allowed && self.models_hold_params && self.schedule.idle_until(at_ns) {
            return;
        }
        self.schedule
            .apply_until(at_ns, &mut self.params, &mut self.changes);
        if let Some(rate_bps) = self.params.rate_bps {
            if self.rate.rate_bps().is_some() {
                self.rate.set_rate_bps(rate_bps);
            }
        }
        if let Some(p) = self.params.loss_p {
            if self.loss.loss_p().is_some() {
                self.loss.set_loss_p(p);
            }
        }
        self.models_hold_params = true;
    }

    fn finish_head(&mut self, finish_ns: u64) {
        // Bring ramps to this instant, so the packet gets the delay in force now.
        self.apply_schedule(finish_ns);
        let pkt = self
            .queue
            .dequeue()
            .expect("a head finish time implies a queued packet");
        self.head_finish_ns = self
            .queue
            .front()
            .map(|next| self.rate.finish_ns(next.bytes, finish_ns));
        if self.schedule.in_outage(finish_ns) {
            self.interval.drops_outage += 1;
            let reason = DropReason::Outage;
            self.note(PacketEvent::Drop {
                t_ns: finish_ns,
                bytes: pkt.bytes,
                reason,
            });
            self.outputs.push_back(Output {
                token: pkt.token,
                decision: Decision::Drop(DropReason::Outage),
                at_ns: finish_ns,
            });
            return;
        }
        let delay_ns = self.params.delay_ms * 1e6;
        let jitter_ns = if self.params.jitter_ms > 0.0 {
            (uniform(&mut self.jitter_rng) * 2.0 - 1.0) * self.params.jitter_ms * 1e6
        } else {
            0.0
        };
        let wire_ns = (delay_ns + jitter_ns).max(0.0).round() as u64;
        let release_ns = (finish_ns + wire_ns).max(self.last_release_ns);
        self.last_release_ns = release_ns;
        self.delay_line.push_back((release_ns, pkt));
    }

    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// The earliest virtual time at which `advance_to` has work to do.
    pub fn next_wakeup(&self) -> Option<u64> {
        earliest(
            earliest(self.head_finish_ns, self.delay_line.front().map(|d| d.0)),
            self.schedule.next_event_ns(),
        )
    }

    /// The earliest time a packet can be released (a lower bound a shell
    /// may sleep until instead of `next_wakeup`, which also wakes for
    /// bookkeeping). Schedule changes are included so they are logged on time.
    pub fn next_release_bound(&self) -> Option<u64> {
        let in_flight = self.delay_line.front().map(|d| d.0);
        let queued = self.head_finish_ns.map(|f| {
            let min_wire_ms = (self.params.delay_ms - self.params.jitter_ms).max(0.0);
            // The delay may shrink by a schedule step before the packet leaves:
            // do not look past the next schedule event.
            f + (min_wire_ms * 1e6) as u64
        });
        [in_flight, queued, self.schedule.next_event_ns()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Schedule changes applied since the last call, for the log.
    pub fn take_changes(&mut self) -> Vec<AppliedChange> {
        std::mem::take(&mut self.changes)
    }

    /// Ends the current stats interval and starts the next one.
    pub fn take_interval(&mut self) -> IntervalStats {
        let counters = std::mem::take(&mut self.interval);
        self.totals.add(&counters);
        IntervalStats {
            counters,
            queue_pkts: self.queue.packets(),
            queue_bytes: self.queue.bytes(),
            params: self.params,
        }
    }

    /// Counters since start, including the open interval.
    pub fn totals(&self) -> Counters {
        let mut t = self.totals;
        t.add(&self.interval);
        t
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// Overrides the schedulable values from `now` on, as a schedule step would
    /// (the simulator uses it to cut a path mid-run). Rate and loss change only
    /// if the link's models can change them (see `Params`).
    pub fn set_params(&mut self, params: Params) {
        self.params = params;
        self.models_hold_params = false;
        let now_ns = self.now_ns;
        self.apply_schedule(now_ns);
    }
}

#[cfg(test)]
mod tests;
