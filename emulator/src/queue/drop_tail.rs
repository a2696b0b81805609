//! Drop-tail: a FIFO that refuses arrivals once the limit is reached.

use super::{fits, Occupancy, Packet, PacketQueue, QueueFull, QueueLimit};
use std::collections::VecDeque;

pub struct DropTail {
    limit: QueueLimit,
    packets: VecDeque<Packet>,
    bytes: u64,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail {
            limit,
            packets: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl PacketQueue for DropTail {
    fn enqueue(&mut self, pkt: Packet, drain_rate_bps: Option<f64>) -> Result<(), QueueFull> {
        let occupancy = Occupancy {
            packets: self.packets(),
            bytes: self.bytes,
            drain_rate_bps,
        };
        if !fits(&self.limit, occupancy, pkt.bytes) {
            return Err(QueueFull);
        }
        self.bytes += u64::from(pkt.bytes);
        self.packets.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self) -> Option<Packet> {
        let pkt = self.packets.pop_front()?;
        self.bytes -= u64::from(pkt.bytes);
        Some(pkt)
    }

    fn front(&self) -> Option<&Packet> {
        self.packets.front()
    }

    fn packets(&self) -> u64 {
        self.packets.len() as u64
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn describe(&self) -> String {
        format!("droptail [{}]", self.limit.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(token: u64, bytes: u32) -> Packet {
        Packet {
            token,
            bytes,
            arrival_ns: 0,
        }
    }

    #[test]
    fn packet_limit_refuses_the_packet_after_the_limit() {
        let mut q = DropTail::new(QueueLimit::Packets(3));
        for i in 0..3 {
            assert_eq!(q.enqueue(pkt(i, 1500), None), Ok(()));
        }
        assert_eq!(q.enqueue(pkt(3, 40), None), Err(QueueFull));
        assert_eq!(q.packets(), 3);
        assert_eq!(q.dequeue().unwrap().token, 0);
        assert_eq!(q.enqueue(pkt(4, 40), None), Ok(()));
        assert_eq!(q.bytes(), 1500 * 2 + 40);
    }

    #[test]
    fn byte_limit_counts_bytes_not_packets() {
        let mut q = DropTail::new(QueueLimit::Bytes(3000));
        assert_eq!(q.enqueue(pkt(0, 1500), None), Ok(()));
        assert_eq!(q.enqueue(pkt(1, 1400), None), Ok(()));
        assert_eq!(q.enqueue(pkt(2, 101), None), Err(QueueFull));
        assert_eq!(q.enqueue(pkt(3, 100), None), Ok(()));
        assert_eq!(q.bytes(), 3000);
    }

    #[test]
    fn ms_limit_uses_the_drain_rate() {
        // 10 ms at 12 Mbit/s = 15000 bytes = 10 full packets.
        let mut q = DropTail::new(QueueLimit::Ms(10.0));
        for i in 0..10 {
            assert_eq!(q.enqueue(pkt(i, 1500), Some(12e6)), Ok(()));
        }
        assert_eq!(q.enqueue(pkt(10, 1500), Some(12e6)), Err(QueueFull));
        // Twice the rate drains twice as fast: room for ten more.
        assert_eq!(q.enqueue(pkt(10, 1500), Some(24e6)), Ok(()));
        // No rate limit: the queue never refuses.
        assert_eq!(q.enqueue(pkt(11, 1500), None), Ok(()));
    }

    #[test]
    fn describe_echoes_the_limit() {
        assert_eq!(
            DropTail::new(QueueLimit::Packets(100)).describe(),
            "droptail [packets=100]"
        );
        assert_eq!(
            DropTail::new(QueueLimit::Ms(50.0)).describe(),
            "droptail [ms=50]"
        );
    }

    #[test]
    fn zero_limits_are_rejected_not_unlimited() {
        use crate::spec::QueueSpec;
        assert!(QueueLimit::from_spec(&QueueSpec::Packets { limit: 0 }).is_err());
        assert!(QueueLimit::from_spec(&QueueSpec::Bytes { limit: 100 }).is_err());
        assert!(QueueLimit::from_spec(&QueueSpec::Ms { limit: 0.0 }).is_err());
        assert!(QueueLimit::from_spec(&QueueSpec::Ms { limit: f64::NAN }).is_err());
        assert_eq!(
            QueueLimit::from_spec(&QueueSpec::Packets { limit: 5 }),
            Ok(QueueLimit::Packets(5))
        );
    }
}
