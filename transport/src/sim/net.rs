//! `Net`: several connections whose paths may share links, stepped in virtual time. This is
//! the shared bottleneck the coupled congestion controls are judged on: for example one
//! two-subflow connection and one single-path connection whose data directions all cross
//! the same 20 Mbit/s drop-tail link.
//!
//! ```text
//!   flow 0 path "a" ──┐                       ┌── ACKs: own link per path (delay only)
//!   flow 0 path "b" ──┼── shared LinkId(0) ───┤
//!   flow 1 path "x" ──┘   rate, delay, queue  └──
//! ```
//!
//! A link is addressed by [`LinkId`]; a path of a flow names one link per direction
//! ([`Route`]). Each packet carries its flow as a tag through the link, so a shared link
//! delivers it to the right connection.
//! [`run_bulk`] keeps every sender's stream full for a virtual duration and reports per-flow
//! goodput and per-path bytes.

use std::time::Duration;

use super::emulated_link::{Link, LinkCounters, LinkSpec};
use super::endpoint::{deliver_to_endpoint, earliest, fire_due_timers_after_deliveries};
use crate::connection::{Config, Connection, PathConfig};
use crate::rng::Rng;
use crate::units::Instant;
use linkemu::network::NetLink;

/// Index of a link in a [`Net`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkId(pub usize);

/// Index of a flow (one client/server connection pair) in a [`Net`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowId(pub usize);

/// One path of a flow: the link client→server packets take (`up`) and the link
/// server→client packets take (`down`, the data direction in [`run_bulk`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub name: String,
    pub up: LinkId,
    pub down: LinkId,
}

/// A client and (once its first HELLO arrived) a server connection.
pub struct Flow {
    pub client: Connection,
    pub server: Option<Connection>,
    server_cfg: Config,
    routes: Vec<Route>,
}

pub struct Net {
    pub now: Instant,
    links: Vec<Link>,
    /// Per link, the largest random extra delay a packet waits before entering it.
    jitter: Vec<Duration>,
    pub flows: Vec<Flow>,
    rng: Rng,
    buf: Vec<u8>,
    pub steps: u64,
    /// Per flow, (client, server): the timeout asked before this step's deliveries, and
    /// whether the connection received a packet since (then it is asked again).
    timeouts: Vec<[(Option<Instant>, bool); 2]>,
}

impl Net {
    pub fn new(seed: u64) -> Net {
        Net {
            now: Instant::ZERO,
            links: Vec::new(),
            jitter: Vec::new(),
            flows: Vec::new(),
            rng: Rng::new(seed),
            buf: vec![0u8; 65536],
            steps: 0,
            timeouts: Vec::new(),
        }
    }

    pub fn add_link(&mut self, spec: LinkSpec) -> LinkId {
        self.add_link_with_jitter(spec, Duration::ZERO)
    }

    /// A link whose packets each wait a uniform random 0..`jitter` before entering it (the
    /// link stays FIFO). A little jitter on the ACK paths breaks the phase effects a fully
    /// deterministic drop-tail simulation has (Floyd, Jacobson, "On traffic phase effects in
    /// packet-switched gateways", 1992): without it, which flow loses at each overflow
    /// depends on exact packet timing, and so do the shares.
    pub fn add_link_with_jitter(&mut self, spec: LinkSpec, jitter: Duration) -> LinkId {
        let seed = self.rng.next_u64();
        self.links.push(Link::new(spec, seed));
        self.jitter.push(jitter);
        LinkId(self.links.len() - 1)
    }

    /// Adds a connection with one subflow per route (subflow i uses `routes[i]`).
    pub fn add_flow(&mut self, client_cfg: Config, server_cfg: Config, routes: &[Route]) -> FlowId {
        for r in routes {
            assert!(
                r.up.0 < self.links.len() && r.down.0 < self.links.len(),
                "route '{}' names link {:?}/{:?} but only {} links exist",
                r.name,
                r.up,
                r.down,
                self.links.len()
            );
        }
        let conn_id = self.rng.next_u64();
        let path_cfgs: Vec<PathConfig> = routes
            .iter()
            .map(|r| PathConfig {
                name: r.name.clone(),
                backup: false,
            })
            .collect();
        let client = Connection::client(self.now, conn_id, client_cfg, &path_cfgs)
            .expect("valid client config");
        self.flows.push(Flow {
            client,
            server: None,
            server_cfg,
            routes: routes.to_vec(),
        });
        FlowId(self.flows.len() - 1)
    }

    pub fn link_counters(&self, link: LinkId) -> LinkCounters {
        self.links[link.0].counters
    }

    /// Changes a link's model from now on; packets in transit keep their fate.
    pub fn set_link(&mut self, link: LinkId, spec: LinkSpec) {
        self.links[link.0].set_spec(spec);
    }

    fn send_on(&mut self, link: LinkId, flow: FlowId, at: Instant, len: usize) {
        let jitter_ns = self.jitter[link.0].as_nanos() as u64;
        let at = if jitter_ns > 0 {
            at + Duration::from_nanos(self.rng.below(jitter_ns + 1))
        } else {
            at
        };
        self.links[link.0].send_tagged(at, &self.buf[..len], flow.0 as u64);
    }

    fn flush(&mut self) {
        for f in 0..self.flows.len() {
            while let Some(t) = self.flows[f].client.poll_transmit(self.now, &mut self.buf) {
                let link = self.flows[f].routes[t.path.index()].up;
                self.send_on(link, FlowId(f), t.send_at.max(self.now), t.len);
            }
            while let Some(t) = self.flows[f]
                .server
                .as_mut()
                .and_then(|s| s.poll_transmit(self.now, &mut self.buf))
            {
                let link = self.flows[f].routes[t.path.index()].down;
                self.send_on(link, FlowId(f), t.send_at.max(self.now), t.len);
            }
            // Events are not used here; drop them so they do not pile up.
            while self.flows[f].client.poll_event().is_some() {}
            if let Some(s) = self.flows[f].server.as_mut() {
                while s.poll_event().is_some() {}
            }
        }
    }

    /// The earliest deadline of any connection or link; notes each connection's timeout.
    fn next_time(&mut self) -> Option<Instant> {
        let mut t: Option<Instant> = None;
        self.timeouts.clear();
        for f in &self.flows {
            let client = f.client.poll_timeout();
            let server = f.server.as_ref().and_then(|s| s.poll_timeout());
            self.timeouts.push([(client, false), (server, false)]);
            t = earliest(earliest(t, client), server);
        }
        for l in &self.links {
            t = earliest(t, l.next_delivery());
        }
        t
    }

    /// Sends what is due, advances to the next event and processes it. False when idle.
    ///
    /// As `Pair::step`: a link whose next event lies ahead is not run (running it to `now`
    /// would change nothing), and a connection that received nothing keeps the timeout it had
    /// before the deliveries.
    pub fn step(&mut self) -> bool {
        self.steps += 1;
        self.flush();
        let Some(next) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(next);
        let now = self.now;
        for li in 0..self.links.len() {
            if !self.links[li].due(now.as_nanos()) {
                continue;
            }
            while let Some((d, flow)) = self.links[li].pop_due_tagged(now) {
                let f = &mut self.flows[flow as usize];
                // A packet travels towards the server iff this link is its flow's up link
                // on some route (a link is never both up and down of one flow).
                let towards_server = f.routes.iter().any(|r| r.up.0 == li);
                deliver_to_endpoint(
                    Some(&mut f.client),
                    &mut f.server,
                    &f.server_cfg,
                    now,
                    towards_server,
                    &d,
                );
                self.timeouts[flow as usize][usize::from(towards_server)].1 = true;
                self.links[li].recycle(d);
            }
        }
        for (f, &[(client_timeout, to_client), (server_timeout, to_server)]) in
            self.flows.iter_mut().zip(&self.timeouts)
        {
            fire_due_timers_after_deliveries(&mut f.client, now, client_timeout, to_client);
            if let Some(s) = f.server.as_mut() {
                fire_due_timers_after_deliveries(s, now, server_timeout, to_server);
            }
        }
        true
    }
}

/// What [`run_bulk`] measured for one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowResult {
    /// Bytes the client read from the server's stream after the warm-up.
    pub bytes_received: u64,
    /// `bytes_received` over the measured interval, bits/s.
    pub goodput_bps: f64,
    /// Per path (route name): data bytes the server sent, whole run (retransmissions
    /// included), and retransmitted bytes.
    pub data_bytes_sent_per_path: Vec<(String, u64)>,
    pub bytes_retrans_per_path: Vec<(String, u64)>,
}

/// A bulk download on every flow of a [`Net`]: each client sends a request (which opens the
/// server side at the first HELLO), each server keeps its stream full (zeros) and each client
/// reads everything. Call [`BulkPump::pump`] before every [`Net::step`].
pub struct BulkPump {
    chunk: Vec<u8>,
    sink: Vec<u8>,
    /// Bytes each flow's client has read so far.
    pub read_total: Vec<u64>,
}

impl BulkPump {
    pub fn start(net: &mut Net) -> BulkPump {
        for f in &mut net.flows {
            f.client.write(b"GET");
        }
        BulkPump {
            chunk: vec![0u8; 256 * 1024],
            sink: vec![0u8; 256 * 1024],
            read_total: vec![0; net.flows.len()],
        }
    }

    /// Fills every server's stream, drains every request and response.
    pub fn pump(&mut self, net: &mut Net) {
        for (i, f) in net.flows.iter_mut().enumerate() {
            if let Some(s) = f.server.as_mut() {
                while s.write(&self.chunk) > 0 {}
                while s.read(&mut self.sink) > 0 {}
            }
            loop {
                let r = f.client.read(&mut self.sink);
                if r == 0 {
                    break;
                }
                self.read_total[i] += r as u64;
            }
        }
    }
}

/// Every server writes an endless stream (zeros) and every client reads it, for `duration`
/// of virtual time from now; goodput counts bytes read after `warmup`.
pub fn run_bulk(net: &mut Net, duration: Duration, warmup: Duration) -> Vec<FlowResult> {
    let start = net.now;
    let end = start + duration;
    let warm_end = start + warmup;
    let mut bulk = BulkPump::start(net);
    let mut read_at_warm: Vec<Option<u64>> = vec![None; net.flows.len()];
    while net.now < end {
        bulk.pump(net);
        for (i, at_warm) in read_at_warm.iter_mut().enumerate() {
            if at_warm.is_none() && net.now >= warm_end {
                *at_warm = Some(bulk.read_total[i]);
            }
        }
        if !net.step() {
            break;
        }
    }
    let read_total = bulk.read_total;
    let measured = (net.now - warm_end.min(net.now)).as_secs_f64();
    net.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let bytes = read_total[i] - read_at_warm[i].unwrap_or(read_total[i]);
            let stats = f
                .server
                .as_ref()
                .map(|s| s.subflow_stats())
                .unwrap_or_default();
            FlowResult {
                bytes_received: bytes,
                goodput_bps: if measured > 0.0 {
                    bytes as f64 * 8.0 / measured
                } else {
                    0.0
                },
                data_bytes_sent_per_path: stats
                    .iter()
                    .map(|s| (s.name.clone(), s.counters.data_bytes_sent_total))
                    .collect(),
                bytes_retrans_per_path: stats
                    .iter()
                    .map(|s| (s.name.clone(), s.counters.bytes_retrans_total))
                    .collect(),
            }
        })
        .collect()
}

/// Random extra delay of the ACK links of [`shared_bottleneck`].
pub const ACK_JITTER: Duration = Duration::from_millis(1);

/// The classic shared-bottleneck set-up: one `multipath_subflows`-subflow connection running
/// `mp_cc` and one single-path connection running `sp_cc`, all data crossing one link of
/// `rate` with `rtt` round trip (half each way) and a drop-tail queue of one BDP; ACKs
/// return over uncongested links with the same one-way delay plus a random 0–1 ms (see
/// [`Net::add_link_with_jitter`]; the seed then matters).
pub fn shared_bottleneck(
    mp_cfg: Config,
    multipath_subflows: usize,
    sp_cfg: Config,
    rate: crate::units::Bandwidth,
    rtt: Duration,
    seed: u64,
) -> Net {
    let mut net = Net::new(seed);
    let one_way = rtt / 2;
    let bottleneck = net.add_link(LinkSpec::bdp_queue(rate, one_way, 0.0));
    let ack_link = |net: &mut Net| {
        net.add_link_with_jitter(
            LinkSpec {
                rate: None,
                delay: one_way,
                loss: 0.0,
                queue_limit_bytes: u64::MAX,
            },
            ACK_JITTER,
        )
    };
    let routes: Vec<Route> = (0..multipath_subflows)
        .map(|i| Route {
            name: format!("mp{i}"),
            up: ack_link(&mut net),
            down: bottleneck,
        })
        .collect();
    net.add_flow(mp_cfg.clone(), mp_cfg, &routes);
    let sp_route = Route {
        name: "sp".into(),
        up: ack_link(&mut net),
        down: bottleneck,
    };
    net.add_flow(sp_cfg.clone(), sp_cfg, &[sp_route]);
    net
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bandwidth;

    fn reno() -> Config {
        Config {
            cc: "reno".into(),
            ..Config::default()
        }
    }

    #[test]
    fn two_single_path_reno_flows_share_a_bottleneck_and_fill_it() {
        let mut net = Net::new(3);
        let rate = Bandwidth::from_mbps(10.0);
        let one_way = Duration::from_millis(10);
        let shared = net.add_link(LinkSpec::bdp_queue(rate, one_way, 0.0));
        for name in ["a", "b"] {
            let up = net.add_link(LinkSpec {
                rate: None,
                delay: one_way,
                loss: 0.0,
                queue_limit_bytes: u64::MAX,
            });
            net.add_flow(
                reno(),
                reno(),
                &[Route {
                    name: name.into(),
                    up,
                    down: shared,
                }],
            );
        }
        let r = run_bulk(&mut net, Duration::from_secs(20), Duration::from_secs(5));
        let total: f64 = r.iter().map(|f| f.goodput_bps).sum();
        // Both flows get traffic through and together use most of the 10 Mbit/s
        // (headers and drop-tail sawtooth cost some).
        assert!(r.iter().all(|f| f.goodput_bps > 1e6), "{r:?}");
        assert!(total > 8e6 && total <= 10e6, "total {total}");
        // The shared link saw queue drops: the flows really competed for it.
        assert!(net.link_counters(shared).drops_queue > 0);
    }

    #[test]
    fn shared_bottleneck_routes_every_subflow_through_one_link() {
        let mut net = shared_bottleneck(
            reno(),
            2,
            reno(),
            Bandwidth::from_mbps(10.0),
            Duration::from_millis(20),
            1,
        );
        let r = run_bulk(&mut net, Duration::from_secs(10), Duration::from_secs(2));
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].data_bytes_sent_per_path.len(), 2);
        assert!(r[0].data_bytes_sent_per_path.iter().all(|(_, b)| *b > 0));
        let bottleneck_out = net.link_counters(LinkId(0)).bytes_out;
        let sent: u64 = r
            .iter()
            .flat_map(|f| f.data_bytes_sent_per_path.iter().map(|(_, b)| *b))
            .sum();
        // Everything the servers sent crossed link 0 (sent ≥ delivered on it; payload only
        // vs datagram bytes, so compare loosely).
        assert!(
            bottleneck_out as f64 > 0.9 * sent as f64,
            "{bottleneck_out} vs {sent}"
        );
    }
}
