//! A time-based bulk transfer (iperf-style): the server keeps its stream full for a fixed
//! virtual duration and the client reads everything; goodput counts the bytes the client read
//! after a start-up interval, so a run measures the congestion control's steady state rather
//! than how fast it leaves slow start (a size-based transfer at low loss ends inside it).

use std::time::Duration;

use super::endpoint::per_path;
use super::pair::{DriveError, Pair};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedSpec {
    /// Virtual time the transfer runs, from the client's request.
    pub duration: Duration,
    /// Goodput counts bytes read from this time on (start-up excluded); below `duration`.
    pub measure_from: Duration,
    /// If set, also each path's acknowledged bytes per bin of this width (a timeline, for
    /// traffic that moves between paths during the run).
    pub bin: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimedResult {
    /// What ran.
    pub spec: TimedSpec,
    /// `Err(TimeLimit)` is the normal end of a timed run; anything else stopped it early.
    pub outcome: Result<(), DriveError>,
    /// Bytes the client read over the whole run, and over [measure_from, duration].
    pub bytes_read_total: u64,
    pub bytes_read_measured: u64,
    /// Length of the measured interval, seconds.
    pub measured_s: f64,
    /// Per path: bytes the server saw acknowledged over the measured interval.
    pub acked_bytes_measured_per_path: Vec<(String, u64)>,
    /// With `TimedSpec::bin`: per path, the bytes acknowledged in each whole bin from the
    /// start (bin k covers [k·bin, (k+1)·bin)).
    pub acked_bytes_per_bin_per_path: Vec<(String, Vec<u64>)>,
}

impl TimedSpec {
    /// From seconds as the command line gives them (`--duration-s`, `--measure-from-s`,
    /// `--bin-s`), or what is wrong with them.
    pub fn from_seconds(
        duration_s: f64,
        measure_from_s: f64,
        bin_s: Option<f64>,
    ) -> Result<TimedSpec, String> {
        let (d, m) = (duration_s, measure_from_s);
        if !(d.is_finite() && d > 0.0 && d <= 3600.0) {
            return Err(format!("--duration-s {d}: need seconds in (0, 3600]"));
        }
        if !(m.is_finite() && m >= 0.0 && m < d) {
            return Err(format!(
                "--measure-from-s {m}: need 0 ≤ seconds < --duration-s ({d})"
            ));
        }
        let bin = match bin_s {
            None => None,
            Some(b) if b.is_finite() && (0.01..=d).contains(&b) => Some(Duration::from_secs_f64(b)),
            Some(b) => {
                return Err(format!(
                    "--bin-s {b}: need 0.01 ≤ seconds ≤ --duration-s ({d})"
                ));
            }
        };
        Ok(TimedSpec {
            duration: Duration::from_secs_f64(d),
            measure_from: Duration::from_secs_f64(m),
            bin,
        })
    }
}

impl TimedResult {
    /// Goodput over the measured interval, bits/s.
    pub fn goodput_bps(&self) -> f64 {
        self.bytes_read_measured as f64 * 8.0 / self.measured_s.max(1e-9)
    }

    /// mpsim's outcome fields: goodput after the start-up interval, the whole run's, and each
    /// path's acknowledged rate over the measured interval and (with bins) per bin, bits/s.
    pub fn outcome_json(&self) -> serde_json::Value {
        let bps = |bytes: u64, s: f64| (bytes as f64 * 8.0 / s.max(1e-9)).round();
        let measured: serde_json::Map<String, serde_json::Value> = self
            .acked_bytes_measured_per_path
            .iter()
            .map(|(name, b)| (name.clone(), serde_json::json!(bps(*b, self.measured_s))))
            .collect();
        let bin_s = self.spec.bin.map(|b| b.as_secs_f64());
        let per_bin: serde_json::Map<String, serde_json::Value> = self
            .acked_bytes_per_bin_per_path
            .iter()
            .map(|(name, bins)| {
                let w = bin_s.unwrap_or(1.0);
                let rates: Vec<f64> = bins.iter().map(|b| bps(*b, w)).collect();
                (name.clone(), serde_json::json!(rates))
            })
            .collect();
        let whole_s = self.spec.duration.as_secs_f64();
        serde_json::json!({
            "duration_s": whole_s,
            "measure_from_s": self.spec.measure_from.as_secs_f64(),
            "goodput_bps": self.goodput_bps().round(),
            "goodput_whole_bps": bps(self.bytes_read_total, whole_s),
            "acked_bps_measured_per_path": measured,
            "bin_s": bin_s,
            "acked_bps_per_bin_per_path": per_bin,
            "bytes_read": self.bytes_read_total,
            "outcome": format!("{:?}", self.outcome),
        })
    }

    /// Whether the run lasted its whole duration (rather than stalling or hitting the step
    /// limit).
    pub fn ran_to_the_end(&self) -> bool {
        matches!(self.outcome, Err(DriveError::TimeLimit { .. }))
    }
}

fn acked_per_path(pair: &Pair) -> Vec<(String, u64)> {
    per_path(pair.server.as_ref(), |s| s.counters.bytes_acked_total)
}

/// Runs the timed transfer on `pair`; `hook` runs before every step (traces, link changes).
pub fn run_timed(
    pair: &mut Pair,
    spec: &TimedSpec,
    mut hook: impl FnMut(&mut Pair),
) -> TimedResult {
    assert!(
        spec.measure_from < spec.duration,
        "TimedSpec: measure_from {:?} must be below duration {:?}",
        spec.measure_from,
        spec.duration
    );
    let start = pair.now;
    let end = start + spec.duration;
    let measure_at = start + spec.measure_from;
    let chunk = vec![0u8; 256 * 1024];
    let mut sink = vec![0u8; 256 * 1024];
    let mut read_total = 0u64;
    let mut at_measure: Option<(u64, Vec<(String, u64)>)> = None;
    // Per-path acknowledged bytes at each bin boundary (the first at the start).
    let mut at_bins: Vec<Vec<(String, u64)>> = Vec::new();
    let mut next_bin = start;
    pair.client.write(b"GET");
    let outcome = pair.drive_bounded(
        u64::MAX,
        end,
        |p| {
            hook(p);
            if let Some(s) = p.server.as_mut() {
                while s.write(&chunk) > 0 {}
                while s.read(&mut sink) > 0 {}
            }
            loop {
                let n = p.client.read(&mut sink);
                if n == 0 {
                    break;
                }
                read_total += n as u64;
            }
            if at_measure.is_none() && p.now >= measure_at {
                at_measure = Some((read_total, acked_per_path(p)));
            }
            if let Some(bin) = spec.bin
                && p.now >= next_bin
                && next_bin < end
            {
                at_bins.push(acked_per_path(p));
                next_bin += bin;
            }
        },
        |_| false,
    );
    if spec.bin.is_some() {
        at_bins.push(acked_per_path(pair)); // the run's end closes the last bin
    }
    let (read_before, acked_before) =
        at_measure.unwrap_or_else(|| (read_total, acked_per_path(pair)));
    let acked_measured = acked_per_path(pair)
        .into_iter()
        .map(|(name, after)| {
            let before = acked_before
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(0, |x| x.1);
            (name, after - before)
        })
        .collect();
    let names: Vec<String> = acked_per_path(pair).into_iter().map(|x| x.0).collect();
    let acked_in = |snap: &[(String, u64)], name: &str| {
        snap.iter().find(|(n, _)| n == name).map_or(0, |x| x.1)
    };
    let per_bin = names
        .iter()
        .map(|name| {
            let bins = at_bins
                .windows(2)
                .map(|w| acked_in(&w[1], name) - acked_in(&w[0], name))
                .collect();
            (name.clone(), bins)
        })
        .collect();
    let measured = pair.now.saturating_duration_since(measure_at.min(pair.now));
    TimedResult {
        spec: *spec,
        outcome,
        bytes_read_total: read_total,
        bytes_read_measured: read_total - read_before,
        measured_s: measured.as_secs_f64(),
        acked_bytes_measured_per_path: acked_measured,
        acked_bytes_per_bin_per_path: per_bin,
    }
}
