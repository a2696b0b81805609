//! mpproxy: the user-space multipath transport as a TCP proxy (CONTRACTS §3, §5.2, §6).
//!
//! server: `mpproxy server --listen 10.1.2.2:4433,10.2.2.2:4433 --forward 127.0.0.1:8080 ...`
//! client: `mpproxy client --listen 127.0.0.1:8080 --path wifi=10.1.1.2:10.1.2.2:4433 ...`
//! `mpproxy --list` prints the congestion controls and schedulers as JSON.
//! check: `mpproxy check --cc cubic --sched lrf --cc-opt hystart=false` validates the names and
//! options as server and client would, and refuses an option the algorithm does not read.
//! Bad arguments exit with status 2 and a message naming the option, value and what is valid.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use mptransport::cc::{self, CcConfig, RegistryError};
use mptransport::connection::{Config, DEFAULT_IDLE_TIMEOUT};
use mptransport::runtime::{ClientPath, Mode, Proxy, ProxyConfig, sys};
use mptransport::sched::{self, SchedConfig};

#[derive(Parser, Debug)]
#[command(
    name = "mpproxy",
    version,
    about = "User-space multipath transport proxy (MPTCP over UDP)"
)]
struct Cli {
    /// Print the available congestion controls and schedulers (JSON) and exit.
    #[arg(long)]
    list: bool,
    #[command(subcommand)]
    mode: Option<ModeCmd>,
}

#[derive(Subcommand, Debug)]
enum ModeCmd {
    /// Accept multipath connections on UDP and forward each to a TCP address.
    Server {
        /// UDP addresses to listen on, comma-separated (ip:port,ip:port).
        #[arg(long, value_delimiter = ',', required = true)]
        listen: Vec<String>,
        /// TCP address every connection is forwarded to.
        #[arg(long)]
        forward: String,
        #[command(flatten)]
        common: Common,
    },
    /// Listen on TCP; open one multipath connection per accepted TCP connection.
    Client {
        /// TCP address to listen on.
        #[arg(long)]
        listen: String,
        /// A path: name=local_ip:server_ip:port (repeat for each path, e.g. wifi, lte).
        #[arg(long = "path", required = true)]
        paths: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Check --cc, --sched and their --cc-opt/--sched-opt as server and client would, and
    /// refuse an option the algorithm does not read; prints them as JSON, opens nothing.
    Check {
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Args, Debug)]
struct Common {
    /// Congestion control (see --list).
    #[arg(long, default_value = "bbr")]
    cc: String,
    /// Scheduler (see --list).
    #[arg(long, default_value = "lrf")]
    sched: String,
    /// Algorithm option key=value, repeatable (e.g. --cc-opt hystart=false).
    #[arg(long = "cc-opt")]
    cc_opts: Vec<String>,
    /// Scheduler option key=value, repeatable.
    #[arg(long = "sched-opt")]
    sched_opts: Vec<String>,
    /// JSON Lines stats file (CONTRACTS §5.2); none if omitted.
    #[arg(long)]
    stats: Option<PathBuf>,
    /// Per-decision scheduler trace of every connection, JSON Lines
    /// (docs/CONTRACTS.md §5.7); none if omitted.
    #[arg(long = "sched-trace")]
    sched_trace: Option<PathBuf>,
    /// Per-datagram log of what was sent, JSON Lines (transport/src/runtime/packet_log.rs);
    /// none if omitted. For checking packet captures; costs a JSON line per packet.
    #[arg(long = "packet-log")]
    packet_log: Option<PathBuf>,
    /// Trial clock origin, CLOCK_MONOTONIC ns (default: $TESTBED_T0_NS, else start time).
    #[arg(long = "t0-ns")]
    t0_ns: Option<u64>,
    /// Seed for connection ids and algorithm draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Fixed receive window per connection, bytes (at least 65536). Default: autotuned as
    /// Linux does (tcp_rmem 4096/131072/6291456, dynamic right-sizing at the connection).
    #[arg(long = "recv-window-bytes")]
    recv_window_bytes: Option<u64>,
    /// Packets due within this many microseconds are sent together (batching).
    #[arg(long = "pacing-horizon-us", default_value_t = 500)]
    pacing_horizon_us: u64,
    /// Close a connection after this many seconds without any datagram (default: the
    /// simulator's, `connection::DEFAULT_IDLE_TIMEOUT`).
    #[arg(long = "idle-timeout-s", default_value_t = DEFAULT_IDLE_TIMEOUT.as_secs())]
    idle_timeout_s: u64,
    /// Exit after this many seconds (for tests); default: run until SIGINT/SIGTERM.
    #[arg(long = "run-for-s")]
    run_for_s: Option<f64>,
}

fn bad(msg: String) -> ExitCode {
    eprintln!("mpproxy: {msg}");
    ExitCode::from(2)
}

fn parse_opts(flag: &str, items: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut m = BTreeMap::new();
    for it in items {
        let Some((k, v)) = it.split_once('=') else {
            return Err(format!("{flag} '{it}' is not key=value"));
        };
        m.insert(k.to_string(), v.to_string());
    }
    Ok(m)
}

fn parse_sockaddr(flag: &str, s: &str) -> Result<SocketAddr, String> {
    s.parse()
        .map_err(|_| format!("{flag} '{s}' is not an ip:port address"))
}

fn parse_path(s: &str) -> Result<ClientPath, String> {
    let err = || {
        format!(
            "--path '{s}' is not name=local_ip:server_ip:port (e.g. wifi=10.1.1.2:10.1.2.2:4433)"
        )
    };
    let (name, rest) = s.split_once('=').ok_or_else(err)?;
    let (local, remote) = rest.split_once(':').ok_or_else(err)?;
    if name.is_empty() || name.len() > mptransport::wire::MAX_NAME_BYTES {
        return Err(format!("--path '{s}': name must be 1..=32 bytes"));
    }
    let local: IpAddr = local.parse().map_err(|_| err())?;
    let remote: SocketAddr = remote.parse().map_err(|_| err())?;
    Ok(ClientPath {
        name: name.to_string(),
        local,
        remote,
    })
}

fn build_config(c: &Common) -> Result<Config, String> {
    let cc_options = parse_opts("--cc-opt", &c.cc_opts)?;
    let sched_options = parse_opts("--sched-opt", &c.sched_opts)?;
    let cfg = Config {
        cc: c.cc.clone(),
        sched: c.sched.clone(),
        cc_config: CcConfig {
            options: cc_options,
            ..CcConfig::default()
        },
        sched_config: SchedConfig {
            options: sched_options,
            ..SchedConfig::default()
        },
        recv_window_bytes: c.recv_window_bytes.map(|w| w.max(64 * 1024)),
        pacing_horizon: Duration::from_micros(c.pacing_horizon_us.min(10_000)),
        idle_timeout: Duration::from_secs(c.idle_timeout_s.max(1)),
        seed: c.seed,
        ..Config::default()
    };
    // Unknown names and bad options are errors now, not at the first connection.
    cc::build(&cfg.cc, &cfg.cc_config).map_err(|e| format!("--cc: {e}"))?;
    sched::build(&cfg.sched, &cfg.sched_config).map_err(|e| format!("--sched: {e}"))?;
    Ok(cfg)
}

/// A value no option accepts: not a number, a switch or any of an option's words.
const PROBE_VALUE: &str = "\u{1}probe";

/// The keys of `options` that `build` does not read. An algorithm checks its options when it
/// is built, so one built with a key set to `PROBE_VALUE` fails naming that key if, and only
/// if, it reads the key; the options as given must build.
fn unread_keys(
    options: &BTreeMap<String, String>,
    build: impl Fn(&BTreeMap<String, String>) -> Result<(), RegistryError>,
) -> Vec<String> {
    options
        .keys()
        .filter(|key| {
            let mut probe = options.clone();
            probe.insert((*key).clone(), PROBE_VALUE.to_string());
            !matches!(build(&probe), Err(RegistryError::BadOption { key: named, .. }) if &named == *key)
        })
        .cloned()
        .collect()
}

/// `mpproxy check`: exit 0 with the names and options as JSON, or 2 naming each bad option.
fn check(common: &Common) -> ExitCode {
    let cfg = match build_config(common) {
        Ok(c) => c,
        Err(e) => return bad(e),
    };
    let cc_unread = unread_keys(&cfg.cc_config.options, |options| {
        let probe = CcConfig {
            options: options.clone(),
            ..cfg.cc_config.clone()
        };
        cc::build(&cfg.cc, &probe).map(|_| ())
    });
    let sched_unread = unread_keys(&cfg.sched_config.options, |options| {
        let probe = SchedConfig {
            options: options.clone(),
            ..cfg.sched_config.clone()
        };
        sched::build(&cfg.sched, &probe).map(|_| ())
    });
    let mut problems = Vec::new();
    for (flag, name, options, unread) in [
        ("--cc-opt", &cfg.cc, &cfg.cc_config.options, cc_unread),
        (
            "--sched-opt",
            &cfg.sched,
            &cfg.sched_config.options,
            sched_unread,
        ),
    ] {
        for key in unread {
            problems.push(format!(
                "{flag} {key}={}: {name} has no option '{key}' (its options are on its page \
                 in docs/algorithms/)",
                options[&key]
            ));
        }
    }
    if !problems.is_empty() {
        return bad(problems.join("; "));
    }
    let out = serde_json::json!({
        "cc": cfg.cc,
        "sched": cfg.sched,
        "cc_opts": cfg.cc_config.options,
        "sched_opts": cfg.sched_config.options,
    });
    println!("{out}");
    ExitCode::SUCCESS
}

fn t0(c: &Common) -> Result<u64, String> {
    if let Some(t) = c.t0_ns {
        return Ok(t);
    }
    match std::env::var("TESTBED_T0_NS") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("TESTBED_T0_NS '{v}' is not an integer")),
        Err(_) => Ok(sys::monotonic_ns()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.list {
        let aliases: BTreeMap<&str, &str> = sched::REGISTRY
            .iter()
            .flat_map(|e| e.aliases.iter().map(move |a| (*a, e.name)))
            .collect();
        let out = serde_json::json!({
            "cc": cc::names(),
            "sched": sched::names(),
            "sched_aliases": aliases,
        });
        println!("{out}");
        return ExitCode::SUCCESS;
    }
    let Some(mode) = cli.mode else {
        return bad("give a mode (server, client or check) or --list; see --help".into());
    };
    let (mode, common) = match mode {
        ModeCmd::Check { common } => return check(&common),
        ModeCmd::Server {
            listen,
            forward,
            common,
        } => {
            let listen: Result<Vec<_>, _> = listen
                .iter()
                .map(|s| parse_sockaddr("--listen", s))
                .collect();
            let listen = match listen {
                Ok(l) => l,
                Err(e) => return bad(e),
            };
            let forward = match parse_sockaddr("--forward", &forward) {
                Ok(f) => f,
                Err(e) => return bad(e),
            };
            (Mode::Server { listen, forward }, common)
        }
        ModeCmd::Client {
            listen,
            paths,
            common,
        } => {
            let listen = match parse_sockaddr("--listen", &listen) {
                Ok(l) => l,
                Err(e) => return bad(e),
            };
            let paths: Result<Vec<_>, _> = paths.iter().map(|p| parse_path(p)).collect();
            let paths = match paths {
                Ok(p) => p,
                Err(e) => return bad(e),
            };
            if paths.len() > mptransport::units::MAX_SUBFLOWS {
                return bad(format!(
                    "at most {} --path options",
                    mptransport::units::MAX_SUBFLOWS
                ));
            }
            (Mode::Client { listen, paths }, common)
        }
    };
    let conn = match build_config(&common) {
        Ok(c) => c,
        Err(e) => return bad(e),
    };
    let t0_ns = match t0(&common) {
        Ok(t) => t,
        Err(e) => return bad(e),
    };
    let cfg = ProxyConfig {
        mode,
        conn,
        stats: common.stats.clone(),
        sched_trace: common.sched_trace.clone(),
        packet_log: common.packet_log.clone(),
        t0_ns,
        seed: common.seed,
        run_for: common
            .run_for_s
            .map(|s| Duration::from_secs_f64(s.max(0.0))),
    };
    sys::install_stop_signal();
    let mut proxy = match Proxy::new(cfg) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mpproxy: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = proxy.run() {
        eprintln!("mpproxy: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
