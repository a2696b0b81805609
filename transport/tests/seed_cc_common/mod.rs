//! Shared harness of the seed congestion-control checks (`seed003_rates.rs`,
//! `coupled_bbr_sim.rs`, `hbdp_vs_mpcubic.rs`): build links and flows on `sim::Net`, keep every
//! sender's stream full, and measure per-path delivered rates over a window after a warm-up.
#![allow(dead_code)]

use std::time::Duration;

use mptransport::cc::CcConfig;
use mptransport::connection::Config;
use mptransport::sim::{BulkPump, LinkId, LinkSpec, Net, Route, per_path};
use mptransport::units::Bandwidth;

/// A connection config running `cc` with `--cc-opt` style options.
pub fn cfg(cc: &str, opts: &[(&str, &str)]) -> Config {
    let mut cc_config = CcConfig::default();
    for (k, v) in opts {
        cc_config.options.insert(k.to_string(), v.to_string());
    }
    Config {
        cc: cc.into(),
        cc_config,
        recv_window_bytes: Some(64 << 20),
        send_buffer_bytes: 64 << 20,
        ..Config::default()
    }
}

/// A bottleneck link: `mbps`, `one_way_ms` delay, drop-tail queue of `queue_bdp` × the BDP
/// of a 2·`one_way_ms` round trip (at least 10 packets), random loss `loss`.
pub fn bottleneck(net: &mut Net, mbps: f64, one_way_ms: f64, queue_bdp: f64, loss: f64) -> LinkId {
    let rate = Bandwidth::from_mbps(mbps);
    let one_way = Duration::from_secs_f64(one_way_ms / 1e3);
    let bdp = rate.bytes_in(one_way * 2) * queue_bdp;
    net.add_link(LinkSpec {
        rate: Some(rate),
        delay: one_way,
        loss,
        queue_limit_bytes: (bdp as u64).max(15_000),
    })
}

/// An uncongested return link (ACKs) with `one_way_ms` delay.
pub fn ack_link(net: &mut Net, one_way_ms: f64) -> LinkId {
    net.add_link(LinkSpec {
        rate: None,
        delay: Duration::from_secs_f64(one_way_ms / 1e3),
        loss: 0.0,
        queue_limit_bytes: u64::MAX,
    })
}

/// A route whose data (server→client) crosses `down`, ACKs a fresh return link.
pub fn route(net: &mut Net, name: &str, down: LinkId, one_way_ms: f64) -> Route {
    Route {
        name: name.into(),
        up: ack_link(net, one_way_ms),
        down,
    }
}

/// What one path of one flow did in the measured window.
#[derive(Clone, Debug)]
pub struct PathRate {
    pub path: String,
    /// Bytes acknowledged on the path over the window, Mbit/s.
    pub mbps: f64,
    /// Packets declared lost on the path in the window.
    pub lost_pkts: u64,
    /// Retransmission timeouts on the path in the window.
    pub rtos: u64,
}

/// One flow's result.
#[derive(Clone, Debug)]
pub struct FlowRates {
    /// Bytes the client read over the window, Mbit/s.
    pub goodput_mbps: f64,
    pub paths: Vec<PathRate>,
}

impl FlowRates {
    pub fn path(&self, name: &str) -> &PathRate {
        self.paths
            .iter()
            .find(|p| p.path == name)
            .unwrap_or_else(|| panic!("no path {name} in {:?}", self.paths))
    }
    pub fn lost_pkts(&self) -> u64 {
        self.paths.iter().map(|p| p.lost_pkts).sum()
    }
}

type Counters = Vec<Vec<(String, u64, u64, u64)>>;

fn counters(net: &Net) -> Counters {
    net.flows
        .iter()
        .map(|f| {
            per_path(f.server.as_ref(), |x| {
                let c = &x.counters;
                (c.bytes_acked_total, c.pkts_lost_total, c.rto_total)
            })
            .into_iter()
            .map(|(name, (acked, lost, rto))| (name, acked, lost, rto))
            .collect()
        })
        .collect()
}

/// Runs every flow as a bulk download for `duration` of virtual time and reports rates over
/// [`warmup`, `duration`]. `on_tick(net, t)` is called about every 10 ms of virtual time
/// (for link changes or samples).
pub fn run_rates(
    net: &mut Net,
    duration: Duration,
    warmup: Duration,
    mut on_tick: impl FnMut(&mut Net, Duration),
) -> Vec<FlowRates> {
    let start = net.now;
    let end = start + duration;
    let warm_end = start + warmup;
    let n = net.flows.len();
    let mut read_at_warm: Option<Vec<u64>> = None;
    let mut at_warm: Option<Counters> = None;
    let mut next_tick = start;
    let mut bulk = BulkPump::start(net);
    while net.now < end {
        bulk.pump(net);
        if at_warm.is_none() && net.now >= warm_end {
            at_warm = Some(counters(net));
            read_at_warm = Some(bulk.read_total.clone());
        }
        if net.now >= next_tick {
            on_tick(net, net.now - start);
            next_tick = net.now + Duration::from_millis(10);
        }
        if !net.step() {
            break;
        }
    }
    let read_total = bulk.read_total;
    let secs = (net.now - warm_end.min(net.now)).as_secs_f64().max(1e-9);
    let before = at_warm.unwrap_or_else(|| counters(net));
    let read_before = read_at_warm.unwrap_or_else(|| read_total.clone());
    let after = counters(net);
    (0..n)
        .map(|i| FlowRates {
            goodput_mbps: (read_total[i] - read_before[i]) as f64 * 8.0 / secs / 1e6,
            paths: after[i]
                .iter()
                .map(|(name, acked, lost, rto)| {
                    let b = before[i].iter().find(|x| &x.0 == name);
                    let (a0, l0, r0) = b.map_or((0, 0, 0), |x| (x.1, x.2, x.3));
                    PathRate {
                        path: name.clone(),
                        mbps: (acked - a0) as f64 * 8.0 / secs / 1e6,
                        lost_pkts: lost - l0,
                        rtos: rto - r0,
                    }
                })
                .collect(),
        })
        .collect()
}

/// Simulated seconds of a benchmark: environment variable `var` (whole seconds), else
/// `default`.
pub fn env_secs(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// |got − want| ≤ tol·want, with a floor `abs` for values near zero.
pub fn within(got: f64, want: f64, tol: f64, abs: f64) -> bool {
    (got - want).abs() <= (tol * want).max(abs)
}

/// Path names of the HBDP pair (`hbdp_vs_mpcubic.rs`, `hbdp_rho.rs`): the long fat path and
/// the short one.
pub const HIGH_BDP_LONG: &str = "p500x100";
pub const HIGH_BDP_SHORT: &str = "p100x20";

/// The HBDP pair: 500 Mbit/s × 100 ms RTT and 100 Mbit/s × 20 ms RTT, one-BDP drop-tail
/// queues, 0.01 % random loss on the data direction; one `cc` connection over both. Returns
/// the two bottleneck links (long, short).
pub fn high_bdp_pair(net: &mut Net, cc: &str, opts: &[(&str, &str)]) -> (LinkId, LinkId) {
    let long = bottleneck(net, 500.0, 50.0, 1.0, 1e-4);
    let short = bottleneck(net, 100.0, 10.0, 1.0, 1e-4);
    let rl = route(net, HIGH_BDP_LONG, long, 50.0);
    let rs = route(net, HIGH_BDP_SHORT, short, 10.0);
    net.add_flow(cfg(cc, opts), cfg(cc, opts), &[rl, rs]);
    (long, short)
}

/// Simulated time and warm-up of the HBDP pair's runs: `HBDP_SIM_S` seconds (default 60), the
/// first third, at most 10 s, as warm-up.
pub fn high_bdp_run_length() -> (Duration, Duration) {
    let secs = env_secs("HBDP_SIM_S", 60);
    (
        Duration::from_secs(secs),
        Duration::from_secs(10.min(secs / 3)),
    )
}
