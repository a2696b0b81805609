//! Windowed max/min filter (Kathleen Nichols' algorithm, as Linux `lib/win_minmax.c`).
//!
//! Tracks the best (max or min) value seen over a sliding window of "time", where time is
//! whatever the caller counts: BBR's BtlBw filter counts *round trips* (window 10 rounds),
//! so the filter is generic over a `u64` clock rather than `Instant`.
//!
//! It keeps three samples: the best, the second best and the third best seen *after* the
//! best, each with the time it was taken. When the best ages out of the window the second
//! takes its place, so the estimate is the true windowed extreme within a factor of the
//! sub-window spacing (window/4 and window/2 checkpoints), in O(1) memory and time.

/// Whether the filter keeps the largest or the smallest value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extreme {
    Max,
    /// Not used by BBR v1 (RTprop is a plain min with a stamp, as in Linux); kept for the
    /// coupled/model-based CCs of the next issue.
    #[cfg_attr(not(test), allow(dead_code))]
    Min,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    time: u64,
    value: f64,
}

/// Windowed extreme over the last `window` time units.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowedFilter {
    kind: Extreme,
    window: u64,
    samples: [Sample; 3],
    /// False until the first sample (a min filter must not report the initial 0).
    has_sample: bool,
}

impl WindowedFilter {
    pub fn new(kind: Extreme, window: u64) -> WindowedFilter {
        let zero = Sample {
            time: 0,
            value: 0.0,
        };
        WindowedFilter {
            kind,
            window,
            samples: [zero; 3],
            has_sample: false,
        }
    }

    /// Current windowed extreme (0 before any sample).
    pub fn get(&self) -> f64 {
        self.samples[0].value
    }

    /// Forgets everything and restarts from (`time`, `value`).
    pub fn reset(&mut self, time: u64, value: f64) {
        let s = Sample { time, value };
        self.samples = [s; 3];
        self.has_sample = true;
    }

    fn better_or_equal(&self, a: f64, b: f64) -> bool {
        match self.kind {
            Extreme::Max => a >= b,
            Extreme::Min => a <= b,
        }
    }

    /// Adds a sample taken at `time` (non-decreasing) and returns the new extreme.
    pub fn update(&mut self, time: u64, value: f64) -> f64 {
        let new = Sample { time, value };
        // A new best, or nothing left in the window: restart from this sample.
        if !self.has_sample
            || self.better_or_equal(value, self.samples[0].value)
            || time.saturating_sub(self.samples[2].time) > self.window
        {
            self.reset(time, value);
            return self.get();
        }
        if self.better_or_equal(value, self.samples[1].value) {
            self.samples[1] = new;
            self.samples[2] = new;
        } else if self.better_or_equal(value, self.samples[2].value) {
            self.samples[2] = new;
        }
        self.subwin_update(new)
    }

    /// Ages the three samples (win_minmax.c `minmax_subwin_update`).
    fn subwin_update(&mut self, new: Sample) -> f64 {
        let dt = new.time.saturating_sub(self.samples[0].time);
        if dt > self.window {
            // The best is out of the window: promote the second and third, and take the new
            // sample as the third.
            self.samples[0] = self.samples[1];
            self.samples[1] = self.samples[2];
            self.samples[2] = new;
            if new.time.saturating_sub(self.samples[0].time) > self.window {
                self.samples[0] = self.samples[1];
                self.samples[1] = self.samples[2];
                self.samples[2] = new;
            }
        } else if self.samples[1].time == self.samples[0].time && dt > self.window / 4 {
            // A quarter of the window passed without a second choice: take one now.
            self.samples[1] = new;
            self.samples[2] = new;
        } else if self.samples[2].time == self.samples[1].time && dt > self.window / 2 {
            // Half the window passed without a third choice: take one now.
            self.samples[2] = new;
        }
        self.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_filter_holds_the_peak_for_the_window_then_forgets_it() {
        let mut f = WindowedFilter::new(Extreme::Max, 10);
        assert_eq!(f.update(0, 5.0), 5.0);
        assert_eq!(f.update(1, 9.0), 9.0);
        for t in 2..=11 {
            assert_eq!(
                f.update(t, 4.0),
                9.0,
                "peak from round 1 kept through round {t}"
            );
        }
        // round 12: the peak from round 1 is older than 10 rounds
        assert!(f.update(12, 4.0) < 9.0);
        assert_eq!(f.update(30, 4.0), 4.0);
    }

    #[test]
    fn min_filter_tracks_the_smallest() {
        let mut f = WindowedFilter::new(Extreme::Min, 10);
        f.update(0, 50.0);
        assert_eq!(f.update(1, 40.0), 40.0);
        assert_eq!(f.update(2, 60.0), 40.0);
        assert_eq!(f.update(20, 60.0), 60.0);
    }

    #[test]
    fn max_filter_is_monotone_within_the_window() {
        // Property: for any sequence, the estimate is never below the max of the samples
        // taken within the last window/4 units, and never above the max of all samples.
        let mut f = WindowedFilter::new(Extreme::Max, 10);
        let mut x: u64 = 12345;
        let mut history: Vec<(u64, f64)> = Vec::new();
        for t in 0..500u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x % 1000) as f64;
            history.push((t, v));
            let est = f.update(t, v);
            let all_max = history.iter().map(|s| s.1).fold(0.0, f64::max);
            let recent_max = history
                .iter()
                .filter(|s| t - s.0 <= 2)
                .map(|s| s.1)
                .fold(0.0, f64::max);
            assert!(est >= recent_max && est <= all_max, "t={t} est={est}");
        }
    }
}
