//! mpsim: one simulated transfer over modelled paths in virtual time (deterministic).
//!
//! mpsim --cc bbr --sched lrf --path wifi:50:20:0.01 --path lte:20:40:0.02 --bytes 20000000
//!
//! Options: `--sched-trace FILE` (one JSON line per scheduler decision of the sender),
//! `--app-write-bytes N --app-interval-ms M` (application-limited sender: N bytes every M ms
//! until --bytes; prints per-write delivery delays), `--break-path lte:5` (total outage of
//! that path from 5 s on).
//!
//! `--scenario NAME_OR_RESOLVED_JSON` takes the paths from a scenario instead of `--path`: a
//! resolved scenario file (docs/CONTRACTS.md section 4), or a scenario name/TOML file, which is
//! resolved with `python -m testbed.scenario resolve NAME --seed SEED` first (so noise is
//! expanded with the same seed as an emulated trial). Every link is linkemu's own model, seeded
//! as linkemu seeds it for `--seed`; schedules, outages, traces, jitter, Gilbert-Elliott
//! loss, shared bottlenecks and cross traffic (TCP with this transport's CCs, UDP CBR) apply.
//! The output then also has per-link counters (`links`), including the random drops expected
//! from the loss probability in force at each arrival, and `bottlenecks` / `cross_traffic`.
//!
//! `--duration-s 60 --measure-from-s 10` runs a time-based bulk transfer instead (iperf-style:
//! goodput over 10-60 s, start-up excluded); `--loss-direction down` drops at random on the
//! data direction only.
//!
//! A path is name:rate_mbit_s:one_way_delay_ms:loss[:queue_bytes] (same both directions
//! unless --loss-direction down; queue default one BDP of the round trip). Prints one JSON object: goodput, virtual and
//! wall duration, SHA-256 check, clean close, per-path bytes. Exit 0 if byte-exact and clean,
//! 1 if not, 2 on bad arguments.

use std::process::ExitCode;
use std::time::{Duration, Instant as WallInstant};

use clap::Parser;
use mptransport::connection::Config;
use mptransport::runtime::sched_trace::SchedTraceWriter;
use mptransport::runtime::stats::StatsLog;
use mptransport::sim::{
    AppLimitedResult, AppLimitedSpec, LinkCounters, LinkSpec, Pair, SimPath, TimedResult,
    TimedSpec, TransferResult, TransferSpec, per_path, run_app_limited, run_timed,
    run_transfer_with,
};
use mptransport::{Bandwidth, cc, sched};
use trace::{finish_trace, take_trace};

#[path = "mpsim/trace.rs"]
mod trace;

#[derive(Parser, Debug)]
#[command(
    name = "mpsim",
    about = "Deterministic simulation of one multipath transfer"
)]
struct Cli {
    #[arg(long, default_value = "bbr")]
    cc: String,
    #[arg(long, default_value = "lrf")]
    sched: String,
    /// name:rate_mbit_s:delay_ms:loss[:queue_bytes], repeatable.
    #[arg(
        long = "path",
        required_unless_present = "scenario",
        conflicts_with = "scenario"
    )]
    paths: Vec<String>,
    /// A scenario name (netem-scenarios/NAME.toml), TOML file, or resolved JSON file.
    #[arg(long, conflicts_with = "break_path")]
    scenario: Option<String>,
    /// Server -> client bytes.
    #[arg(long, default_value_t = 20_000_000)]
    bytes: u64,
    /// Client -> server bytes.
    #[arg(long = "request-bytes", default_value_t = 1000)]
    request_bytes: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Congestion-control option key=value, repeatable (e.g. --cc-opt hystart=false).
    #[arg(long = "cc-opt")]
    cc_opts: Vec<String>,
    /// Scheduler option key=value, repeatable (e.g. --sched-opt predict=always).
    #[arg(long = "sched-opt")]
    sched_opts: Vec<String>,
    /// Write the sender's scheduler decisions here, one JSON line each
    /// (docs/CONTRACTS.md §5.7); t_ns counts from the start of the run.
    #[arg(long = "sched-trace")]
    sched_trace: Option<std::path::PathBuf>,
    /// Application-limited sender: write this many bytes every --app-interval-ms instead of
    /// the whole --bytes at once (--bytes is then the total); reports per-write delays.
    #[arg(long = "app-write-bytes")]
    app_write_bytes: Option<u64>,
    #[arg(long = "app-interval-ms", default_value_t = 1000)]
    app_interval_ms: u64,
    /// Fixed receive window each side offers, bytes. Default: autotuned as Linux does
    /// (tcp_rmem 4096/131072/6291456, dynamic right-sizing at the connection).
    #[arg(long = "recv-window-bytes")]
    recv_window_bytes: Option<u64>,
    /// DASH player model: play this MPD (its segment files beside it) over the simulated
    /// connection instead of a bulk transfer; writes player.jsonl lines to --player-out.
    #[arg(long = "player-mpd")]
    player_mpd: Option<std::path::PathBuf>,
    #[arg(long = "player-out")]
    player_out: Option<std::path::PathBuf>,
    /// With --player-mpd: write transport-server.jsonl and transport-client.jsonl here (the
    /// `subflow` and `conn` lines mpproxy writes: see --stats-interval-ms).
    #[arg(long = "transport-log-dir")]
    transport_log_dir: Option<std::path::PathBuf>,
    /// With --transport-log-dir: write the server's (data sender's) `subflow` and `conn` lines
    /// every this many milliseconds of virtual time (the emulated transport logs both sides
    /// every 100 ms), and both sides' once at the end; 0 = at the end only.
    #[arg(long = "stats-interval-ms", default_value_t = 1000)]
    stats_interval_ms: u64,
    /// Seconds of video to play (at most the MPD's duration).
    #[arg(long = "video-duration", default_value_t = 60.0)]
    video_duration_s: f64,
    /// With --player-mpd: when the player's page opens (s of the scenario's clock; its
    /// `start` event, from which the start-up delay counts). The testbed passes the median of
    /// its emulated trials (testbed/engine_sim.py); 0 = at once.
    #[arg(long = "player-page-start-s", default_value_t = 0.0)]
    player_page_start_s: f64,
    /// With --player-mpd: when the player's first request goes out (s of the scenario's
    /// clock; page, dash.js and MPD loaded). 0 = at once.
    #[arg(long = "player-first-request-s", default_value_t = 0.0)]
    player_first_request_s: f64,
    /// With --player-mpd: a request of the page, AT_S:BODY_BYTES[:CONN] (s of the scenario's
    /// clock, response body in bytes, connection: 0 = the video's, the default, before its
    /// first segment; 1, 2, ... = further connections of the page over the same paths, opened
    /// with it), in order per connection, repeatable (the testbed passes the page's files as
    /// the emulated trials fetch them: testbed/engine_sim.py).
    #[arg(long = "player-page-request")]
    player_page_request: Vec<String>,
    /// Break a path mid-run: name:at_s (total outage of that path, both directions).
    #[arg(long = "break-path")]
    break_path: Option<String>,
    /// Time-based bulk transfer (iperf-style) instead of --bytes: the server sends for this
    /// many seconds of virtual time; goodput_bps counts what the client read from
    /// --measure-from-s on (start-up excluded), goodput_whole_bps the whole run.
    #[arg(long = "duration-s", conflicts_with_all = ["app_write_bytes", "player_mpd"])]
    duration_s: Option<f64>,
    /// With --duration-s: the start-up interval goodput_bps leaves out, seconds (below
    /// --duration-s).
    #[arg(
        long = "measure-from-s",
        default_value_t = 0.0,
        requires = "duration_s"
    )]
    measure_from_s: f64,
    /// With --duration-s: also report each path's acknowledged rate per bin of this many
    /// seconds (acked_bps_per_bin_per_path), for traffic that moves between paths.
    #[arg(long = "bin-s", requires = "duration_s")]
    bin_s: Option<f64>,
    /// With --path: which directions of each path drop packets at random: `both` (data and
    /// ACKs) or `down` (the server -> client data direction only, as netem on one interface).
    #[arg(long = "loss-direction", default_value = "both", value_parser = ["both", "down"])]
    loss_direction: String,
}

/// `AT_S:BODY_BYTES[:CONN]` of --player-page-request.
fn parse_page_request(s: &str) -> Result<mptransport::sim::player::PageRequest, String> {
    let expected = "expected AT_S:BODY_BYTES[:CONN], e.g. 1.43:21074 or 1.38:801049:2 \
                    (seconds from 0 to 600, bytes, connection 0 to 8; 0 = the video's)";
    let fields: Vec<&str> = s.split(':').collect();
    if !(2..=3).contains(&fields.len()) {
        return Err(expected.into());
    }
    let at: f64 = fields[0].parse().map_err(|_| expected)?;
    let body_bytes: u64 = fields[1].parse().map_err(|_| expected)?;
    let conn: usize = match fields.get(2) {
        Some(c) => c.parse().map_err(|_| expected)?,
        None => 0,
    };
    if !(at.is_finite() && (0.0..=600.0).contains(&at)) || conn > 8 {
        return Err(expected.into());
    }
    Ok(mptransport::sim::player::PageRequest {
        at: Duration::from_secs_f64(at),
        body_bytes,
        conn,
    })
}

fn parse_path(s: &str, loss_down_only: bool) -> Result<SimPath, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let err = || format!("--path '{s}' is not name:rate_mbit_s:delay_ms:loss[:queue_bytes]");
    if !(4..=5).contains(&parts.len()) || parts[0].is_empty() {
        return Err(err());
    }
    let rate: f64 = parts[1].parse().map_err(|_| err())?;
    let delay_ms: f64 = parts[2].parse().map_err(|_| err())?;
    let loss: f64 = parts[3].parse().map_err(|_| err())?;
    if !(rate > 0.0 && delay_ms >= 0.0 && (0.0..1.0).contains(&loss)) {
        return Err(format!(
            "--path '{s}': need rate > 0, delay ≥ 0, loss in [0, 1)"
        ));
    }
    let mut spec = LinkSpec::bdp_queue(
        Bandwidth::from_mbps(rate),
        Duration::from_secs_f64(delay_ms / 1e3),
        loss,
    );
    if let Some(q) = parts.get(4) {
        spec.queue_limit_bytes = q.parse().map_err(|_| err())?;
    }
    let up = if loss_down_only {
        LinkSpec { loss: 0.0, ..spec }
    } else {
        spec
    };
    Ok(SimPath {
        name: parts[0].to_string(),
        up,
        down: spec,
    })
}

/// `--break-path name:at_s`: the path's index and the outage start.
fn parse_break(s: &str, paths: &[SimPath]) -> Result<(usize, Duration), String> {
    let err =
        || format!("--break-path '{s}' is not name:at_s with a configured path name and at_s ≥ 0");
    let (name, at) = s.split_once(':').ok_or_else(err)?;
    let idx = paths.iter().position(|p| p.name == name).ok_or_else(err)?;
    let at: f64 = at.parse().map_err(|_| err())?;
    if !(at.is_finite() && at >= 0.0) {
        return Err(err());
    }
    Ok((idx, Duration::from_secs_f64(at)))
}

/// The repository root (the parent of this crate), where `testbed/` and `.venv/` live.
fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default()
}

/// Loads a resolved scenario, resolving a name or TOML file with the testbed first.
fn load_scenario(arg: &str, seed: u64) -> Result<linkemu::scenario::Scenario, String> {
    if arg.ends_with(".json") {
        return linkemu::scenario::load(std::path::Path::new(arg)).map_err(|e| e.to_string());
    }
    let root = repo_root();
    let venv = root.join(".venv/bin/python");
    let python = if venv.exists() {
        venv
    } else {
        "python3".into()
    };
    let out = std::process::Command::new(&python)
        .args([
            "-m",
            "testbed.scenario",
            "resolve",
            arg,
            "--seed",
            &seed.to_string(),
        ])
        .current_dir(&root)
        .output()
        .map_err(|e| format!("--scenario {arg}: cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "--scenario {arg}: resolving failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    linkemu::scenario::parse(&text, &format!("{arg} (resolved, seed {seed})"))
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let scenario = match cli.scenario.as_deref().map(|s| load_scenario(s, cli.seed)) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            eprintln!("mpsim: {e}");
            return ExitCode::from(2);
        }
    };
    if scenario.is_some() && cli.loss_direction != "both" {
        eprintln!("mpsim: --loss-direction applies to --path links; a scenario sets its own loss");
        return ExitCode::from(2);
    }
    let timed = match cli
        .duration_s
        .map(|d| TimedSpec::from_seconds(d, cli.measure_from_s, cli.bin_s))
        .transpose()
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mpsim: {e}");
            return ExitCode::from(2);
        }
    };
    let loss_down_only = cli.loss_direction == "down";
    let paths: Result<Vec<_>, _> = cli
        .paths
        .iter()
        .map(|p| parse_path(p, loss_down_only))
        .collect();
    let paths = match paths {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mpsim: {e}");
            return ExitCode::from(2);
        }
    };
    let cfg = match config_from_cli(&cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mpsim: {e}");
            return ExitCode::from(2);
        }
    };
    let mut trace = match cli
        .sched_trace
        .as_deref()
        .map(|p| SchedTraceWriter::create(p, 0, "mpsim"))
    {
        None => None,
        Some(Ok(w)) => Some(w),
        Some(Err(e)) => {
            eprintln!("mpsim: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = cc::build(&cfg.cc, &cfg.cc_config) {
        eprintln!("mpsim: --cc: {e}");
        return ExitCode::from(2);
    }
    if let Err(e) = sched::build(&cfg.sched, &cfg.sched_config) {
        eprintln!("mpsim: --sched: {e}");
        return ExitCode::from(2);
    }
    let broken_path = match cli.break_path.as_deref().map(|b| parse_break(b, &paths)) {
        None => None,
        Some(Ok(b)) => Some(b),
        Some(Err(e)) => {
            eprintln!("mpsim: {e}");
            return ExitCode::from(2);
        }
    };
    let wall = WallInstant::now();
    let side_cfg = cfg.clone();
    let mut pair = match &scenario {
        None => Pair::new(cfg.clone(), cfg, &paths, cli.seed),
        Some(s) => match Pair::from_scenario(cfg.clone(), cfg, s, cli.seed) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("mpsim: --scenario: {e}");
                return ExitCode::from(2);
            }
        },
    };
    if let Some(mpd) = cli.player_mpd.as_deref() {
        return play(
            &mut pair,
            &side_cfg,
            mpd,
            &cli,
            scenario.as_ref().map(|s| s.name.clone()),
            trace,
        );
    }
    let mut trace_error: Option<std::io::Error> = None;
    let mut hook = step_hook(broken_path, &mut trace, &mut trace_error);
    let timed_result = timed.map(|spec| run_timed(&mut pair, &spec, &mut hook));
    let (r, app) = if timed_result.is_some() {
        (None, None)
    } else {
        match run_size_based(&mut pair, &cli, &mut hook) {
            Ok(results) => results,
            Err(e) => {
                eprintln!("mpsim: {e}");
                return ExitCode::from(2);
            }
        }
    };
    drop(hook); // gives back `trace` and `trace_error`
    if let Err(e) = finish_trace(&mut trace, &mut pair, trace_error) {
        eprintln!("mpsim: --sched-trace: {e}");
        return ExitCode::from(2);
    }
    let (ok, mut out) = bulk_outcome_json(r.as_ref(), app.as_ref(), timed_result.as_ref(), &cli);
    let path_names: Vec<String> = match &scenario {
        Some(s) => s.paths.keys().cloned().collect(),
        None => paths.iter().map(|p| p.name.clone()).collect(),
    };
    let extra = serde_json::json!({
        "scenario": scenario.as_ref().map(|s| s.name.clone()),
        "cc": cli.cc, "sched": cli.sched, "bytes": cli.bytes, "seed": cli.seed,
        "wall_s": wall.elapsed().as_secs_f64(),
        "sched_trace_lines": trace.as_ref().map(|w| w.lines_written),
        "path_broken": broken_path.map(|(i, at)| serde_json::json!({"path": paths[i].name, "at_s": at.as_secs_f64()})),
    });
    let counters = bulk_counters_json(&pair, &path_names);
    if let (Some(o), serde_json::Value::Object(e), serde_json::Value::Object(c)) =
        (out.as_object_mut(), extra, counters)
    {
        o.extend(e);
        o.extend(c);
        o.extend(shared_traffic_json(&pair, &path_names));
    }
    println!("{out}");
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A size-based bulk run: one transfer of --bytes, or application-limited writes of
/// --app-write-bytes every --app-interval-ms.
fn run_size_based(
    pair: &mut Pair,
    cli: &Cli,
    hook: &mut impl FnMut(&mut Pair),
) -> Result<(Option<TransferResult>, Option<AppLimitedResult>), String> {
    match cli.app_write_bytes {
        None => {
            let spec = TransferSpec {
                request_bytes: cli.request_bytes,
                response_bytes: cli.bytes,
                seed: cli.seed,
                ..TransferSpec::default()
            };
            Ok((Some(run_transfer_with(pair, &spec, hook)), None))
        }
        Some(write_bytes) if write_bytes > 0 => {
            let spec = AppLimitedSpec {
                write_bytes,
                interval: Duration::from_millis(cli.app_interval_ms),
                writes: cli.bytes.div_ceil(write_bytes),
                ..AppLimitedSpec::default()
            };
            Ok((None, Some(run_app_limited(pair, &spec, hook))))
        }
        Some(_) => Err("--app-write-bytes must be > 0".into()),
    }
}

/// Both ends' connection config: CC, scheduler and their `--cc-opt`/`--sched-opt` options
/// (not validated here: building them does that), seed, receive window.
fn config_from_cli(cli: &Cli) -> Result<Config, String> {
    let mut cfg = Config {
        cc: cli.cc.clone(),
        sched: cli.sched.clone(),
        seed: cli.seed,
        ..Config::default()
    };
    if let Some(w) = cli.recv_window_bytes {
        cfg.recv_window_bytes = Some(w);
    }
    for (flag, items, options) in [
        ("--cc-opt", &cli.cc_opts, &mut cfg.cc_config.options),
        (
            "--sched-opt",
            &cli.sched_opts,
            &mut cfg.sched_config.options,
        ),
    ] {
        for kv in items {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(format!("{flag} '{kv}' is not key=value"));
            };
            options.insert(k.into(), v.into());
        }
    }
    Ok(cfg)
}

/// Whether the bulk run succeeded (byte-exact and clean; every application write read) and
/// its outcome fields: goodput and closes, or the application-limited delivery delays.
fn bulk_outcome_json(
    r: Option<&TransferResult>,
    app: Option<&AppLimitedResult>,
    timed: Option<&TimedResult>,
    cli: &Cli,
) -> (bool, serde_json::Value) {
    match (r, app, timed) {
        (_, _, Some(t)) => (t.ran_to_the_end(), t.outcome_json()),
        (Some(r), _, None) => (
            r.is_byte_exact_and_clean(),
            serde_json::json!({
                "byte_exact_and_clean": r.is_byte_exact_and_clean(),
                "goodput_bps": r.response_goodput_bps().round(),
                "virtual_s": r.response_done.map(|d| d.as_secs_f64()),
                "outcome": format!("{:?}", r.outcome),
                "client_close": format!("{:?}", r.client_close),
                "server_close": format!("{:?}", r.server_close),
            }),
        ),
        (None, Some(a), None) => {
            let mut ms: Vec<f64> = a.delays.iter().map(|d| d.as_secs_f64() * 1e3).collect();
            ms.sort_by(|x, y| x.total_cmp(y));
            let pct = |q: f64| {
                ms.get(((ms.len().max(1) - 1) as f64 * q).round() as usize)
                    .copied()
            };
            (
                a.outcome.is_ok()
                    && a.bytes_read
                        == cli.bytes.div_ceil(cli.app_write_bytes.unwrap_or(1))
                            * cli.app_write_bytes.unwrap_or(1),
                serde_json::json!({
                    "outcome": format!("{:?}", a.outcome),
                    "app_writes": a.delays.len(),
                    "delivery_delay_ms_p50": pct(0.5),
                    "delivery_delay_ms_p95": pct(0.95),
                    "delivery_delay_ms_max": ms.last(),
                }),
            )
        }
        _ => unreachable!("one mode runs"),
    }
}

/// The sender's loss-recovery counters per path (as the `subflow` stats lines carry them).
fn sender_counters_json(pair: &Pair) -> serde_json::Map<String, serde_json::Value> {
    pair.server
        .as_ref()
        .map(|s| s.subflow_stats())
        .unwrap_or_default()
        .iter()
        .map(|st| {
            let c = &st.counters;
            (
                st.name.clone(),
                serde_json::json!({
                    "pkts_sent_total": c.pkts_sent_total, "pkts_lost_total": c.pkts_lost_total,
                    "pkts_retrans_total": c.pkts_retrans_total, "rto_total": c.rto_total,
                    "tlp_total": c.tlp_total, "recoveries_total": c.recoveries_total,
                }),
            )
        })
        .collect()
}

/// What runs at every simulator step of a bulk run: `--break-path` takes its path down
/// (loss 1 both ways) once its time has come, and the sender's scheduler decisions go to
/// the `--sched-trace` file (the first write error is kept in `trace_error`).
fn step_hook<'a>(
    broken_path: Option<(usize, Duration)>,
    trace: &'a mut Option<SchedTraceWriter>,
    trace_error: &'a mut Option<std::io::Error>,
) -> impl FnMut(&mut Pair) + 'a {
    let mut broken = false;
    move |p: &mut Pair| {
        if let Some((idx, at)) = broken_path
            && !broken
            && p.now.as_nanos() >= at.as_nanos() as u64
        {
            for down in [false, true] {
                let mut dead = p.link_spec(idx, down);
                dead.loss = 1.0;
                p.set_link(idx, down, dead);
            }
            broken = true;
        }
        take_trace(trace, p, trace_error);
    }
}

/// The bulk report's counters: per link, the sender's per path (loss recovery, data bytes),
/// reinjected and redundant bytes, scheduler waits, the receiver's out-of-order peak.
fn bulk_counters_json(pair: &Pair, path_names: &[String]) -> serde_json::Value {
    let per_path: serde_json::Map<String, serde_json::Value> =
        per_path(pair.server.as_ref(), |x| {
            serde_json::json!(x.counters.data_bytes_sent_total)
        })
        .into_iter()
        .collect();
    let links = links_json(pair, path_names, |c| {
        serde_json::json!({
            "pkts_in": c.pkts_in, "pkts_out": c.pkts_out,
            "drops_random": c.drops_random, "drops_queue": c.drops_queue,
            "drops_outage": c.drops_outage,
            "expected_random_drops": (c.expected_random_drops * 10.0).round() / 10.0,
        })
    });
    serde_json::json!({
        "sender_counters": sender_counters_json(pair),
        "links": links,
        "data_bytes_sent_per_path": per_path,
        "reinjected_bytes": pair.server.as_ref().map(|s| s.counters().reinjected_bytes_total),
        "receiver_ofo_max_bytes": pair.client.counters().ofo_queue_max_bytes,
        "sched_waits": pair.server.as_ref().map(|s| s.counters().sched_waits_total),
        "redundant_bytes": pair.server.as_ref().map(|s| s.counters().redundant_bytes_total),
    })
}

/// A scenario's shared bottleneck links (counters) and cross traffic (per flow: payload
/// bytes received for TCP, packets sent for UDP), as `bottlenecks` and `cross_traffic`; none
/// without them.
fn shared_traffic_json(
    pair: &Pair,
    path_names: &[String],
) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    let shared = pair.bottleneck_counters();
    if !shared.is_empty() {
        let links: Vec<serde_json::Value> = shared
            .iter()
            .map(|(name, down, c)| {
                serde_json::json!({"name": name, "dir": if *down { "down" } else { "up" },
                    "pkts_in": c.pkts_in, "pkts_out": c.pkts_out,
                    "drops_random": c.drops_random, "drops_queue": c.drops_queue,
                    "drops_outage": c.drops_outage})
            })
            .collect();
        out.insert("bottlenecks".into(), links.into());
    }
    let cross = pair.cross_traffic_counts();
    if !cross.is_empty() {
        let flows: Vec<serde_json::Value> = cross
            .iter()
            .map(|(path, down, kind, count)| {
                let what = if *kind == "tcp" {
                    "bytes_received"
                } else {
                    "pkts_sent"
                };
                serde_json::json!({"path": path_names.get(*path), "kind": kind,
                    "direction": if *down { "down" } else { "up" }, what: count})
            })
            .collect();
        out.insert("cross_traffic".into(), flows.into());
    }
    out
}

/// Per path name, `{"up": dir(counters), "down": dir(counters)}` of its two links.
fn links_json(
    pair: &Pair,
    names: &[String],
    dir: impl Fn(&LinkCounters) -> serde_json::Value,
) -> serde_json::Map<String, serde_json::Value> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let up = dir(&pair.link_counters(i, false));
            let down = dir(&pair.link_counters(i, true));
            (name.clone(), serde_json::json!({"up": up, "down": down}))
        })
        .collect()
}

/// `--player-mpd`: the DASH player model; prints its summary line plus per-path bytes.
fn play(
    pair: &mut Pair,
    cfg: &mptransport::connection::Config,
    mpd: &std::path::Path,
    cli: &Cli,
    scenario: Option<String>,
    mut trace: Option<SchedTraceWriter>,
) -> ExitCode {
    use mptransport::sim::player::{Ladder, PlayerSpec, run_player_observed};
    let page_requests = match player_page_requests(cli) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mpsim: {e}");
            return ExitCode::from(2);
        }
    };
    // The page's other connections (`CONN` ≥ 1 of --player-page-request), opened with the
    // player's; conn ids continue the main one's seeded id.
    let side_conns = page_requests.iter().map(|r| r.conn).max().unwrap_or(0);
    let mut ids = mptransport::rng::Rng::new(cli.seed ^ 0x9a6e_c0de);
    for _ in 0..side_conns {
        pair.add_connection(cfg.clone(), cfg.clone(), ids.next_u64());
    }
    let ladder = match Ladder::load(mpd) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mpsim: --player-mpd: {e}");
            return ExitCode::from(2);
        }
    };
    // Transport logs (transport-server.jsonl, transport-client.jsonl): opened first so that
    // the periodic stats lines are written as the run goes.
    let mut logs = match open_transport_logs(cli) {
        Ok(logs) => logs,
        Err(e) => {
            eprintln!("mpsim: {e}");
            return ExitCode::from(2);
        }
    };
    // `sides`: "server" for the periodic lines (the data sender's, which metrics' interval
    // tables read; the client's would double the log volume), both at the end.
    let snapshot = |logs: &mut Vec<(&str, StatsLog)>, pair: &Pair, sides: &[&str]| {
        let now_ns = pair.now.as_nanos();
        for (side, log) in logs.iter_mut().filter(|(side, _)| sides.contains(side)) {
            let conn = if *side == "server" {
                pair.server.as_ref()
            } else {
                Some(&pair.client)
            };
            if let Some(c) = conn {
                log.snapshot(now_ns, 1, c);
            }
        }
    };
    let every_ns = cli.stats_interval_ms * 1_000_000;
    let mut next_stats_ns = every_ns;
    let wall = WallInstant::now();
    let spec = PlayerSpec {
        video_duration_s: cli.video_duration_s,
        page_start: Duration::from_secs_f64(cli.player_page_start_s),
        first_request: Duration::from_secs_f64(cli.player_first_request_s),
        page_requests,
        timeout: Duration::from_secs_f64(
            cli.player_first_request_s + cli.video_duration_s * 3.0 + 60.0,
        ),
    };
    let mut trace_error: Option<std::io::Error> = None;
    let events = run_player_observed(pair, &ladder, &spec, |p| {
        if every_ns > 0 && p.now.as_nanos() >= next_stats_ns {
            snapshot(&mut logs, p, &["server"]);
            // The next line on the interval grid (the run may have jumped several intervals).
            next_stats_ns = (p.now.as_nanos() / every_ns + 1) * every_ns;
        }
        take_trace(&mut trace, p, &mut trace_error);
    });
    if let Err(e) = finish_trace(&mut trace, pair, trace_error) {
        eprintln!("mpsim: --sched-trace: {e}");
        return ExitCode::from(2);
    }
    let text = player_log_text(&events);
    if let Some(out) = cli.player_out.as_deref()
        && let Err(e) = std::fs::write(out, text)
    {
        eprintln!("mpsim: --player-out {}: {e}", out.display());
        return ExitCode::from(2);
    }
    snapshot(&mut logs, pair, &["server", "client"]);
    log_side_connections(&mut logs, pair);
    for (_, log) in logs.iter_mut() {
        log.flush();
    }
    let summary = events.last().cloned().unwrap_or_default();
    let out = play_report(pair, cli, scenario, wall.elapsed().as_secs_f64(), &summary);
    println!("{out}");
    if summary["ended"] == true {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The player's start-up times checked and its `--player-page-request`s parsed; the error
/// names the option.
fn player_page_requests(cli: &Cli) -> Result<Vec<mptransport::sim::player::PageRequest>, String> {
    for (name, value) in [
        ("--player-page-start-s", cli.player_page_start_s),
        ("--player-first-request-s", cli.player_first_request_s),
    ] {
        if !(value.is_finite() && (0.0..=600.0).contains(&value)) {
            return Err(format!("{name} {value}: expected seconds from 0 to 600"));
        }
    }
    cli.player_page_request
        .iter()
        .map(|text| {
            parse_page_request(text).map_err(|e| format!("--player-page-request {text}: {e}"))
        })
        .collect()
}

/// `--transport-log-dir`: transport-server.jsonl and transport-client.jsonl, as (side, log);
/// none without the option.
fn open_transport_logs(cli: &Cli) -> Result<Vec<(&'static str, StatsLog)>, String> {
    let mut logs = Vec::new();
    if let Some(dir) = cli.transport_log_dir.as_deref() {
        for (side, src) in [("server", "mpproxy-server"), ("client", "mpproxy-client")] {
            let path = dir.join(format!("transport-{side}.jsonl"));
            match StatsLog::open(Some(&path), src, 0) {
                Ok(log) => logs.push((side, log)),
                Err(e) => return Err(format!("--transport-log-dir {}: {e}", path.display())),
            }
        }
    }
    Ok(logs)
}

/// The `player.jsonl` text of the player's events. The per-trial summary is computed by
/// metrics from the events; the log's last line is `end` (docs/schemas/player.v1.schema.json),
/// the summary goes to stdout only.
fn player_log_text(events: &[serde_json::Value]) -> String {
    let mut text = String::new();
    let mut lines: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] != "summary")
        .cloned()
        .collect();
    if let Some(s) = events.last() {
        lines.push(serde_json::json!({"t_ns": s["t_ns"], "event": "end", "reason": s["reason"]}));
    }
    for mut e in lines {
        if let Some(o) = e.as_object_mut() {
            o.insert("src".into(), serde_json::json!("player-sim"));
        }
        text.push_str(&e.to_string());
        text.push('\n');
    }
    text
}

/// The page's other connections: their end-of-run lines (conn 2, 3, ...), as mpproxy logs
/// every connection of the trial.
fn log_side_connections(logs: &mut [(&'static str, StatsLog)], pair: &Pair) {
    let now_ns = pair.now.as_nanos();
    for (side, log) in logs.iter_mut() {
        for (k, c) in pair.side.iter().enumerate() {
            let conn = if *side == "server" {
                c.server.as_ref()
            } else {
                Some(&c.client)
            };
            if let Some(conn) = conn {
                log.snapshot(now_ns, k as u64 + 2, conn);
            }
        }
    }
}

/// The player mode's stdout line: per-path transport counters of both sides, per-link
/// counters, shared traffic and the player's summary event.
fn play_report(
    pair: &Pair,
    cli: &Cli,
    scenario: Option<String>,
    wall_s: f64,
    summary: &serde_json::Value,
) -> serde_json::Value {
    let stats = |s: &mptransport::connection::Connection| {
        s.subflow_stats()
            .iter()
            .map(|x| {
                let c = &x.counters;
                let v = serde_json::json!({"data_bytes_sent": c.data_bytes_sent_total,
                    "bytes_retrans": c.bytes_retrans_total, "pkts_lost": c.pkts_lost_total,
                    "bytes_sent_total": c.bytes_sent_total, "bytes_acked_total": c.bytes_acked_total,
                    "bytes_retrans_total": c.bytes_retrans_total, "pkts_sent_total": c.pkts_sent_total,
                    "pkts_lost_total": c.pkts_lost_total, "pkts_retrans_total": c.pkts_retrans_total,
                    "sched_picks_total": c.sched_picks_total,
                    "data_bytes_sent_total": c.data_bytes_sent_total,
                    "data_bytes_received_total": c.data_bytes_received_total});
                (x.name.clone(), v)
            })
            .collect::<serde_json::Map<String, serde_json::Value>>()
    };
    let names: Vec<String> = pair
        .client
        .subflow_stats()
        .iter()
        .map(|x| x.name.clone())
        .collect();
    // Bytes as the emulator counts them: IP packets (payload + IP/UDP headers).
    let hdr = u64::from(mptransport::sim::emulated_link::IP_UDP_HEADER_BYTES);
    let links = links_json(pair, &names, |c| {
        serde_json::json!({
            "pkts_in_total": c.pkts_in, "bytes_in_total": c.bytes_in + hdr * c.pkts_in,
            "pkts_out_total": c.pkts_out, "bytes_out_total": c.bytes_out + hdr * c.pkts_out,
            "drops_random_total": c.drops_random, "drops_queue_total": c.drops_queue,
            "drops_outage_total": c.drops_outage,
        })
    });
    let out = serde_json::json!({
        "scenario": scenario, "cc": cli.cc, "sched": cli.sched, "seed": cli.seed,
        "virtual_s": pair.now.as_nanos() as f64 / 1e9,
        "wall_s": wall_s,
        "server_paths": pair.server.as_ref().map(stats),
        "client_paths": stats(&pair.client),
        "links": links,
        "player_summary": summary,
    });
    let mut out = out;
    if let Some(o) = out.as_object_mut() {
        o.extend(shared_traffic_json(pair, &names));
    }
    out
}
