use std::time::Duration;
use mptransport::connection::Config;
use mptransport::sim::{LinkSpec, Pair, SimPath, TransferSpec, run_transfer_with};
use mptransport::Bandwidth;
fn path(name: &str, mbps: f64, ms: u64) -> SimPath {
    let l = LinkSpec::bdp_queue(Bandwidth::from_mbps(mbps), Duration::from_millis(ms), 0.0);
    SimPath { name: name.into(), up: l, down: l }
}
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sched = &args[1];
    let mut cfg = Config { cc: "bbr".into(), sched: sched.clone(), ..Config::default() };
    for kv in &args[2..] { let (k,v)=kv.split_once('=').unwrap(); cfg.sched_config.options.insert(k.into(), v.into()); }
    let mut pair = Pair::new(cfg.clone(), cfg, &[path("wifi",20.0,25), path("lte",20.0,75)], 3);
    let spec = TransferSpec { response_bytes: 20_000_000, seed: 11, max_time: Duration::from_secs(600), ..TransferSpec::default() };
    let mut next = 0u64; let mut maxw = 0u64;
    let r = run_transfer_with(&mut pair, &spec, |p| {
        let o = p.client.counters().ofo_queue_bytes; maxw = maxw.max(o);
        if p.now.as_nanos() >= next { 
            let lost: Vec<u64> = p.server.as_ref().map(|s| s.subflow_stats().iter().map(|x| x.counters.bytes_retrans_total).collect()).unwrap_or_default();
            println!("{:.2} ofo_max_window {} retrans {:?}", p.now.as_nanos() as f64/1e9, maxw, lost); maxw = 0; next += 200_000_000; }
    });
    println!("done {:?} ofo max {}", r.response_done, pair.client.counters().ofo_queue_max_bytes);
}
