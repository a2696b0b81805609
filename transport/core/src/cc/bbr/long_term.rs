//! BBR's long-term (policer) bandwidth detector (Linux `bbr_lt_bw_sampling`): from the first
//! loss, intervals of `LT_INTERVAL_MIN_ROUNDS` or more rounds that end at a loss and lost at
//! least `LT_LOSS_THRESHOLD` of what they delivered each give a delivery rate; two such rates
//! in a row that agree (within `LT_BW_RATIO` or `LT_BW_DIFF_BPS`) mean a policer, and the
//! model runs on their mean for `LT_BW_MAX_ROUNDS` rounds of PROBE_BW.

use super::*;

/// Long-term (policer) bandwidth sampling state (Linux `lt_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct LongTermBw {
    pub(super) is_sampling: bool,
    pub(super) use_bw: bool,
    /// Policed rate, bytes/s (0 = none yet).
    pub(super) bw_bytes_per_s: f64,
    pub(super) rounds: u32,
    pub(super) last_stamp: Instant,
    pub(super) last_delivered_bytes: u64,
    pub(super) last_lost_bytes: u64,
}

impl Bbr {
    pub(super) fn lt_reset_interval(&mut self) {
        self.lt.last_stamp = self.delivered_time;
        self.lt.last_delivered_bytes = self.delivered_bytes_total;
        self.lt.last_lost_bytes = self.lost_bytes_total;
        self.lt.rounds = 0;
    }

    pub(super) fn lt_reset(&mut self) {
        self.lt.bw_bytes_per_s = 0.0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.lt_reset_interval();
    }

    pub(super) fn lt_bw_sampling(&mut self, _now: Instant, lost_bytes: u64, app_limited: bool) {
        if !self.cfg.lt_bw {
            return;
        }
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rounds += 1;
                if self.lt.rounds >= LT_BW_MAX_ROUNDS {
                    self.lt_reset();
                    self.enter_probe_bw(self.delivered_time);
                }
            }
            return;
        }
        // Wait for the first loss: the policer's bucket is empty from then on.
        if !self.lt.is_sampling {
            if lost_bytes == 0 {
                return;
            }
            self.lt_reset_interval();
            self.lt.is_sampling = true;
        }
        if app_limited {
            self.lt_reset();
            return;
        }
        if self.round_start {
            self.lt.rounds += 1;
        }
        if self.lt.rounds < LT_INTERVAL_MIN_ROUNDS {
            return;
        }
        if self.lt.rounds > 4 * LT_INTERVAL_MIN_ROUNDS {
            self.lt_reset();
            return;
        }
        // End the interval at a loss: the bucket's tokens are exhausted then.
        if lost_bytes == 0 {
            return;
        }
        let lost = self
            .lost_bytes_total
            .saturating_sub(self.lt.last_lost_bytes);
        let delivered = self
            .delivered_bytes_total
            .saturating_sub(self.lt.last_delivered_bytes);
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESHOLD * delivered as f64 {
            return;
        }
        let interval = self.delivered_time - self.lt.last_stamp;
        if interval < Duration::from_millis(1) {
            return;
        }
        let bw = delivered as f64 / interval.as_secs_f64();
        self.lt_interval_done(bw);
    }

    pub(super) fn lt_interval_done(&mut self, bw_bytes_per_s: f64) {
        if self.lt.bw_bytes_per_s > 0.0 {
            let diff = (bw_bytes_per_s - self.lt.bw_bytes_per_s).abs();
            if diff <= LT_BW_RATIO * self.lt.bw_bytes_per_s || diff * 8.0 <= LT_BW_DIFF_BPS {
                // Two similar rates in a row: a policer. Use their mean.
                self.lt.bw_bytes_per_s = (bw_bytes_per_s + self.lt.bw_bytes_per_s) / 2.0;
                self.lt.use_bw = true;
                self.lt.rounds = 0;
                return;
            }
        }
        self.lt.bw_bytes_per_s = bw_bytes_per_s;
        self.lt_reset_interval();
    }
}
