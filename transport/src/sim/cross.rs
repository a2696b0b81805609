//! A scenario's cross traffic in the simulator (`[[cross_traffic]]`, emulator/src/scenario.rs):
//! flows other than the multipath connection's that share a path's links (and the bottleneck
//! that path crosses). As in the emulated trial, they enter at the path's own link.
//!
//! * `tcp_bulk` / `tcp_onoff`: a single-path connection of this transport running the entry's
//!   congestion control (the emulated trial runs the kernel's TCP with it; here the same
//!   algorithm's implementation in `cc/`), sending zeros in `direction` from `start_s` to
//!   `stop_s` (on/off: `on_s` sending, `off_s` idle, repeated); the reverse direction carries
//!   its ACKs.
//! * `udp_cbr`: packets of `packet_bytes` (IP bytes) at `rate_bps` per flow, one way.

use std::time::Duration;

use linkemu::scenario::{CrossTraffic, Direction, Scenario};

use super::endpoint::{deliver_to_endpoint, earliest, fire_all_due_timers};
use crate::connection::{Config, Connection, PathConfig};
use crate::rng::Rng;
use crate::units::Instant;

/// Tag of a UDP cross-traffic packet on a link (the multipath connection's are 0, TCP cross
/// flow k's are k + 1).
pub(super) const CBR_TAG: u64 = u64::MAX;

/// One cross-traffic TCP flow.
pub(super) struct CrossFlow {
    pub path: usize,
    /// Data travels server → client (down) or client → server (up).
    data_down: bool,
    start: Instant,
    stop: Instant,
    /// (on, off) periods; None = always on between start and stop.
    on_off: Option<(Duration, Duration)>,
    client_cfg: Config,
    pub server_cfg: Config,
    conn_id: u64,
    path_name: String,
    pub client: Option<Connection>,
    pub server: Option<Connection>,
    /// Payload bytes the receiving side read.
    pub bytes_received: u64,
}

/// One UDP constant-bit-rate flow.
pub(super) struct CbrFlow {
    pub path: usize,
    pub down: bool,
    next_at: Instant,
    stop: Instant,
    interval: Duration,
    payload_bytes: usize,
    pub pkts_sent: u64,
}

fn at_s(s: f64) -> Instant {
    Instant::from_nanos((s.max(0.0) * 1e9) as u64)
}

/// The cross flows of `scenario` (TCP, then UDP), paths by their index in the scenario.
pub(super) fn build(
    scenario: &Scenario,
    seed: u64,
) -> Result<(Vec<CrossFlow>, Vec<CbrFlow>), String> {
    let mut tcp = Vec::new();
    let mut cbr = Vec::new();
    let mut rng = Rng::new(seed ^ 0xC055_7A4F_F1C0_0000);
    for (i, ct) in scenario.cross_traffic.iter().enumerate() {
        let common = ct.common();
        let at = |field: &str| format!("cross_traffic[{i}].{field}");
        let path = scenario
            .paths
            .get_index_of(common.path)
            .ok_or_else(|| format!("{}: no path '{}'", at("path"), common.path))?;
        let down = common.direction == Direction::Down;
        let (start, stop) = (at_s(common.start_s), at_s(common.stop_s));
        let (cc, on_off) = match ct {
            CrossTraffic::TcpBulk { cc, .. } => (Some(cc), None),
            CrossTraffic::TcpOnoff {
                cc, on_s, off_s, ..
            } => (
                Some(cc),
                Some((
                    Duration::from_secs_f64(*on_s),
                    Duration::from_secs_f64(*off_s),
                )),
            ),
            CrossTraffic::UdpCbr {
                rate_bps,
                packet_bytes,
                ..
            } => {
                let wire = u64::from(*packet_bytes).max(29);
                let payload = wire - u64::from(super::emulated_link::IP_UDP_HEADER_BYTES);
                let interval = Duration::from_secs_f64(wire as f64 * 8.0 / rate_bps.max(1.0));
                for k in 0..common.count {
                    // Flows of one entry start spread over one interval, not in lockstep.
                    let phase = interval.mul_f64(f64::from(k) / f64::from(common.count));
                    cbr.push(CbrFlow {
                        path,
                        down,
                        next_at: start + phase,
                        stop,
                        interval,
                        payload_bytes: payload as usize,
                        pkts_sent: 0,
                    });
                }
                (None, None)
            }
        };
        let Some(cc) = cc else { continue };
        let cfg = Config {
            cc: cc.clone(),
            seed: rng.next_u64(),
            ..Config::default()
        };
        crate::cc::build(&cfg.cc, &cfg.cc_config).map_err(|e| {
            format!(
                "{}: '{cc}' is not a congestion control of this transport: {e}",
                at("cc")
            )
        })?;
        for _ in 0..common.count {
            tcp.push(CrossFlow {
                path,
                data_down: down,
                start,
                stop,
                on_off,
                client_cfg: cfg.clone(),
                server_cfg: cfg.clone(),
                conn_id: rng.next_u64(),
                path_name: common.path.to_string(),
                client: None,
                server: None,
                bytes_received: 0,
            });
        }
    }
    Ok((tcp, cbr))
}

impl CrossFlow {
    pub fn data_down(&self) -> bool {
        self.data_down
    }

    fn sending(&self, now: Instant) -> bool {
        if now < self.start || now >= self.stop {
            return false;
        }
        match self.on_off {
            None => true,
            Some((on, off)) => {
                let period = (on + off).as_nanos().max(1);
                let into = (now - self.start).as_nanos() % period;
                into < on.as_nanos()
            }
        }
    }

    /// Opens the client at `start`, keeps the sender's stream full while sending, reads
    /// everything on both sides.
    pub fn pump(&mut self, now: Instant, chunk: &[u8], sink: &mut [u8]) {
        if self.client.is_none() && now >= self.start {
            let path = PathConfig {
                name: self.path_name.clone(),
                backup: false,
            };
            let mut c = Connection::client(now, self.conn_id, self.client_cfg.clone(), &[path])
                .expect("valid cross-traffic config");
            // A first byte opens the server side (its HELLO carries it).
            c.write(b"G");
            self.client = Some(c);
        }
        let sending = self.sending(now);
        let (sender, receiver) = if self.data_down {
            (self.server.as_mut(), self.client.as_mut())
        } else {
            (self.client.as_mut(), self.server.as_mut())
        };
        if let Some(s) = sender {
            if sending {
                while s.write(chunk) > 0 {}
            }
            while s.read(sink) > 0 {}
        }
        if let Some(r) = receiver {
            loop {
                let n = r.read(sink);
                if n == 0 {
                    break;
                }
                self.bytes_received += n as u64;
            }
        }
    }

    /// When this flow next needs the simulation: its start, or a timer of either side, or
    /// the start of its next on period.
    pub fn next_time(&self, now: Instant) -> Option<Instant> {
        if self.client.is_none() {
            return Some(self.start);
        }
        let mut t = self.client.as_ref().and_then(|c| c.poll_timeout());
        t = earliest(t, self.server.as_ref().and_then(|s| s.poll_timeout()));
        if let Some((on, off)) = self.on_off
            && now < self.stop
            && !self.sending(now)
        {
            let period = (on + off).as_nanos().max(1);
            let into = (now - self.start).as_nanos() % period;
            let wait = (period - into) as u64;
            t = earliest(t, Some(now + Duration::from_nanos(wait)));
        }
        t
    }

    pub fn deliver(&mut self, now: Instant, towards_server: bool, datagram: &[u8]) {
        deliver_to_endpoint(
            self.client.as_mut(),
            &mut self.server,
            &self.server_cfg,
            now,
            towards_server,
            datagram,
        );
    }

    pub fn fire_timers(&mut self, now: Instant) {
        fire_all_due_timers(
            self.client.as_mut().into_iter().chain(self.server.as_mut()),
            now,
        );
    }
}

impl CbrFlow {
    /// The next packet's time, None once stopped.
    pub fn next_time(&self) -> Option<Instant> {
        (self.next_at < self.stop).then_some(self.next_at)
    }

    /// Packets due at or before `now`: their send times and payload size.
    pub fn due(&mut self, now: Instant) -> Option<(Instant, usize)> {
        if self.next_at <= now && self.next_at < self.stop {
            let at = self.next_at;
            self.next_at += self.interval;
            self.pkts_sent += 1;
            return Some((at, self.payload_bytes));
        }
        None
    }
}
