//! The receive buffer as the kernels the seed papers ran it (Linux dynamic right-sizing at
//! the MPTCP meta socket, `tcp_rmem` = 4096 / 131072 / 6291456): a slow path's head-of-line
//! blocking now limits goodput, where the former fixed 16 MiB window never did.
//!
//! Case: BBR with `lrf`, fast path 50 Mbit/s and 10 ms one way, slow path 5 Mbit/s and
//! 100 ms one way (one-BDP queues), 20 MB. By hand: the autotuned buffer is capped at
//! `tcp_rmem[2]` = 6 291 456 B, so the window (half of it) never exceeds 3 145 728 B; while a
//! segment sent on the slow path is outstanding (≥ 100 ms, ≥ 300 ms when it is lost and sent
//! again on that path), the fast path can deliver at most that window beyond it, which it
//! fills in 3 145 728 B / 6.25 MB/s = 0.50 s. With 16 MiB it would need 2.7 s, longer than
//! any recovery here, so the out-of-order queue only grows and goodput is the paths' sum.

mod sim_harness;

use mptransport::connection::Config;
use mptransport::sim::{Pair, TransferSpec, run_transfer};
use sim_harness::{bdp_path as path, cfg};

/// `tcp_win_from_space(tcp_rmem[2])` with `tcp_adv_win_scale` = 1.
const KERNEL_MAX_WINDOW_BYTES: u64 = 6_291_456 / 2;

/// (goodput Mbit/s, the receiver's largest out-of-order queue in bytes, its final window).
fn run(recv_window_bytes: Option<u64>) -> (f64, u64, u64) {
    let c = Config {
        recv_window_bytes,
        ..cfg("bbr", "lrf")
    };
    let paths = [path("fast", 50.0, 10, 0.0), path("slow", 5.0, 100, 0.0)];
    let mut pair = Pair::new(c.clone(), c, &paths, 1);
    let r = run_transfer(
        &mut pair,
        &TransferSpec {
            response_bytes: 20_000_000,
            ..Default::default()
        },
    );
    assert!(r.is_byte_exact_and_clean(), "{r:?}");
    let ofo_max = pair.client.counters().ofo_queue_max_bytes;
    let window = pair.client.recv_window_bytes();
    (r.response_goodput_bps() / 1e6, ofo_max, window)
}

#[test]
fn a_slow_paths_head_of_line_blocking_limits_goodput_with_the_kernels_buffer() {
    let (auto_mbps, auto_ofo, auto_window) = run(None);
    let (fixed_mbps, fixed_ofo, fixed_window) = run(Some(16 << 20));
    println!(
        "autotuned: {auto_mbps:.2} Mbit/s, ofo max {auto_ofo} B, window {auto_window} B; \
         16 MiB: {fixed_mbps:.2} Mbit/s, ofo max {fixed_ofo} B"
    );
    // The autotuned window reached the kernel's cap and held the out-of-order queue below it.
    assert_eq!(auto_window, KERNEL_MAX_WINDOW_BYTES);
    assert!(auto_ofo <= KERNEL_MAX_WINDOW_BYTES, "{auto_ofo}");
    // With 16 MiB the queue outgrew what the kernel could ever hold...
    assert_eq!(fixed_window, 16 << 20);
    assert!(fixed_ofo > KERNEL_MAX_WINDOW_BYTES, "{fixed_ofo}");
    // ...and the head-of-line blocking the kernel's buffer imposes costs goodput.
    assert!(
        auto_mbps < 0.9 * fixed_mbps,
        "autotuned {auto_mbps:.2} vs fixed {fixed_mbps:.2} Mbit/s"
    );
}

#[test]
fn one_path_reaches_its_rate_with_the_autotuned_buffer() {
    // 100 Mbit/s, 20 ms one way: BDP 500 kB, well under the 3 MiB cap; DRS must open the
    // window from 64 KiB fast enough that goodput matches the fixed 16 MiB window's.
    let one = |w: Option<u64>| {
        let c = Config {
            recv_window_bytes: w,
            ..cfg("cubic", "lrf")
        };
        let mut pair = Pair::new(c.clone(), c, &[path("a", 100.0, 20, 0.0)], 1);
        let r = run_transfer(
            &mut pair,
            &TransferSpec {
                response_bytes: 40_000_000,
                ..Default::default()
            },
        );
        assert!(r.is_byte_exact_and_clean(), "{r:?}");
        r.response_goodput_bps() / 1e6
    };
    let (auto, fixed) = (one(None), one(Some(16 << 20)));
    assert!(
        auto > 0.98 * fixed,
        "autotuned {auto:.2} vs fixed {fixed:.2} Mbit/s"
    );
}
