//! The resolved scenario (docs/CONTRACTS.md §4): what the emulator reads.
//!
//! Parsing is strict: unknown fields are errors (`deny_unknown_fields`), and
//! every value is validated before anything runs, so a bad file exits with
//! status 2 and changes nothing. Errors name the file, the field path, the
//! value and what is valid.

use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// The four emulated links, in NFQUEUE order (CONTRACTS §3: queue base + index).
pub const LINK_ORDER: [(&str, &str); 4] = [
    ("wifi", "up"),
    ("wifi", "down"),
    ("lte", "up"),
    ("lte", "down"),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub schema: u32,
    pub name: String,
    pub source: String,
    pub duration_s: f64,
    pub paths: Paths,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paths {
    pub wifi: PathLinks,
    pub lte: PathLinks,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathLinks {
    pub up: LinkSpec,
    pub down: LinkSpec,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: RateSpec,
    pub delay_ms: f64,
    pub jitter_ms: f64,
    pub loss: LossSpec,
    pub queue: QueueSpec,
    pub schedule: Vec<ScheduleEvent>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RateSpec {
    Constant { bps: f64 },
    Trace { file: PathBuf, packet_bytes: u32 },
    Unlimited,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_in_good: f64,
        loss_in_bad: f64,
    },
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    Packets { limit: u64 },
    Bytes { limit: u64 },
    Ms { limit: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    RateBps,
    DelayMs,
    JitterMs,
    LossP,
}

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::RateBps => "rate_bps",
            Field::DelayMs => "delay_ms",
            Field::JitterMs => "jitter_ms",
            Field::LossP => "loss_p",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScheduleEvent {
    Step {
        t_s: f64,
        field: Field,
        value: f64,
    },
    Ramp {
        t_s: f64,
        field: Field,
        value: f64,
        until_s: f64,
    },
    Outage {
        t_s: f64,
        until_s: f64,
    },
}

impl ScheduleEvent {
    pub fn t_s(&self) -> f64 {
        match self {
            ScheduleEvent::Step { t_s, .. }
            | ScheduleEvent::Ramp { t_s, .. }
            | ScheduleEvent::Outage { t_s, .. } => *t_s,
        }
    }
}

/// A scenario error for people: which file, which field, what was wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "scenario {}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "scenario {}: field `{}`: {}",
                self.file, self.field, self.message
            )
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Reads, parses and validates a resolved scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        field: String::new(),
        message: format!("cannot read the file: {e}"),
    })?;
    parse(&text, &file)
}

/// Parses and validates scenario JSON text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        ScenarioError {
            file: file.to_string(),
            field: if field == "." { String::new() } else { field },
            message: e.into_inner().to_string(),
        }
    })?;
    validate(&scenario, file)?;
    Ok(scenario)
}

fn validate(s: &Scenario, file: &str) -> Result<(), ScenarioError> {
    let err = |field: &str, message: String| ScenarioError {
        file: file.to_string(),
        field: field.to_string(),
        message,
    };
    if s.schema != 1 {
        return Err(err(
            "schema",
            format!("is {}, this emulator reads schema 1", s.schema),
        ));
    }
    if !(s.duration_s.is_finite() && s.duration_s > 0.0) {
        return Err(err(
            "duration_s",
            format!("is {}, must be a positive number", s.duration_s),
        ));
    }
    for (path, dir) in LINK_ORDER {
        let link = s.link(path, dir);
        validate_link(link, &format!("paths.{path}.{dir}"), &err)?;
    }
    Ok(())
}

fn validate_link(
    link: &LinkSpec,
    at: &str,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let non_negative = |field: &str, v: f64| -> Result<(), ScenarioError> {
        if v.is_finite() && v >= 0.0 {
            Ok(())
        } else {
            Err(err(
                &format!("{at}.{field}"),
                format!("is {v}, must be a finite number >= 0"),
            ))
        }
    };
    let probability = |field: &str, v: f64| -> Result<(), ScenarioError> {
        if (0.0..=1.0).contains(&v) {
            Ok(())
        } else {
            Err(err(
                &format!("{at}.{field}"),
                format!("is {v}, must be a probability in [0, 1]"),
            ))
        }
    };
    match &link.rate {
        RateSpec::Constant { bps } => {
            if !(bps.is_finite() && *bps >= 1000.0) {
                return Err(err(
                    &format!("{at}.rate.bps"),
                    format!("is {bps}, must be at least 1000 bit/s"),
                ));
            }
        }
        RateSpec::Trace { file, packet_bytes } => {
            if !(64..=65535).contains(packet_bytes) {
                return Err(err(
                    &format!("{at}.rate.packet_bytes"),
                    format!("is {packet_bytes}, must be within [64, 65535]"),
                ));
            }
            crate::rate::trace::TraceRate::load(file, *packet_bytes)
                .map_err(|m| err(&format!("{at}.rate.file"), m))?;
        }
        RateSpec::Unlimited => {}
    }
    non_negative("delay_ms", link.delay_ms)?;
    non_negative("jitter_ms", link.jitter_ms)?;
    match &link.loss {
        LossSpec::None => {}
        LossSpec::Bernoulli { p } => probability("loss.p", *p)?,
        LossSpec::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        } => {
            probability("loss.p_good_to_bad", *p_good_to_bad)?;
            probability("loss.p_bad_to_good", *p_bad_to_good)?;
            probability("loss.loss_in_good", *loss_in_good)?;
            probability("loss.loss_in_bad", *loss_in_bad)?;
        }
    }
    crate::queue::QueueLimit::from_spec(&link.queue)
        .map_err(|m| err(&format!("{at}.queue.limit"), m))?;
    let mut previous_t_s = 0.0_f64;
    for (i, event) in link.schedule.iter().enumerate() {
        let ev = format!("{at}.schedule[{i}]");
        let t_s = event.t_s();
        if !(t_s.is_finite() && t_s >= 0.0) {
            return Err(err(&format!("{ev}.t_s"), format!("is {t_s}, must be >= 0")));
        }
        if t_s < previous_t_s {
            return Err(err(
                &format!("{ev}.t_s"),
                format!("is {t_s}, events must be sorted by t_s (previous is {previous_t_s})"),
            ));
        }
        previous_t_s = t_s;
        let (field, value, until_s) = match event {
            ScheduleEvent::Step { field, value, .. } => (Some(*field), Some(*value), None),
            ScheduleEvent::Ramp {
                field,
                value,
                until_s,
                ..
            } => (Some(*field), Some(*value), Some(*until_s)),
            ScheduleEvent::Outage { until_s, .. } => (None, None, Some(*until_s)),
        };
        if let Some(until_s) = until_s {
            if !(until_s.is_finite() && until_s > t_s) {
                return Err(err(
                    &format!("{ev}.until_s"),
                    format!("is {until_s}, must be greater than t_s = {t_s}"),
                ));
            }
        }
        if let (Some(field), Some(value)) = (field, value) {
            let field_at = format!("{ev}.value");
            match field {
                Field::RateBps => {
                    if !matches!(link.rate, RateSpec::Constant { .. }) {
                        return Err(err(
                            &format!("{ev}.field"),
                            "rate_bps can only change on a constant-rate link".to_string(),
                        ));
                    }
                    if !(value.is_finite() && value >= 1000.0) {
                        return Err(err(
                            &field_at,
                            format!("is {value}, rate_bps must be at least 1000"),
                        ));
                    }
                }
                Field::DelayMs | Field::JitterMs => {
                    if !(value.is_finite() && value >= 0.0) {
                        return Err(err(&field_at, format!("is {value}, must be >= 0")));
                    }
                }
                Field::LossP => {
                    if !matches!(link.loss, LossSpec::Bernoulli { .. }) {
                        return Err(err(
                            &format!("{ev}.field"),
                            "loss_p can only change on a Bernoulli-loss link".to_string(),
                        ));
                    }
                    if !(0.0..=1.0).contains(&value) {
                        return Err(err(
                            &field_at,
                            format!("is {value}, loss_p must be a probability in [0, 1]"),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

impl Scenario {
    pub fn link(&self, path: &str, dir: &str) -> &LinkSpec {
        let p = match path {
            "wifi" => &self.paths.wifi,
            "lte" => &self.paths.lte,
            _ => unreachable!("path names come from LINK_ORDER"),
        };
        match dir {
            "up" => &p.up,
            "down" => &p.down,
            _ => unreachable!("directions come from LINK_ORDER"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn link() -> Value {
        json!({"rate": {"kind": "constant", "bps": 20000000}, "delay_ms": 20.0, "jitter_ms": 0.0,
               "loss": {"kind": "bernoulli", "p": 0.01},
               "queue": {"kind": "packets", "limit": 100}, "schedule": []})
    }

    fn scenario() -> Value {
        json!({"schema": 1, "name": "A1", "source": "netem-scenarios/A1.toml", "duration_s": 180.0,
               "paths": {"wifi": {"up": link(), "down": link()},
                         "lte": {"up": link(), "down": link()}}})
    }

    fn error_of(v: &Value) -> ScenarioError {
        parse(&v.to_string(), "bad.json").expect_err("should be rejected")
    }

    #[test]
    fn a_valid_scenario_parses() {
        let s = parse(&scenario().to_string(), "ok.json").unwrap();
        assert_eq!(s.name, "A1");
        assert_eq!(s.link("lte", "down").loss, LossSpec::Bernoulli { p: 0.01 });
    }

    #[test]
    fn every_kind_of_model_parses() {
        let mut v = scenario();
        v["paths"]["wifi"]["up"]["rate"] = json!({"kind": "unlimited"});
        v["paths"]["wifi"]["up"]["loss"] = json!({"kind": "gilbert_elliott", "p_good_to_bad": 0.01,
            "p_bad_to_good": 0.3, "loss_in_good": 0.0, "loss_in_bad": 1.0});
        v["paths"]["wifi"]["down"]["queue"] = json!({"kind": "ms", "limit": 50.0});
        v["paths"]["wifi"]["down"]["loss"] = json!({"kind": "none"});
        v["paths"]["lte"]["up"]["queue"] = json!({"kind": "bytes", "limit": 150000});
        v["paths"]["lte"]["up"]["schedule"] = json!([
            {"t_s": 1.0, "op": "step", "field": "delay_ms", "value": 30.0},
            {"t_s": 2.0, "op": "ramp", "field": "loss_p", "value": 0.1, "until_s": 5.0},
            {"t_s": 6.0, "op": "outage", "until_s": 7.0}]);
        let s = parse(&v.to_string(), "ok.json").unwrap();
        assert_eq!(s.link("lte", "up").schedule.len(), 3);
        assert_eq!(s.link("wifi", "up").rate, RateSpec::Unlimited);
    }

    #[test]
    fn unknown_fields_are_errors_naming_the_field() {
        let mut v = scenario();
        v["paths"]["wifi"]["up"]["delay"] = json!(5);
        let e = error_of(&v);
        assert!(e.message.contains("unknown field `delay`"), "{e}");
        assert!(e.field.contains("paths.wifi.up"), "{e}");
        let mut v = scenario();
        v["paths"]["lte"]["down"]["loss"]["q"] = json!(0.1);
        let e = error_of(&v);
        assert!(e.message.contains("unknown field `q`"), "{e}");
        let mut v = scenario();
        v["extra"] = json!(1);
        assert!(error_of(&v).message.contains("unknown field `extra`"));
        let mut v = scenario();
        v["paths"]["satellite"] = json!({});
        assert!(error_of(&v).message.contains("satellite"));
    }

    #[test]
    fn wrong_types_and_unknown_kinds_are_errors() {
        let mut v = scenario();
        v["paths"]["wifi"]["up"]["delay_ms"] = json!("20");
        let e = error_of(&v);
        assert_eq!(e.field, "paths.wifi.up.delay_ms");
        let mut v = scenario();
        v["paths"]["wifi"]["up"]["rate"] = json!({"kind": "fast"});
        assert!(error_of(&v).message.contains("fast"));
        let mut v = scenario();
        v["paths"]["wifi"]["up"]["queue"] = json!({"kind": "packets", "limit": -5});
        assert!(error_of(&v).field.contains("queue"));
        let mut v = scenario();
        v["paths"]["lte"].as_object_mut().unwrap().remove("down");
        assert!(error_of(&v).message.contains("missing field `down`"));
    }

    #[test]
    fn out_of_range_values_are_errors_with_field_and_value() {
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "rate",
                json!({"kind": "constant", "bps": -1.0}),
                "paths.wifi.up.rate.bps",
            ),
            ("delay_ms", json!(-3.0), "paths.wifi.up.delay_ms"),
            ("jitter_ms", json!(-0.1), "paths.wifi.up.jitter_ms"),
            (
                "loss",
                json!({"kind": "bernoulli", "p": 1.5}),
                "paths.wifi.up.loss.p",
            ),
            (
                "queue",
                json!({"kind": "packets", "limit": 0}),
                "paths.wifi.up.queue.limit",
            ),
            (
                "rate",
                json!({"kind": "trace", "file": "/nonexistent/x.down", "packet_bytes": 1500}),
                "paths.wifi.up.rate.file",
            ),
        ];
        for (key, value, field) in cases {
            let mut v = scenario();
            v["paths"]["wifi"]["up"][key] = value.clone();
            let e = error_of(&v);
            assert_eq!(e.field, field, "{key} = {value}: {e}");
            assert!(e.to_string().contains("bad.json"), "{e}");
        }
        let mut v = scenario();
        v["schema"] = json!(2);
        assert_eq!(error_of(&v).field, "schema");
    }

    #[test]
    fn schedules_must_be_sorted_and_fit_the_link() {
        let bad: Vec<(Value, &str)> = vec![
            (
                json!([{"t_s": 5.0, "op": "step", "field": "delay_ms", "value": 1.0},
                       {"t_s": 2.0, "op": "step", "field": "delay_ms", "value": 2.0}]),
                "paths.lte.up.schedule[1].t_s",
            ),
            (
                json!([{"t_s": 5.0, "op": "ramp", "field": "delay_ms", "value": 1.0, "until_s": 4.0}]),
                "paths.lte.up.schedule[0].until_s",
            ),
            (
                json!([{"t_s": 5.0, "op": "outage", "until_s": 5.0}]),
                "paths.lte.up.schedule[0].until_s",
            ),
            (
                json!([{"t_s": 1.0, "op": "step", "field": "loss_p", "value": 2.0}]),
                "paths.lte.up.schedule[0].value",
            ),
            (
                json!([{"t_s": -1.0, "op": "step", "field": "delay_ms", "value": 2.0}]),
                "paths.lte.up.schedule[0].t_s",
            ),
        ];
        for (schedule, field) in bad {
            let mut v = scenario();
            v["paths"]["lte"]["up"]["schedule"] = schedule.clone();
            let e = error_of(&v);
            assert_eq!(e.field, field, "{schedule}: {e}");
        }
        // rate_bps on a trace link, loss_p on a GE link: the field is wrong.
        let mut v = scenario();
        v["paths"]["lte"]["up"]["rate"] = json!({"kind": "unlimited"});
        v["paths"]["lte"]["up"]["schedule"] =
            json!([{"t_s": 1.0, "op": "step", "field": "rate_bps", "value": 1e6}]);
        assert_eq!(error_of(&v).field, "paths.lte.up.schedule[0].field");
        let mut v = scenario();
        v["paths"]["lte"]["up"]["schedule"] =
            json!([{"t_s": 1.0, "op": "step", "field": "bandwidth", "value": 1e6}]);
        assert!(error_of(&v).message.contains("bandwidth"));
    }
}
