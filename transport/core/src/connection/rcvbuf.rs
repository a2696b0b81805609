//! The receive buffer: how much the connection (the meta level) offers the peer.
//!
//! Default: autotuned as the kernels the seed papers ran it (Linux dynamic right-sizing at
//! the MPTCP meta socket). Option: a fixed window (`Config::recv_window_bytes = Some(w)`).
//!
//! # The kernel's rule, and which function each step follows
//! * Buffer and window: `sk_rcvbuf` starts at `tcp_rmem[1]` = 131 072 B and never exceeds
//!   `tcp_rmem[2]` = 6 291 456 B (the defaults). The window offered is
//!   `tcp_win_from_space(sk_rcvbuf)` = half of it (`tcp_adv_win_scale` = 1, the 4.x kernels'
//!   default): 64 KiB at first, 3 MiB at most.
//! * Each subflow that joins adds `tcp_rmem[1]` to the meta buffer, capped at `tcp_rmem[2]`
//!   (out-of-tree `mptcp_init_buffer_space`): 128 KiB window with two subflows.
//! * Receiver RTT (`tcp_rcv_rtt_measure`, the path Linux takes without TCP timestamps, which
//!   this wire does not carry): the time in-order data takes to advance by one offered window;
//!   the estimate keeps the smallest such sample (`tcp_rcv_rtt_update` with `win_dep`). It is
//!   kept once for the connection, where the kernels take the largest of the subflows' own
//!   estimates (`mptcp_check_rtt`, upstream `mptcp_rcv_space_adjust`).
//! * Growth (`tcp_rcv_space_adjust`, called when the application reads): at most once per
//!   receiver RTT, with `copied` the bytes read since the last measurement and `space` the
//!   largest earlier such count (initially 10·advmss, `tcp_init_buffer_space`): if copied >
//!   space, rcvwin = 2·copied + 16·advmss; rcvwin += 2·rcvwin·(copied − space)/space; the
//!   buffer becomes min(⌊rcvwin/advmss⌋·rcvmem, `tcp_rmem[2]`) if that is larger, with
//!   rcvmem = 2·advmss (the kernel's `SKB_TRUESIZE(advmss + MAX_TCP_HEADER)` rounded up until
//!   half of it holds an advmss, i.e. at least 2·advmss); space = copied. The buffer never
//!   shrinks.
//!
//! Not modelled: `tcp_grow_window`'s gradual opening of `rcv_ssthresh` towards the clamp
//! (the whole clamp is offered at once) and memory pressure.

use std::time::Duration;

use crate::units::Instant;

/// `tcp_rmem[1]`: the initial receive buffer, bytes.
pub const TCP_RMEM_DEFAULT_BYTES: u64 = 131_072;
/// `tcp_rmem[2]`: the largest receive buffer autotuning reaches, bytes.
pub const TCP_RMEM_MAX_BYTES: u64 = 6_291_456;
/// `TCP_INIT_CWND`: the first `rcvq_space.space` is this many advmss.
const INIT_SPACE_PKTS: u64 = 10;

/// `tcp_win_from_space` with `tcp_adv_win_scale` = 1.
fn win_from_space(space_bytes: u64) -> u64 {
    space_bytes - space_bytes / 2
}

/// The connection's receive buffer.
#[derive(Clone, Debug)]
pub struct RecvBuffer {
    /// Some(w): a fixed window of w bytes (no autotuning).
    fixed_window_bytes: Option<u64>,
    advmss: u64,
    /// `sk_rcvbuf` of the meta socket.
    rcvbuf_bytes: u64,
    /// Subflows that have joined (the first one brings the initial buffer).
    subflows_joined: u32,
    /// Bytes the application has read (`copied_seq`).
    copied_total: u64,
    /// `rcvq_space`: bytes read in the last measured RTT, and where/when it began.
    space_bytes: u64,
    space_seq: u64,
    space_time: Option<Instant>,
    /// `rcv_rtt_est`: smallest time one window took to arrive; the measurement under way.
    rtt_est: Option<Duration>,
    rtt_seq: u64,
    rtt_time: Option<Instant>,
}

impl RecvBuffer {
    /// `fixed_window_bytes`: None autotunes; `advmss`: payload bytes of a full packet.
    pub fn new(fixed_window_bytes: Option<u64>, advmss: u64) -> RecvBuffer {
        let advmss = advmss.max(1);
        RecvBuffer {
            fixed_window_bytes,
            advmss,
            rcvbuf_bytes: TCP_RMEM_DEFAULT_BYTES,
            subflows_joined: 0,
            copied_total: 0,
            space_bytes: INIT_SPACE_PKTS * advmss,
            space_seq: 0,
            space_time: None,
            rtt_est: None,
            rtt_seq: 0,
            rtt_time: None,
        }
    }

    pub fn is_autotuned(&self) -> bool {
        self.fixed_window_bytes.is_none()
    }

    /// The window offered: read buffer + out-of-order queue may hold this many bytes.
    pub fn window_bytes(&self) -> u64 {
        self.fixed_window_bytes
            .unwrap_or_else(|| win_from_space(self.rcvbuf_bytes))
    }

    /// `sk_rcvbuf` (the autotuned buffer; twice the window).
    #[cfg(test)]
    pub fn rcvbuf_bytes(&self) -> u64 {
        self.rcvbuf_bytes
    }

    /// The receiver RTT estimate DRS runs on, once measured.
    #[cfg(test)]
    pub fn rtt_estimate(&self) -> Option<Duration> {
        self.rtt_est
    }

    /// A subflow became established (`mptcp_init_buffer_space` for every one after the
    /// first).
    pub fn on_subflow_joined(&mut self) {
        self.subflows_joined += 1;
        if self.subflows_joined > 1 {
            self.rcvbuf_bytes =
                (self.rcvbuf_bytes + TCP_RMEM_DEFAULT_BYTES).min(TCP_RMEM_MAX_BYTES);
        }
    }

    /// In-order data advanced to `recv_next` (`tcp_rcv_rtt_measure`, no timestamps).
    pub fn on_in_order_data(&mut self, now: Instant, recv_next: u64) {
        if let Some(t0) = self.rtt_time {
            if recv_next < self.rtt_seq {
                return;
            }
            let sample = now
                .saturating_duration_since(t0)
                .max(Duration::from_micros(1));
            self.rtt_est = Some(self.rtt_est.map_or(sample, |e| e.min(sample)));
        }
        self.rtt_seq = recv_next + self.window_bytes();
        self.rtt_time = Some(now);
    }

    /// The application read `bytes` (`tcp_rcv_space_adjust` from `tcp_recvmsg`).
    pub fn on_read(&mut self, now: Instant, bytes: u64) {
        self.copied_total += bytes;
        let Some(t0) = self.space_time else {
            self.new_measure(now);
            return;
        };
        let Some(rtt) = self.rtt_est else {
            return;
        };
        if now.saturating_duration_since(t0) < rtt {
            return;
        }
        let copied = self.copied_total - self.space_seq;
        if copied > self.space_bytes {
            if self.is_autotuned() {
                let mut rcvwin = 2 * copied + 16 * self.advmss;
                let grow = (rcvwin as u128 * (copied - self.space_bytes) as u128
                    / self.space_bytes.max(1) as u128) as u64;
                rcvwin += 2 * grow;
                let rcvmem = 2 * self.advmss;
                let rcvbuf = (rcvwin / self.advmss)
                    .saturating_mul(rcvmem)
                    .min(TCP_RMEM_MAX_BYTES);
                self.rcvbuf_bytes = self.rcvbuf_bytes.max(rcvbuf);
            }
            self.space_bytes = copied;
        }
        self.new_measure(now);
    }

    fn new_measure(&mut self, now: Instant) {
        self.space_seq = self.copied_total;
        self.space_time = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADVMSS: u64 = 1400;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn starts_at_half_of_tcp_rmem_1_and_each_joining_subflow_adds_tcp_rmem_1() {
        let mut b = RecvBuffer::new(None, ADVMSS);
        assert_eq!(b.window_bytes(), 65_536);
        b.on_subflow_joined();
        assert_eq!(
            b.window_bytes(),
            65_536,
            "the first subflow brings the initial buffer"
        );
        b.on_subflow_joined();
        assert_eq!((b.rcvbuf_bytes(), b.window_bytes()), (262_144, 131_072));
    }

    #[test]
    fn a_fixed_window_stays_fixed() {
        let mut b = RecvBuffer::new(Some(16 << 20), ADVMSS);
        b.on_in_order_data(Instant::ZERO, 0);
        b.on_in_order_data(Instant::ZERO + ms(20), 20 << 20);
        b.on_read(Instant::ZERO, 1);
        b.on_read(Instant::ZERO + ms(40), 10_000_000);
        assert_eq!(b.window_bytes(), 16 << 20);
    }

    #[test]
    fn receiver_rtt_is_the_time_one_window_takes_to_arrive_smallest_kept() {
        let mut b = RecvBuffer::new(None, ADVMSS);
        let t = |x| Instant::ZERO + ms(x);
        b.on_in_order_data(t(0), 0); // window 65 536: done when recv_next ≥ 65 536
        b.on_in_order_data(t(30), 65_535);
        assert_eq!(b.rtt_estimate(), None);
        b.on_in_order_data(t(50), 65_536);
        assert_eq!(b.rtt_estimate(), Some(ms(50)));
        b.on_in_order_data(t(130), 200_000);
        assert_eq!(b.rtt_estimate(), Some(ms(50)), "80 ms is not smaller");
        b.on_in_order_data(t(150), 300_000);
        assert_eq!(b.rtt_estimate(), Some(ms(20)));
    }

    #[test]
    fn drs_step_as_tcp_rcv_space_adjust() {
        let mut b = RecvBuffer::new(None, ADVMSS);
        let t = |x| Instant::ZERO + ms(x);
        b.on_in_order_data(t(0), 0);
        b.on_in_order_data(t(40), 65_536); // receiver RTT 40 ms
        b.on_read(t(40), 0); // first read starts the measurement
        b.on_read(t(60), 50_000); // 20 ms < RTT: nothing yet
        assert_eq!(b.window_bytes(), 65_536);
        b.on_read(t(80), 50_000);
        // copied = 100 000 > space = 14 000: rcvwin = 200 000 + 22 400 = 222 400;
        // grow = ⌊222 400·86 000/14 000⌋ = 1 366 171; rcvwin = 2 954 742;
        // ⌊rcvwin/1 400⌋ = 2 110 → rcvbuf = 2 110·2 800 = 5 908 000, window 2 954 000.
        assert_eq!(b.rcvbuf_bytes(), 5_908_000);
        assert_eq!(b.window_bytes(), 2_954_000);
        // Next RTT: copied 100 000 = space → no growth, and the buffer never shrinks.
        b.on_read(t(120), 100_000);
        assert_eq!(b.window_bytes(), 2_954_000);
        // Then 400 000 in an RTT: the cap, tcp_rmem[2] = 6 291 456 → window 3 145 728.
        b.on_read(t(160), 400_000);
        assert_eq!(b.window_bytes(), 3_145_728);
    }
}
