//! Wire format, version 1. Every datagram is one header followed by frames; all integers
//! are big-endian. Parsing is defensive: any violation yields a [`WireError`] (the caller
//! counts the datagram as malformed and drops it); nothing here panics on any input
//! (fuzzed: transport/fuzz).
//!
//! ```text
//! header (19 B): magic 'M' (0x4D) | version u8 (=1) | conn_id u64 | subflow u8 | pn u64
//! frames:
//!   0x01 HELLO     flags u8 (bit0 backup) | name_len u8 (1..=32) | name (UTF-8)
//!   0x03 ACK       largest u64 | ack_delay_us u32 | n u8 (1..=64) | n × (first u64, last u64)
//!                  ranges of received packet numbers, inclusive, strictly descending,
//!                  non-overlapping, first range ends at `largest`
//!   0x04 DATA_ACK  data_ack u64 (next expected data sequence number) | window u64 (bytes)
//!   0x05 DATA      dsn u64 | len u16 | flags u8 (bit0 FIN) | len bytes
//!   0x06 PING      (nothing; ack-eliciting)
//!   0x07 CLOSE     code u8 (0 = both streams complete, 1 = abort)
//! ```
//! HELLO, DATA, PING and CLOSE are ack-eliciting. A FIN occupies one data sequence number
//! after the last byte of the stream (as in TCP), so `data_ack = len + 1` acknowledges it.

use std::fmt;

pub const MAGIC: u8 = 0x4D;
pub const VERSION: u8 = 1;
pub const HEADER_BYTES: usize = 19;
pub const MAX_ACK_RANGES: usize = 64;
pub const MAX_NAME_BYTES: usize = 32;
pub const DATA_FRAME_OVERHEAD_BYTES: usize = 1 + 8 + 2 + 1;
pub const DATA_ACK_FRAME_BYTES: usize = 1 + 8 + 8;
/// Header + DATA frame header: what a full data packet carries besides stream payload (a
/// DATA_ACK is added when the payload leaves room for it).
pub const DATA_PACKET_OVERHEAD_BYTES: usize = HEADER_BYTES + DATA_FRAME_OVERHEAD_BYTES;

const FRAME_HELLO: u8 = 0x01;
const FRAME_ACK: u8 = 0x03;
const FRAME_DATA_ACK: u8 = 0x04;
const FRAME_DATA: u8 = 0x05;
const FRAME_PING: u8 = 0x06;
const FRAME_CLOSE: u8 = 0x07;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub conn_id: u64,
    pub subflow: u8,
    pub pn: u64,
}

/// Why a datagram was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    TooShort,
    BadMagic(u8),
    BadVersion(u8),
    Truncated { frame: u8 },
    UnknownFrame(u8),
    BadAckRanges,
    BadName,
    BadSubflow(u8),
    NoFrames,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::TooShort => write!(f, "datagram shorter than the {HEADER_BYTES} B header"),
            WireError::BadMagic(m) => write!(f, "bad magic 0x{m:02x} (expected 0x{MAGIC:02x})"),
            WireError::BadVersion(v) => write!(f, "unsupported version {v} (supported: {VERSION})"),
            WireError::Truncated { frame } => write!(f, "frame 0x{frame:02x} truncated"),
            WireError::UnknownFrame(t) => write!(f, "unknown frame type 0x{t:02x}"),
            WireError::BadAckRanges => write!(f, "ACK ranges not descending/disjoint or bad count"),
            WireError::BadName => write!(f, "HELLO path name empty, too long or not UTF-8"),
            WireError::BadSubflow(s) => write!(f, "subflow id {s} out of range"),
            WireError::NoFrames => write!(f, "datagram carries no frame"),
        }
    }
}

/// One decoded frame, borrowing from the datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    Hello {
        backup: bool,
        name: &'a str,
    },
    Ack(AckFrame<'a>),
    DataAck {
        data_ack: u64,
        window: u64,
    },
    Data {
        dsn: u64,
        fin: bool,
        payload: &'a [u8],
    },
    Ping,
    Close {
        code: u8,
    },
}

impl Frame<'_> {
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(self, Frame::Ack(_) | Frame::DataAck { .. })
    }
}

/// A validated ACK frame; `ranges()` yields inclusive (first, last), descending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFrame<'a> {
    pub largest: u64,
    pub ack_delay_us: u32,
    raw_ranges: &'a [u8],
}

impl<'a> AckFrame<'a> {
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        self.raw_ranges
            .chunks_exact(16)
            .map(|c| (be64(&c[..8]), be64(&c[8..])))
    }
}

fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

/// Parses the header; returns it and the frame bytes.
pub fn parse_header(d: &[u8]) -> Result<(Header, &[u8]), WireError> {
    if d.len() < HEADER_BYTES {
        return Err(WireError::TooShort);
    }
    if d[0] != MAGIC {
        return Err(WireError::BadMagic(d[0]));
    }
    if d[1] != VERSION {
        return Err(WireError::BadVersion(d[1]));
    }
    let subflow = d[10];
    if subflow as usize >= crate::units::MAX_SUBFLOWS {
        return Err(WireError::BadSubflow(subflow));
    }
    Ok((
        Header {
            conn_id: be64(&d[2..10]),
            subflow,
            pn: be64(&d[11..19]),
        },
        &d[HEADER_BYTES..],
    ))
}

/// Connection id of a datagram (for demultiplexing), if the header is valid.
pub fn peek_conn_id(d: &[u8]) -> Option<u64> {
    parse_header(d).ok().map(|(h, _)| h.conn_id)
}

/// Iterates frames; the first error ends the iteration. Use [`validate`] first to reject a
/// datagram as a whole before acting on any frame.
pub struct Frames<'a> {
    rest: &'a [u8],
    failed: bool,
}

pub fn frames(payload: &[u8]) -> Frames<'_> {
    Frames {
        rest: payload,
        failed: false,
    }
}

/// Checks that every frame parses; a datagram is processed only if this succeeds.
pub fn validate(payload: &[u8]) -> Result<(), WireError> {
    parse_valid(payload).map(|_| ())
}

/// Frames a datagram's parse keeps inline; more are parsed again while iterating.
const INLINE_FRAMES: usize = 6;

/// The frames of a datagram that [`parse_valid`] accepted, parsed once: iterating them does
/// not parse (and check) the bytes again.
pub struct ValidFrames<'a> {
    payload: &'a [u8],
    inline: [Frame<'a>; INLINE_FRAMES],
    /// Number of frames; above [`INLINE_FRAMES`] `iter` parses `payload` again.
    len: usize,
}

/// Checks that every frame parses (as [`validate`]) and keeps what it parsed.
pub fn parse_valid(payload: &[u8]) -> Result<ValidFrames<'_>, WireError> {
    if payload.is_empty() {
        return Err(WireError::NoFrames);
    }
    let mut v = ValidFrames {
        payload,
        inline: [Frame::Ping; INLINE_FRAMES],
        len: 0,
    };
    for f in frames(payload) {
        let f = f?;
        if let Some(slot) = v.inline.get_mut(v.len) {
            *slot = f;
        }
        v.len += 1;
    }
    Ok(v)
}

impl<'a> ValidFrames<'a> {
    /// The frames in datagram order.
    pub fn iter(&self) -> impl Iterator<Item = Frame<'a>> + '_ {
        let inline = (self.len <= INLINE_FRAMES).then(|| self.inline[..self.len].iter().copied());
        let reparsed = (self.len > INLINE_FRAMES)
            .then(|| frames(self.payload).map(|f| f.expect("validated by parse_valid")));
        inline
            .into_iter()
            .flatten()
            .chain(reparsed.into_iter().flatten())
    }
}

impl<'a> Frames<'a> {
    fn take(&mut self, n: usize, frame: u8) -> Result<&'a [u8], WireError> {
        if self.rest.len() < n {
            return Err(WireError::Truncated { frame });
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn next_frame(&mut self) -> Result<Frame<'a>, WireError> {
        let t = self.take(1, 0)?[0];
        match t {
            FRAME_HELLO => {
                let h = self.take(2, t)?;
                let (flags, len) = (h[0], h[1] as usize);
                if len == 0 || len > MAX_NAME_BYTES {
                    return Err(WireError::BadName);
                }
                let name =
                    std::str::from_utf8(self.take(len, t)?).map_err(|_| WireError::BadName)?;
                Ok(Frame::Hello {
                    backup: flags & 1 != 0,
                    name,
                })
            }
            FRAME_ACK => {
                let h = self.take(13, t)?;
                let largest = be64(&h[..8]);
                let ack_delay_us = u32::from_be_bytes([h[8], h[9], h[10], h[11]]);
                let n = h[12] as usize;
                if n == 0 || n > MAX_ACK_RANGES {
                    return Err(WireError::BadAckRanges);
                }
                let raw = self.take(16 * n, t)?;
                let ack = AckFrame {
                    largest,
                    ack_delay_us,
                    raw_ranges: raw,
                };
                let mut prev_first: Option<u64> = None;
                for (i, (first, last)) in ack.ranges().enumerate() {
                    let ok = first <= last
                        && (i != 0 || last == largest)
                        && prev_first.is_none_or(|pf| last.checked_add(1).is_some_and(|l| l < pf));
                    if !ok {
                        return Err(WireError::BadAckRanges);
                    }
                    prev_first = Some(first);
                }
                Ok(Frame::Ack(ack))
            }
            FRAME_DATA_ACK => {
                let h = self.take(16, t)?;
                Ok(Frame::DataAck {
                    data_ack: be64(&h[..8]),
                    window: be64(&h[8..]),
                })
            }
            FRAME_DATA => {
                let h = self.take(11, t)?;
                let dsn = be64(&h[..8]);
                let len = u16::from_be_bytes([h[8], h[9]]) as usize;
                let fin = h[10] & 1 != 0;
                let payload = self.take(len, t)?;
                if dsn.checked_add(len as u64 + 1).is_none() {
                    return Err(WireError::Truncated { frame: t });
                }
                Ok(Frame::Data { dsn, fin, payload })
            }
            FRAME_PING => Ok(Frame::Ping),
            FRAME_CLOSE => Ok(Frame::Close {
                code: self.take(1, t)?[0],
            }),
            other => Err(WireError::UnknownFrame(other)),
        }
    }
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Frame<'a>, WireError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.rest.is_empty() {
            return None;
        }
        let r = self.next_frame();
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

/// Writes frames into a caller-provided buffer (no allocation). Every `push_*` returns false
/// and writes nothing if the frame does not fit.
pub struct Writer<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Writer<'a> {
    /// Starts a datagram with its header. `buf` must hold at least the header.
    pub fn new(buf: &'a mut [u8], h: Header) -> Writer<'a> {
        assert!(
            buf.len() >= HEADER_BYTES,
            "datagram buffer smaller than the header"
        );
        buf[0] = MAGIC;
        buf[1] = VERSION;
        buf[2..10].copy_from_slice(&h.conn_id.to_be_bytes());
        buf[10] = h.subflow;
        buf[11..19].copy_from_slice(&h.pn.to_be_bytes());
        Writer {
            buf,
            len: HEADER_BYTES,
        }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == HEADER_BYTES
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.len
    }
    fn put(&mut self, bytes: &[u8]) {
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }
    pub fn push_hello(&mut self, backup: bool, name: &str) -> bool {
        let n = name.len().min(MAX_NAME_BYTES);
        if n == 0 || self.remaining() < 3 + n {
            return false;
        }
        self.put(&[FRAME_HELLO, backup as u8, n as u8]);
        self.put(&name.as_bytes()[..n]);
        true
    }
    /// `ranges`: inclusive, strictly descending, first ends at `largest`; at most
    /// MAX_ACK_RANGES are written (the newest ones).
    pub fn push_ack(
        &mut self,
        largest: u64,
        ack_delay_us: u32,
        ranges: impl Iterator<Item = (u64, u64)> + Clone,
    ) -> bool {
        let n = ranges.clone().take(MAX_ACK_RANGES).count();
        if n == 0 || self.remaining() < 14 + 16 * n {
            return false;
        }
        self.put(&[FRAME_ACK]);
        self.put(&largest.to_be_bytes());
        self.put(&ack_delay_us.to_be_bytes());
        self.put(&[n as u8]);
        for (first, last) in ranges.take(n) {
            self.put(&first.to_be_bytes());
            self.put(&last.to_be_bytes());
        }
        true
    }
    pub fn push_data_ack(&mut self, data_ack: u64, window: u64) -> bool {
        if self.remaining() < DATA_ACK_FRAME_BYTES {
            return false;
        }
        self.put(&[FRAME_DATA_ACK]);
        self.put(&data_ack.to_be_bytes());
        self.put(&window.to_be_bytes());
        true
    }
    /// Room for stream payload in a DATA frame pushed now.
    pub fn data_room(&self) -> usize {
        self.remaining()
            .saturating_sub(DATA_FRAME_OVERHEAD_BYTES)
            .min(u16::MAX as usize)
    }
    pub fn push_data(&mut self, dsn: u64, fin: bool, payload: &[u8]) -> bool {
        if payload.len() > self.data_room() {
            return false;
        }
        self.put(&[FRAME_DATA]);
        self.put(&dsn.to_be_bytes());
        self.put(&(payload.len() as u16).to_be_bytes());
        self.put(&[fin as u8]);
        self.put(payload);
        true
    }
    /// Reserves a DATA frame of `len` bytes and returns the slice to fill (saves a copy).
    pub fn push_data_with(&mut self, dsn: u64, fin: bool, len: usize) -> Option<&mut [u8]> {
        if len > self.data_room() {
            return None;
        }
        self.put(&[FRAME_DATA]);
        self.put(&dsn.to_be_bytes());
        self.put(&(len as u16).to_be_bytes());
        self.put(&[fin as u8]);
        let start = self.len;
        self.len += len;
        Some(&mut self.buf[start..start + len])
    }
    pub fn push_ping(&mut self) -> bool {
        if self.remaining() < 1 {
            return false;
        }
        self.put(&[FRAME_PING]);
        true
    }
    pub fn push_close(&mut self, code: u8) -> bool {
        if self.remaining() < 2 {
            return false;
        }
        self.put(&[FRAME_CLOSE, code]);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A datagram with every frame type, and the offsets where frames end.
    fn roundtrip_with_boundaries() -> (Vec<u8>, Vec<usize>) {
        let mut buf = vec![0u8; 1472];
        let mut w = Writer::new(
            &mut buf,
            Header {
                conn_id: 7,
                subflow: 1,
                pn: 42,
            },
        );
        let mut ends = Vec::new();
        assert!(w.push_hello(true, "wifi"));
        ends.push(w.len());
        assert!(w.push_ack(10, 250, [(8, 10), (2, 5)].into_iter()));
        ends.push(w.len());
        assert!(w.push_data_ack(1000, 65536));
        ends.push(w.len());
        assert!(w.push_data(500, true, b"hello"));
        ends.push(w.len());
        assert!(w.push_ping());
        ends.push(w.len());
        assert!(w.push_close(0));
        ends.push(w.len());
        let n = w.len();
        buf.truncate(n);
        (buf, ends)
    }

    fn roundtrip() -> Vec<u8> {
        roundtrip_with_boundaries().0
    }

    /// `parse_valid` accepts exactly what `validate` accepts, with the same error, and yields
    /// the frames `frames` yields, in order: below, at and above the inline capacity (twice
    /// the six-frame datagram, then cut at every byte, then with an unknown frame appended).
    #[test]
    fn parse_valid_matches_the_frame_iterator() {
        let (d, _) = roundtrip_with_boundaries();
        let one = d[HEADER_BYTES..].to_vec();
        let mut payloads = vec![Vec::new(), one.clone(), [one.clone(), one.clone()].concat()];
        for cut in 0..one.len() {
            payloads.push(one[..cut].to_vec());
            payloads.push([one.clone(), one[..cut].to_vec()].concat());
        }
        payloads.push([one.clone(), vec![0xee]].concat());
        payloads.push(vec![FRAME_PING; INLINE_FRAMES + 3]);
        let mut multi_frame = 0;
        for p in &payloads {
            // The reference: no frames is an error, else the first frame that fails.
            let reference: Result<Vec<Frame>, WireError> = if p.is_empty() {
                Err(WireError::NoFrames)
            } else {
                frames(p).collect()
            };
            match (reference, parse_valid(p)) {
                (Ok(want), Ok(v)) => {
                    assert_eq!(v.iter().collect::<Vec<_>>(), want);
                    assert_eq!(validate(p), Ok(()));
                    multi_frame += usize::from(want.len() > INLINE_FRAMES);
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a, b);
                    assert_eq!(validate(p), Err(a));
                }
                (a, b) => panic!("frames {a:?} but parse_valid {:?}", b.map(|_| ())),
            }
        }
        assert!(multi_frame >= 2, "the re-parsing path was exercised");
    }

    #[test]
    fn frames_roundtrip() {
        let d = roundtrip();
        let (h, rest) = parse_header(&d).unwrap();
        assert_eq!(
            h,
            Header {
                conn_id: 7,
                subflow: 1,
                pn: 42
            }
        );
        validate(rest).unwrap();
        let fs: Vec<_> = frames(rest).map(|f| f.unwrap()).collect();
        assert_eq!(
            fs[0],
            Frame::Hello {
                backup: true,
                name: "wifi"
            }
        );
        match fs[1] {
            Frame::Ack(a) => {
                assert_eq!(a.largest, 10);
                assert_eq!(a.ack_delay_us, 250);
                assert_eq!(a.ranges().collect::<Vec<_>>(), vec![(8, 10), (2, 5)]);
            }
            _ => panic!("expected ACK"),
        }
        assert_eq!(
            fs[2],
            Frame::DataAck {
                data_ack: 1000,
                window: 65536
            }
        );
        assert_eq!(
            fs[3],
            Frame::Data {
                dsn: 500,
                fin: true,
                payload: b"hello"
            }
        );
        assert_eq!(fs[4], Frame::Ping);
        assert_eq!(fs[5], Frame::Close { code: 0 });
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let (d, ends) = roundtrip_with_boundaries();
        for cut in 0..d.len() {
            let r = parse_header(&d[..cut]).and_then(|(_, rest)| validate(rest));
            assert_eq!(
                r.is_ok(),
                ends.contains(&cut),
                "prefix of {cut} bytes: {r:?}"
            );
        }
    }

    #[test]
    fn bad_ranges_versions_and_types_are_rejected() {
        let mut buf = vec![0u8; 200];
        let mut w = Writer::new(
            &mut buf,
            Header {
                conn_id: 1,
                subflow: 0,
                pn: 0,
            },
        );
        assert!(w.push_ack(10, 0, [(8, 10), (9, 12)].into_iter()));
        let n = w.len();
        let (_, rest) = parse_header(&buf[..n]).unwrap();
        assert_eq!(validate(rest), Err(WireError::BadAckRanges));
        let mut d = roundtrip();
        d[1] = 9;
        assert_eq!(parse_header(&d).err(), Some(WireError::BadVersion(9)));
        let mut d = roundtrip();
        d[HEADER_BYTES] = 0x7f;
        assert_eq!(
            validate(&d[HEADER_BYTES..]),
            Err(WireError::UnknownFrame(0x7f))
        );
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x: u64 = 0x1234_5678;
        for _ in 0..20_000 {
            let mut d = vec![0u8; (x % 200) as usize];
            for b in d.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            if d.len() > 2 {
                d[0] = MAGIC;
                d[1] = VERSION;
            }
            if let Ok((_, rest)) = parse_header(&d) {
                let _ = validate(rest);
            }
        }
    }
}
