//! The schedulers of docs/algorithms/arp.md, blest.md, ecf.md and default-schedulers.md in
//! the simulator, on the scenarios those pages report:
//! * asymmetric RTT (20 Mbit/s both, RTT 50 vs 150 ms), 20 MB with bbr: the receiver's
//!   largest out-of-order queue and the completion time, arp against lrf;
//! * heterogeneous paths (10 Mbit/s each, RTT 10 vs 100 ms), a sender that writes 1 MB
//!   every second: the 95th percentile of per-write delivery delay, blest/ecf against lrf;
//! * a path that breaks mid-transfer: every scheduler delivers 50 MB byte-exact;
//! * AR&P's "predicted arrival never decreases within a batch", checked on every decision of
//!   real transfers.
//!
//! Figures: `cargo test --release --test sched_scenarios -- --nocapture --test-threads 1`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mptransport::connection::Config;
use mptransport::sched::{
    self, ConnView, PathView, SchedConfig, SchedEvent, Scheduler, Selection, SendKind,
};
use mptransport::sim::{LinkSpec, Pair, SimPath, TransferSpec, run_transfer, run_transfer_with};
use mptransport::{Bandwidth, Instant};

const NEW_SCHEDULERS: [&str; 5] = ["arp", "blest", "ecf", "default-oot", "default-upstream"];

fn path(name: &str, mbps: f64, one_way_ms: u64) -> SimPath {
    let link = LinkSpec::bdp_queue(
        Bandwidth::from_mbps(mbps),
        Duration::from_millis(one_way_ms),
        0.0,
    );
    SimPath {
        name: name.into(),
        up: link,
        down: link,
    }
}

fn cfg(cc: &str, sched_name: &str) -> Config {
    Config {
        cc: cc.into(),
        sched: sched_name.into(),
        ..Config::default()
    }
}

/// Completion time (s) and the receiver's largest out-of-order queue (bytes).
fn transfer(cc: &str, sched_name: &str, paths: &[SimPath], bytes: u64) -> (f64, u64) {
    let mut pair = Pair::new(cfg(cc, sched_name), cfg(cc, sched_name), paths, 3);
    let spec = TransferSpec {
        response_bytes: bytes,
        seed: 11,
        max_time: Duration::from_secs(600),
        ..TransferSpec::default()
    };
    let r = run_transfer(&mut pair, &spec);
    assert!(r.is_byte_exact_and_clean(), "{cc} × {sched_name}: {r:?}");
    (
        r.response_done.unwrap().as_secs_f64(),
        pair.client.counters().ofo_queue_max_bytes,
    )
}

#[test]
fn arp_halves_the_out_of_order_queue_on_asymmetric_rtt_without_slowing_down() {
    // Seed 000 Fig. 11(b): equal rates, RTT 50 vs 150 ms.
    let paths = [path("wifi", 20.0, 25), path("lte", 20.0, 75)];
    let (t_lrf, ofo_lrf) = transfer("bbr", "lrf", &paths, 20_000_000);
    let (t_arp, ofo_arp) = transfer("bbr", "arp", &paths, 20_000_000);
    println!(
        "asymmetric RTT, bbr, 20 MB: lrf {t_lrf:.3} s ofo max {ofo_lrf} B; arp {t_arp:.3} s \
         ofo max {ofo_arp} B ({:.2}×, time {:+.1} %)",
        ofo_arp as f64 / ofo_lrf as f64,
        (t_arp / t_lrf - 1.0) * 100.0
    );
    assert!(
        ofo_arp as f64 <= 0.5 * ofo_lrf as f64,
        "{ofo_arp} vs {ofo_lrf}"
    );
    assert!(t_arp <= 1.05 * t_lrf, "{t_arp} vs {t_lrf}");
}

/// The sender writes `write_bytes` every second, `writes` times; returns each write's
/// delivery delay (from the write until the receiver has read its last byte), seconds.
fn app_limited(cc: &str, sched_name: &str, paths: &[SimPath], writes: u64) -> Vec<f64> {
    let write_bytes: u64 = 1_000_000;
    let mut pair = Pair::new(cfg(cc, sched_name), cfg(cc, sched_name), paths, 5);
    let payload = vec![0x5Au8; write_bytes as usize];
    let mut written = 0u64; // writes handed to the connection (possibly partially)
    let mut offset = 0usize;
    let mut write_times: Vec<Instant> = Vec::new();
    let read_total = std::cell::Cell::new(0u64);
    let mut delays: Vec<f64> = Vec::new();
    let mut buf = vec![0u8; 1 << 18];
    let start = Instant::from_nanos(1_000_000_000);
    let total = write_bytes * writes;
    let outcome = pair.drive_bounded(
        50_000_000,
        Instant::from_nanos((writes + 60) * 1_000_000_000),
        |p| {
            // The client sends a small request so the server connection exists.
            if p.server.is_none() && p.steps == 0 {
                p.client.write(b"GET");
            }
            if let Some(s) = p.server.as_mut() {
                let due = p.now.as_nanos() >= start.as_nanos() + written * 1_000_000_000;
                if written < writes && (due || offset > 0) {
                    if offset == 0 {
                        write_times.push(p.now);
                    }
                    offset += s.write(&payload[offset..]);
                    if offset == payload.len() {
                        offset = 0;
                        written += 1;
                        if written == writes {
                            s.finish();
                        }
                    }
                }
                let mut sink = [0u8; 64];
                while s.read(&mut sink) > 0 {}
            }
            loop {
                let n = p.client.read(&mut buf);
                if n == 0 {
                    break;
                }
                read_total.set(read_total.get() + n as u64);
                while (delays.len() as u64) < written.max(write_times.len() as u64)
                    && read_total.get() >= (delays.len() as u64 + 1) * write_bytes
                {
                    let t0 = write_times[delays.len()];
                    delays.push((p.now.as_nanos() - t0.as_nanos()) as f64 / 1e9);
                }
            }
        },
        |_| read_total.get() >= total,
    );
    assert!(outcome.is_ok(), "{cc} × {sched_name}: {outcome:?}");
    assert_eq!(delays.len() as u64, writes);
    delays
}

fn percentile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let rank = (q * (s.len() - 1) as f64).round() as usize;
    s[rank]
}

#[test]
fn blest_and_ecf_cut_the_tail_delivery_delay_of_app_limited_writes() {
    // 10 Mbit/s each, RTT 10 ms vs 100 ms; 1 MB written every second for 30 s.
    let paths = [path("fast", 10.0, 5), path("slow", 10.0, 50)];
    for cc in ["cubic", "bbr"] {
        let p95 = |s: &str| percentile(&app_limited(cc, s, &paths, 30), 0.95);
        let lrf = p95("lrf");
        let blest = p95("blest");
        let ecf = p95("ecf");
        println!(
            "app-limited 1 MB/s, {cc}: p95 delivery delay lrf {:.1} ms, blest {:.1} ms, ecf {:.1} ms",
            lrf * 1e3,
            blest * 1e3,
            ecf * 1e3
        );
        assert!(blest < lrf, "{cc}: blest {blest} vs lrf {lrf}");
        assert!(ecf < lrf, "{cc}: ecf {ecf} vs lrf {lrf}");
    }
}

#[test]
fn every_scheduler_survives_a_path_break_byte_exact() {
    // Seed 000 Fig. 10(a) conditions (netem-scenarios/seed000-path-break.toml): 20 Mbit/s,
    // 25 ms one way on both paths, then a total outage of lte. 50 MB over 40 Mbit/s takes
    // about 10 s, so the outage starts at 5 s (mid-transfer) instead of 15 s.
    let paths = [path("wifi", 20.0, 25), path("lte", 20.0, 25)];
    let mut dead = paths[1].up;
    dead.loss = 1.0;
    for cc in ["bbr", "cubic"] {
        for name in NEW_SCHEDULERS.iter().chain(["lrf", "rr", "redundant"].iter()) {
            let mut pair = Pair::new(cfg(cc, name), cfg(cc, name), &paths, 7);
            let spec = TransferSpec {
                response_bytes: 50_000_000,
                seed: 13,
                max_time: Duration::from_secs(600),
                ..TransferSpec::default()
            };
            let mut broken = false;
            let r = run_transfer_with(&mut pair, &spec, |p| {
                if !broken && p.now.as_nanos() >= 5_000_000_000 {
                    p.set_link(1, false, dead);
                    p.set_link(1, true, dead);
                    broken = true;
                }
            });
            println!(
                "path break at 5 s, {cc} × {name:<16}: 50 MB in {:.2} s, byte-exact {}",
                r.response_done.map_or(f64::NAN, |d| d.as_secs_f64()),
                r.response_sha_sent == r.response_sha_received
                    && r.response_bytes_received == 50_000_000
            );
            assert!(broken, "the transfer ended before the break");
            assert_eq!(r.response_bytes_received, 50_000_000, "{cc} × {name}");
            assert_eq!(r.response_sha_sent, r.response_sha_received, "{cc} × {name}");
        }
    }
}

/// Wraps AR&P and checks, after each decision, that the predicted arrival of the first
/// segment placed is not earlier than the bound on the last segment of the previous decision
/// of the same batch.
struct ArrivalChecked {
    inner: Box<dyn Scheduler>,
    last: Option<(f64, f64)>,
    checked: Arc<AtomicU64>,
    violations: Arc<AtomicU64>,
}

impl Scheduler for ArrivalChecked {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn select(
        &mut self,
        now: Instant,
        kind: SendKind,
        conn: &ConnView,
        paths: &[PathView],
    ) -> Selection {
        let sel = self.inner.select(now, kind, conn, paths);
        let state = self.inner.trace_state();
        let get = |k: &str| {
            state
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| *v)
                .expect("arp reports its state")
        };
        let (batch, first, bound) = (
            get("batch"),
            get("arrival_first_s"),
            get("arrival_last_bound_s"),
        );
        if matches!(sel, Selection::Send { .. }) && first.is_finite() {
            if let Some((b, prev_bound)) = self.last
                && b == batch
            {
                self.checked.fetch_add(1, Ordering::Relaxed);
                if first < prev_bound - 1e-9 {
                    self.violations.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.last = Some((batch, bound));
        }
        sel
    }
    fn on_event(&mut self, ev: &SchedEvent) {
        self.inner.on_event(ev)
    }
    fn trace_state(&self) -> Vec<(&'static str, f64)> {
        self.inner.trace_state()
    }
}

#[test]
fn arp_predicted_arrival_never_decreases_within_a_batch_in_real_transfers() {
    let scenarios: [(&str, [SimPath; 2]); 3] = [
        ("asymmetric", [path("wifi", 20.0, 25), path("lte", 20.0, 75)]),
        ("equal", [path("wifi", 20.0, 25), path("lte", 20.0, 25)]),
        ("rate-skew", [path("wifi", 30.0, 10), path("lte", 8.0, 40)]),
    ];
    for (label, paths) in scenarios {
        for predict in ["probe_bw", "always"] {
            for cc in ["bbr", "cubic"] {
                let mut sched_cfg = SchedConfig::default();
                sched_cfg.options.insert("predict".into(), predict.into());
                let checked = Arc::new(AtomicU64::new(0));
                let violations = Arc::new(AtomicU64::new(0));
                let mut pair = Pair::new(cfg(cc, "arp"), cfg(cc, "arp"), &paths, 9);
                let mut installed = false;
                let spec = TransferSpec {
                    response_bytes: 8_000_000,
                    seed: 3,
                    max_time: Duration::from_secs(300),
                    ..TransferSpec::default()
                };
                let r = run_transfer_with(&mut pair, &spec, |p| {
                    if !installed && let Some(s) = p.server.as_mut() {
                        s.replace_scheduler(Box::new(ArrivalChecked {
                            inner: sched::build("arp", &sched_cfg).unwrap(),
                            last: None,
                            checked: checked.clone(),
                            violations: violations.clone(),
                        }));
                        installed = true;
                    }
                });
                assert!(r.is_byte_exact_and_clean(), "{label} {predict} {cc}: {r:?}");
                let (c, v) = (checked.load(Ordering::Relaxed), violations.load(Ordering::Relaxed));
                println!("arp {label} predict={predict} {cc}: {c} in-batch decisions checked, {v} violations");
                assert_eq!(v, 0, "{label} {predict} {cc}");
                if predict == "always" || cc == "bbr" {
                    assert!(c > 100, "{label} {predict} {cc}: only {c} checked");
                }
            }
        }
    }
}
