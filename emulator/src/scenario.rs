//! The resolved scenario (docs/CONTRACTS.md §4): what the emulator reads, and
//! the one definition of a valid resolved scenario.
//!
//! `testbed/scenario.py` turns the human-facing TOML into this form and then
//! asks `linkemu --validate` whether it is valid, so every rule about values,
//! ranges and cross-references (a bottleneck naming an unknown path, a path in
//! two bottlenecks of one direction, ...) lives here and only here. The types
//! live in `spec.rs`; the JSON Schema of the resolved form
//! (`netem-scenarios/resolved.schema.json`) is generated from them
//! (`linkemu --print-schema`); a test fails when the committed file drifts.
//!
//! Parsing is strict: unknown fields are errors (`deny_unknown_fields`), and
//! every value is validated before anything runs, so a bad file exits with
//! status 2 and changes nothing. Errors name the file, the field path, the
//! value and what is valid.

use std::fmt;
use std::path::Path;

// The types a resolved scenario is made of (spec.rs), re-exported: callers name
// them `linkemu::scenario::LinkSpec` as before.
pub use crate::spec::*;

/// Fewest and most paths a scenario may have.
pub const MIN_PATHS: usize = 1;
pub const MAX_PATHS: usize = 8;
/// A path's name becomes the client's and server's interface name and, with a
/// `c-`/`s-` prefix, the router's: Linux allows 15 characters.
pub const PATH_NAME_PATTERN: &str = "^[a-z][a-z0-9]{0,12}$";
/// Smallest rate of a link or a rate step: 1 kbit/s (a 1500-byte packet takes
/// 12 s to serialise). Published in the generated schema (spec.rs), from which
/// testbed/scenario.py reads the floor of its noise samples.
pub const MIN_RATE_BPS: f64 = 1000.0;
/// Largest constant rate: 1 Tbit/s (the emulator's arithmetic is exact far
/// beyond it, but no veth carries more, so a bigger number is a typo).
pub const MAX_RATE_BPS: f64 = 1e12;
/// Largest delay or jitter: one hour.
pub const MAX_DELAY_MS: f64 = 3_600_000.0;
/// Longest scenario: ten days.
pub const MAX_DURATION_S: f64 = 864_000.0;
/// Largest queue limits: 10 million packets, 16 GiB, one hour.
pub const MAX_QUEUE_PACKETS: u64 = 10_000_000;
pub const MAX_QUEUE_BYTES: u64 = 1 << 34;
/// Cross-traffic flows per path: the address plan gives each its own address.
pub const MAX_CROSS_FLOWS_PER_PATH: u32 = 50;
/// Largest cross-traffic CBR rate: 10 Gbit/s.
pub const MAX_CBR_RATE_BPS: f64 = 1e10;

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

/// The JSON Schema of the resolved form, generated from these types
/// (`linkemu --print-schema`; committed as netem-scenarios/resolved.schema.json).
pub fn json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_value(&schema).expect("a schema is plain JSON")
}

/// A number for an error message: huge or tiny ones in exponent form (1e30, not
/// thirty-one digits).
fn show(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// True if `name` matches PATH_NAME_PATTERN (no regex crate needed for it).
pub fn is_valid_link_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 13
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
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
    if !(s.duration_s.is_finite() && s.duration_s > 0.0 && s.duration_s <= MAX_DURATION_S) {
        return Err(err(
            "duration_s",
            format!(
                "is {}, must be a number in (0, {MAX_DURATION_S}] seconds",
                show(s.duration_s)
            ),
        ));
    }
    if !(MIN_PATHS..=MAX_PATHS).contains(&s.paths.len()) {
        return Err(err(
            "paths",
            format!(
                "has {} paths ({}), a scenario needs {MIN_PATHS} to {MAX_PATHS}",
                s.paths.len(),
                s.paths.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    validate_paths(s, &err)?;
    validate_bottlenecks(s, &err)?;
    validate_cross_traffic(s, &err)?;
    for (label, dir, link) in s.links() {
        validate_queue(
            link,
            &format!("{}.{}", label.field_prefix(), dir.name()),
            &err,
        )?;
    }
    // Every link must also be constructible (trace files readable, ...).
    for (index, (label, dir, link)) in s.links().into_iter().enumerate() {
        crate::link::Link::new(link, 0, index as u64)
            .map_err(|m| err(&format!("{}.{}", label.field_prefix(), dir.name()), m))?;
    }
    Ok(())
}

/// Builds the error of one field (the file is already known).
type ErrorAt<'a> = dyn Fn(&str, String) -> ScenarioError + 'a;

/// Every path: its name becomes an interface name; then its up and down links.
fn validate_paths(s: &Scenario, err: &ErrorAt<'_>) -> Result<(), ScenarioError> {
    for (name, links) in &s.paths {
        if !is_valid_link_name(name) || name == "lo" {
            return Err(err(
                &format!("paths.{name}"),
                format!(
                    "the name \"{name}\" is not valid: it becomes an interface name, so it \
                     must match {PATH_NAME_PATTERN} and not be \"lo\""
                ),
            ));
        }
        for dir in Direction::BOTH {
            let link = match dir {
                Direction::Up => &links.up,
                Direction::Down => &links.down,
            };
            validate_link(
                link,
                &format!("paths.{name}.{}", dir.name()),
                s.duration_s,
                &err,
            )?;
        }
    }
    Ok(())
}

/// Bottlenecks: known paths, each path in at most one bottleneck per direction.
fn validate_bottlenecks(s: &Scenario, err: &ErrorAt<'_>) -> Result<(), ScenarioError> {
    let mut owner: std::collections::HashMap<(&str, Direction), &str> = Default::default();
    for (bname, b) in &s.bottlenecks {
        let at = format!("bottlenecks.{bname}");
        if !is_valid_link_name(bname) {
            return Err(err(
                &at,
                format!("the name \"{bname}\" is not valid: it must match {PATH_NAME_PATTERN}"),
            ));
        }
        if b.paths.is_empty() {
            return Err(err(
                &format!("{at}.paths"),
                "is empty; list the paths that traverse this bottleneck".to_string(),
            ));
        }
        if b.up.is_none() && b.down.is_none() {
            return Err(err(
                &at,
                "has neither an up nor a down link; give at least one direction".to_string(),
            ));
        }
        for (i, p) in b.paths.iter().enumerate() {
            if !s.paths.contains_key(p) {
                return Err(err(
                    &format!("{at}.paths[{i}]"),
                    format!(
                        "is \"{p}\", not a path of this scenario; valid: {}",
                        s.paths.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            if b.paths[..i].contains(p) {
                return Err(err(
                    &format!("{at}.paths[{i}]"),
                    format!("is \"{p}\", listed twice"),
                ));
            }
            for dir in Direction::BOTH {
                if b.link(dir).is_none() {
                    continue;
                }
                if let Some(other) = owner.insert((p.as_str(), dir), bname.as_str()) {
                    return Err(err(
                        &format!("{at}.paths[{i}]"),
                        format!(
                            "path \"{p}\" already traverses bottleneck \"{other}\" in direction \
                             {}; a path may cross at most one bottleneck per direction",
                            dir.name()
                        ),
                    ));
                }
            }
        }
        for dir in Direction::BOTH {
            if let Some(link) = b.link(dir) {
                validate_link(link, &format!("{at}.{}", dir.name()), s.duration_s, &err)?;
            }
        }
    }
    Ok(())
}

/// Cross-traffic flows: a known path, a bounded count, times within the
/// scenario, and the fields of each kind.
fn validate_cross_traffic(s: &Scenario, err: &ErrorAt<'_>) -> Result<(), ScenarioError> {
    let mut flows_per_path: std::collections::HashMap<&str, u32> = Default::default();
    for (i, ct) in s.cross_traffic.iter().enumerate() {
        let at = format!("cross_traffic[{i}]");
        let c = ct.common();
        if !s.paths.contains_key(c.path) {
            return Err(err(
                &format!("{at}.path"),
                format!(
                    "is \"{}\", not a path of this scenario; valid: {}",
                    c.path,
                    s.paths.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let total = flows_per_path.entry(c.path).or_default();
        *total = total.saturating_add(c.count);
        if c.count == 0 || *total > MAX_CROSS_FLOWS_PER_PATH {
            return Err(err(
                &format!("{at}.count"),
                format!(
                    "is {}, must be >= 1 and the flows on path \"{}\" at most \
                     {MAX_CROSS_FLOWS_PER_PATH} in all",
                    c.count, c.path
                ),
            ));
        }
        if !(c.start_s.is_finite() && c.start_s >= 0.0 && c.start_s < s.duration_s) {
            return Err(err(
                &format!("{at}.start_s"),
                format!(
                    "is {}, must be in [0, duration_s = {})",
                    c.start_s, s.duration_s
                ),
            ));
        }
        if !(c.stop_s.is_finite() && c.stop_s > c.start_s && c.stop_s <= s.duration_s) {
            return Err(err(
                &format!("{at}.stop_s"),
                format!(
                    "is {}, must be in (start_s = {}, duration_s = {}]",
                    c.stop_s, c.start_s, s.duration_s
                ),
            ));
        }
        match ct {
            CrossTraffic::TcpBulk { cc, .. } | CrossTraffic::TcpOnoff { cc, .. } => {
                let ok = !cc.is_empty()
                    && cc.len() <= 15
                    && cc
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
                if !ok {
                    return Err(err(
                        &format!("{at}.cc"),
                        format!(
                            "is \"{cc}\", must be a kernel congestion-control name \
                             (lower-case letters, digits, _; at most 15), e.g. cubic, bbr, reno"
                        ),
                    ));
                }
            }
            CrossTraffic::UdpCbr { .. } => {}
        }
        match ct {
            CrossTraffic::TcpOnoff { on_s, off_s, .. } => {
                for (name, v) in [("on_s", on_s), ("off_s", off_s)] {
                    if !(v.is_finite() && *v > 0.0 && *v <= s.duration_s) {
                        return Err(err(
                            &format!("{at}.{name}"),
                            format!("is {v}, must be in (0, duration_s = {}]", s.duration_s),
                        ));
                    }
                }
            }
            CrossTraffic::UdpCbr {
                rate_bps,
                packet_bytes,
                ..
            } => {
                if !(rate_bps.is_finite() && (1000.0..=MAX_CBR_RATE_BPS).contains(rate_bps)) {
                    return Err(err(
                        &format!("{at}.rate_bps"),
                        format!("is {}, must be in [1000, 1e10] bit/s", show(*rate_bps)),
                    ));
                }
                if !(64..=1500).contains(packet_bytes) {
                    return Err(err(
                        &format!("{at}.packet_bytes"),
                        format!("is {packet_bytes}, must be within [64, 1500] (the MTU)"),
                    ));
                }
            }
            CrossTraffic::TcpBulk { .. } => {}
        }
    }
    Ok(())
}

/// The queue limit of a link, checked after every link's other fields: a
/// default queue is derived from the rate and delays, so an absurd rate or
/// delay must be reported at its own field first.
fn validate_queue(
    link: &LinkSpec,
    at: &str,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    crate::queue::QueueLimit::from_spec(&link.queue)
        .map_err(|m| err(&format!("{at}.queue.limit"), m))?;
    let too_big = match link.queue {
        QueueSpec::Packets { limit } => {
            (limit > MAX_QUEUE_PACKETS).then(|| format!("{MAX_QUEUE_PACKETS} packets"))
        }
        QueueSpec::Bytes { limit } => {
            (limit > MAX_QUEUE_BYTES).then(|| format!("{MAX_QUEUE_BYTES} bytes"))
        }
        QueueSpec::Ms { limit } => (limit > MAX_DELAY_MS).then(|| format!("{MAX_DELAY_MS} ms")),
    };
    if let Some(max) = too_big {
        return Err(err(
            &format!("{at}.queue.limit"),
            format!("is larger than the emulator allows ({max})"),
        ));
    }
    Ok(())
}

fn validate_link(
    link: &LinkSpec,
    at: &str,
    duration_s: f64,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let non_negative = |field: &str, v: f64| -> Result<(), ScenarioError> {
        if v.is_finite() && (0.0..=MAX_DELAY_MS).contains(&v) {
            Ok(())
        } else {
            Err(err(
                &format!("{at}.{field}"),
                format!("is {}, must be a number in [0, {MAX_DELAY_MS}] ms", show(v)),
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
            if !(bps.is_finite() && (MIN_RATE_BPS..=MAX_RATE_BPS).contains(bps)) {
                return Err(err(
                    &format!("{at}.rate.bps"),
                    format!("is {}, must be in [1000, 1e12] bit/s", show(*bps)),
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
    let mut previous_t_s = 0.0_f64;
    for (i, event) in link.schedule.iter().enumerate() {
        let ev = format!("{at}.schedule[{i}]");
        let t_s = event.t_s();
        if !(t_s.is_finite() && t_s >= 0.0 && t_s < duration_s) {
            return Err(err(
                &format!("{ev}.t_s"),
                format!("is {t_s}, must be in [0, duration_s = {duration_s})"),
            ));
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
            if !(until_s.is_finite() && until_s > t_s && until_s <= duration_s) {
                return Err(err(
                    &format!("{ev}.until_s"),
                    format!(
                        "is {until_s}, must be greater than t_s = {t_s} and at most \
                         duration_s = {duration_s}"
                    ),
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
                    if !(value.is_finite() && (MIN_RATE_BPS..=MAX_RATE_BPS).contains(&value)) {
                        return Err(err(
                            &field_at,
                            format!("is {}, must be in [1000, 1e12] (rate_bps)", show(value)),
                        ));
                    }
                }
                Field::DelayMs | Field::JitterMs => {
                    if !(value.is_finite() && (0.0..=MAX_DELAY_MS).contains(&value)) {
                        return Err(err(
                            &field_at,
                            format!("is {}, must be in [0, {MAX_DELAY_MS}] ms", show(value)),
                        ));
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
                            format!("is {value}, must be a probability in [0, 1] (loss_p)"),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
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
        assert!(error_of(&v).field.contains("satellite"));
    }

    fn with_paths(names: &[&str]) -> Value {
        let mut v = scenario();
        let paths: serde_json::Map<String, Value> = names
            .iter()
            .map(|n| (n.to_string(), json!({"up": link(), "down": link()})))
            .collect();
        v["paths"] = Value::Object(paths);
        v
    }

    #[test]
    fn one_to_eight_paths_with_any_valid_names() {
        for n in [1usize, 3, 8] {
            let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            let s = parse(&with_paths(&refs).to_string(), "ok.json").unwrap();
            assert_eq!(s.links().len(), 2 * n);
            // File order is link order (NFQUEUE base + index).
            assert_eq!(
                s.links()[2 * n - 1].0,
                LinkLabel::Path(format!("p{}", n - 1))
            );
            assert_eq!(s.links()[2 * n - 1].1, Direction::Down);
        }
        for n in [0usize, 9] {
            let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            let e = error_of(&with_paths(&refs));
            assert_eq!(e.field, "paths", "{e}");
            assert!(e.message.contains(&format!("has {n} paths")), "{e}");
        }
        for bad in ["Wifi", "1path", "a-b", "averyverylongname", "lo"] {
            let e = error_of(&with_paths(&["wifi", bad]));
            assert_eq!(e.field, format!("paths.{bad}"), "{e}");
        }
    }

    #[test]
    fn bottlenecks_reference_known_paths_once_per_direction() {
        let mut v = with_paths(&["wifi", "lte", "fiveg"]);
        v["bottlenecks"] = json!({"core": {"paths": ["wifi", "lte"], "down": link()}});
        let s = parse(&v.to_string(), "ok.json").unwrap();
        assert_eq!(s.links().len(), 7);
        assert_eq!(s.bottleneck_of("lte", Direction::Down), Some("core"));
        assert_eq!(s.bottleneck_of("lte", Direction::Up), None);
        assert_eq!(s.bottleneck_of("fiveg", Direction::Down), None);

        let cases: Vec<(Value, &str, &str)> = vec![
            (
                json!({"core": {"paths": ["wifi", "sat"], "down": link()}}),
                "bottlenecks.core.paths[1]",
                "not a path",
            ),
            (
                json!({"core": {"paths": ["wifi"], "down": link()},
                    "edge": {"paths": ["lte", "wifi"], "down": link(), "up": link()}}),
                "bottlenecks.edge.paths[1]",
                "already traverses bottleneck \"core\" in direction down",
            ),
            (
                json!({"core": {"paths": [], "down": link()}}),
                "bottlenecks.core.paths",
                "empty",
            ),
            (
                json!({"core": {"paths": ["wifi"]}}),
                "bottlenecks.core",
                "neither",
            ),
            (
                json!({"core": {"paths": ["wifi", "wifi"], "up": link()}}),
                "bottlenecks.core.paths[1]",
                "twice",
            ),
        ];
        for (b, field, words) in cases {
            let mut v = with_paths(&["wifi", "lte", "fiveg"]);
            v["bottlenecks"] = b.clone();
            let e = error_of(&v);
            assert_eq!(e.field, field, "{b}: {e}");
            assert!(e.message.contains(words), "{b}: {e}");
        }
        // The same path in two bottlenecks of different directions is fine.
        let mut v = with_paths(&["wifi", "lte"]);
        v["bottlenecks"] = json!({"a": {"paths": ["wifi"], "down": link()},
                                  "b": {"paths": ["wifi"], "up": link()}});
        parse(&v.to_string(), "ok.json").unwrap();
    }

    #[test]
    fn cross_traffic_is_checked() {
        let ok = json!({"kind": "tcp_bulk", "path": "wifi", "direction": "down", "count": 2,
                        "start_s": 0.0, "stop_s": 60.0, "cc": "cubic"});
        let mut v = scenario();
        v["cross_traffic"] = json!([ok.clone(),
            {"kind": "udp_cbr", "path": "lte", "direction": "up", "count": 1, "start_s": 5.0,
             "stop_s": 10.0, "rate_bps": 2e6, "packet_bytes": 1200},
            {"kind": "tcp_onoff", "path": "lte", "direction": "down", "count": 1, "start_s": 0.0,
             "stop_s": 100.0, "cc": "reno", "on_s": 2.0, "off_s": 3.0}]);
        assert_eq!(
            parse(&v.to_string(), "ok.json")
                .unwrap()
                .cross_traffic
                .len(),
            3
        );
        let bad: Vec<(&str, Value, &str)> = vec![
            ("path", json!("sat"), "cross_traffic[0].path"),
            ("count", json!(0), "cross_traffic[0].count"),
            ("count", json!(51), "cross_traffic[0].count"),
            ("start_s", json!(180.0), "cross_traffic[0].start_s"),
            ("stop_s", json!(200.0), "cross_traffic[0].stop_s"),
            ("cc", json!("Cubic!"), "cross_traffic[0].cc"),
        ];
        for (key, value, field) in bad {
            let mut item = ok.clone();
            item[key] = value.clone();
            let mut v = scenario();
            v["cross_traffic"] = json!([item]);
            let e = error_of(&v);
            assert_eq!(e.field, field, "{key} = {value}: {e}");
        }
        let mut v = scenario();
        v["cross_traffic"] = json!([{"kind": "udp_cbr", "path": "lte", "direction": "up",
            "count": 1, "start_s": 5.0, "stop_s": 10.0, "rate_bps": 1e30, "packet_bytes": 1200}]);
        assert_eq!(error_of(&v).field, "cross_traffic[0].rate_bps");
    }

    #[test]
    fn magnitudes_the_emulator_cannot_use_are_refused() {
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "rate",
                json!({"kind": "constant", "bps": 1e30}),
                "paths.wifi.up.rate.bps",
            ),
            ("delay_ms", json!(1e300), "paths.wifi.up.delay_ms"),
            (
                "queue",
                json!({"kind": "bytes", "limit": 1u64 << 60}),
                "paths.wifi.up.queue.limit",
            ),
        ];
        for (key, value, field) in cases {
            let mut v = scenario();
            v["paths"]["wifi"]["up"][key] = value.clone();
            assert_eq!(error_of(&v).field, field, "{key} = {value}");
        }
        let mut v = scenario();
        v["duration_s"] = json!(1e300);
        assert_eq!(error_of(&v).field, "duration_s");
        let mut v = scenario();
        v["paths"]["wifi"]["up"]["queue"] = json!({"kind": "packets", "limit": 1e30});
        assert!(error_of(&v).field.contains("queue"));
    }

    /// netem-scenarios/resolved.schema.json is generated from these types;
    /// regenerate it with `linkemu --print-schema > netem-scenarios/resolved.schema.json`.
    #[test]
    fn committed_resolved_schema_matches_the_types() {
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../netem-scenarios/resolved.schema.json"
        );
        let committed: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap())
            .expect("resolved.schema.json is JSON");
        assert!(
            committed == json_schema(),
            "netem-scenarios/resolved.schema.json drifted from emulator/src/spec.rs; \
             regenerate: emulator/target/release/linkemu --print-schema > \
             netem-scenarios/resolved.schema.json"
        );
    }

    #[test]
    fn the_schema_publishes_the_rate_limits_validate_applies() {
        let schema = json_schema();
        let constant = schema["$defs"]["RateSpec"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["properties"]["kind"]["const"] == "constant")
            .expect("a constant-rate kind");
        let bps = &constant["properties"]["bps"];
        assert_eq!(bps["x-minimum"].as_f64(), Some(MIN_RATE_BPS));
        assert_eq!(bps["x-maximum"].as_f64(), Some(MAX_RATE_BPS));
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
