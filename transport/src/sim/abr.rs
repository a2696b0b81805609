//! The simulated player's ABR: dash.js 5.2.1's default rules (the version `player/`
//! ships, `dash.all.debug.js`), as far as they decide bitrates in the testbed's VOD trials.
//! Each item names the dash.js source it follows (docs/SIMULATOR.md, "Player model"):
//!
//! * `ThroughputModel`: one sample per media segment, its bytes over the time from the
//!   response's first byte to its last (Resource Timing `responseEnd - responseStart`;
//!   `useDeadTimeLatency` leaves the request's latency out). Two exponentially weighted
//!   averages weighted by download time (`weight = 0.0015 * downloadTimeInMs`, half-lives 3 and
//!   8), both starting at 0 and divided by `1 - 0.5^(totalWeight / halfLife)`; the estimate is
//!   the lower of the two (`ThroughputController.getEwma`).
//! * `ThroughputRule`: the highest bitrate <= 0.9 x the estimate (`bandwidthSafetyFactor`).
//! * the "dynamic" strategy (`AbrController._updateDynamicAbrStrategy`): BOLA replaces the
//!   throughput rule once the buffer reaches `hybridSwitchBufferTime` (12 s) and hands back
//!   below half of it.
//! * `BolaRule`: utilities `ln(bitrate) - ln(lowest) + 1`, `bufferTime = max(bufferTimeDefault
//!   18 s, 10 s + 2 s x representations)`, `gp`, `Vp` from them. State STARTUP (its first
//!   decisions): by throughput, with the placeholder buffer set so that BOLA would pick the
//!   same; STEADY from the next decision with a segment's worth of buffer: the BOLA score at
//!   buffer + placeholder, an up-switch above both the current bitrate and the throughput
//!   rule's choice cut back to the higher of the two, and a request delay when the effective
//!   buffer exceeds the chosen bitrate's maximum (below the top bitrate). The placeholder
//!   grows by the time between a download's end and the next decision
//!   (`_updatePlaceholderBuffer`), decays by 0.99 per segment and is capped by the last
//!   segment's maximum (`_checkNewSegment`), and is cleared when the buffer runs empty.
//! * `InsufficientBufferRule`: after the first 2 appended segments (`segmentIgnoreCount`), the
//!   lowest bitrate while the buffer is empty, else at most `0.7 x estimate x buffer /
//!   segment duration` (`throughputSafetyFactor`).
//! * `SwitchHistoryRule` over the last 8 decisions (`SwitchRequestHistory`, each decision a
//!   "drop" when it chose a lower bitrate than the current one): from the lowest bitrate up,
//!   once the decisions counted so far are >= 8 and drops / no-drops > 0.075, one below the
//!   bitrate that was dropped from (that bitrate itself if it had no drop).
//! * The rules' choices combine by their minimum (`ABRRulesCollection.getMinSwitchRequest`).
//!
//! Not modelled: `AbandonRequestsRule` (no segment is abandoned), `DroppedFramesRule` (off
//! by default).

use std::time::Duration;

/// dash.js `abr.throughput.bandwidthSafetyFactor`.
pub const SAFETY_FACTOR: f64 = 0.9;
/// dash.js `abr.hybridSwitchBufferTime` (s): BOLA on at this buffer, off below half of it.
pub const HYBRID_SWITCH_BUFFER_S: f64 = 12.0;
/// dash.js `buffer.bufferTimeDefault` (s): the buffer target below the top bitrate, and
/// BOLA's buffer time.
pub const BUFFER_TIME_DEFAULT_S: f64 = 18.0;
/// dash.js BolaRule `MINIMUM_BUFFER_S` and `MINIMUM_BUFFER_PER_BITRATE_LEVEL_S`.
const BOLA_MINIMUM_BUFFER_S: f64 = 10.0;
const BOLA_MINIMUM_BUFFER_PER_LEVEL_S: f64 = 2.0;
/// dash.js BolaRule `PLACEHOLDER_BUFFER_DECAY`.
const BOLA_PLACEHOLDER_DECAY: f64 = 0.99;
/// dash.js `abr.throughput.ewma`: half-lives (in weight units) and the weight per ms.
const EWMA_FAST_HALF_LIFE: f64 = 3.0;
const EWMA_SLOW_HALF_LIFE: f64 = 8.0;
const EWMA_WEIGHT_PER_MS: f64 = 0.0015;
/// dash.js `insufficientBufferRule.parameters`.
const INSUFFICIENT_BUFFER_SAFETY_FACTOR: f64 = 0.7;
const INSUFFICIENT_BUFFER_IGNORE_SEGMENTS: u32 = 2;
/// dash.js `switchHistoryRule.parameters`.
const SWITCH_HISTORY_SAMPLES: usize = 8;
const SWITCH_HISTORY_THRESHOLD: f64 = 0.075;
/// dash.js `buffer.stallThreshold` (s): below this the buffer counts as empty.
pub const STALL_THRESHOLD_S: f64 = 0.3;

/// dash.js `ThroughputModel` with `averageCalculationMode: EWMA`.
#[derive(Clone, Debug, Default)]
pub struct ThroughputModel {
    fast: f64,
    slow: f64,
    total_weight: f64,
}

impl ThroughputModel {
    /// One media segment: `bytes` of response received between its first and last byte.
    /// A download that took no time gives no sample (dash.js drops non-finite values).
    pub fn add(&mut self, bytes: u64, first_to_last_byte: Duration) {
        let ms = first_to_last_byte.as_secs_f64() * 1e3;
        if ms <= 0.0 {
            return;
        }
        let bps = bytes as f64 * 8.0 / (ms / 1e3);
        let weight = EWMA_WEIGHT_PER_MS * ms;
        let fast_alpha = 0.5f64.powf(weight / EWMA_FAST_HALF_LIFE);
        let slow_alpha = 0.5f64.powf(weight / EWMA_SLOW_HALF_LIFE);
        self.fast = (1.0 - fast_alpha) * bps + fast_alpha * self.fast;
        self.slow = (1.0 - slow_alpha) * bps + slow_alpha * self.slow;
        self.total_weight += weight;
    }

    /// The average throughput (bit/s), None before the first sample.
    pub fn average_bps(&self) -> Option<f64> {
        if self.total_weight <= 0.0 {
            return None;
        }
        let fast = self.fast / (1.0 - 0.5f64.powf(self.total_weight / EWMA_FAST_HALF_LIFE));
        let slow = self.slow / (1.0 - 0.5f64.powf(self.total_weight / EWMA_SLOW_HALF_LIFE));
        Some(fast.min(slow))
    }
}

/// dash.js `AbrController.getOptimalRepresentationForBitrate`: the highest bitrate <=
/// `bps`, the lowest if none is. `bitrates` sorted lowest first.
pub fn highest_at_most(bitrates: &[f64], bps: f64) -> usize {
    bitrates.iter().rposition(|&b| b <= bps).unwrap_or(0)
}

/// What the player knows when it asks for the next segment's bitrate.
#[derive(Clone, Copy, Debug)]
pub struct AbrInput {
    /// Media buffered ahead of the playhead (s).
    pub buffer_s: f64,
    /// The bitrate (index, lowest first) of the last media segment requested.
    pub current: usize,
    /// Media segments appended so far.
    pub appended: u32,
}

/// What the ABR decided for the next media segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbrChoice {
    /// None: no rule asks for a change (dash.js keeps the current bitrate).
    pub rep: Option<usize>,
    /// BOLA's request delay (s; `ScheduleController.setTimeToLoadDelay`).
    pub delay_s: f64,
}

/// dash.js BolaRule's parameters for one ladder (`_getInitialBolaState`).
#[derive(Clone, Debug)]
pub struct BolaParams {
    bitrates: Vec<f64>,
    utilities: Vec<f64>,
    vp: f64,
    gp: f64,
}

impl BolaParams {
    pub fn new(bitrates: &[f64]) -> BolaParams {
        let b0 = bitrates[0];
        let utilities: Vec<f64> = bitrates.iter().map(|b| (b / b0).ln() + 1.0).collect();
        let u_max = utilities.last().copied().unwrap_or(1.0);
        let buffer_time = BUFFER_TIME_DEFAULT_S
            .max(BOLA_MINIMUM_BUFFER_S + BOLA_MINIMUM_BUFFER_PER_LEVEL_S * bitrates.len() as f64);
        let gp = (u_max - 1.0) / (buffer_time / BOLA_MINIMUM_BUFFER_S - 1.0);
        BolaParams {
            bitrates: bitrates.to_vec(),
            utilities,
            vp: BOLA_MINIMUM_BUFFER_S / gp,
            gp,
        }
    }

    /// `_getRepresentationFromBufferLevel`: the best BOLA score at this (effective) buffer.
    pub fn choice(&self, buffer_s: f64) -> usize {
        let mut best = 0;
        let mut best_score = f64::NEG_INFINITY;
        for (i, b) in self.bitrates.iter().enumerate() {
            let score = (self.vp * (self.utilities[i] - 1.0 + self.gp) - buffer_s) / b;
            if score >= best_score {
                best_score = score;
                best = i;
            }
        }
        best
    }

    /// `_maxBufferLevelForRepresentation`.
    fn max_buffer(&self, i: usize) -> f64 {
        self.vp * (self.utilities[i] + self.gp)
    }

    /// `_minBufferLevelForRepresentation`.
    fn min_buffer(&self, i: usize) -> f64 {
        let (q_bitrate, q_utility) = (self.bitrates[i], self.utilities[i]);
        (0..i)
            .filter(|&j| self.utilities[j] < q_utility)
            .map(|j| {
                let (b, u) = (self.bitrates[j], self.utilities[j]);
                self.vp * (self.gp + (q_bitrate * u - b * q_utility) / (q_bitrate - b))
            })
            .fold(0.0, f64::max)
    }
}

/// dash.js BolaRule's per-stream state (exists from BOLA's first decision on; its event
/// handlers keep it up to date while the throughput rule is in charge).
#[derive(Clone, Debug)]
struct BolaState {
    params: BolaParams,
    steady: bool,
    placeholder_s: f64,
    current: usize,
    last_call_s: Option<f64>,
    last_segment_start_s: Option<f64>,
    last_segment_request_s: Option<f64>,
    last_segment_finish_s: Option<f64>,
    last_segment_duration_s: Option<f64>,
    most_advanced_segment_start_s: Option<f64>,
    last_segment_was_replacement: bool,
}

impl BolaState {
    fn new(bitrates: &[f64], current: usize) -> BolaState {
        BolaState {
            params: BolaParams::new(bitrates),
            steady: false,
            placeholder_s: 0.0,
            current,
            last_call_s: None,
            last_segment_start_s: None,
            last_segment_request_s: None,
            last_segment_finish_s: None,
            last_segment_duration_s: None,
            most_advanced_segment_start_s: None,
            last_segment_was_replacement: false,
        }
    }

    /// `_checkNewSegment`, with the buffer level when the download ended (before append).
    fn check_new_segment(&mut self, buffer_s: f64) {
        let (Some(request), Some(finish)) =
            (self.last_segment_request_s, self.last_segment_finish_s)
        else {
            return;
        };
        if self.last_segment_start_s.is_none() {
            return;
        }
        self.placeholder_s *= BOLA_PLACEHOLDER_DECAY;
        let buffer_at_request = buffer_s + (finish - request);
        let max_placeholder = (self.params.max_buffer(self.current) - buffer_at_request).max(0.0);
        self.placeholder_s = self.placeholder_s.min(max_placeholder);
        if self.last_segment_was_replacement
            && let Some(d) = self.last_segment_duration_s
        {
            self.placeholder_s += d;
        }
        self.last_segment_start_s = None;
        self.last_segment_request_s = None;
    }

    fn startup(&mut self, buffer_s: f64, by_throughput: Option<usize>) -> AbrChoice {
        let Some(rep) = by_throughput else {
            return AbrChoice {
                rep: None,
                delay_s: 0.0,
            };
        };
        self.placeholder_s = (self.params.min_buffer(rep) - buffer_s).max(0.0);
        self.current = rep;
        if self.last_segment_duration_s.is_some_and(|d| buffer_s >= d) {
            self.steady = true;
        }
        AbrChoice {
            rep: Some(rep),
            delay_s: 0.0,
        }
    }

    fn steady(&mut self, now_s: f64, buffer_s: f64, by_throughput: Option<usize>) -> AbrChoice {
        // _updatePlaceholderBuffer: time not spent downloading does not lower the choice.
        if let Some(finish) = self.last_segment_finish_s {
            self.placeholder_s += (now_s - finish).max(0.0);
        } else if let Some(call) = self.last_call_s {
            self.placeholder_s += (now_s - call).max(0.0);
        }
        self.last_call_s = Some(now_s);
        self.last_segment_start_s = None;
        self.last_segment_request_s = None;
        self.last_segment_finish_s = None;
        let mut rep = self.params.choice(buffer_s + self.placeholder_s);
        if let Some(t) = by_throughput
            && rep > self.current
            && rep > t
        {
            rep = if t > self.current { t } else { self.current };
        }
        let top = self.params.bitrates.len() - 1;
        let mut delay_s = (buffer_s + self.placeholder_s - self.params.max_buffer(rep)).max(0.0);
        if delay_s <= self.placeholder_s {
            self.placeholder_s -= delay_s;
            delay_s = 0.0;
        } else {
            delay_s -= self.placeholder_s;
            self.placeholder_s = 0.0;
            if rep == top {
                delay_s = 0.0;
            }
        }
        self.current = rep;
        AbrChoice {
            rep: Some(rep),
            delay_s,
        }
    }
}

/// One finished media segment, as dash.js's events report it.
#[derive(Clone, Copy, Debug)]
pub struct SegmentDone {
    /// Media start time (s) and duration (s) of the segment.
    pub start_s: f64,
    pub duration_s: f64,
    pub rep: usize,
    /// Request sent and last byte received (s, any clock).
    pub request_s: f64,
    pub finish_s: f64,
    /// Bytes of the response between its first and last byte, and that time.
    pub bytes: u64,
    pub first_to_last_byte: Duration,
    /// Media buffered ahead of the playhead when it ended, before it is appended (s).
    pub buffer_s: f64,
}

#[derive(Clone, Debug, Default)]
pub struct DashAbr {
    pub throughput: ThroughputModel,
    bola_active: bool,
    bola: Option<BolaState>,
    /// The last decisions: (bitrate index current then, whether the choice was lower).
    history: std::collections::VecDeque<(usize, bool)>,
}

impl DashAbr {
    pub fn bola_active(&self) -> bool {
        self.bola_active
    }

    /// BOLA's placeholder buffer (s), None before BOLA's first decision.
    pub fn bola_placeholder_s(&self) -> Option<f64> {
        self.bola.as_ref().map(|b| b.placeholder_s)
    }

    /// A media segment finished: a throughput sample, and BOLA's bookkeeping
    /// (`_onMediaFragmentLoaded`, `_onMetricAdded`).
    pub fn segment_done(&mut self, done: SegmentDone) {
        self.throughput.add(done.bytes, done.first_to_last_byte);
        if let Some(b) = self.bola.as_mut() {
            let advanced = b
                .most_advanced_segment_start_s
                .is_none_or(|m| done.start_s > m);
            if advanced {
                b.most_advanced_segment_start_s = Some(done.start_s);
            }
            b.last_segment_was_replacement = !advanced;
            b.last_segment_start_s = Some(done.start_s);
            b.last_segment_duration_s = Some(done.duration_s);
            b.current = done.rep;
            b.last_segment_request_s = Some(done.request_s);
            b.last_segment_finish_s = Some(done.finish_s);
            b.check_new_segment(done.buffer_s);
        }
    }

    /// The buffer ran empty (`BUFFER_EMPTY`): BOLA in STEADY drops its placeholder.
    pub fn buffer_empty(&mut self) {
        if let Some(b) = self.bola.as_mut()
            && b.steady
        {
            b.placeholder_s = 0.0;
        }
    }

    /// The bitrate (index into `bitrates`, lowest first) for the next media segment, decided
    /// at `now_s` (s, the clock of [`SegmentDone`]).
    pub fn choose(
        &mut self,
        bitrates: &[f64],
        segment_s: f64,
        now_s: f64,
        input: AbrInput,
    ) -> AbrChoice {
        let estimate = self.throughput.average_bps();
        // _updateDynamicAbrStrategy, with hysteresis.
        let threshold = if self.bola_active {
            0.5 * HYBRID_SWITCH_BUFFER_S
        } else {
            HYBRID_SWITCH_BUFFER_S
        };
        self.bola_active = input.buffer_s >= threshold;
        let by_throughput = estimate.map(|e| highest_at_most(bitrates, SAFETY_FACTOR * e));
        let main = if self.bola_active {
            let b = self
                .bola
                .get_or_insert_with(|| BolaState::new(bitrates, input.current));
            if b.steady {
                b.steady(now_s, input.buffer_s, by_throughput)
            } else {
                b.startup(input.buffer_s, by_throughput)
            }
        } else {
            AbrChoice {
                rep: by_throughput,
                delay_s: 0.0,
            }
        };
        let insufficient = self.insufficient_buffer(bitrates, segment_s, input, estimate);
        let history = self.switch_history(bitrates.len());
        let rep = [main.rep, insufficient, history]
            .into_iter()
            .flatten()
            .min();
        if let Some(r) = rep {
            // AbrController._addSwitchHistoryEntry: every decision that named a bitrate.
            self.history.push_back((input.current, r < input.current));
            if self.history.len() > SWITCH_HISTORY_SAMPLES {
                self.history.pop_front();
            }
        }
        AbrChoice {
            rep,
            delay_s: main.delay_s,
        }
    }

    /// `SwitchHistoryRule.getSwitchRequest`.
    fn switch_history(&self, levels: usize) -> Option<usize> {
        let (mut drops, mut no_drops) = (0usize, 0usize);
        for i in 0..levels {
            let here = self.history.iter().filter(|(c, _)| *c == i);
            let here_drops = here.clone().filter(|(_, d)| *d).count();
            drops += here_drops;
            no_drops += here.count() - here_drops;
            let counted = drops + no_drops;
            // dash.js divides by zero here when every decision was a drop: Infinity > 0.075.
            let ratio = drops as f64 / no_drops as f64;
            if counted >= SWITCH_HISTORY_SAMPLES && ratio > SWITCH_HISTORY_THRESHOLD {
                return Some(if i > 0 && here_drops > 0 { i - 1 } else { i });
            }
        }
        None
    }

    fn insufficient_buffer(
        &self,
        bitrates: &[f64],
        segment_s: f64,
        input: AbrInput,
        estimate: Option<f64>,
    ) -> Option<usize> {
        if input.appended < INSUFFICIENT_BUFFER_IGNORE_SEGMENTS {
            return None;
        }
        if input.buffer_s < STALL_THRESHOLD_S {
            return Some(0);
        }
        let cap = estimate? * INSUFFICIENT_BUFFER_SAFETY_FACTOR * input.buffer_s / segment_s;
        (cap > 0.0).then(|| highest_at_most(bitrates, cap))
    }
}

/// BOLA's choice (Spiteri, Urgaonkar, Sitaraman, "BOLA: Near-Optimal Bitrate Adaptation for
/// Online Videos", INFOCOM 2016) at this buffer level, with dash.js's parameters.
pub fn bola_choice(bitrates: &[f64], buffer_s: f64) -> usize {
    BolaParams::new(bitrates).choice(buffer_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LADDER: [f64; 4] = [800_000.0, 1_500_000.0, 3_000_000.0, 5_240_000.0];

    #[test]
    fn one_sample_is_its_own_estimate_after_the_startup_correction() {
        // dash.js divides the zero-started averages by 1 - 0.5^(W / halfLife): one sample
        // of 10 Mbit/s (1.25 MB in 1 s) gives 10 Mbit/s, not a fraction of it.
        let mut t = ThroughputModel::default();
        t.add(1_250_000, Duration::from_secs(1));
        let e = t.average_bps().unwrap();
        assert!((e - 10e6).abs() < 1.0, "{e}");
    }

    #[test]
    fn the_estimate_is_the_lower_of_a_fast_and_a_slow_time_weighted_average() {
        // 10 Mbit/s for 1 s, then 2 Mbit/s for 1 s. weight = 1.5 per second of download.
        let mut t = ThroughputModel::default();
        t.add(1_250_000, Duration::from_secs(1));
        t.add(250_000, Duration::from_secs(1));
        let (af, as_) = (0.5f64.powf(1.5 / 3.0), 0.5f64.powf(1.5 / 8.0));
        let fast = ((1.0 - af) * 2e6 + af * (1.0 - af) * 10e6) / (1.0 - 0.5f64.powf(3.0 / 3.0));
        let slow = ((1.0 - as_) * 2e6 + as_ * (1.0 - as_) * 10e6) / (1.0 - 0.5f64.powf(3.0 / 8.0));
        let e = t.average_bps().unwrap();
        assert!(
            (e - fast.min(slow)).abs() < 1e-6 * e,
            "{e} vs {fast} {slow}"
        );
        // The fast average follows the drop more: it is the lower one here.
        assert!(fast < slow);
    }

    #[test]
    fn a_download_that_took_no_time_is_no_sample() {
        let mut t = ThroughputModel::default();
        t.add(833, Duration::ZERO);
        assert_eq!(t.average_bps(), None);
    }

    fn at(buffer_s: f64, current: usize, appended: u32) -> AbrInput {
        AbrInput {
            buffer_s,
            current,
            appended,
        }
    }

    #[test]
    fn throughput_rule_takes_the_highest_bitrate_under_90_percent_of_the_estimate() {
        let mut abr = DashAbr::default();
        abr.throughput.add(500_000, Duration::from_secs(1)); // 4 Mbit/s: 3.6 after the factor
        assert_eq!(abr.choose(&LADDER, 2.0, 0.0, at(2.0, 0, 1)).rep, Some(2));
        let mut abr = DashAbr::default();
        abr.throughput.add(1_250_000, Duration::from_secs(1)); // 10 Mbit/s: top
        assert_eq!(abr.choose(&LADDER, 2.0, 0.0, at(2.0, 0, 1)).rep, Some(3));
        // No sample yet: no rule asks for a change.
        assert_eq!(
            DashAbr::default()
                .choose(&LADDER, 2.0, 0.0, at(2.0, 0, 1))
                .rep,
            None
        );
    }

    #[test]
    fn insufficient_buffer_rule_caps_by_buffer_after_two_segments() {
        // 10 Mbit/s estimate, 1 s of buffer, 2 s segments: cap 0.7 x 10 x 1 / 2 = 3.5 Mbit/s.
        let mut abr = DashAbr::default();
        abr.throughput.add(1_250_000, Duration::from_secs(1));
        let choose = |abr: &mut DashAbr, input| abr.choose(&LADDER, 2.0, 0.0, input).rep;
        assert_eq!(
            choose(&mut abr, at(1.0, 3, 1)),
            Some(3),
            "ignored before 2 segments"
        );
        assert_eq!(choose(&mut abr, at(1.0, 3, 2)), Some(2));
        // Empty (below the 0.3 s stall threshold): the lowest.
        assert_eq!(choose(&mut abr, at(0.1, 3, 2)), Some(0));
    }

    #[test]
    fn bola_takes_over_at_12_s_and_hands_back_below_6_s() {
        let mut abr = DashAbr::default();
        abr.throughput.add(1_250_000, Duration::from_secs(1));
        for (buffer_s, active) in [(11.9, false), (12.0, true), (6.1, true), (5.9, false)] {
            abr.choose(&LADDER, 2.0, 0.0, at(buffer_s, 3, 10));
            assert_eq!(abr.bola_active(), active, "{buffer_s}");
        }
    }

    #[test]
    fn bola_parameters_are_dash_js_s() {
        // 4 bitrates: bufferTime = max(18, 10 + 2 x 4) = 18 s, Vp * gp = 10 s (dash.js's
        // MINIMUM_BUFFER_S): the lowest bitrate on an empty buffer, the top one from 18 s on.
        let p = BolaParams::new(&LADDER);
        assert!((p.vp * p.gp - 10.0).abs() < 1e-9);
        assert!((p.max_buffer(0) - 10.0 - p.vp).abs() < 1e-9);
        assert_eq!(bola_choice(&LADDER, 0.0), 0);
        assert_eq!(bola_choice(&LADDER, 12.0), 2);
        assert_eq!(bola_choice(&LADDER, 18.0), 3);
        // Monotone: more buffer never picks a lower bitrate.
        let mut last = 0;
        for tenth in 0..200 {
            let c = bola_choice(&LADDER, f64::from(tenth) / 10.0);
            assert!(c >= last, "{tenth}");
            last = c;
        }
        // `_minBufferLevelForRepresentation`, computed by hand from its formula.
        for (i, want) in [(0, 0.0), (1, 11.198_597), (2, 13.981_820), (3, 16.703_286)] {
            assert!(
                (p.min_buffer(i) - want).abs() < 1e-5,
                "{i}: {}",
                p.min_buffer(i)
            );
        }
    }

    /// A segment downloaded at 10 Mbit/s (625 kB in 0.5 s).
    fn done(rep: usize, start_s: f64, finish_s: f64, buffer_s: f64) -> SegmentDone {
        SegmentDone {
            start_s,
            duration_s: 2.0,
            rep,
            request_s: finish_s - 0.5,
            finish_s,
            bytes: 625_000,
            first_to_last_byte: Duration::from_millis(500),
            buffer_s,
        }
    }

    #[test]
    fn bola_startup_keeps_the_throughput_choice_through_the_placeholder_buffer() {
        // 10 Mbit/s: the throughput rule picks the top. BOLA's first decision (STARTUP) at
        // 12 s takes it and sets the placeholder so that 12 s + placeholder = the top's
        // minimum buffer. Later decisions (STEADY) at 12 s keep the top, which BOLA alone
        // at 12 s would not pick: the placeholder carries it.
        let mut abr = DashAbr::default();
        abr.throughput.add(1_250_000, Duration::from_secs(1));
        assert_eq!(abr.choose(&LADDER, 2.0, 10.0, at(12.0, 3, 6)).rep, Some(3));
        let p = BolaParams::new(&LADDER);
        let placeholder = abr.bola_placeholder_s().unwrap();
        assert!((12.0 + placeholder - p.min_buffer(3)).abs() < 1e-9);
        let mut now = 10.0;
        for _ in 0..10 {
            abr.segment_done(done(3, now, now + 0.5, 11.5));
            now += 2.0;
            let c = abr.choose(&LADDER, 2.0, now, at(12.0, 3, 10));
            assert_eq!(c.rep, Some(3));
            assert_eq!(c.delay_s, 0.0);
        }
        assert!(abr.bola.as_ref().unwrap().steady);
        assert_eq!(bola_choice(&LADDER, 12.0), 2);
    }

    #[test]
    fn bola_up_switches_are_cut_back_to_the_throughput_choice() {
        // Estimate 2 Mbit/s: the throughput rule picks 1.5 Mbit/s (index 1). BOLA at 12 s
        // picks 3 Mbit/s (index 2); from index 0 that up-switch is cut back to index 1.
        assert_eq!(bola_choice(&LADDER, 12.0), 2);
        let mut abr = DashAbr::default();
        abr.throughput.add(250_000, Duration::from_secs(1));
        // STARTUP twice (the second with a segment's worth of buffer ends it).
        assert_eq!(abr.choose(&LADDER, 2.0, 0.0, at(12.0, 0, 10)).rep, Some(1));
        // Segments at 2 Mbit/s too (125 kB in 0.5 s), so the estimate stays.
        let slow = |rep, start_s| SegmentDone {
            bytes: 125_000,
            ..done(rep, start_s, 0.0, 12.0)
        };
        abr.segment_done(slow(0, 20.0));
        assert_eq!(abr.choose(&LADDER, 2.0, 0.0, at(12.0, 0, 10)).rep, Some(1));
        assert!(abr.bola.as_ref().unwrap().steady);
        let mut from_two = abr.clone();
        abr.segment_done(slow(0, 22.0));
        assert_eq!(abr.choose(&LADDER, 2.0, 0.0, at(12.0, 0, 10)).rep, Some(1));
        // From index 2 the same buffer is no up-switch: BOLA's own choice stands.
        from_two.segment_done(slow(2, 22.0));
        assert_eq!(
            from_two.choose(&LADDER, 2.0, 0.0, at(12.0, 2, 10)).rep,
            Some(2)
        );
    }

    #[test]
    fn switch_history_holds_one_below_a_bitrate_dropped_from_in_the_last_8_decisions() {
        // 10 Mbit/s: every rule would take the top (index 3).
        let mut abr = DashAbr::default();
        abr.throughput.add(1_250_000, Duration::from_secs(1));
        // 7 decisions at the top, then one drop from the top (buffer empty: the
        // insufficient-buffer rule takes the lowest).
        for _ in 0..7 {
            assert_eq!(abr.choose(&LADDER, 2.0, 0.0, at(8.0, 3, 10)).rep, Some(3));
        }
        assert_eq!(abr.choose(&LADDER, 2.0, 0.0, at(0.1, 3, 10)).rep, Some(0));
        // From there (current = the lowest): 8 samples with 1 drop in 7 no-drops (0.14 >
        // 0.075), the drop from index 3, so index 2, for as long as that drop is among the
        // last 8 decisions (8 more decisions); then the top again.
        let mut current = 0;
        let mut chosen = Vec::new();
        for _ in 0..10 {
            current = abr
                .choose(&LADDER, 2.0, 0.0, at(8.0, current, 10))
                .rep
                .unwrap();
            chosen.push(current);
        }
        assert_eq!(chosen, [2, 2, 2, 2, 2, 2, 2, 2, 3, 3]);
    }

    #[test]
    fn bola_in_steady_state_drops_its_placeholder_when_the_buffer_runs_empty() {
        let mut abr = DashAbr::default();
        abr.throughput.add(1_250_000, Duration::from_secs(1));
        abr.choose(&LADDER, 2.0, 0.0, at(12.0, 3, 6));
        // Still STARTUP: an empty buffer leaves the placeholder alone.
        abr.buffer_empty();
        assert!(abr.bola_placeholder_s().unwrap() > 4.0);
        abr.segment_done(done(3, 12.0, 0.5, 11.5));
        abr.choose(&LADDER, 2.0, 1.0, at(12.0, 3, 7));
        assert!(abr.bola.as_ref().unwrap().steady);
        assert!(abr.bola_placeholder_s().unwrap() > 4.0);
        abr.buffer_empty();
        assert_eq!(abr.bola_placeholder_s(), Some(0.0));
    }
}
