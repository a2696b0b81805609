//! Constant (schedulable) rate: a packet of B bytes takes ceil(8·B/rate) s.

use super::RateModel;

pub struct ConstantRate {
    rate_bps: f64,
}

impl ConstantRate {
    pub fn new(rate_bps: f64) -> ConstantRate {
        ConstantRate { rate_bps }
    }
}

/// Serialisation time of `bytes` at `rate_bps`, rounded up to whole ns.
pub fn serialisation_ns(bytes: u32, rate_bps: f64) -> u64 {
    (f64::from(bytes) * 8.0 * 1e9 / rate_bps).ceil() as u64
}

impl RateModel for ConstantRate {
    fn finish_ns(&mut self, bytes: u32, ready_ns: u64) -> u64 {
        ready_ns + serialisation_ns(bytes, self.rate_bps)
    }

    fn rate_bps(&self) -> Option<f64> {
        Some(self.rate_bps)
    }

    fn drain_rate_bps(&self) -> Option<f64> {
        Some(self.rate_bps)
    }

    fn set_rate_bps(&mut self, rate_bps: f64) {
        self.rate_bps = rate_bps;
    }

    fn describe(&self) -> String {
        format!("constant [bps={}]", self.rate_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_packet_at_100_mbit_takes_120_us() {
        let mut r = ConstantRate::new(100e6);
        assert_eq!(r.finish_ns(1500, 1_000), 1_000 + 120_000);
        assert_eq!(serialisation_ns(1, 3e6), 2667); // 2666.67 rounds up
    }
}
