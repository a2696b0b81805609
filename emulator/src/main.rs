//! `linkemu`: applies a resolved scenario (CONTRACTS §4) to the four NFQUEUE
//! queues of the router namespace (CONTRACTS §3) until SIGTERM/SIGINT.
//!
//! The loop: read every waiting packet, feed it to its link at the current
//! time, collect the links' decisions, send all verdicts in one datagram,
//! log, then sleep in `ppoll` until a packet arrives or the next release
//! (or stats interval, or schedule change) is due.

use clap::Parser;
use linkemu::clock::monotonic_ns;
use linkemu::link::{Decision, Link, Verdict};
use linkemu::log::{
    link_stats_line, packet_event_line, schedule_line, totals_line, FileSink, LogSink,
};
use linkemu::nfqueue::NfQueue;
use linkemu::scenario::{self, LINK_ORDER};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

const STATS_INTERVAL_MS: u64 = 100;
/// Bytes of each packet copied to user space: the headers, never the data
/// (the length comes from NFQA_CAP_LEN).
const COPY_BYTES: u16 = 64;
/// Packets the kernel may hold per queue: far more than any emulated queue
/// plus bandwidth-delay product, so the kernel never drops on our behalf.
const KERNEL_QUEUE_MAX_LEN: u32 = 65536;

#[derive(Parser, Debug)]
#[command(
    name = "linkemu",
    version,
    about = "User-space link emulator over NFQUEUE"
)]
struct Args {
    /// Resolved scenario JSON (CONTRACTS §4).
    #[arg(long)]
    scenario: PathBuf,
    /// Trial seed; each link derives its own loss and jitter streams from it.
    #[arg(long, required_unless_present = "validate")]
    seed: Option<u64>,
    /// Trial clock origin (CLOCK_MONOTONIC ns); log lines carry t_ns relative to it.
    #[arg(long = "t0-ns", required_unless_present = "validate")]
    t0_ns: Option<u64>,
    /// Where to write the JSON Lines log (CONTRACTS §5.1).
    #[arg(long, required_unless_present = "validate")]
    log: Option<PathBuf>,
    /// NFQUEUE number of wifi/up; wifi/down, lte/up, lte/down follow.
    #[arg(long = "queue-base", default_value_t = 0)]
    queue_base: u16,
    /// Minimum time between two passes of the loop, in µs. 0: wake for every
    /// arrival and every release. N > 0: sparse packets are still handled on
    /// time, dense ones in batches at most N µs late (less CPU under load).
    /// Arrival times come from the kernel's receive stamps either way.
    #[arg(long = "tick-us", default_value_t = 250)]
    tick_us: u64,
    /// Also write every packet's arrival, departure (with sojourn) and drop to
    /// this file (text, one line each; costs CPU, for debugging and analysis).
    #[arg(long = "packet-log")]
    packet_log: Option<PathBuf>,
    /// Only check the scenario, print the links, and exit (0 valid, 2 invalid).
    #[arg(long)]
    validate: bool,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn install_signal_handlers() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: the handler only stores to an atomic. No SA_RESTART, so
        // ppoll returns EINTR and the loop sees STOP at once.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Opens a socket that asks for receive timestamps: while one exists, the
/// kernel stamps every received packet, and NFQUEUE passes the stamp on
/// (NFQA_TIMESTAMP), so arrivals are timed when they reached the router,
/// not when we read them. Kept open for the whole run.
fn enable_kernel_rx_timestamps() -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls; the fd is owned by the returned OwnedFd.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return None;
        }
        let owned = std::os::fd::OwnedFd::from_raw_fd(fd);
        let one: libc::c_int = 1;
        let rc = libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &one as *const _ as *const libc::c_void,
            4,
        );
        (rc == 0).then_some(owned)
    }
}

/// Sleeps `sleep_ns`, or less if a packet arrives on `wake_on` (or a signal comes).
fn sleep_for(wake_on: Option<std::os::fd::RawFd>, sleep_ns: u64) {
    let timeout = libc::timespec {
        tv_sec: (sleep_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (sleep_ns % 1_000_000_000) as libc::c_long,
    };
    let mut pfd = libc::pollfd {
        fd: wake_on.unwrap_or(-1),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd (a negative fd is ignored) and timespec.
    unsafe { libc::ppoll(&mut pfd, 1, &timeout, std::ptr::null()) };
}

fn write_packet_events(out: &mut impl std::io::Write, links: &mut [Link], offset_ns: i64) {
    for (link, (path, dir)) in links.iter_mut().zip(LINK_ORDER) {
        for ev in link.take_packet_events() {
            if let Err(e) = writeln!(out, "{}", packet_event_line(offset_ns, path, dir, &ev)) {
                eprintln!("linkemu: cannot write packet log: {e}");
                return;
            }
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let scenario = match scenario::load(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("linkemu: {e}");
            return ExitCode::from(2);
        }
    };
    let seed = args.seed.unwrap_or(0);
    let mut links = Vec::new();
    for (i, (path, dir)) in LINK_ORDER.iter().enumerate() {
        match Link::new(scenario.link(path, dir), seed, i as u64) {
            Ok(link) => links.push(link),
            Err(e) => {
                eprintln!(
                    "linkemu: scenario {}: paths.{path}.{dir}: {e}",
                    args.scenario.display()
                );
                return ExitCode::from(2);
            }
        }
    }
    if args.validate {
        for ((path, dir), link) in LINK_ORDER.iter().zip(&links) {
            println!("{path}/{dir}: {}", link.describe());
        }
        return ExitCode::SUCCESS;
    }
    let (Some(t0_ns), Some(log_path)) = (args.t0_ns, args.log.as_ref()) else {
        unreachable!("clap requires --t0-ns and --log without --validate");
    };
    match run(&args, &scenario, seed, t0_ns, log_path, links) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("linkemu: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(
    args: &Args,
    scenario: &scenario::Scenario,
    seed: u64,
    t0_ns: u64,
    log_path: &std::path::Path,
    mut links: Vec<Link>,
) -> Result<(), String> {
    let mut log = FileSink::create(log_path)
        .map_err(|e| format!("cannot create log file {}: {e}", log_path.display()))?;
    let mut packet_log = match &args.packet_log {
        None => None,
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path)
                .map_err(|e| format!("cannot create packet log {}: {e}", path.display()))?,
        )),
    };
    install_signal_handlers();
    // SAFETY: plain syscalls. Locked memory avoids page-fault stalls under
    // real-time priority; 1 ns timer slack makes ppoll wake on time.
    unsafe {
        if libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) != 0 {
            eprintln!(
                "linkemu: warning: mlockall failed: {}",
                std::io::Error::last_os_error()
            );
        }
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
    let mut nfq = NfQueue::open().map_err(|e| format!("cannot open an NFQUEUE socket: {e}"))?;
    let queues: Vec<u16> = (0..4).map(|i| args.queue_base + i).collect();
    for (&q, (path, dir)) in queues.iter().zip(LINK_ORDER) {
        nfq.bind(q, COPY_BYTES, KERNEL_QUEUE_MAX_LEN).map_err(|e| {
            format!("cannot bind NFQUEUE {q} ({path}/{dir}): {e} (is another linkemu running?)")
        })?;
    }
    // Virtual time 0 of every link is now: schedules and traces start here.
    let start_ns = monotonic_ns();
    let trial_t = |mono_ns: u64| mono_ns as i64 - t0_ns as i64;
    let described: serde_json::Map<String, serde_json::Value> = LINK_ORDER
        .iter()
        .zip(&links)
        .map(|((p, d), l)| (format!("{p}/{d}"), json!(l.describe())))
        .collect();
    log.write_line(&json!({
        "t_ns": trial_t(start_ns), "src": "emulator", "event": "start",
        "scenario": scenario.name, "seed": seed, "backend": "nfqueue",
        "queue_base": args.queue_base, "tick_us": args.tick_us, "links": described,
    }));
    log.flush();
    if let Some(out) = packet_log.as_mut() {
        use std::io::Write;
        let mut header = format!(
            "# linkemu packet log: ms on the trial clock (t0_ns {t0_ns}); emulator start at \
             {:.3} ms; `+ bytes` arrival, `- bytes sojourn_ms` departure, `d bytes reason` drop\n",
            trial_t(start_ns) as f64 / 1e6
        );
        for ((path, dir), link) in LINK_ORDER.iter().zip(links.iter_mut()) {
            header += &format!("# {path}/{dir}: {}\n", link.describe());
            link.record_packet_events();
        }
        out.write_all(header.as_bytes())
            .map_err(|e| format!("cannot write packet log: {e}"))?;
    }

    let interval_ns = STATS_INTERVAL_MS * 1_000_000;
    let tick_ns = args.tick_us * 1000;
    let mut next_stats_ns = interval_ns;
    let mut arrivals = Vec::with_capacity(1024);
    let mut last_accept: [Option<u32>; 4] = [None; 4];
    let mut arrivals_total = 0u64;
    let mut arrivals_stamped = 0u64;
    let _stamping = enable_kernel_rx_timestamps();
    while !STOP.load(Ordering::SeqCst) {
        arrivals.clear();
        nfq.recv_batch(&mut arrivals)
            .map_err(|e| format!("reading NFQUEUE failed: {e}"))?;
        let now_ns = monotonic_ns().saturating_sub(start_ns);
        let pass_start_ns = now_ns;
        // Kernel receive stamps are CLOCK_REALTIME: map them onto virtual time.
        let realtime_minus_virtual_ns = realtime_ns() as i64 - now_ns as i64;
        for p in &arrivals {
            let Some(index) = p.queue.checked_sub(args.queue_base).filter(|&i| i < 4) else {
                nfq.drop_packet(p.queue, p.packet_id);
                continue;
            };
            arrivals_total += 1;
            // The link clamps an arrival to its own clock, so a stamp a little
            // older than the link's last event is harmless.
            let arrival_ns = match p.rx_realtime_ns {
                Some(rx) => {
                    arrivals_stamped += 1;
                    (rx as i64 - realtime_minus_virtual_ns).clamp(0, now_ns as i64) as u64
                }
                None => now_ns,
            };
            let verdict = links[index as usize].enqueue(p.packet_id as u64, p.bytes, arrival_ns);
            if let Verdict::Dropped(_) = verdict {
                nfq.drop_packet(p.queue, p.packet_id);
            }
        }
        for (i, link) in links.iter_mut().enumerate() {
            link.advance_to(now_ns);
            while let Some(out) = link.poll_output() {
                match out.decision {
                    Decision::Accept => last_accept[i] = Some(out.token as u32),
                    Decision::Drop(_) => nfq.drop_packet(queues[i], out.token as u32),
                }
            }
        }
        // Drops first: a batch ACCEPT covers every lower id still queued.
        for (i, last) in last_accept.iter_mut().enumerate() {
            if let Some(id) = last.take() {
                nfq.accept_up_to(queues[i], id);
            }
        }
        nfq.flush_verdicts()
            .map_err(|e| format!("sending verdicts failed: {e}"))?;
        if let Some(out) = packet_log.as_mut() {
            write_packet_events(out, &mut links, trial_t(start_ns));
        }
        for (link, (path, dir)) in links.iter_mut().zip(LINK_ORDER) {
            for change in link.take_changes() {
                log.write_line(&schedule_line(
                    trial_t(start_ns + change.t_ns),
                    path,
                    dir,
                    &change,
                ));
            }
        }
        if now_ns >= next_stats_ns {
            for (link, (path, dir)) in links.iter_mut().zip(LINK_ORDER) {
                let stats = link.take_interval();
                let line = link_stats_line(
                    trial_t(start_ns + next_stats_ns),
                    path,
                    dir,
                    STATS_INTERVAL_MS,
                    &stats,
                );
                log.write_line(&line);
            }
            log.flush();
            while next_stats_ns <= now_ns {
                next_stats_ns += interval_ns;
            }
        }
        let release_ns = links.iter().filter_map(|l| l.next_release_bound()).min();
        let now_ns = monotonic_ns().saturating_sub(start_ns);
        let wake_ns = release_ns.unwrap_or(u64::MAX).min(next_stats_ns);
        // Tick mode: at most one pass per tick. Sparse packets are still read
        // and released on time; dense ones are handled in batches, at most one
        // tick late (arrival times stay exact: they come from kernel stamps).
        let mut now_ns = now_ns;
        let earliest_next_pass_ns = pass_start_ns + tick_ns;
        if now_ns < earliest_next_pass_ns {
            sleep_for(None, earliest_next_pass_ns - now_ns);
            now_ns = monotonic_ns().saturating_sub(start_ns);
        }
        if wake_ns > now_ns {
            sleep_for(Some(nfq.fd()), wake_ns - now_ns);
        }
    }
    if arrivals_total > 0 && arrivals_stamped < arrivals_total {
        eprintln!(
            "linkemu: {} of {arrivals_total} packets had no kernel receive stamp \
             (timed on reading instead)",
            arrivals_total - arrivals_stamped
        );
    }
    let end_ns = monotonic_ns();
    for (link, (path, dir)) in links.iter_mut().zip(LINK_ORDER) {
        link.advance_to(end_ns - start_ns);
        log.write_line(&totals_line(trial_t(end_ns), path, dir, &link.totals()));
    }
    if let Some(out) = packet_log.as_mut() {
        use std::io::Write;
        write_packet_events(out, &mut links, trial_t(start_ns));
        if let Err(e) = out.flush() {
            eprintln!("linkemu: cannot write packet log: {e}");
        }
    }
    // Packets the kernel dropped on its own (never seen by the links).
    for c in linkemu::nfqueue::kernel_counters() {
        if let Some(i) = queues.iter().position(|&q| q == c.queue) {
            let (path, dir) = LINK_ORDER[i];
            log.write_line(&json!({
                "t_ns": trial_t(end_ns), "src": "emulator", "event": "nfqueue_totals",
                "path": path, "dir": dir, "queue": c.queue,
                "kernel_queue_dropped_total": c.queue_dropped,
                "kernel_user_dropped_total": c.user_dropped,
            }));
            if c.queue_dropped + c.user_dropped > 0 {
                eprintln!(
                    "linkemu: warning: the kernel dropped {} packets of queue {} ({path}/{dir}) \
                     before linkemu saw them",
                    c.queue_dropped + c.user_dropped,
                    c.queue
                );
            }
        }
    }
    log.flush();
    for &q in &queues {
        let _ = nfq.unbind(q);
    }
    if nfq.verdict_errors > 0 {
        eprintln!(
            "linkemu: the kernel rejected {} verdicts",
            nfq.verdict_errors
        );
    }
    Ok(())
}
