//! Scheduled changes of a link's parameters, applied at the right virtual
//! time by the link itself (never by sleeping shell commands).
//!
//! * step: set a field at `t_s`;
//! * ramp: linear from the value in force at `t_s` to `value` at `until_s`;
//! * outage: every packet is dropped in [`t_s`, `until_s`).
//!
//! Times are seconds since the emulator started (virtual time 0).

use crate::spec::{Field, ScheduleEvent};

/// The schedulable values of a link. `rate_bps`/`loss_p` are None when the
/// link's models cannot change them (trace/unlimited rate, non-Bernoulli loss).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub rate_bps: Option<f64>,
    pub delay_ms: f64,
    pub jitter_ms: f64,
    pub loss_p: Option<f64>,
}

impl Params {
    fn get(&self, field: Field) -> f64 {
        match field {
            Field::RateBps => self.rate_bps.unwrap_or(0.0),
            Field::DelayMs => self.delay_ms,
            Field::JitterMs => self.jitter_ms,
            Field::LossP => self.loss_p.unwrap_or(0.0),
        }
    }

    fn set(&mut self, field: Field, value: f64) {
        match field {
            Field::RateBps => self.rate_bps = Some(value),
            Field::DelayMs => self.delay_ms = value,
            Field::JitterMs => self.jitter_ms = value,
            Field::LossP => self.loss_p = Some(value),
        }
    }
}

/// A change the schedule applied, for the `schedule` log line.
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedChange {
    pub t_ns: u64,
    pub op: &'static str,
    pub field: Option<&'static str>,
    pub value: f64,
}

#[derive(Debug, Clone)]
struct ActiveRamp {
    field: Field,
    start_ns: u64,
    until_ns: u64,
    from: f64,
    to: f64,
}

#[derive(Debug, Clone)]
pub struct Schedule {
    events: Vec<ScheduleEvent>,
    next_event: usize,
    ramps: Vec<ActiveRamp>,
    outages_ns: Vec<(u64, u64)>,
}

pub fn seconds_to_ns(t_s: f64) -> u64 {
    (t_s * 1e9).round() as u64
}

impl Schedule {
    pub fn new(events: &[ScheduleEvent]) -> Schedule {
        let outages_ns = events
            .iter()
            .filter_map(|e| match *e {
                ScheduleEvent::Outage { t_s, until_s } => {
                    Some((seconds_to_ns(t_s), seconds_to_ns(until_s)))
                }
                _ => None,
            })
            .collect();
        Schedule {
            events: events.to_vec(),
            next_event: 0,
            ramps: Vec::new(),
            outages_ns,
        }
    }

    /// When the next not-yet-started event begins (ramps in progress are
    /// interpolated at every `apply_until`, they need no wake-up).
    pub fn next_event_ns(&self) -> Option<u64> {
        self.events
            .get(self.next_event)
            .map(|e| seconds_to_ns(e.t_s()))
    }

    /// Whether `apply_until(now_ns)` would change nothing: no event starts by then and no
    /// ramp is in progress.
    pub fn idle_until(&self, now_ns: u64) -> bool {
        self.ramps.is_empty() && self.next_event_ns().is_none_or(|t| t > now_ns)
    }

    pub fn in_outage(&self, t_ns: u64) -> bool {
        self.outages_ns
            .iter()
            .any(|&(start, end)| start <= t_ns && t_ns < end)
    }

    /// Starts every event due at or before `now_ns` and brings ramps to
    /// their value at `now_ns`.
    pub fn apply_until(&mut self, now_ns: u64, params: &mut Params, log: &mut Vec<AppliedChange>) {
        while let Some(event) = self.events.get(self.next_event) {
            let start_ns = seconds_to_ns(event.t_s());
            if start_ns > now_ns {
                break;
            }
            match *event {
                ScheduleEvent::Step { field, value, .. } => {
                    self.ramps.retain(|r| r.field != field);
                    params.set(field, value);
                    log.push(AppliedChange {
                        t_ns: now_ns,
                        op: "step",
                        field: Some(field.name()),
                        value,
                    });
                }
                ScheduleEvent::Ramp {
                    field,
                    value,
                    until_s,
                    ..
                } => {
                    self.ramps.retain(|r| r.field != field);
                    self.ramps.push(ActiveRamp {
                        field,
                        start_ns,
                        until_ns: seconds_to_ns(until_s),
                        from: params.get(field),
                        to: value,
                    });
                    log.push(AppliedChange {
                        t_ns: now_ns,
                        op: "ramp",
                        field: Some(field.name()),
                        value,
                    });
                }
                ScheduleEvent::Outage { until_s, .. } => {
                    log.push(AppliedChange {
                        t_ns: now_ns,
                        op: "outage",
                        field: None,
                        value: until_s,
                    });
                }
            }
            self.next_event += 1;
        }
        for ramp in &self.ramps {
            let value = if now_ns >= ramp.until_ns {
                ramp.to
            } else {
                let progress =
                    (now_ns - ramp.start_ns) as f64 / (ramp.until_ns - ramp.start_ns) as f64;
                ramp.from + (ramp.to - ramp.from) * progress
            };
            params.set(ramp.field, value);
        }
        self.ramps.retain(|r| now_ns < r.until_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn params() -> Params {
        Params {
            rate_bps: Some(10e6),
            delay_ms: 20.0,
            jitter_ms: 0.0,
            loss_p: Some(0.0),
        }
    }

    #[test]
    fn step_applies_at_its_time_not_before() {
        let mut s = Schedule::new(&[ScheduleEvent::Step {
            t_s: 2.0,
            field: Field::DelayMs,
            value: 50.0,
        }]);
        let mut p = params();
        let mut log = Vec::new();
        s.apply_until(2 * S - 1, &mut p, &mut log);
        assert_eq!(p.delay_ms, 20.0);
        assert!(log.is_empty());
        assert_eq!(s.next_event_ns(), Some(2 * S));
        s.apply_until(2 * S, &mut p, &mut log);
        assert_eq!(p.delay_ms, 50.0);
        assert_eq!(log.len(), 1);
        assert_eq!(s.next_event_ns(), None);
    }

    #[test]
    fn ramp_is_linear_from_the_value_in_force() {
        let mut s = Schedule::new(&[
            ScheduleEvent::Step {
                t_s: 1.0,
                field: Field::LossP,
                value: 0.02,
            },
            ScheduleEvent::Ramp {
                t_s: 10.0,
                field: Field::LossP,
                value: 0.10,
                until_s: 20.0,
            },
        ]);
        let mut p = params();
        let mut log = Vec::new();
        s.apply_until(10 * S, &mut p, &mut log);
        assert!((p.loss_p.unwrap() - 0.02).abs() < 1e-12);
        s.apply_until(15 * S, &mut p, &mut log);
        assert!((p.loss_p.unwrap() - 0.06).abs() < 1e-12);
        s.apply_until(17 * S + S / 2, &mut p, &mut log);
        assert!((p.loss_p.unwrap() - 0.08).abs() < 1e-12);
        s.apply_until(25 * S, &mut p, &mut log);
        assert!((p.loss_p.unwrap() - 0.10).abs() < 1e-12);
        // The ramp is over: later calls leave the value alone.
        p.loss_p = Some(0.5);
        s.apply_until(26 * S, &mut p, &mut log);
        assert_eq!(p.loss_p, Some(0.5));
    }

    #[test]
    fn a_later_step_cancels_a_running_ramp() {
        let mut s = Schedule::new(&[
            ScheduleEvent::Ramp {
                t_s: 0.0,
                field: Field::RateBps,
                value: 20e6,
                until_s: 10.0,
            },
            ScheduleEvent::Step {
                t_s: 5.0,
                field: Field::RateBps,
                value: 1e6,
            },
        ]);
        let mut p = params();
        let mut log = Vec::new();
        s.apply_until(5 * S, &mut p, &mut log);
        s.apply_until(8 * S, &mut p, &mut log);
        assert_eq!(p.rate_bps, Some(1e6));
    }

    #[test]
    fn outage_covers_its_half_open_interval() {
        let s = Schedule::new(&[ScheduleEvent::Outage {
            t_s: 15.0,
            until_s: 20.0,
        }]);
        assert!(!s.in_outage(15 * S - 1));
        assert!(s.in_outage(15 * S));
        assert!(s.in_outage(20 * S - 1));
        assert!(!s.in_outage(20 * S));
    }
}
