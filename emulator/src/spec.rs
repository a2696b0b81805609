//! The resolved scenario's types (docs/CONTRACTS.md §4): the links, bottlenecks
//! and cross traffic that `testbed/scenario.py` writes and the emulator (and the
//! simulator) read. Only the shape lives here; which values are valid is
//! `scenario.rs`'s business, so the link model (`link`, `queue`, `rate`, `loss`,
//! `schedule`) depends on these types and never on the validation.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;

/// Which way a link carries packets: `up` = client to server, `down` = server to client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Up,
    Down,
}

impl Direction {
    pub const BOTH: [Direction; 2] = [Direction::Up, Direction::Down];
    pub fn name(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
        }
    }
}

/// A resolved scenario (schema 1). `bottlenecks` and `cross_traffic` are
/// absent from files that have none, so two-path files resolve as before.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "Resolved scenario (docs/CONTRACTS.md section 4)",
    description = "What `python -m testbed.scenario resolve` produces and linkemu reads. Generated from emulator/src/spec.rs by `linkemu --print-schema`; do not edit by hand. Value ranges and cross-references are checked by `linkemu --validate`."
)]
pub struct Scenario {
    /// Format version; this emulator reads 1.
    pub schema: u32,
    pub name: String,
    /// The scenario file it was resolved from.
    pub source: String,
    pub duration_s: f64,
    /// 1 to 8 paths, in the order of the file: path i gets NFQUEUE numbers
    /// base + 2i (up) and base + 2i + 1 (down), and the i-th address block.
    pub paths: IndexMap<String, PathLinks>,
    /// Shared links that some paths traverse after their own link.
    #[serde(default)]
    #[schemars(default)]
    pub bottlenecks: IndexMap<String, Bottleneck>,
    /// Flows other than the multipath connection's, on given paths.
    #[serde(default)]
    #[schemars(default)]
    pub cross_traffic: Vec<CrossTraffic>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathLinks {
    pub up: LinkSpec,
    pub down: LinkSpec,
}

/// A link shared by several paths: in each direction it has, the packets of
/// every listed path cross it after their own path's link, in one queue.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bottleneck {
    /// Names of the paths that traverse it (at least one).
    pub paths: Vec<String>,
    /// The shared link client to server, if this bottleneck has that direction.
    #[serde(default)]
    pub up: Option<LinkSpec>,
    /// The shared link server to client, if this bottleneck has that direction.
    #[serde(default)]
    pub down: Option<LinkSpec>,
}

impl Bottleneck {
    pub fn link(&self, dir: Direction) -> Option<&LinkSpec> {
        match dir {
            Direction::Up => self.up.as_ref(),
            Direction::Down => self.down.as_ref(),
        }
    }
}

/// Flows that share a path with the multipath connection (and whatever
/// bottleneck that path traverses). The testbed starts `count` flows from the
/// path's cross-traffic addresses; the emulator only sees their packets.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CrossTraffic {
    /// Kernel TCP sending as fast as its congestion controller lets it.
    TcpBulk {
        path: String,
        direction: Direction,
        count: u32,
        start_s: f64,
        stop_s: f64,
        /// Kernel congestion control (net.ipv4.tcp_available_congestion_control).
        cc: String,
    },
    /// Kernel TCP that sends for `on_s`, pauses for `off_s`, and repeats.
    TcpOnoff {
        path: String,
        direction: Direction,
        count: u32,
        start_s: f64,
        stop_s: f64,
        cc: String,
        on_s: f64,
        off_s: f64,
    },
    /// UDP at a constant bit rate (IP bytes per second x 8).
    UdpCbr {
        path: String,
        direction: Direction,
        count: u32,
        start_s: f64,
        stop_s: f64,
        rate_bps: f64,
        /// IP packet size, bytes (28 of them are IP and UDP headers).
        packet_bytes: u32,
    },
}

/// The fields every kind of cross traffic has.
pub struct CrossCommon<'a> {
    pub path: &'a str,
    pub direction: Direction,
    pub count: u32,
    pub start_s: f64,
    pub stop_s: f64,
}

impl CrossTraffic {
    pub fn common(&self) -> CrossCommon<'_> {
        match self {
            CrossTraffic::TcpBulk {
                path,
                direction,
                count,
                start_s,
                stop_s,
                ..
            }
            | CrossTraffic::TcpOnoff {
                path,
                direction,
                count,
                start_s,
                stop_s,
                ..
            }
            | CrossTraffic::UdpCbr {
                path,
                direction,
                count,
                start_s,
                stop_s,
                ..
            } => CrossCommon {
                path,
                direction: *direction,
                count: *count,
                start_s: *start_s,
                stop_s: *stop_s,
            },
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: RateSpec,
    pub delay_ms: f64,
    pub jitter_ms: f64,
    pub loss: LossSpec,
    pub queue: QueueSpec,
    pub schedule: Vec<ScheduleEvent>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RateSpec {
    Constant {
        /// Bit/s, 1000 to 1e12 (checked by `linkemu --validate`; published as
        /// x-minimum/x-maximum, which no schema validator applies).
        #[schemars(extend("x-minimum" = 1000.0, "x-maximum" = 1e12))]
        bps: f64,
    },
    Trace {
        file: PathBuf,
        packet_bytes: u32,
    },
    Unlimited,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    Packets { limit: u64 },
    Bytes { limit: u64 },
    Ms { limit: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
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

/// Where a link sits: on a path (own link, fed by NFQUEUE) or a bottleneck.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkLabel {
    Path(String),
    Bottleneck(String),
}

impl LinkLabel {
    pub fn name(&self) -> &str {
        match self {
            LinkLabel::Path(n) | LinkLabel::Bottleneck(n) => n,
        }
    }
    /// `paths.NAME` or `bottlenecks.NAME`, as in error messages.
    pub fn field_prefix(&self) -> String {
        match self {
            LinkLabel::Path(n) => format!("paths.{n}"),
            LinkLabel::Bottleneck(n) => format!("bottlenecks.{n}"),
        }
    }
}

impl Scenario {
    /// The link of `path` in direction `dir` ("up" or "down").
    pub fn link(&self, path: &str, dir: &str) -> &LinkSpec {
        let p = &self.paths[path];
        match dir {
            "up" => &p.up,
            "down" => &p.down,
            _ => panic!("direction {dir:?} is not up or down"),
        }
    }

    /// Every link in emulator order: each path's up then down (NFQUEUE base +
    /// index), then each bottleneck's up, then down (if it has them).
    pub fn links(&self) -> Vec<(LinkLabel, Direction, &LinkSpec)> {
        let mut out = Vec::new();
        for (name, p) in &self.paths {
            out.push((LinkLabel::Path(name.clone()), Direction::Up, &p.up));
            out.push((LinkLabel::Path(name.clone()), Direction::Down, &p.down));
        }
        for (name, b) in &self.bottlenecks {
            for dir in Direction::BOTH {
                if let Some(link) = b.link(dir) {
                    out.push((LinkLabel::Bottleneck(name.clone()), dir, link));
                }
            }
        }
        out
    }

    /// The bottleneck (its name) that `path` traverses in `dir`, if any.
    pub fn bottleneck_of(&self, path: &str, dir: Direction) -> Option<&str> {
        self.bottlenecks
            .iter()
            .find(|(_, b)| b.link(dir).is_some() && b.paths.iter().any(|p| p == path))
            .map(|(name, _)| name.as_str())
    }
}
