//! `Pair`: a client and a server connection joined by one simulated path per subflow (each
//! with an up and a down [`Link`]), stepped in virtual time. `run_transfer` moves seeded
//! random bytes each way and checks them with SHA-256. The links, and the shared bottlenecks
//! of a scenario, form linkemu's network model (`linkemu::network`), the one the emulator
//! drives too: this file only feeds it datagrams and delivers what comes out.

use std::time::Duration;

use sha2::{Digest, Sha256};

use super::cross::{CBR_TAG, CbrFlow, CrossFlow};
use super::emulated_link::{Link, LinkCounters, LinkSpec};
use super::endpoint::{
    deliver_to_endpoint, deliver_to_server, earliest, fire_all_due_timers,
    fire_due_timers_after_deliveries,
};
use crate::connection::{CloseReason, Config, Connection, Event, PathConfig};
use crate::rng::Rng;
use crate::units::{Instant, SubflowId};
use linkemu::network::{LinkEvent, Network};
use linkemu::spec::Direction;

/// One simulated path: client→server (`up`) and server→client (`down`).
#[derive(Clone, Debug, PartialEq)]
pub struct SimPath {
    pub name: String,
    pub up: LinkSpec,
    pub down: LinkSpec,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriveError {
    /// The step budget ran out first.
    StepLimit { steps: u64, now: Instant },
    /// Virtual time passed the limit.
    TimeLimit { now: Instant },
    /// Nothing left to happen, yet the goal was not reached.
    Idle { now: Instant },
}

pub struct Pair {
    pub now: Instant,
    pub client: Connection,
    pub server: Option<Connection>,
    server_cfg: Config,
    /// Path i's up link is `net.links[2i]`, its down link `2i + 1`; bottlenecks follow.
    net: Network<Link>,
    /// Datagrams that left the network this step: (link, payload, tag).
    arrived: Vec<(usize, Vec<u8>, u64)>,
    buf: Vec<u8>,
    pub client_events: Vec<Event>,
    pub server_events: Vec<Event>,
    pub steps: u64,
    /// A scenario's cross traffic (sim/cross.rs).
    cross: Vec<CrossFlow>,
    cbr: Vec<CbrFlow>,
    /// Zeros that cross traffic sends, and a buffer its receivers read into.
    cross_zeros: Vec<u8>,
    cross_sink: Vec<u8>,
    /// An application timer (e.g. the next scheduled write of an app-limited sender): the
    /// simulation does not jump past it.
    pub app_wake_at: Option<Instant>,
    /// Further connections between the same endpoints over the same paths (e.g. the other
    /// connections a browser opens for a page), each tagged `SIDE_TAG_BASE + index` on the
    /// links ([`Pair::add_connection`]).
    pub side: Vec<SideConn>,
    path_cfgs: Vec<PathConfig>,
}

/// Link tag of side connection i: `SIDE_TAG_BASE + i` (cross traffic's TCP flows use 1..,
/// UDP `CBR_TAG`).
const SIDE_TAG_BASE: u64 = 1 << 40;

/// A further connection of a [`Pair`]: a client, and its server once the first HELLO came.
pub struct SideConn {
    pub client: Connection,
    pub server: Option<Connection>,
    server_cfg: Config,
}

impl Pair {
    /// Builds the client (one subflow per path) and links; the server connection appears
    /// when the first HELLO arrives, as in the proxy.
    pub fn new(client_cfg: Config, server_cfg: Config, paths: &[SimPath], seed: u64) -> Pair {
        let mut rng = Rng::new(seed);
        let conn_id = rng.next_u64();
        let links = paths
            .iter()
            .flat_map(|p| {
                [
                    Link::new(p.up, rng.next_u64()),
                    Link::new(p.down, rng.next_u64()),
                ]
            })
            .collect();
        let names: Vec<String> = paths.iter().map(|p| p.name.clone()).collect();
        let net = Network::from_path_links(&names, links);
        Pair::with_network(client_cfg, server_cfg, &names, net, conn_id)
    }

    /// A pair over the paths of a resolved scenario (docs/CONTRACTS.md section 4), each link
    /// seeded as linkemu seeds it for trial seed `seed` (link index = position in
    /// `Scenario::links()`: path i up = 2i, down = 2i + 1, then the bottlenecks'). A path's
    /// packets cross its own link, then its bottleneck's in that direction if it has one; the
    /// scenario's cross traffic shares them (sim/cross.rs).
    pub fn from_scenario(
        client_cfg: Config,
        server_cfg: Config,
        scenario: &linkemu::scenario::Scenario,
        seed: u64,
    ) -> Result<Pair, String> {
        let net = Network::from_scenario(scenario, |spec, index| {
            Link::from_emulator_spec(spec, seed, index)
        })?;
        let names: Vec<String> = scenario.paths.keys().cloned().collect();
        let conn_id = Rng::new(seed).next_u64();
        let mut pair = Pair::with_network(client_cfg, server_cfg, &names, net, conn_id);
        (pair.cross, pair.cbr) = super::cross::build(scenario, seed)?;
        if !pair.cross.is_empty() || !pair.cbr.is_empty() {
            pair.cross_zeros = vec![0u8; 64 * 1024];
            pair.cross_sink = vec![0u8; 64 * 1024];
        }
        Ok(pair)
    }

    /// Each shared bottleneck link: its name, direction (true = down) and counters.
    pub fn bottleneck_counters(&self) -> Vec<(String, bool, LinkCounters)> {
        let first = self.net.path_links();
        (self.net.slots[first..].iter())
            .zip(&self.net.links[first..])
            .map(|(slot, l)| {
                (
                    slot.name().to_string(),
                    slot.dir == Direction::Down,
                    l.counters,
                )
            })
            .collect()
    }

    /// Each cross-traffic flow: (path index, data direction down, kind, payload bytes
    /// received for TCP or packets sent for UDP).
    pub fn cross_traffic_counts(&self) -> Vec<(usize, bool, &'static str, u64)> {
        let tcp = self
            .cross
            .iter()
            .map(|f| (f.path, f.data_down(), "tcp", f.bytes_received));
        let udp = self
            .cbr
            .iter()
            .map(|f| (f.path, f.down, "udp_cbr", f.pkts_sent));
        tcp.chain(udp).collect()
    }

    fn with_network(
        client_cfg: Config,
        server_cfg: Config,
        names: &[String],
        net: Network<Link>,
        conn_id: u64,
    ) -> Pair {
        let path_cfgs: Vec<PathConfig> = names
            .iter()
            .map(|name| PathConfig {
                name: name.clone(),
                backup: false,
            })
            .collect();
        let client = Connection::client(Instant::ZERO, conn_id, client_cfg, &path_cfgs)
            .expect("valid client config");
        Pair {
            side: Vec::new(),
            path_cfgs,
            now: Instant::ZERO,
            client,
            server: None,
            server_cfg,
            net,
            arrived: Vec::new(),
            buf: vec![0u8; 65536],
            client_events: Vec::new(),
            server_events: Vec::new(),
            steps: 0,
            cross: Vec::new(),
            cbr: Vec::new(),
            cross_zeros: Vec::new(),
            cross_sink: Vec::new(),
            app_wake_at: None,
        }
    }

    /// Opens a further connection (client now, server at its first HELLO) with one subflow per
    /// path, over the same links as the main one; returns its index in `side`.
    pub fn add_connection(
        &mut self,
        client_cfg: Config,
        server_cfg: Config,
        conn_id: u64,
    ) -> usize {
        let client = Connection::client(self.now, conn_id, client_cfg, &self.path_cfgs)
            .expect("valid client config");
        self.side.push(SideConn {
            client,
            server: None,
            server_cfg,
        });
        self.side.len() - 1
    }

    /// Changes a link's model from now on (e.g. an outage: loss 1.0). Packets already in
    /// transit keep their fate.
    pub fn set_link(&mut self, path: usize, down: bool, spec: LinkSpec) {
        self.link_mut(path, down).set_spec(spec);
    }

    /// A link's current model.
    pub fn link_spec(&self, path: usize, down: bool) -> LinkSpec {
        self.link(path, down)
            .spec()
            .expect("Pair links are built from a LinkSpec")
    }

    pub fn link_counters(&self, path: usize, down: bool) -> LinkCounters {
        self.link(path, down).counters
    }

    fn link(&self, path: usize, down: bool) -> &Link {
        &self.net.links[Network::<Link>::path_link(path, down)]
    }

    fn link_mut(&mut self, path: usize, down: bool) -> &mut Link {
        &mut self.net.links[Network::<Link>::path_link(path, down)]
    }

    /// Moves pending events of both connections into `client_events` / `server_events`.
    pub fn collect_events(&mut self) {
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
        if let Some(s) = self.server.as_mut() {
            while let Some(e) = s.poll_event() {
                self.server_events.push(e);
            }
        }
    }

    fn flush(&mut self) {
        while let Some(t) = self.client.poll_transmit(self.now, &mut self.buf) {
            let link = Network::<Link>::path_link(t.path.index(), false);
            self.net.links[link].send(t.send_at.max(self.now), &self.buf[..t.len]);
        }
        if let Some(s) = self.server.as_mut() {
            while let Some(t) = s.poll_transmit(self.now, &mut self.buf) {
                let link = Network::<Link>::path_link(t.path.index(), true);
                self.net.links[link].send(t.send_at.max(self.now), &self.buf[..t.len]);
            }
        }
        self.collect_events();
        for (i, c) in self.side.iter_mut().enumerate() {
            let tag = SIDE_TAG_BASE + i as u64;
            while let Some(t) = c.client.poll_transmit(self.now, &mut self.buf) {
                self.net.links[Network::<Link>::path_link(t.path.index(), false)].send_tagged(
                    t.send_at.max(self.now),
                    &self.buf[..t.len],
                    tag,
                );
            }
            if let Some(s) = c.server.as_mut() {
                while let Some(t) = s.poll_transmit(self.now, &mut self.buf) {
                    self.net.links[Network::<Link>::path_link(t.path.index(), true)].send_tagged(
                        t.send_at.max(self.now),
                        &self.buf[..t.len],
                        tag,
                    );
                }
                while s.poll_event().is_some() {}
            }
            while c.client.poll_event().is_some() {}
        }
        if !self.cross.is_empty() || !self.cbr.is_empty() {
            self.flush_cross_traffic();
        }
    }

    /// Cross traffic's packets into its path's own links (tag: TCP flow k = k + 1, UDP
    /// [`CBR_TAG`]).
    fn flush_cross_traffic(&mut self) {
        let now = self.now;
        for (k, f) in self.cross.iter_mut().enumerate() {
            f.pump(now, &self.cross_zeros, &mut self.cross_sink);
            for (down, conn) in [(false, f.client.as_mut()), (true, f.server.as_mut())] {
                let Some(conn) = conn else { continue };
                let link = &mut self.net.links[Network::<Link>::path_link(f.path, down)];
                while let Some(t) = conn.poll_transmit(now, &mut self.buf) {
                    link.send_tagged(t.send_at.max(now), &self.buf[..t.len], k as u64 + 1);
                }
                while conn.poll_event().is_some() {}
            }
        }
        for f in &mut self.cbr {
            while let Some((at, len)) = f.due(now) {
                self.net.links[Network::<Link>::path_link(f.path, f.down)].send_tagged(
                    at,
                    &self.cross_zeros[..len],
                    CBR_TAG,
                );
            }
        }
    }

    /// Hands a datagram to its endpoint; true if it was the multipath connection's.
    fn deliver(&mut self, down: bool, datagram: &[u8], tag: u64) -> bool {
        let now = self.now;
        match tag {
            0 if down => {
                let _ = self.client.handle_datagram(now, datagram);
            }
            0 => deliver_to_server(&mut self.server, &self.server_cfg, now, datagram),
            CBR_TAG => return false,
            k if k >= SIDE_TAG_BASE => {
                let c = &mut self.side[(k - SIDE_TAG_BASE) as usize];
                deliver_to_endpoint(
                    Some(&mut c.client),
                    &mut c.server,
                    &c.server_cfg,
                    now,
                    !down,
                    datagram,
                );
            }
            k => self.cross[k as usize - 1].deliver(now, !down, datagram),
        }
        tag == 0
    }

    /// Sends what is due, advances virtual time to the next event and processes it.
    /// Returns false when nothing is left to happen.
    ///
    /// Each deadline is asked once per step: a link whose next event lies ahead is not
    /// advanced (advancing it to `now` would change nothing), and a connection that received
    /// nothing keeps the timeout it had before the deliveries.
    pub fn step(&mut self) -> bool {
        self.steps += 1;
        self.flush();
        let client_timeout = self.client.poll_timeout();
        let server_timeout = self.server.as_ref().and_then(|s| s.poll_timeout());
        let mut next = earliest(client_timeout, server_timeout);
        next = earliest(next, self.app_wake_at.filter(|&t| t > self.now));
        for f in &self.cross {
            next = earliest(next, f.next_time(self.now));
        }
        for f in &self.cbr {
            next = earliest(next, f.next_time());
        }
        for c in &self.side {
            next = earliest(next, c.client.poll_timeout());
            next = earliest(next, c.server.as_ref().and_then(|s| s.poll_timeout()));
        }
        for l in &self.net.links {
            next = earliest(next, l.next_delivery());
        }
        let Some(next) = next else {
            return false;
        };
        self.now = self.now.max(next);
        let now = self.now;
        let (mut to_client, mut to_server) = (false, false);
        let mut arrived = std::mem::take(&mut self.arrived);
        self.net.advance(now.as_nanos(), |link, event| {
            if let LinkEvent::Released { packet, .. } = event {
                arrived.push((link, packet.0, packet.1));
            }
        });
        for (link, d, tag) in arrived.drain(..) {
            let down = self.net.slots[link].dir == Direction::Down;
            let main = self.deliver(down, &d, tag);
            to_client |= main && down;
            to_server |= main && !down;
            self.net.links[link].recycle(d);
        }
        self.arrived = arrived;
        for f in &mut self.cross {
            f.fire_timers(now);
        }
        for c in &mut self.side {
            fire_all_due_timers(std::iter::once(&mut c.client).chain(c.server.as_mut()), now);
        }
        fire_due_timers_after_deliveries(&mut self.client, now, client_timeout, to_client);
        if let Some(s) = self.server.as_mut() {
            fire_due_timers_after_deliveries(s, now, server_timeout, to_server);
        }
        true
    }

    /// Steps until `done` holds, at most `max_steps` steps and until `max_time`.
    /// `app` runs before every step (feed and drain the streams there).
    pub fn drive_bounded(
        &mut self,
        max_steps: u64,
        max_time: Instant,
        mut app: impl FnMut(&mut Pair),
        mut done: impl FnMut(&Pair) -> bool,
    ) -> Result<(), DriveError> {
        let start = self.steps;
        loop {
            app(self);
            if done(self) {
                return Ok(());
            }
            if self.steps - start >= max_steps {
                return Err(DriveError::StepLimit {
                    steps: self.steps - start,
                    now: self.now,
                });
            }
            if self.now > max_time {
                return Err(DriveError::TimeLimit { now: self.now });
            }
            if !self.step() {
                app(self);
                return if done(self) {
                    Ok(())
                } else {
                    Err(DriveError::Idle { now: self.now })
                };
            }
        }
    }
}

/// Seeded random bytes fed into a stream, hashed as they are written.
struct Source {
    rng: Rng,
    remaining: u64,
    pending: Vec<u8>,
    offset: usize,
    hasher: Sha256,
    finished: bool,
}

impl Source {
    fn new(seed: u64, bytes: u64) -> Source {
        Source {
            rng: Rng::new(seed),
            remaining: bytes,
            pending: Vec::new(),
            offset: 0,
            hasher: Sha256::new(),
            finished: false,
        }
    }

    fn pump(&mut self, conn: &mut Connection) {
        loop {
            if self.offset == self.pending.len() {
                if self.remaining == 0 {
                    if !self.finished {
                        conn.finish();
                        self.finished = true;
                    }
                    return;
                }
                let n = self.remaining.min(64 * 1024) as usize;
                self.pending.resize(n, 0);
                for chunk in self.pending.chunks_mut(8) {
                    let r = self.rng.next_u64().to_le_bytes();
                    chunk.copy_from_slice(&r[..chunk.len()]);
                }
                self.hasher.update(&self.pending);
                self.remaining -= n as u64;
                self.offset = 0;
            }
            let w = conn.write(&self.pending[self.offset..]);
            self.offset += w;
            if w == 0 {
                return;
            }
        }
    }
}

struct Sink {
    hasher: Sha256,
    bytes: u64,
    buf: Vec<u8>,
}

impl Sink {
    fn new() -> Sink {
        Sink {
            hasher: Sha256::new(),
            bytes: 0,
            buf: vec![0u8; 256 * 1024],
        }
    }
    fn pump(&mut self, conn: &mut Connection) {
        loop {
            let n = conn.read(&mut self.buf);
            if n == 0 {
                return;
            }
            self.hasher.update(&self.buf[..n]);
            self.bytes += n as u64;
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferSpec {
    /// Client → server bytes (the "request").
    pub request_bytes: u64,
    /// Server → client bytes (the "response").
    pub response_bytes: u64,
    pub seed: u64,
    pub max_steps: u64,
    pub max_time: Duration,
}

impl Default for TransferSpec {
    fn default() -> Self {
        TransferSpec {
            request_bytes: 1000,
            response_bytes: 1_000_000,
            seed: 1,
            max_steps: 50_000_000,
            max_time: Duration::from_secs(3600),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TransferResult {
    pub outcome: Result<(), DriveError>,
    /// Virtual time from start until the client has read the whole response.
    pub response_done: Option<Duration>,
    pub request_sha_sent: [u8; 32],
    pub request_sha_received: [u8; 32],
    pub response_sha_sent: [u8; 32],
    pub response_sha_received: [u8; 32],
    pub request_bytes_received: u64,
    pub response_bytes_received: u64,
    pub client_close: Option<CloseReason>,
    pub server_close: Option<CloseReason>,
    pub end: Instant,
    pub steps: u64,
}

impl TransferResult {
    /// Both streams arrived intact and both connections closed cleanly.
    pub fn is_byte_exact_and_clean(&self) -> bool {
        self.outcome.is_ok()
            && self.request_sha_sent == self.request_sha_received
            && self.response_sha_sent == self.response_sha_received
            && self.client_close == Some(CloseReason::Clean)
            && self.server_close == Some(CloseReason::Clean)
    }
    /// Response goodput in bits/s (payload bytes over time to read them all).
    pub fn response_goodput_bps(&self) -> f64 {
        match self.response_done {
            Some(d) if !d.is_zero() => self.response_bytes_received as f64 * 8.0 / d.as_secs_f64(),
            _ => 0.0,
        }
    }
}

fn closed_reason(events: &[Event]) -> Option<CloseReason> {
    events.iter().find_map(|e| match e {
        Event::Closed { reason } => Some(*reason),
        _ => None,
    })
}

/// Client writes `request_bytes` and finishes; the server, once it has a connection, writes
/// `response_bytes` and finishes; both read everything. Runs until both connections closed.
pub fn run_transfer(pair: &mut Pair, spec: &TransferSpec) -> TransferResult {
    run_transfer_with(pair, spec, |_| {})
}

/// `run_transfer` with `hook` called before every step (change links, inject events).
pub fn run_transfer_with(
    pair: &mut Pair,
    spec: &TransferSpec,
    mut hook: impl FnMut(&mut Pair),
) -> TransferResult {
    let mut req_src = Source::new(spec.seed ^ 0x5151, spec.request_bytes);
    let mut resp_src = Source::new(spec.seed ^ 0xA1A1, spec.response_bytes);
    let mut req_sink = Sink::new();
    let mut resp_sink = Sink::new();
    let mut response_done: Option<Duration> = None;
    let start = pair.now;
    let response_bytes = spec.response_bytes;
    let outcome = pair.drive_bounded(
        spec.max_steps,
        start + spec.max_time,
        |p| {
            hook(p);
            req_src.pump(&mut p.client);
            resp_sink.pump(&mut p.client);
            if response_done.is_none()
                && resp_sink.bytes == response_bytes
                && p.client.peer_finished()
            {
                response_done = Some(p.now - start);
            }
            if let Some(s) = p.server.as_mut() {
                req_sink.pump(s);
                resp_src.pump(s);
            }
        },
        |p| p.client.is_closed() && p.server.as_ref().is_some_and(|s| s.is_closed()),
    );
    pair.collect_events();
    let sha = |h: Sha256| -> [u8; 32] { h.finalize().into() };
    TransferResult {
        outcome,
        response_done,
        request_sha_sent: sha(req_src.hasher),
        request_sha_received: sha(req_sink.hasher),
        response_sha_sent: sha(resp_src.hasher),
        response_sha_received: sha(resp_sink.hasher),
        request_bytes_received: req_sink.bytes,
        response_bytes_received: resp_sink.bytes,
        client_close: closed_reason(&pair.client_events),
        server_close: closed_reason(&pair.server_events),
        end: pair.now,
        steps: pair.steps,
    }
}

/// Convenience: the subflow stats of the sender (server) for assertions.
pub fn server_subflow_data_bytes(pair: &Pair) -> Vec<(SubflowId, u64)> {
    pair.server
        .as_ref()
        .map(|s| {
            s.subflow_stats()
                .iter()
                .map(|x| (x.id, x.counters.data_bytes_sent_total))
                .collect()
        })
        .unwrap_or_default()
}
