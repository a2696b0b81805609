//! RTT estimator (RFC 6298; ack-delay handling as RFC 9002 §5.3).
//!
//! SRTT ← 7/8·SRTT + 1/8·R, RTTVAR ← 3/4·RTTVAR + 1/4·|SRTT − R|; the first sample sets
//! SRTT = R, RTTVAR = R/2. RTO = max(SRTT + 4·RTTVAR, min RTO 200 ms as Linux), 1 s before the
//! first sample. min_rtt is the smallest raw sample (never adjusted for ack delay).

use std::time::Duration;

pub const INITIAL_RTT: Duration = Duration::from_millis(333);
pub const INITIAL_RTO: Duration = Duration::from_secs(1);
pub const MIN_RTO: Duration = Duration::from_millis(200);
pub const MAX_RTO: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    latest: Duration,
    srtt: Duration,
    rttvar: Duration,
    min: Duration,
    has_sample: bool,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator {
            latest: INITIAL_RTT,
            srtt: INITIAL_RTT,
            rttvar: INITIAL_RTT / 2,
            min: Duration::ZERO,
            has_sample: false,
        }
    }
}

impl RttEstimator {
    /// Adds a sample; `ack_delay` (reported by the peer) is subtracted when that does not
    /// take the sample below min_rtt.
    pub fn update(&mut self, sample: Duration, ack_delay: Duration) {
        self.latest = sample;
        if !self.has_sample {
            self.has_sample = true;
            self.min = sample;
            self.srtt = sample;
            self.rttvar = sample / 2;
            return;
        }
        self.min = self.min.min(sample);
        let adjusted = if sample >= self.min + ack_delay {
            sample - ack_delay
        } else {
            sample
        };
        let diff = self.srtt.abs_diff(adjusted);
        self.rttvar = (self.rttvar * 3 + diff) / 4;
        self.srtt = (self.srtt * 7 + adjusted) / 8;
    }
    pub fn srtt(&self) -> Duration {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    pub fn latest(&self) -> Duration {
        self.latest
    }
    /// Zero before the first sample.
    pub fn min_rtt(&self) -> Duration {
        self.min
    }
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
    /// RFC 6298 RTO (before backoff).
    pub fn rto(&self) -> Duration {
        if !self.has_sample {
            return INITIAL_RTO;
        }
        (self.srtt + self.rttvar * 4).max(MIN_RTO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_first_and_second_sample() {
        let mut r = RttEstimator::default();
        assert_eq!(r.rto(), INITIAL_RTO);
        r.update(Duration::from_millis(100), Duration::ZERO);
        assert_eq!(r.srtt(), Duration::from_millis(100));
        assert_eq!(r.rttvar(), Duration::from_millis(50));
        assert_eq!(r.rto(), Duration::from_millis(300));
        r.update(Duration::from_millis(200), Duration::ZERO);
        // rttvar = 3/4·50 + 1/4·100 = 62.5; srtt = 7/8·100 + 1/8·200 = 112.5
        assert_eq!(r.rttvar(), Duration::from_micros(62_500));
        assert_eq!(r.srtt(), Duration::from_micros(112_500));
        assert_eq!(r.min_rtt(), Duration::from_millis(100));
    }

    #[test]
    fn min_rto_and_ack_delay() {
        let mut r = RttEstimator::default();
        r.update(Duration::from_millis(10), Duration::ZERO);
        assert_eq!(r.rto(), MIN_RTO);
        r.update(Duration::from_millis(30), Duration::from_millis(20));
        // 30 − 20 = 10 ≥ min (10): adjusted sample 10 keeps srtt at 10
        assert_eq!(r.srtt(), Duration::from_millis(10));
    }
}
