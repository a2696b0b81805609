//! The network of a resolved scenario, sans-IO: every path's own up and down
//! link, the shared bottleneck links some paths cross after their own, the
//! hand-off between them, and per-flow counters of each bottleneck. linkemu's
//! main loop (packets from NFQUEUE, verdicts back) and the simulator (datagrams
//! of simulated connections) both drive this one model, so the two engines
//! chain links the same way.
//!
//! ```text
//!   path i, dir d ──> link 2i+d ──(release)──> bottleneck link of (i, d), if any ──> out
//!                                  └──────────── no bottleneck ──────────────────────> out
//! ```
//!
//! The rules it keeps:
//! - Links are numbered as `Scenario::links()` lists them (path i up = 2i, down
//!   = 2i + 1, then each bottleneck's up, then down); a link's number is also
//!   its RNG index, so both engines draw the same losses for the same arrivals.
//! - A pass advances the path links in that order, then hands what they
//!   released on to the bottlenecks in (release time, path link, release
//!   order) order, then advances the bottlenecks. A packet enters its
//!   bottleneck at the time its path link released it.
//!
//! What a packet is (an NFQUEUE id, a simulated datagram) is the driver's:
//! the model moves them through a [`NetLink`], the engine's view of one link.

use crate::spec::{Direction, LinkLabel, LinkSpec, Scenario};

/// A flow through a bottleneck: IPv4 source and destination.
pub type FlowKey = ([u8; 4], [u8; 4]);

/// What a link did with a packet.
pub enum LinkEvent<P> {
    /// Released at `at_ns` (virtual time).
    Released { at_ns: u64, packet: P },
    /// Dropped (queue full, random loss, outage).
    Dropped { packet: P },
}

/// One link as an engine drives it.
pub trait NetLink {
    type Packet;
    /// Whether the link may have something to do by `now_ns` (a cheap bound; `poll` at a
    /// time when it is false must change nothing).
    fn due(&self, now_ns: u64) -> bool;
    /// Runs the link to `now_ns`; its next release or drop by then, in order.
    fn poll(&mut self, now_ns: u64) -> Option<LinkEvent<Self::Packet>>;
    /// A packet released by a path link enters this (bottleneck) link at `at_ns`.
    fn hand_in(&mut self, at_ns: u64, packet: Self::Packet);
    /// The packet's flow, size in bytes and path link, for the bottleneck's
    /// per-flow counters (None: not counted).
    fn flow(_packet: &Self::Packet) -> Option<(FlowKey, u32, usize)> {
        None
    }
}

/// Where a link sits and which bottleneck link (if any) it hands its packets to.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSlot {
    pub label: LinkLabel,
    pub dir: Direction,
    pub next_hop: Option<usize>,
}

impl LinkSlot {
    pub fn name(&self) -> &str {
        self.label.name()
    }
}

/// Per-flow counters of one bottleneck link, so its log shows which subflows
/// and cross flows queued there.
#[derive(Default, Clone, Debug, PartialEq)]
pub struct FlowCounters {
    pub from_path: String,
    pub pkts_in: u64,
    pub bytes_in: u64,
    pub pkts_out: u64,
    pub bytes_out: u64,
    pub drops: u64,
}

pub type FlowTable = indexmap::IndexMap<FlowKey, FlowCounters>;

enum Count {
    In,
    Out,
    Drop,
}

pub struct Network<L: NetLink> {
    pub links: Vec<L>,
    pub slots: Vec<LinkSlot>,
    path_links: usize,
    /// Released by path links this pass, bound for a bottleneck: (time, path link, order).
    handoffs: Vec<(u64, usize, u64, L::Packet)>,
    /// Per link, per-flow counters since the last `take_flows_interval`, and in all.
    flows_interval: Vec<FlowTable>,
    flows_total: Vec<FlowTable>,
}

impl<L: NetLink> Network<L> {
    /// The scenario's links, built by `make(spec, link number)`; an error names the link
    /// (`paths.NAME.DIR` or `bottlenecks.NAME.DIR`).
    pub fn from_scenario(
        scenario: &Scenario,
        mut make: impl FnMut(&LinkSpec, u64) -> Result<L, String>,
    ) -> Result<Network<L>, String> {
        let mut links = Vec::new();
        let mut slots: Vec<LinkSlot> = Vec::new();
        for (i, (label, dir, spec)) in scenario.links().into_iter().enumerate() {
            let link = make(spec, i as u64)
                .map_err(|e| format!("{}.{}: {e}", label.field_prefix(), dir.name()))?;
            links.push(link);
            slots.push(LinkSlot {
                label,
                dir,
                next_hop: None,
            });
        }
        let path_links = 2 * scenario.paths.len();
        for i in 0..path_links {
            let (path, dir) = (slots[i].name().to_string(), slots[i].dir);
            if let Some(b) = scenario.bottleneck_of(&path, dir) {
                slots[i].next_hop = slots
                    .iter()
                    .position(|s| s.label == LinkLabel::Bottleneck(b.to_string()) && s.dir == dir);
            }
        }
        Ok(Network::new(links, slots, path_links))
    }

    /// Paths without bottlenecks: `links[2i]` is path i's up link, `links[2i + 1]` its down.
    pub fn from_path_links(names: &[String], links: Vec<L>) -> Network<L> {
        let slots = names
            .iter()
            .flat_map(|n| Direction::BOTH.map(|dir| (n, dir)))
            .map(|(n, dir)| LinkSlot {
                label: LinkLabel::Path(n.clone()),
                dir,
                next_hop: None,
            })
            .collect();
        Network::new(links, slots, 2 * names.len())
    }

    fn new(links: Vec<L>, slots: Vec<LinkSlot>, path_links: usize) -> Network<L> {
        let n = links.len();
        Network {
            links,
            slots,
            path_links,
            handoffs: Vec::new(),
            flows_interval: vec![FlowTable::default(); n],
            flows_total: vec![FlowTable::default(); n],
        }
    }

    /// The number of path links (two per path); bottleneck links follow them.
    pub fn path_links(&self) -> usize {
        self.path_links
    }

    /// The link of path `path` in direction `down`.
    pub fn path_link(path: usize, down: bool) -> usize {
        2 * path + down as usize
    }

    /// One pass at `now_ns` (see the module's rules). `out(link, event)` gets every packet
    /// that leaves the network (released by the last link it crosses) or is dropped, with
    /// the link where that happened.
    pub fn advance(&mut self, now_ns: u64, mut out: impl FnMut(usize, LinkEvent<L::Packet>)) {
        self.handoffs.clear();
        let mut order = 0u64;
        for i in 0..self.path_links {
            if !self.links[i].due(now_ns) {
                continue;
            }
            while let Some(event) = self.links[i].poll(now_ns) {
                match (event, self.slots[i].next_hop) {
                    (LinkEvent::Released { at_ns, packet }, Some(_)) => {
                        self.handoffs.push((at_ns, i, order, packet));
                        order += 1;
                    }
                    (event, _) => out(i, event),
                }
            }
        }
        self.handoffs
            .sort_unstable_by_key(|&(at_ns, i, order, _)| (at_ns, i, order));
        // Drained and put back, so the vector keeps its capacity from pass to pass.
        let mut handoffs = std::mem::take(&mut self.handoffs);
        for (at_ns, i, _, packet) in handoffs.drain(..) {
            let b = self.slots[i].next_hop.expect("handoffs have a next hop");
            self.count(b, &packet, Count::In);
            self.links[b].hand_in(at_ns, packet);
        }
        self.handoffs = handoffs;
        for b in self.path_links..self.links.len() {
            if !self.links[b].due(now_ns) {
                continue;
            }
            while let Some(event) = self.links[b].poll(now_ns) {
                match &event {
                    LinkEvent::Released { packet, .. } => self.count(b, packet, Count::Out),
                    LinkEvent::Dropped { packet } => self.count(b, packet, Count::Drop),
                }
                out(b, event);
            }
        }
    }

    fn count(&mut self, link: usize, packet: &L::Packet, what: Count) {
        let Some((key, bytes, path_link)) = L::flow(packet) else {
            return;
        };
        let from_path = self.slots[path_link].name();
        for table in [&mut self.flows_interval[link], &mut self.flows_total[link]] {
            let c = table.entry(key).or_insert_with(|| FlowCounters {
                from_path: from_path.to_string(),
                ..Default::default()
            });
            match what {
                Count::In => {
                    c.pkts_in += 1;
                    c.bytes_in += u64::from(bytes);
                }
                Count::Out => {
                    c.pkts_out += 1;
                    c.bytes_out += u64::from(bytes);
                }
                Count::Drop => c.drops += 1,
            }
        }
    }

    /// A bottleneck link's per-flow counters since the last call.
    pub fn take_flows_interval(&mut self, link: usize) -> FlowTable {
        std::mem::take(&mut self.flows_interval[link])
    }

    /// A bottleneck link's per-flow counters since the start.
    pub fn flows_total(&self, link: usize) -> &FlowTable {
        &self.flows_total[link]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{Decision, Link, Verdict};

    /// A link as a test drives it: tokens are the packets.
    struct TestLink(Link);

    impl NetLink for TestLink {
        type Packet = u64;
        fn due(&self, _now_ns: u64) -> bool {
            true
        }
        fn poll(&mut self, now_ns: u64) -> Option<LinkEvent<u64>> {
            self.0.advance_to(now_ns);
            let out = self.0.poll_output()?;
            Some(match out.decision {
                Decision::Accept => LinkEvent::Released {
                    at_ns: out.at_ns,
                    packet: out.token,
                },
                Decision::Drop(_) => LinkEvent::Dropped { packet: out.token },
            })
        }
        fn hand_in(&mut self, at_ns: u64, packet: u64) {
            assert!(matches!(
                self.0.enqueue(packet, 1500, at_ns),
                Verdict::Queued
            ));
        }
    }

    fn scenario() -> Scenario {
        let link = |delay_ms: f64| {
            serde_json::json!({"rate": {"kind": "unlimited"}, "delay_ms": delay_ms,
                "jitter_ms": 0.0, "loss": {"kind": "none"},
                "queue": {"kind": "packets", "limit": 100}, "schedule": []})
        };
        let doc = serde_json::json!({"schema": 1, "name": "t", "source": "t", "duration_s": 10.0,
            "paths": {"a": {"up": link(1.0), "down": link(1.0)},
                      "b": {"up": link(2.0), "down": link(1.0)}},
            "bottlenecks": {"shared": {"paths": ["a", "b"], "up": link(5.0)}}});
        crate::scenario::parse(&doc.to_string(), "t.json").expect("valid")
    }

    #[test]
    fn path_links_hand_on_to_their_bottleneck_in_release_time_order() {
        let s = scenario();
        let mut net = Network::from_scenario(&s, |spec, i| Link::new(spec, 1, i).map(TestLink))
            .expect("links build");
        assert_eq!(net.path_links(), 4);
        assert_eq!(net.slots[0].next_hop, Some(4));
        assert_eq!(net.slots[2].next_hop, Some(4));
        assert_eq!(net.slots[1].next_hop, None);
        // Path b's packet (2 ms) enters before path a's later one (1 ms + 1.5 ms start),
        // though path a's link comes first.
        assert!(matches!(
            net.links[2].0.enqueue(20, 1500, 0),
            Verdict::Queued
        ));
        assert!(matches!(
            net.links[0].0.enqueue(10, 1500, 1_500_000),
            Verdict::Queued
        ));
        assert!(matches!(
            net.links[1].0.enqueue(11, 1500, 0),
            Verdict::Queued
        ));
        let mut out = Vec::new();
        net.advance(3_000_000, |link, e| {
            if let LinkEvent::Released { at_ns, packet } = e {
                out.push((link, at_ns, packet));
            }
        });
        // Down has no bottleneck: out at 1 ms. Up: both wait 5 ms more in the bottleneck.
        assert_eq!(out, vec![(1, 1_000_000, 11)]);
        net.advance(10_000_000, |link, e| {
            if let LinkEvent::Released { at_ns, packet } = e {
                out.push((link, at_ns, packet));
            }
        });
        assert_eq!(
            out[1..],
            [(4, 7_000_000, 20), (4, 7_500_000, 10)],
            "a packet enters its bottleneck when its path link releases it"
        );
    }
}
