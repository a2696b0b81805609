//! Trace-driven rate in Mahimahi's packet-delivery format.
//!
//! Each line of the trace is a timestamp in ms at which the link may deliver
//! one packet's worth of bytes (`packet_bytes`, 1500 here; Mahimahi uses
//! 1504). Several lines may share a timestamp. The trace repeats with a
//! period equal to its last timestamp, starting at the emulator's start.
//! As in Mahimahi's `LinkQueue`, an opportunity's bytes serve the head of the
//! queue; a packet larger than what is left carries over to the next
//! opportunity; bytes left over when the queue is empty are lost.

use super::RateModel;
use std::path::Path;

pub struct TraceRate {
    opportunity_ns: Vec<u64>,
    period_ns: u64,
    packet_bytes: u32,
    /// Global index (across loops) of the next unused opportunity.
    next_opportunity: u64,
    /// Bytes of the last used opportunity not yet spent, and its time.
    spare_bytes: u32,
    spare_at_ns: u64,
    source: String,
}

impl TraceRate {
    /// Reads and validates a trace: non-empty, whole ms, non-decreasing,
    /// last timestamp > 0.
    pub fn load(path: &Path, packet_bytes: u32) -> Result<TraceRate, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read trace file {}: {e}", path.display()))?;
        TraceRate::parse(&text, packet_bytes, &path.display().to_string())
    }

    pub fn parse(text: &str, packet_bytes: u32, source: &str) -> Result<TraceRate, String> {
        let mut opportunity_ms: Vec<u64> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let ms: u64 = line.parse().map_err(|_| {
                format!(
                    "trace {source} line {}: `{line}` is not a whole number of ms",
                    i + 1
                )
            })?;
            if let Some(&prev) = opportunity_ms.last() {
                if ms < prev {
                    return Err(format!(
                        "trace {source} line {}: {ms} ms comes after {prev} ms; \
                         timestamps must not decrease",
                        i + 1
                    ));
                }
            }
            opportunity_ms.push(ms);
        }
        let Some(&last_ms) = opportunity_ms.last() else {
            return Err(format!(
                "trace {source} is empty: a trace needs at least one delivery opportunity"
            ));
        };
        if last_ms == 0 {
            return Err(format!(
                "trace {source} lasts 0 ms; its last timestamp must be > 0"
            ));
        }
        Ok(TraceRate {
            opportunity_ns: opportunity_ms.iter().map(|ms| ms * 1_000_000).collect(),
            period_ns: last_ms * 1_000_000,
            packet_bytes,
            next_opportunity: 0,
            spare_bytes: 0,
            spare_at_ns: 0,
            source: source.to_string(),
        })
    }

    fn opportunity_time_ns(&self, index: u64) -> u64 {
        let n = self.opportunity_ns.len() as u64;
        (index / n) * self.period_ns + self.opportunity_ns[(index % n) as usize]
    }

    /// Global index of the first opportunity at or after `t_ns`.
    fn first_opportunity_at_or_after(&self, t_ns: u64) -> u64 {
        let n = self.opportunity_ns.len() as u64;
        let loop_index = t_ns / self.period_ns;
        let within_ns = t_ns - loop_index * self.period_ns;
        let i = self.opportunity_ns.partition_point(|&o| o < within_ns) as u64;
        loop_index * n + i
    }

    pub fn mean_rate_bps(&self) -> f64 {
        self.opportunity_ns.len() as f64 * f64::from(self.packet_bytes) * 8.0 * 1e9
            / self.period_ns as f64
    }
}

impl RateModel for TraceRate {
    fn finish_ns(&mut self, bytes: u32, ready_ns: u64) -> u64 {
        let mut remaining = bytes;
        // Bytes left in the opportunity that finished the previous packet
        // serve this one only if it was already waiting then.
        if self.spare_bytes > 0 && self.spare_at_ns >= ready_ns {
            let take = self.spare_bytes.min(remaining);
            self.spare_bytes -= take;
            remaining -= take;
            if remaining == 0 {
                return self.spare_at_ns;
            }
        }
        self.spare_bytes = 0;
        let mut index = self
            .first_opportunity_at_or_after(ready_ns)
            .max(self.next_opportunity);
        loop {
            let t_ns = self.opportunity_time_ns(index);
            index += 1;
            if self.packet_bytes >= remaining {
                self.spare_bytes = self.packet_bytes - remaining;
                self.spare_at_ns = t_ns;
                self.next_opportunity = index;
                return t_ns;
            }
            remaining -= self.packet_bytes;
        }
    }

    fn rate_bps(&self) -> Option<f64> {
        None
    }

    fn drain_rate_bps(&self) -> Option<f64> {
        Some(self.mean_rate_bps())
    }

    fn opportunities_in(&self, from_ns: u64, to_ns: u64, out: &mut Vec<u64>) {
        let mut index = self.first_opportunity_at_or_after(from_ns);
        loop {
            let t_ns = self.opportunity_time_ns(index);
            if t_ns >= to_ns {
                return;
            }
            out.push(t_ns);
            index += 1;
        }
    }

    fn opportunity_bytes(&self) -> Option<u32> {
        Some(self.packet_bytes)
    }

    fn describe(&self) -> String {
        format!(
            "trace [file={}, opportunities={}, period_ms={}, packet_bytes={}]",
            self.source,
            self.opportunity_ns.len(),
            self.period_ns / 1_000_000,
            self.packet_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn replays_opportunities_and_loops() {
        // Two opportunities at 1 ms, one at 3 ms; period 3 ms.
        let mut t = TraceRate::parse("1\n1\n3\n", 1500, "t").unwrap();
        assert_eq!(t.finish_ns(1500, 0), MS);
        assert_eq!(t.finish_ns(1500, MS), MS);
        assert_eq!(t.finish_ns(1500, MS), 3 * MS);
        // Next loop: 3+1 = 4 ms (twice), then 6 ms.
        assert_eq!(t.finish_ns(1500, 3 * MS), 4 * MS);
        assert_eq!(t.finish_ns(1500, 4 * MS), 4 * MS);
        assert_eq!(t.finish_ns(1500, 4 * MS), 6 * MS);
        // Idle until 10.5 ms: loop 3 starts at 9 ms; opportunities at 10, 10, 12.
        assert_eq!(t.finish_ns(1500, 10 * MS + MS / 2), 12 * MS);
        assert!((t.mean_rate_bps() - 3.0 * 1500.0 * 8.0 / 0.003).abs() < 1e-6);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_big_ones_span_two() {
        let mut t = TraceRate::parse("1\n2\n3\n4\n", 1500, "t").unwrap();
        // Three 500-byte packets waiting at 0 all leave at 1 ms.
        assert_eq!(t.finish_ns(500, 0), MS);
        assert_eq!(t.finish_ns(500, MS), MS);
        assert_eq!(t.finish_ns(500, MS), MS);
        // A 2000-byte packet needs the 2 ms and 3 ms opportunities.
        assert_eq!(t.finish_ns(2000, MS), 3 * MS);
        // 1000 bytes spare at 3 ms, but this packet only arrives at 3.5 ms:
        // the spare bytes are lost; it leaves at 4 ms.
        assert_eq!(t.finish_ns(100, 3 * MS + MS / 2), 4 * MS);
    }

    #[test]
    fn lists_opportunities_across_loops() {
        let t = TraceRate::parse("1\n1\n3\n", 1500, "t").unwrap();
        let mut out = Vec::new();
        t.opportunities_in(MS, 5 * MS, &mut out);
        assert_eq!(out, vec![MS, MS, 3 * MS, 4 * MS, 4 * MS]);
    }

    #[test]
    fn invalid_traces_are_rejected_with_the_line() {
        let e = TraceRate::parse("1\n3\n2\n", 1500, "x.down").err().unwrap();
        assert!(e.contains("x.down line 3"), "{e}");
        let e = TraceRate::parse("1\nabc\n", 1500, "x.down").err().unwrap();
        assert!(e.contains("line 2") && e.contains("abc"), "{e}");
        assert!(TraceRate::parse("", 1500, "x").is_err());
        assert!(TraceRate::parse("0\n0\n", 1500, "x").is_err());
    }
}
