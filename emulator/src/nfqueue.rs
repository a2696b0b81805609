//! Minimal NFQUEUE client over a raw netlink socket (libc only).
//!
//! Why not the `nfq` crate: it hides the socket (no `AsRawFd`), so a loop
//! cannot sleep in `poll` until "a packet arrives or the next release is
//! due", and it sends one verdict per syscall. Here one socket serves all
//! four queues, packets are read in batches with `recvmmsg`, and verdicts go
//! out as one `sendto` per wake-up: individual DROP verdicts, then one
//! `NFQNL_MSG_VERDICT_BATCH` ACCEPT per queue (it accepts every queued packet
//! with an id up to the given one; a link releases in arrival order, so the
//! ids it releases are exactly a prefix of what the kernel holds).
//!
//! Protocol: include/uapi/linux/netfilter/nfnetlink_queue.h.

use std::io;
use std::os::fd::RawFd;

const NETLINK_NETFILTER: libc::c_int = 12;
const NFNL_SUBSYS_QUEUE: u16 = 3;
const NFQNL_MSG_PACKET: u16 = 0;
const NFQNL_MSG_VERDICT: u16 = 1;
const NFQNL_MSG_CONFIG: u16 = 2;
const NFQNL_MSG_VERDICT_BATCH: u16 = 3;
const NFQA_PACKET_HDR: u16 = 1;
const NFQA_VERDICT_HDR: u16 = 2;
const NFQA_TIMESTAMP: u16 = 4;
const NFQA_PAYLOAD: u16 = 10;
const NFQA_CAP_LEN: u16 = 13;
const NFQA_CFG_CMD: u16 = 1;
const NFQA_CFG_PARAMS: u16 = 2;
const NFQA_CFG_QUEUE_MAXLEN: u16 = 3;
const NFQA_CFG_MASK: u16 = 4;
const NFQA_CFG_FLAGS: u16 = 5;
const NFQA_CFG_F_FAIL_OPEN: u32 = 1;
const NFQNL_CFG_CMD_BIND: u8 = 1;
const NFQNL_CFG_CMD_UNBIND: u8 = 2;
const NFQNL_COPY_PACKET: u8 = 2;
const NF_DROP: u32 = 0;
const NF_ACCEPT: u32 = 1;
const NLMSG_HDRLEN: usize = 16;
const NFGENMSG_LEN: usize = 4;
const NLMSG_ERROR: u16 = 2;
const NLMSG_MIN_TYPE: u16 = 16;
const RECV_SLOTS: usize = 64;
const RECV_SLOT_BYTES: usize = 2048;

/// A packet the kernel holds for us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedPacket {
    pub queue: u16,
    pub packet_id: u32,
    /// Length of the whole packet (IP header included).
    pub bytes: u32,
    /// When the kernel received it (CLOCK_REALTIME ns, µs resolution), if it
    /// stamped it (only while some socket has asked for timestamps).
    pub rx_realtime_ns: Option<u64>,
    /// IPv4 source and destination address, from the copied header (None if
    /// the copy is too short or not IPv4). Shared bottlenecks count by flow.
    pub addrs: Option<([u8; 4], [u8; 4])>,
}

/// Source and destination of an IPv4 header at the start of `payload`.
pub fn ipv4_addrs(payload: &[u8]) -> Option<([u8; 4], [u8; 4])> {
    if payload.len() < 20 || payload[0] >> 4 != 4 {
        return None;
    }
    Some((
        payload[12..16].try_into().ok()?,
        payload[16..20].try_into().ok()?,
    ))
}

pub struct NfQueue {
    fd: RawFd,
    seq: u32,
    slots: Vec<[u8; RECV_SLOT_BYTES]>,
    verdicts: Vec<u8>,
    /// Packets that arrived while we waited for a config ACK.
    stashed: Vec<QueuedPacket>,
    /// Netlink errors the kernel sent back for our verdicts.
    pub verdict_errors: u64,
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn put_nlmsg(buf: &mut Vec<u8>, msg_type: u16, flags: u16, seq: u32, queue: u16) -> usize {
    let start = buf.len();
    buf.extend_from_slice(&0u32.to_ne_bytes()); // length, patched by end_nlmsg
    buf.extend_from_slice(&((NFNL_SUBSYS_QUEUE << 8) | msg_type).to_ne_bytes());
    buf.extend_from_slice(&flags.to_ne_bytes());
    buf.extend_from_slice(&seq.to_ne_bytes());
    buf.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel
    buf.push(libc::AF_UNSPEC as u8);
    buf.push(0); // NFNETLINK_V0
    buf.extend_from_slice(&queue.to_be_bytes());
    start
}

fn put_attr(buf: &mut Vec<u8>, attr_type: u16, payload: &[u8]) {
    buf.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    buf.extend_from_slice(&attr_type.to_ne_bytes());
    buf.extend_from_slice(payload);
    buf.resize(align4(buf.len()), 0);
}

fn end_nlmsg(buf: &mut [u8], start: usize) {
    let len = (buf.len() - start) as u32;
    buf[start..start + 4].copy_from_slice(&len.to_ne_bytes());
}

fn u16_ne(b: &[u8]) -> u16 {
    u16::from_ne_bytes([b[0], b[1]])
}

fn u32_ne(b: &[u8]) -> u32 {
    u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
}

fn u32_be(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// What one netlink message said.
enum Message {
    Packet(QueuedPacket),
    Error { errno: i32, seq: u32 },
    Other,
}

/// Parses every netlink message in one datagram.
fn parse_datagram(mut data: &[u8], out: &mut Vec<Message>) {
    while data.len() >= NLMSG_HDRLEN {
        let len = u32_ne(&data[0..4]) as usize;
        if len < NLMSG_HDRLEN || len > data.len() {
            return;
        }
        let msg_type = u16_ne(&data[4..6]);
        let seq = u32_ne(&data[8..12]);
        let body = &data[NLMSG_HDRLEN..len];
        if msg_type == NLMSG_ERROR && body.len() >= 4 {
            out.push(Message::Error {
                errno: -(u32_ne(&body[0..4]) as i32),
                seq,
            });
        } else if msg_type == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET
            && body.len() >= NFGENMSG_LEN
        {
            let queue = u16::from_be_bytes([body[2], body[3]]);
            let mut attrs = &body[NFGENMSG_LEN..];
            let mut packet_id = None;
            let mut payload_len = 0usize;
            let mut cap_len = None;
            let mut rx_realtime_ns = None;
            let mut addrs = None;
            while attrs.len() >= 4 {
                let attr_len = u16_ne(&attrs[0..2]) as usize;
                let attr_type = u16_ne(&attrs[2..4]) & 0x3fff;
                if attr_len < 4 || attr_len > attrs.len() {
                    break;
                }
                let value = &attrs[4..attr_len];
                match attr_type {
                    NFQA_PACKET_HDR if value.len() >= 4 => packet_id = Some(u32_be(value)),
                    NFQA_PAYLOAD => {
                        payload_len = value.len();
                        addrs = ipv4_addrs(value);
                    }
                    NFQA_CAP_LEN if value.len() >= 4 => cap_len = Some(u32_be(value)),
                    NFQA_TIMESTAMP if value.len() >= 16 => {
                        let sec = u64::from_be_bytes(value[0..8].try_into().unwrap());
                        let usec = u64::from_be_bytes(value[8..16].try_into().unwrap());
                        rx_realtime_ns = Some(sec * 1_000_000_000 + usec * 1_000);
                    }
                    _ => {}
                }
                attrs = &attrs[align4(attr_len).min(attrs.len())..];
            }
            if let Some(packet_id) = packet_id {
                let bytes = cap_len.unwrap_or(payload_len as u32);
                out.push(Message::Packet(QueuedPacket {
                    queue,
                    packet_id,
                    bytes,
                    rx_realtime_ns,
                    addrs,
                }));
            }
        } else if msg_type >= NLMSG_MIN_TYPE {
            out.push(Message::Other);
        }
        data = &data[align4(len).min(data.len())..];
    }
}

impl NfQueue {
    pub fn open() -> io::Result<NfQueue> {
        // SAFETY: plain socket syscalls on values we own.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                NETLINK_NETFILTER,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let queue = NfQueue {
            fd,
            seq: 0,
            slots: vec![[0u8; RECV_SLOT_BYTES]; RECV_SLOTS],
            verdicts: Vec::with_capacity(64 * 1024),
            stashed: Vec::new(),
            verdict_errors: 0,
        };
        // SAFETY: addr is a zeroed sockaddr_nl with the family set.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as u16;
        let rc = unsafe {
            libc::bind(
                fd,
                &addr as *const libc::sockaddr_nl as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        // A large receive buffer absorbs bursts while we sleep; without it
        // the kernel drops packets it cannot hand us (and says nothing,
        // since ENOBUFS reports are off).
        let rcvbuf: libc::c_int = 32 << 20;
        let one: libc::c_int = 1;
        unsafe {
            if libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                &rcvbuf as *const _ as *const libc::c_void,
                4,
            ) < 0
            {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    libc::SO_RCVBUF,
                    &rcvbuf as *const _ as *const libc::c_void,
                    4,
                );
            }
            libc::setsockopt(
                fd,
                libc::SOL_NETLINK,
                libc::NETLINK_NO_ENOBUFS,
                &one as *const _ as *const libc::c_void,
                4,
            );
        }
        Ok(queue)
    }

    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// Binds `queue`: copy the first `copy_bytes` of each packet, let the
    /// kernel hold up to `max_len` packets, and drop (not accept) packets
    /// when full (fail-open off).
    pub fn bind(&mut self, queue: u16, copy_bytes: u16, max_len: u32) -> io::Result<()> {
        self.config(queue, |buf| {
            put_attr(buf, NFQA_CFG_CMD, &[NFQNL_CFG_CMD_BIND, 0, 0, 0])
        })?;
        self.config(queue, |buf| {
            let mut params = (copy_bytes as u32).to_be_bytes().to_vec();
            params.push(NFQNL_COPY_PACKET);
            put_attr(buf, NFQA_CFG_PARAMS, &params);
        })?;
        self.config(queue, |buf| {
            put_attr(buf, NFQA_CFG_QUEUE_MAXLEN, &max_len.to_be_bytes())
        })?;
        self.config(queue, |buf| {
            put_attr(buf, NFQA_CFG_FLAGS, &0u32.to_be_bytes());
            put_attr(buf, NFQA_CFG_MASK, &NFQA_CFG_F_FAIL_OPEN.to_be_bytes());
        })
    }

    pub fn unbind(&mut self, queue: u16) -> io::Result<()> {
        self.config(queue, |buf| {
            put_attr(buf, NFQA_CFG_CMD, &[NFQNL_CFG_CMD_UNBIND, 0, 0, 0])
        })
    }

    /// Sends one config message and waits for its ACK; packets that arrive
    /// meanwhile are kept for the next `recv_batch`.
    fn config(&mut self, queue: u16, attrs: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        self.seq += 1;
        let seq = self.seq;
        let mut buf = Vec::with_capacity(64);
        let start = put_nlmsg(
            &mut buf,
            NFQNL_MSG_CONFIG,
            (libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16,
            seq,
            queue,
        );
        attrs(&mut buf);
        end_nlmsg(&mut buf, start);
        self.send(&buf)?;
        let deadline = crate::clock::monotonic_ns() + 2_000_000_000;
        let mut messages = Vec::new();
        loop {
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pfd, 1, 100) };
            messages.clear();
            self.recv_messages(&mut messages)?;
            for m in messages.drain(..) {
                match m {
                    Message::Error { errno, seq: s } if s == seq => {
                        return if errno == 0 {
                            Ok(())
                        } else {
                            Err(io::Error::from_raw_os_error(errno))
                        };
                    }
                    Message::Packet(p) => self.stashed.push(p),
                    _ => {}
                }
            }
            if crate::clock::monotonic_ns() > deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no ACK from nfnetlink",
                ));
            }
        }
    }

    fn send(&self, buf: &[u8]) -> io::Result<()> {
        // SAFETY: addr is a zeroed sockaddr_nl (the kernel) and buf is valid.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as u16;
        let rc = unsafe {
            libc::sendto(
                self.fd,
                buf.as_ptr() as *const libc::c_void,
                buf.len(),
                0,
                &addr as *const libc::sockaddr_nl as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reads what is waiting (non-blocking, up to RECV_SLOTS datagrams).
    fn recv_messages(&mut self, out: &mut Vec<Message>) -> io::Result<usize> {
        // SAFETY: iovecs and headers point into self.slots, which outlives the call.
        let mut iovecs: Vec<libc::iovec> = self
            .slots
            .iter_mut()
            .map(|s| libc::iovec {
                iov_base: s.as_mut_ptr() as *mut libc::c_void,
                iov_len: s.len(),
            })
            .collect();
        let mut headers: Vec<libc::mmsghdr> = iovecs
            .iter_mut()
            .map(|iov| {
                let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                h.msg_hdr.msg_iov = iov;
                h.msg_hdr.msg_iovlen = 1;
                h
            })
            .collect();
        let n = unsafe {
            libc::recvmmsg(
                self.fd,
                headers.as_mut_ptr(),
                headers.len() as u32,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(0),
                // The socket buffer overflowed: the kernel dropped packets.
                Some(libc::ENOBUFS) => Ok(0),
                _ => Err(e),
            };
        }
        for (h, slot) in headers.iter().zip(self.slots.iter()).take(n as usize) {
            let len = (h.msg_len as usize).min(RECV_SLOT_BYTES);
            parse_datagram(&slot[..len], out);
        }
        Ok(n as usize)
    }

    /// Appends every packet waiting in the socket to `out`.
    pub fn recv_batch(&mut self, out: &mut Vec<QueuedPacket>) -> io::Result<()> {
        out.append(&mut self.stashed);
        let mut messages = Vec::with_capacity(RECV_SLOTS);
        loop {
            messages.clear();
            let n = self.recv_messages(&mut messages)?;
            for m in messages.drain(..) {
                match m {
                    Message::Packet(p) => out.push(p),
                    Message::Error { errno, .. } if errno != 0 => self.verdict_errors += 1,
                    _ => {}
                }
            }
            if n < RECV_SLOTS {
                return Ok(());
            }
        }
    }

    /// Queues a DROP verdict for one packet (sent by `flush_verdicts`).
    pub fn drop_packet(&mut self, queue: u16, packet_id: u32) {
        self.push_verdict(NFQNL_MSG_VERDICT, queue, packet_id, NF_DROP);
    }

    /// Queues an ACCEPT of every packet of `queue` with id <= `packet_id`.
    pub fn accept_up_to(&mut self, queue: u16, packet_id: u32) {
        self.push_verdict(NFQNL_MSG_VERDICT_BATCH, queue, packet_id, NF_ACCEPT);
    }

    fn push_verdict(&mut self, msg_type: u16, queue: u16, packet_id: u32, verdict: u32) {
        if self.verdicts.len() > 60 * 1024 {
            if let Err(e) = self.flush_verdicts() {
                eprintln!("linkemu: sending verdicts failed: {e}");
            }
        }
        let start = put_nlmsg(
            &mut self.verdicts,
            msg_type,
            libc::NLM_F_REQUEST as u16,
            0,
            queue,
        );
        let mut hdr = [0u8; 8];
        hdr[0..4].copy_from_slice(&verdict.to_be_bytes());
        hdr[4..8].copy_from_slice(&packet_id.to_be_bytes());
        put_attr(&mut self.verdicts, NFQA_VERDICT_HDR, &hdr);
        end_nlmsg(&mut self.verdicts, start);
    }

    /// Sends the queued verdicts in one datagram.
    pub fn flush_verdicts(&mut self) -> io::Result<()> {
        if self.verdicts.is_empty() {
            return Ok(());
        }
        let result = self.send(&self.verdicts);
        self.verdicts.clear();
        result
    }
}

/// The kernel's own counters for one queue (/proc/net/netfilter/nfnetlink_queue):
/// packets it dropped because the queue was full (`queue_dropped`) or because it
/// could not hand them to us (`user_dropped`, e.g. socket buffer full).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelQueueCounters {
    pub queue: u16,
    pub queue_dropped: u64,
    pub user_dropped: u64,
}

pub fn parse_kernel_counters(text: &str) -> Vec<KernelQueueCounters> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<u64> = line
                .split_whitespace()
                .map_while(|x| x.parse().ok())
                .collect();
            (f.len() >= 7).then(|| KernelQueueCounters {
                queue: f[0] as u16,
                queue_dropped: f[5],
                user_dropped: f[6],
            })
        })
        .collect()
}

pub fn kernel_counters() -> Vec<KernelQueueCounters> {
    std::fs::read_to_string("/proc/net/netfilter/nfnetlink_queue")
        .map(|t| parse_kernel_counters(&t))
        .unwrap_or_default()
}

impl Drop for NfQueue {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor.
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_packet_message_with_cap_len() {
        let mut buf = Vec::new();
        let start = put_nlmsg(&mut buf, NFQNL_MSG_PACKET, 0, 0, 3);
        let mut hdr = 77u32.to_be_bytes().to_vec();
        hdr.extend_from_slice(&[0x08, 0x00, 2]);
        put_attr(&mut buf, NFQA_PACKET_HDR, &hdr);
        put_attr(&mut buf, NFQA_PAYLOAD, &[0x45; 64]);
        put_attr(&mut buf, NFQA_CAP_LEN, &1500u32.to_be_bytes());
        let mut stamp = 1_700_000_000u64.to_be_bytes().to_vec();
        stamp.extend_from_slice(&250_000u64.to_be_bytes());
        put_attr(&mut buf, NFQA_TIMESTAMP, &stamp);
        end_nlmsg(&mut buf, start);
        let mut out = Vec::new();
        parse_datagram(&buf, &mut out);
        match out.as_slice() {
            [Message::Packet(p)] => {
                assert_eq!(
                    *p,
                    QueuedPacket {
                        queue: 3,
                        packet_id: 77,
                        bytes: 1500,
                        rx_realtime_ns: Some(1_700_000_000_250_000_000),
                        addrs: Some(([0x45; 4], [0x45; 4])),
                    }
                )
            }
            _ => panic!("expected one packet"),
        }
    }

    #[test]
    fn short_packet_length_comes_from_the_payload() {
        let mut buf = Vec::new();
        let start = put_nlmsg(&mut buf, NFQNL_MSG_PACKET, 0, 0, 1);
        put_attr(&mut buf, NFQA_PACKET_HDR, &[0, 0, 0, 9, 8, 0, 2]);
        put_attr(&mut buf, NFQA_PAYLOAD, &[0x45; 52]);
        end_nlmsg(&mut buf, start);
        let mut out = Vec::new();
        parse_datagram(&buf, &mut out);
        assert!(matches!(
            out.as_slice(),
            [Message::Packet(QueuedPacket { bytes: 52, .. })]
        ));
    }

    #[test]
    fn truncated_or_garbage_datagrams_never_panic() {
        use rand::{RngCore, SeedableRng};
        let mut valid = Vec::new();
        let start = put_nlmsg(&mut valid, NFQNL_MSG_PACKET, 0, 0, 3);
        put_attr(&mut valid, NFQA_PACKET_HDR, &[0, 0, 0, 5, 8, 0, 2]);
        put_attr(&mut valid, NFQA_PAYLOAD, &[0x45; 64]);
        end_nlmsg(&mut valid, start);
        let mut out = Vec::new();
        for cut in 0..valid.len() {
            parse_datagram(&valid[..cut], &mut out);
        }
        // A cut message is never reported as a packet.
        assert!(out.iter().all(|m| !matches!(m, Message::Packet(_))));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..2000 {
            let mut junk = valid.clone();
            let i = (rng.next_u32() as usize) % junk.len();
            junk[i] = rng.next_u32() as u8;
            parse_datagram(&junk, &mut out);
        }
    }

    #[test]
    fn kernel_counters_are_read_per_queue() {
        let text = "    0  12345     0 2 64     0     0  4711  1\n    1  12345     3 2 64     7     2  99  1\n";
        let c = parse_kernel_counters(text);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[1],
            KernelQueueCounters {
                queue: 1,
                queue_dropped: 7,
                user_dropped: 2
            }
        );
    }

    #[test]
    fn verdict_message_layout() {
        let mut buf = Vec::new();
        let start = put_nlmsg(&mut buf, NFQNL_MSG_VERDICT_BATCH, 1, 0, 2);
        put_attr(&mut buf, NFQA_VERDICT_HDR, &[0, 0, 0, 1, 0, 0, 1, 0]);
        end_nlmsg(&mut buf, start);
        assert_eq!(buf.len(), 16 + 4 + 12);
        assert_eq!(u32_ne(&buf[0..4]), 32);
        assert_eq!(u16_ne(&buf[4..6]), (3 << 8) | 3);
        assert_eq!(&buf[18..20], &2u16.to_be_bytes());
    }
}
