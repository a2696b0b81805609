//! Fuzz target: arbitrary datagrams into a server and a client connection (same connection
//! id, so they get past the header), then timers and output. Nothing may panic; malformed
//! input is counted and dropped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mptransport::connection::{Config, Connection, PathConfig};
use mptransport::{Instant, wire};

fuzz_target!(|data: &[u8]| {
    // Split the input into datagrams at 0xFF 0xFE markers.
    let mut server: Option<Connection> = None;
    let paths = [
        PathConfig {
            name: "wifi".into(),
            backup: false,
        },
        PathConfig {
            name: "lte".into(),
            backup: false,
        },
    ];
    let mut client = None;
    let mut buf = vec![0u8; 2048];
    let mut now = Instant::from_nanos(1_000_000);
    for (i, d) in data.split(|&b| b == 0xFF).enumerate() {
        now += std::time::Duration::from_millis((i % 7) as u64 * 3);
        if let Some(id) = wire::peek_conn_id(d) {
            let s = server.get_or_insert_with(|| {
                Connection::server(now, id, Config::default()).expect("default config builds")
            });
            let _ = s.handle_datagram(now, d);
            let c = client.get_or_insert_with(|| {
                Connection::client(now, id, Config::default(), &paths).expect("builds")
            });
            let _ = c.handle_datagram(now, d);
        }
        for conn in server.iter_mut().chain(client.iter_mut()) {
            if i % 3 == 0 {
                conn.write(&d[..d.len().min(3000)]);
            }
            if let Some(t) = conn.poll_timeout() {
                conn.handle_timeout(t.max(now));
            }
            let mut n = 0;
            while conn.poll_transmit(now, &mut buf).is_some() && n < 64 {
                n += 1;
            }
            while conn.poll_event().is_some() {}
            let mut out = [0u8; 4096];
            conn.read(&mut out);
        }
    }
});
