//! The proxy runtime: drives sans-IO connections over real UDP sockets and TCP streams.
//!
//! One thread, one epoll loop (no async runtime: the loop is small, and it lets us batch
//! UDP with recvmmsg/sendmmsg and wake with nanosecond timeouts for pacing):
//!
//! ```text
//! loop:
//!   wait for sockets or the earliest connection timeout / stats tick
//!   receive UDP in batches -> handle_datagram; accept TCP; note TCP readiness
//!   handle_timeout for due connections
//!   pump TCP <-> connection streams (with back-pressure both ways)
//!   poll_transmit -> batched sendmmsg per socket; poll_event -> log lines
//!   every 100 ms: one `subflow` line per subflow and one `conn` line per connection
//! ```
//!
//! * server: UDP sockets on every `--listen` address; a HELLO with an unknown connection id
//!   creates a connection and a TCP connection to `--forward`. Each subflow answers to the
//!   address and socket its last datagram came from.
//! * client: a TCP listener; every accepted TCP connection gets one multipath connection with
//!   one UDP socket per `--path`, bound to that path's local address.

pub mod packet_log;
pub mod sched_trace;
pub mod stats;
pub mod sys;

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::connection::{self, Config, Connection, Event, PathConfig};
use crate::rng::Rng;
use crate::units::{Instant, SubflowId};
use packet_log::PacketLogWriter;
use sched_trace::SchedTraceWriter;
use stats::StatsLog;
use sys::{Batch, Epoll, READABLE, WRITABLE};

pub const STATS_INTERVAL: Duration = Duration::from_millis(100);
const SOCKET_BUFFER_BYTES: usize = 8 << 20;
const BATCH: usize = 64;
const TCP_CHUNK_BYTES: usize = 256 * 1024;

/// One client path: name, local address to bind, server address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientPath {
    pub name: String,
    pub local: IpAddr,
    pub remote: SocketAddr,
}

#[derive(Clone, Debug)]
pub enum Mode {
    Server {
        listen: Vec<SocketAddr>,
        forward: SocketAddr,
    },
    Client {
        listen: SocketAddr,
        paths: Vec<ClientPath>,
    },
}

#[derive(Clone, Debug)]
pub struct ProxyConfig {
    pub mode: Mode,
    pub conn: Config,
    pub stats: Option<PathBuf>,
    /// Per-decision scheduler trace file (sched_trace.rs); None = off.
    pub sched_trace: Option<PathBuf>,
    /// Per-datagram log of what was sent (packet_log.rs); None = off.
    pub packet_log: Option<PathBuf>,
    pub t0_ns: u64,
    pub seed: u64,
    /// Stop after this long (tests); None = until SIGINT/SIGTERM.
    pub run_for: Option<Duration>,
}

const KIND_UDP: u64 = 1;
const KIND_LISTENER: u64 = 2;
const KIND_TCP: u64 = 3;

fn token(kind: u64, idx: usize) -> u64 {
    (kind << 32) | idx as u64
}

struct Udp {
    sock: UdpSocket,
    /// Client: the connection slot owning this socket.
    owner: Option<usize>,
    rx: Batch,
    tx: Batch,
}

#[derive(Clone, Copy, Debug)]
struct Route {
    udp: usize,
    remote: SocketAddr,
}

struct Entry {
    log_id: u64,
    conn: Connection,
    tcp: Option<TcpStream>,
    tcp_interest: u32,
    tcp_eof: bool,
    tcp_shut_write: bool,
    out: Vec<u8>,
    out_off: usize,
    routes: Vec<Option<Route>>,
    own_udp: Vec<usize>,
    last_switch_log: Instant,
    switches_unlogged: u64,
    closed_logged: bool,
}

pub struct Proxy {
    cfg: ProxyConfig,
    src: &'static str,
    epoll: Epoll,
    udp: Vec<Option<Udp>>,
    listener: Option<TcpListener>,
    conns: Vec<Option<Entry>>,
    by_conn_id: HashMap<u64, usize>,
    log: StatsLog,
    sched_trace: Option<SchedTraceWriter>,
    packet_log: Option<PacketLogWriter>,
    rng: Rng,
    next_log_id: u64,
    scratch: Vec<u8>,
    tx_buf: Vec<u8>,
    send_refused_total: u64,
}

impl Proxy {
    pub fn new(cfg: ProxyConfig) -> io::Result<Proxy> {
        let src = match cfg.mode {
            Mode::Server { .. } => "mpproxy-server",
            Mode::Client { .. } => "mpproxy-client",
        };
        let log = StatsLog::open(cfg.stats.as_deref(), src, cfg.t0_ns)?;
        let sched_trace = match cfg.sched_trace.as_deref() {
            Some(p) => Some(SchedTraceWriter::create(p, cfg.t0_ns, src)?),
            None => None,
        };
        let packet_log = match cfg.packet_log.as_deref() {
            Some(p) => Some(PacketLogWriter::create(p, cfg.t0_ns, src)?),
            None => None,
        };
        let mut p = Proxy {
            src,
            epoll: Epoll::new()?,
            udp: Vec::new(),
            listener: None,
            conns: Vec::new(),
            by_conn_id: HashMap::new(),
            log,
            sched_trace,
            packet_log,
            rng: Rng::new(cfg.seed),
            next_log_id: 1,
            scratch: vec![0u8; TCP_CHUNK_BYTES],
            tx_buf: vec![0u8; 65536],
            send_refused_total: 0,
            cfg,
        };
        match p.cfg.mode.clone() {
            Mode::Server { listen, .. } => {
                for addr in listen {
                    let sock = UdpSocket::bind(addr).map_err(|e| {
                        io::Error::new(e.kind(), format!("cannot bind UDP {addr}: {e}"))
                    })?;
                    p.add_udp(sock, None)?;
                }
            }
            Mode::Client { listen, .. } => {
                let l = TcpListener::bind(listen).map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot listen on TCP {listen}: {e}"))
                })?;
                l.set_nonblocking(true)?;
                p.epoll
                    .add(l.as_raw_fd(), READABLE, token(KIND_LISTENER, 0))?;
                p.listener = Some(l);
            }
        }
        let now = sys::monotonic_ns();
        p.log.line(now, "start", json!({"mode": p.src, "cc": p.cfg.conn.cc, "sched": p.cfg.conn.sched, "seed": p.cfg.seed}));
        p.log.flush();
        Ok(p)
    }

    fn add_udp(&mut self, sock: UdpSocket, owner: Option<usize>) -> io::Result<usize> {
        sock.set_nonblocking(true)?;
        sys::set_socket_buffers(&sock, SOCKET_BUFFER_BYTES);
        let idx = self
            .udp
            .iter()
            .position(|u| u.is_none())
            .unwrap_or(self.udp.len());
        self.epoll
            .add(sock.as_raw_fd(), READABLE, token(KIND_UDP, idx))?;
        let u = Udp {
            sock,
            owner,
            rx: Batch::new(BATCH),
            tx: Batch::new(BATCH),
        };
        if idx == self.udp.len() {
            self.udp.push(Some(u));
        } else {
            self.udp[idx] = Some(u);
        }
        Ok(idx)
    }

    fn add_entry(&mut self, e: Entry) -> usize {
        let idx = self
            .conns
            .iter()
            .position(|c| c.is_none())
            .unwrap_or(self.conns.len());
        if idx == self.conns.len() {
            self.conns.push(Some(e));
        } else {
            self.conns[idx] = Some(e);
        }
        idx
    }

    /// Runs until a stop signal (or `run_for`); writes final stats.
    pub fn run(&mut self) -> io::Result<()> {
        let start_ns = sys::monotonic_ns();
        let mut next_stats = start_ns + STATS_INTERVAL.as_nanos() as u64;
        loop {
            if sys::stop_requested()
                || self
                    .cfg
                    .run_for
                    .is_some_and(|d| sys::monotonic_ns() - start_ns >= d.as_nanos() as u64)
            {
                break;
            }
            let now_ns = sys::monotonic_ns();
            let mut deadline = next_stats;
            for e in self.conns.iter().flatten() {
                if let Some(t) = e.conn.poll_timeout() {
                    deadline = deadline.min(t.as_nanos());
                }
            }
            let timeout = Duration::from_nanos(deadline.saturating_sub(now_ns))
                .min(Duration::from_millis(100));
            let events = self.epoll.wait(Some(timeout))?;
            let now = Instant::from_nanos(sys::monotonic_ns());
            for (tok, _ev) in events {
                let (kind, idx) = (tok >> 32, (tok & 0xffff_ffff) as usize);
                match kind {
                    KIND_UDP => self.on_udp_readable(idx, now),
                    KIND_LISTENER => self.on_accept(now),
                    KIND_TCP => {}
                    _ => {}
                }
            }
            for i in 0..self.conns.len() {
                self.service(i, now);
            }
            let now_ns = sys::monotonic_ns();
            if now_ns >= next_stats {
                next_stats = now_ns + STATS_INTERVAL.as_nanos() as u64;
                for e in self.conns.iter().flatten() {
                    self.log.snapshot(now_ns, e.log_id, &e.conn);
                }
                self.log.flush();
                if let Some(w) = self.sched_trace.as_mut() {
                    let _ = w.flush();
                }
                if let Some(w) = self.packet_log.as_mut() {
                    let _ = w.flush();
                }
            }
        }
        let now_ns = sys::monotonic_ns();
        for e in self.conns.iter().flatten() {
            self.log.snapshot(now_ns, e.log_id, &e.conn);
        }
        self.log.line(
            now_ns,
            "stop",
            json!({"udp_send_refused_total": self.send_refused_total}),
        );
        self.log.flush();
        if let Some(w) = self.sched_trace.as_mut() {
            w.flush()?;
        }
        if let Some(w) = self.packet_log.as_mut() {
            w.flush()?;
        }
        Ok(())
    }

    fn new_entry(&mut self, conn: Connection, tcp: Option<TcpStream>, now_ns: u64) -> Entry {
        let mut conn = conn;
        if self.sched_trace.is_some() {
            conn.enable_sched_trace();
        }
        let log_id = self.next_log_id;
        self.next_log_id += 1;
        let peer = tcp
            .as_ref()
            .and_then(|t| t.peer_addr().ok())
            .map(|a| a.to_string());
        self.log.line(
            now_ns,
            "conn_open",
            json!({"conn": log_id, "conn_id": format!("{:016x}", conn.conn_id()), "tcp_peer": peer,
                   "cc": conn.cc_name(), "sched": conn.sched_name()}),
        );
        Entry {
            log_id,
            conn,
            tcp,
            tcp_interest: 0,
            tcp_eof: false,
            tcp_shut_write: false,
            out: Vec::new(),
            out_off: 0,
            routes: Vec::new(),
            own_udp: Vec::new(),
            last_switch_log: Instant::ZERO,
            switches_unlogged: 0,
            closed_logged: false,
        }
    }

    fn on_accept(&mut self, now: Instant) {
        let Mode::Client { paths, .. } = self.cfg.mode.clone() else {
            return;
        };
        loop {
            let Some(l) = self.listener.as_ref() else {
                return;
            };
            let (tcp, _) = match l.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => return,
            };
            let _ = tcp.set_nonblocking(true);
            let _ = tcp.set_nodelay(true);
            let conn_id = self.rng.next_u64();
            let path_cfgs: Vec<PathConfig> = paths
                .iter()
                .map(|p| PathConfig {
                    name: p.name.clone(),
                    backup: false,
                })
                .collect();
            let mut cfg = self.cfg.conn.clone();
            cfg.seed = self.rng.next_u64();
            let conn = match Connection::client(now, conn_id, cfg, &path_cfgs) {
                Ok(c) => c,
                Err(_) => return, // names were validated at start-up
            };
            let entry = self.new_entry(conn, Some(tcp), now.as_nanos());
            let slot = self.add_entry(entry);
            let mut routes = Vec::new();
            let mut own = Vec::new();
            for p in &paths {
                let route = UdpSocket::bind(sys::any_port(p.local))
                    .and_then(|s| self.add_udp(s, Some(slot)))
                    .map(|udp| Route {
                        udp,
                        remote: p.remote,
                    });
                match route {
                    Ok(r) => {
                        own.push(r.udp);
                        routes.push(Some(r));
                    }
                    Err(e) => {
                        self.log.line(now.as_nanos(), "error", json!({"message": format!("path {}: cannot bind {}: {e}", p.name, p.local)}));
                        routes.push(None);
                    }
                }
            }
            let e = self.conns[slot].as_mut().expect("just added");
            e.routes = routes;
            e.own_udp = own;
            if let Some(t) = e.tcp.as_ref() {
                let _ = self
                    .epoll
                    .add(t.as_raw_fd(), READABLE, token(KIND_TCP, slot));
                e.tcp_interest = READABLE;
            }
        }
    }

    fn on_udp_readable(&mut self, idx: usize, now: Instant) {
        loop {
            let Some(u) = self.udp.get_mut(idx).and_then(|u| u.as_mut()) else {
                return;
            };
            let n = match u.rx.recv(&u.sock) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let owner = u.owner;
            for i in 0..n {
                let u = self.udp[idx].as_mut().expect("socket exists");
                let (data, from) = u.rx.get(i);
                let Some(from) = from else { continue };
                // Copy out of the batch so that self can be borrowed mutably.
                let len = data.len();
                self.tx_buf[..len].copy_from_slice(data);
                self.on_datagram(idx, owner, from, len, now);
            }
            if n < BATCH {
                return;
            }
        }
    }

    fn on_datagram(
        &mut self,
        udp: usize,
        owner: Option<usize>,
        from: SocketAddr,
        len: usize,
        now: Instant,
    ) {
        let data = &self.tx_buf[..len];
        let slot = match owner {
            Some(s) => s,
            None => {
                let Some(conn_id) = crate::wire::peek_conn_id(data) else {
                    return;
                };
                match self.by_conn_id.get(&conn_id) {
                    Some(&s) => s,
                    None => {
                        if !connection::is_hello(data) {
                            return;
                        }
                        match self.open_server_conn(conn_id, now) {
                            Some(s) => s,
                            None => return,
                        }
                    }
                }
            }
        };
        let data = &self.tx_buf[..len];
        let Some(e) = self.conns.get_mut(slot).and_then(|e| e.as_mut()) else {
            return;
        };
        if let Ok(sf) = e.conn.handle_datagram(now, data)
            && owner.is_none()
        {
            // Server: answer each subflow where its last datagram came from.
            if e.routes.len() <= sf.index() {
                e.routes.resize(sf.index() + 1, None);
            }
            e.routes[sf.index()] = Some(Route { udp, remote: from });
        }
    }

    fn open_server_conn(&mut self, conn_id: u64, now: Instant) -> Option<usize> {
        let Mode::Server { forward, .. } = self.cfg.mode.clone() else {
            return None;
        };
        let mut cfg = self.cfg.conn.clone();
        cfg.seed = self.rng.next_u64();
        let conn = Connection::server(now, conn_id, cfg).ok()?;
        let tcp = match TcpStream::connect_timeout(&forward, Duration::from_secs(2)) {
            Ok(t) => t,
            Err(err) => {
                self.log.line(
                    now.as_nanos(),
                    "error",
                    json!({"message": format!("cannot connect to --forward {forward}: {err}")}),
                );
                None?
            }
        };
        let _ = tcp.set_nonblocking(true);
        let _ = tcp.set_nodelay(true);
        let entry = self.new_entry(conn, Some(tcp), now.as_nanos());
        let slot = self.add_entry(entry);
        self.by_conn_id.insert(conn_id, slot);
        let e = self.conns[slot].as_mut().expect("just added");
        if let Some(t) = e.tcp.as_ref() {
            let _ = self
                .epoll
                .add(t.as_raw_fd(), READABLE, token(KIND_TCP, slot));
            e.tcp_interest = READABLE;
        }
        Some(slot)
    }

    /// Timers, stream pumping, transmission, events and clean-up for one connection.
    fn service(&mut self, slot: usize, now: Instant) {
        let Some(mut e) = self.conns[slot].take() else {
            return;
        };
        if e.conn.poll_timeout().is_some_and(|t| t <= now) {
            e.conn.handle_timeout(now);
        }
        self.pump_tcp(&mut e);
        self.transmit(&mut e, now);
        self.log_events(&mut e, now);
        if let Some(w) = self.sched_trace.as_mut() {
            let records = e.conn.drain_sched_trace();
            if !records.is_empty() {
                // A full disk loses trace lines, not the connection.
                let _ = w.write(e.log_id, &e.conn.path_names(), &records);
            }
        }
        // Clean-up: connection closed and TCP side finished (or broken).
        if e.conn.is_closed() {
            let tcp_done =
                e.tcp.is_none() || (e.out_off >= e.out.len() && e.conn.readable_bytes() == 0);
            if tcp_done {
                self.transmit(&mut e, now);
                if let Some(t) = e.tcp.take() {
                    self.epoll.delete(t.as_raw_fd());
                }
                for u in e.own_udp.drain(..) {
                    if let Some(s) = self.udp[u].take() {
                        self.epoll.delete(s.sock.as_raw_fd());
                    }
                }
                self.by_conn_id.remove(&e.conn.conn_id());
                let now_ns = now.as_nanos();
                self.log.snapshot(now_ns, e.log_id, &e.conn);
                return; // slot stays empty
            }
        }
        self.conns[slot] = Some(e);
    }

    fn pump_tcp(&mut self, e: &mut Entry) {
        let Some(tcp) = e.tcp.as_mut() else { return };
        let mut broken = false;
        // TCP -> multipath stream, as much as the send buffer takes.
        while !e.tcp_eof {
            let cap = (e.conn.send_capacity() as usize).min(self.scratch.len());
            if cap == 0 {
                break;
            }
            match tcp.read(&mut self.scratch[..cap]) {
                Ok(0) => {
                    e.tcp_eof = true;
                    e.conn.finish();
                }
                Ok(n) => {
                    e.conn.write(&self.scratch[..n]);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    broken = true;
                    break;
                }
            }
        }
        // Multipath stream -> TCP, keeping at most one chunk pending (back-pressure).
        while !broken {
            if e.out_off >= e.out.len() {
                e.out.clear();
                e.out_off = 0;
                let n = e.conn.readable_bytes().min(TCP_CHUNK_BYTES);
                if n == 0 {
                    break;
                }
                e.out.resize(n, 0);
                let got = e.conn.read(&mut e.out);
                e.out.truncate(got);
            }
            match tcp.write(&e.out[e.out_off..]) {
                Ok(0) => break,
                Ok(n) => e.out_off += n,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    broken = true;
                }
            }
        }
        if !broken && e.out_off >= e.out.len() && e.conn.peer_finished() && !e.tcp_shut_write {
            let _ = tcp.shutdown(Shutdown::Write);
            e.tcp_shut_write = true;
        }
        if broken {
            e.conn.abort();
            if let Some(t) = e.tcp.take() {
                self.epoll.delete(t.as_raw_fd());
            }
            return;
        }
        let mut want = 0;
        if !e.tcp_eof && e.conn.send_capacity() > 0 {
            want |= READABLE;
        }
        if e.out_off < e.out.len() {
            want |= WRITABLE;
        }
        if want != e.tcp_interest
            && let Some(t) = e.tcp.as_ref()
        {
            let slot_token = self.slot_token_of(e);
            let _ = self.epoll.modify(t.as_raw_fd(), want, slot_token);
            e.tcp_interest = want;
        }
    }

    fn slot_token_of(&self, e: &Entry) -> u64 {
        // The token only wakes the loop; every connection is serviced each iteration.
        token(KIND_TCP, e.log_id as usize)
    }

    fn transmit(&mut self, e: &mut Entry, now: Instant) {
        let mut dirty: Vec<usize> = Vec::new();
        while let Some(t) = e.conn.poll_transmit(now, &mut self.tx_buf) {
            let Some(route) = e.routes.get(t.path.index()).copied().flatten() else {
                continue;
            };
            let Some(u) = self.udp.get_mut(route.udp).and_then(|u| u.as_mut()) else {
                continue;
            };
            if let Some(w) = self.packet_log.as_mut() {
                let path = e.conn.subflow_name(t.path).unwrap_or("?");
                // A full disk loses log lines, not the connection.
                let _ = w.sent(now.as_nanos(), e.log_id, path, &self.tx_buf[..t.len]);
            }
            u.tx.slot()[..t.len].copy_from_slice(&self.tx_buf[..t.len]);
            u.tx.commit(t.len, &route.remote);
            if !dirty.contains(&route.udp) {
                dirty.push(route.udp);
            }
            if u.tx.is_full() {
                self.send_refused_total += u.tx.send(&u.sock) as u64;
            }
        }
        for i in dirty {
            if let Some(u) = self.udp[i].as_mut()
                && !u.tx.is_empty()
            {
                self.send_refused_total += u.tx.send(&u.sock) as u64;
            }
        }
    }

    fn path_name(e: &Entry, id: SubflowId) -> String {
        e.conn.subflow_name(id).unwrap_or("?").to_string()
    }

    fn log_events(&mut self, e: &mut Entry, now: Instant) {
        let now_ns = now.as_nanos();
        while let Some(ev) = e.conn.poll_event() {
            match ev {
                Event::Loss { path, pkts } => self.log.line(
                    now_ns,
                    "loss",
                    json!({"conn": e.log_id, "path": Self::path_name(e, path), "pkts": pkts}),
                ),
                Event::Rto { path } => self.log.line(
                    now_ns,
                    "rto",
                    json!({"conn": e.log_id, "path": Self::path_name(e, path)}),
                ),
                Event::SchedSwitch { from, to } => {
                    // Round robin switches on every packet: log at most one line per 10 ms
                    // and say how many were folded into it.
                    if now - e.last_switch_log >= Duration::from_millis(10) {
                        self.log.line(
                            now_ns,
                            "sched_switch",
                            json!({"conn": e.log_id, "from": Self::path_name(e, from),
                                   "to": Self::path_name(e, to), "folded": e.switches_unlogged}),
                        );
                        e.last_switch_log = now;
                        e.switches_unlogged = 0;
                    } else {
                        e.switches_unlogged += 1;
                    }
                }
                Event::SubflowEstablished { path, name } => self.log.line(
                    now_ns,
                    "subflow_open",
                    json!({"conn": e.log_id, "path": name, "subflow": path.0}),
                ),
                Event::SubflowFailed { path } => self.log.line(
                    now_ns,
                    "subflow_failed",
                    json!({"conn": e.log_id, "path": Self::path_name(e, path)}),
                ),
                Event::Closed { reason } => {
                    if !e.closed_logged {
                        e.closed_logged = true;
                        let k = e.conn.counters();
                        self.log.line(
                            now_ns,
                            "conn_close",
                            json!({"conn": e.log_id, "reason": reason.as_str(),
                                   "bytes_delivered_total": k.bytes_delivered_total,
                                   "bytes_written_total": k.bytes_written_total}),
                        );
                    }
                }
                Event::Readable | Event::Writable | Event::PeerFinished => {}
            }
        }
    }
}
