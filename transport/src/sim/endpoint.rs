//! What the simulator's stepping loops ([`super::Pair`], [`super::Net`]) do with a connection
//! at each event: hand it a datagram (creating the server side at the first HELLO, as the
//! proxy does) and fire its timers when due.

use crate::connection::{Config, Connection, SubflowStats};
use crate::units::Instant;

pub(super) use linkemu::clock::earliest;

/// A datagram travelling towards the server: the first HELLO creates the server connection
/// (with `server_cfg`); datagrams before it are dropped, as the proxy drops them.
pub(super) fn deliver_to_server(
    server: &mut Option<Connection>,
    server_cfg: &Config,
    now: Instant,
    datagram: &[u8],
) {
    if server.is_none() && crate::connection::is_hello(datagram) {
        let id = crate::wire::peek_conn_id(datagram).expect("hello has a header");
        *server =
            Some(Connection::server(now, id, server_cfg.clone()).expect("valid server config"));
    }
    if let Some(s) = server.as_mut() {
        let _ = s.handle_datagram(now, datagram);
    }
}

/// Fires `conn`'s timers if its `timeout` (its current `poll_timeout`) is due at `now`.
pub(super) fn fire_due_timers(conn: &mut Connection, now: Instant, timeout: Option<Instant>) {
    if timeout.is_some_and(|t| t <= now) {
        conn.handle_timeout(now);
    }
}

/// Fires `conn`'s timers if due at `now`, after this step's deliveries: `timeout_before` is its
/// `poll_timeout` asked before them. Only a datagram can change a connection's timeout between
/// the two (no timer fired, no write happened in between), so one that `received` nothing keeps
/// it and is not asked again.
pub(super) fn fire_due_timers_after_deliveries(
    conn: &mut Connection,
    now: Instant,
    timeout_before: Option<Instant>,
    received: bool,
) {
    let timeout = if received {
        conn.poll_timeout()
    } else {
        timeout_before
    };
    fire_due_timers(conn, now, timeout);
}

/// Hands a datagram to a client and server pair: towards the server as
/// [`deliver_to_server`], else to the client (if it exists yet).
pub(super) fn deliver_to_endpoint(
    client: Option<&mut Connection>,
    server: &mut Option<Connection>,
    server_cfg: &Config,
    now: Instant,
    towards_server: bool,
    datagram: &[u8],
) {
    if towards_server {
        deliver_to_server(server, server_cfg, now, datagram);
    } else if let Some(c) = client {
        let _ = c.handle_datagram(now, datagram);
    }
}

/// Fires the timers of each of `conns` (a client and, once it exists, its server) that are
/// due at `now`.
pub(super) fn fire_all_due_timers<'a>(
    conns: impl IntoIterator<Item = &'a mut Connection>,
    now: Instant,
) {
    for conn in conns {
        let timeout = conn.poll_timeout();
        fire_due_timers(conn, now, timeout);
    }
}

/// `f` of every named subflow of `conn` (none without a connection, e.g. a server whose first
/// HELLO has not arrived), by path name in subflow order.
pub fn per_path<T>(conn: Option<&Connection>, f: impl Fn(&SubflowStats) -> T) -> Vec<(String, T)> {
    conn.map(|c| c.subflow_stats())
        .unwrap_or_default()
        .iter()
        .map(|s| (s.name.clone(), f(s)))
        .collect()
}
