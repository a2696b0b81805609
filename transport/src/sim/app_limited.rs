//! An application-limited sender: the server writes `write_bytes` every `interval` (a video
//! server pushing segments, say), the client reads everything. Reports each write's delivery
//! delay: from the write until the client has read its last byte.

use std::cell::Cell;
use std::time::Duration;

use super::pair::{DriveError, Pair};
use crate::units::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppLimitedSpec {
    pub write_bytes: u64,
    pub interval: Duration,
    pub writes: u64,
    /// First write at this virtual time (after the handshake).
    pub start: Duration,
    pub max_steps: u64,
}

impl Default for AppLimitedSpec {
    fn default() -> Self {
        AppLimitedSpec {
            write_bytes: 1_000_000,
            interval: Duration::from_secs(1),
            writes: 30,
            start: Duration::from_secs(1),
            max_steps: 50_000_000,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct AppLimitedResult {
    pub outcome: Result<(), DriveError>,
    /// Delivery delay of each write, in order.
    pub delays: Vec<Duration>,
    pub bytes_read: u64,
}

/// Runs the app-limited transfer; `hook` runs before every step (traces, link changes).
pub fn run_app_limited(
    pair: &mut Pair,
    spec: &AppLimitedSpec,
    mut hook: impl FnMut(&mut Pair),
) -> AppLimitedResult {
    let payload: Vec<u8> = (0..spec.write_bytes).map(|i| (i % 251) as u8).collect();
    let mut written = 0u64;
    let mut offset = 0usize;
    let mut write_times: Vec<Instant> = Vec::new();
    let read_total = Cell::new(0u64);
    let mut delays: Vec<Duration> = Vec::new();
    let mut buf = vec![0u8; 1 << 18];
    let start = pair.now + spec.start;
    let total = spec.write_bytes * spec.writes;
    let deadline = start + spec.interval * (spec.writes as u32) + Duration::from_secs(120);
    pair.client.write(b"GET");
    let outcome = pair.drive_bounded(
        spec.max_steps,
        deadline,
        |p| {
            hook(p);
            if let Some(s) = p.server.as_mut() {
                let due_at = start + spec.interval * (written as u32);
                p.app_wake_at = (written < spec.writes).then_some(due_at);
                if written < spec.writes && (p.now >= due_at || offset > 0) {
                    if offset == 0 {
                        write_times.push(p.now);
                    }
                    offset += s.write(&payload[offset..]);
                    if offset == payload.len() {
                        offset = 0;
                        written += 1;
                        if written == spec.writes {
                            s.finish();
                        }
                    }
                }
                let mut sink = [0u8; 64];
                while s.read(&mut sink) > 0 {}
            }
            loop {
                let n = p.client.read(&mut buf);
                if n == 0 {
                    break;
                }
                read_total.set(read_total.get() + n as u64);
                while delays.len() < write_times.len()
                    && read_total.get() >= (delays.len() as u64 + 1) * spec.write_bytes
                {
                    let t0 = write_times[delays.len()];
                    delays.push(p.now.saturating_duration_since(t0));
                }
            }
        },
        |_| read_total.get() >= total,
    );
    AppLimitedResult {
        outcome,
        delays,
        bytes_read: read_total.get(),
    }
}
