//! Fuzz target: the wire parser must reject or accept any bytes without panicking, and a
//! datagram it accepts must re-parse identically frame by frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mptransport::wire;

fuzz_target!(|data: &[u8]| {
    if let Ok((_h, payload)) = wire::parse_header(data) {
        if wire::validate(payload).is_ok() {
            let a: Vec<_> = wire::frames(payload).collect();
            let b: Vec<_> = wire::frames(payload).collect();
            assert_eq!(a, b);
            assert!(a.iter().all(|f| f.is_ok()));
        }
    }
    let _ = wire::peek_conn_id(data);
});
