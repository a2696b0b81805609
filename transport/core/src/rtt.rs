//! RTT estimator and retransmission timeout, in two forms selected by [`RtoForm`].
//!
//! * [`RtoForm::Linux`] (default), as `tcp_rtt_estimator` and `__tcp_set_rto` in
//!   `net/ipv4/tcp_input.c`/`include/net/tcp.h`: SRTT ← SRTT + (R − SRTT)/8 on the raw
//!   sample; `mdev` (four times the mean deviation) ← 3/4·mdev + |R − SRTT|, with an eighth
//!   of that weight when the RTT decreases; `rttvar_kernel` is the largest `mdev` of the last
//!   round of packets, at least the 200 ms minimum RTO, decayed by a quarter of its excess once
//!   per round. RTO = SRTT + rttvar_kernel, i.e. SRTT + max(4·RTTVAR, 200 ms). The first
//!   sample sets SRTT = R, mdev = 2R, rttvar_kernel = max(2R, 200 ms).
//! * [`RtoForm::Rfc6298`]: SRTT ← 7/8·SRTT + 1/8·R, RTTVAR ← 3/4·RTTVAR + 1/4·|SRTT − R| on
//!   the sample less the peer's ACK delay (RFC 9002 §5.3); RTO = max(SRTT + 4·RTTVAR, 200 ms).
//!
//! Both forms keep the RFC 6298 RTTVAR (reported as `rttvar`) and the Linux `rttvar_kernel`
//! (reported to schedulers); only SRTT's input and the RTO differ. 1 s before the first sample
//! (Linux `TCP_TIMEOUT_INIT`). min_rtt is the smallest raw sample.

use std::time::Duration;

pub const INITIAL_RTT: Duration = Duration::from_millis(333);
pub const INITIAL_RTO: Duration = Duration::from_secs(1);
/// Linux `TCP_RTO_MIN`.
pub const MIN_RTO: Duration = Duration::from_millis(200);
/// Linux `TCP_RTO_MAX`.
pub const MAX_RTO: Duration = Duration::from_secs(120);

/// Which RTO rule a subflow uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoForm {
    /// SRTT + max(4·RTTVAR, 200 ms) as Linux computes it.
    #[default]
    Linux,
    /// max(SRTT + 4·RTTVAR, 200 ms) (RFC 6298 with Linux's minimum).
    Rfc6298,
}

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    form: RtoForm,
    latest: Duration,
    srtt: Duration,
    rttvar: Duration,
    min: Duration,
    has_sample: bool,
    /// Linux `mdev_us`: four times the smoothed mean deviation.
    mdev: Duration,
    /// Linux `mdev_max_us`: largest `mdev` in the current round, at least [`MIN_RTO`].
    mdev_max: Duration,
    /// Linux `rttvar_us`.
    rttvar_kernel: Duration,
    /// Linux `rtt_seq`: the round ends when a packet numbered above it is acknowledged.
    round_end_pn: u64,
}

impl RttEstimator {
    pub fn new(form: RtoForm) -> Self {
        RttEstimator {
            form,
            latest: INITIAL_RTT,
            srtt: INITIAL_RTT,
            rttvar: INITIAL_RTT / 2,
            min: Duration::ZERO,
            has_sample: false,
            mdev: Duration::ZERO,
            mdev_max: MIN_RTO,
            rttvar_kernel: INITIAL_RTT / 2,
            round_end_pn: 0,
        }
    }

    /// Adds a sample taken on an ACK whose largest acknowledged packet number is
    /// `largest_acked_pn`; `next_pn` is the next packet number to be sent (Linux `snd_nxt`).
    /// `ack_delay` (reported by the peer) is subtracted in the RFC form when that does not
    /// take the sample below min_rtt.
    pub fn update(
        &mut self,
        sample: Duration,
        ack_delay: Duration,
        largest_acked_pn: u64,
        next_pn: u64,
    ) {
        self.latest = sample;
        if !self.has_sample {
            self.has_sample = true;
            self.min = sample;
            self.srtt = sample;
            self.rttvar = sample / 2;
            self.mdev = sample * 2;
            self.rttvar_kernel = self.mdev.max(MIN_RTO);
            self.mdev_max = self.rttvar_kernel;
            self.round_end_pn = next_pn;
            return;
        }
        self.min = self.min.min(sample);
        let adjusted = match self.form {
            RtoForm::Rfc6298 if sample >= self.min + ack_delay => sample - ack_delay,
            _ => sample,
        };
        let diff = self.srtt.abs_diff(adjusted);
        self.rttvar = (self.rttvar * 3 + diff) / 4;
        self.update_kernel_variation(adjusted, largest_acked_pn, next_pn);
        self.srtt = (self.srtt * 7 + adjusted) / 8;
    }

    /// `tcp_rtt_estimator`'s mdev/rttvar update (before SRTT moves).
    fn update_kernel_variation(&mut self, sample: Duration, largest_acked_pn: u64, next_pn: u64) {
        let error = sample.as_nanos() as i128 - self.srtt.as_nanos() as i128;
        let quarter_mdev = (self.mdev.as_nanos() / 4) as i128;
        let mut step = error.abs() - quarter_mdev;
        if error < 0 && step > 0 {
            // RTT decreasing: an eighth of the gain (Eifel-like, see tcp_input.c).
            step >>= 3;
        }
        let mdev = (self.mdev.as_nanos() as i128 + step).max(0);
        self.mdev = Duration::from_nanos(mdev as u64);
        if self.mdev > self.mdev_max {
            self.mdev_max = self.mdev;
            self.rttvar_kernel = self.rttvar_kernel.max(self.mdev_max);
        }
        if largest_acked_pn > self.round_end_pn {
            if self.mdev_max < self.rttvar_kernel {
                self.rttvar_kernel -= (self.rttvar_kernel - self.mdev_max) / 4;
            }
            self.round_end_pn = next_pn;
            self.mdev_max = MIN_RTO;
        }
    }

    pub fn srtt(&self) -> Duration {
        self.srtt
    }
    /// RFC 6298 RTTVAR (smoothed mean deviation).
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// Linux `rttvar_us` (see the module comment); RTTVAR/2 before the first sample.
    pub fn rttvar_kernel(&self) -> Duration {
        self.rttvar_kernel
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
    /// RTO before backoff.
    pub fn rto(&self) -> Duration {
        if !self.has_sample {
            return INITIAL_RTO;
        }
        match self.form {
            RtoForm::Linux => self.srtt + self.rttvar_kernel,
            RtoForm::Rfc6298 => (self.srtt + self.rttvar * 4).max(MIN_RTO),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn rfc6298_first_and_second_sample() {
        let mut r = RttEstimator::new(RtoForm::Rfc6298);
        assert_eq!(r.rto(), INITIAL_RTO);
        r.update(ms(100), Duration::ZERO, 0, 1);
        assert_eq!(r.srtt(), ms(100));
        assert_eq!(r.rttvar(), ms(50));
        assert_eq!(r.rto(), ms(300));
        r.update(ms(200), Duration::ZERO, 1, 2);
        // rttvar = 3/4·50 + 1/4·100 = 62.5; srtt = 7/8·100 + 1/8·200 = 112.5
        assert_eq!(r.rttvar(), Duration::from_micros(62_500));
        assert_eq!(r.srtt(), Duration::from_micros(112_500));
        assert_eq!(r.min_rtt(), ms(100));
        // 112.5 + 4·62.5 = 362.5
        assert_eq!(r.rto(), Duration::from_micros(362_500));
    }

    #[test]
    fn rfc_form_subtracts_ack_delay_and_floors_at_min_rto() {
        let mut r = RttEstimator::new(RtoForm::Rfc6298);
        r.update(ms(10), Duration::ZERO, 0, 1);
        assert_eq!(r.rto(), MIN_RTO);
        r.update(ms(30), ms(20), 1, 2);
        // 30 − 20 = 10 ≥ min (10): adjusted sample 10 keeps srtt at 10
        assert_eq!(r.srtt(), ms(10));
    }

    #[test]
    fn linux_first_sample_gives_srtt_plus_max_of_2r_and_200ms() {
        // First sample 40 ms: mdev = 80 ms, rttvar_us = max(80, 200) = 200 ms,
        // RTO = 40 + 200 = 240 ms (RFC form: max(40 + 4·20, 200) = 200 ms).
        let mut r = RttEstimator::new(RtoForm::Linux);
        r.update(ms(40), Duration::ZERO, 0, 10);
        assert_eq!(r.rttvar_kernel(), ms(200));
        assert_eq!(r.rto(), ms(240));
        // First sample 150 ms: mdev = 300 ms > 200 ms: RTO = 150 + 300 = 450 ms.
        let mut r = RttEstimator::new(RtoForm::Linux);
        r.update(ms(150), Duration::ZERO, 0, 10);
        assert_eq!(r.rto(), ms(450));
    }

    #[test]
    fn linux_mdev_update_and_round_decay() {
        let mut r = RttEstimator::new(RtoForm::Linux);
        r.update(ms(100), Duration::ZERO, 0, 10);
        // mdev = 200, rttvar_us = mdev_max = 200, round ends after pn 10.
        // Sample 180 (rising): error = 80, step = 80 − 200/4 = 30 → mdev = 230 > mdev_max:
        // mdev_max = rttvar_us = 230. srtt = 100 + 80/8 = 110. Same round (pn 5 ≤ 10).
        r.update(ms(180), Duration::ZERO, 5, 12);
        assert_eq!(r.srtt(), ms(110));
        assert_eq!(r.rttvar_kernel(), ms(230));
        assert_eq!(r.rto(), ms(340));
        // Sample 70 (falling): error = −40, step = 40 − 230/4 = −17.5 (negative: full
        // weight) → mdev = 212.5 < mdev_max 230. pn 11 > 10 ends the round: rttvar_us
        // stays 230 (mdev_max is not below it), mdev_max resets to 200 ms.
        r.update(ms(70), Duration::ZERO, 11, 20);
        assert_eq!(r.rttvar_kernel(), ms(230));
        // Sample 105 (srtt = 110 − 5 = 105 now): error = 0 → step = −53.125 →
        // mdev = 159.375; next round (pn 21 > 20): mdev_max (200) < 230 →
        // rttvar_us = 230 − (230 − 200)/4 = 222.5.
        assert_eq!(r.srtt(), ms(105));
        r.update(ms(105), Duration::ZERO, 21, 30);
        assert_eq!(r.rttvar_kernel(), Duration::from_micros(222_500));
        assert_eq!(r.rto(), Duration::from_micros(105_000 + 222_500));
    }

    #[test]
    fn linux_decreasing_rtt_uses_an_eighth_of_the_gain() {
        let mut r = RttEstimator::new(RtoForm::Linux);
        r.update(ms(100), Duration::ZERO, 0, 10);
        // mdev = 200. Sample 0.1 ms lower by 99.9: step = 99.9 − 50 = 49.9 > 0 → /8 = 6.2375
        r.update(Duration::from_micros(100), Duration::ZERO, 1, 11);
        assert_eq!(r.rttvar_kernel(), Duration::from_nanos(206_237_500));
    }
}
