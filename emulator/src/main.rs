//! `linkemu`: applies a resolved scenario (CONTRACTS §4) to the NFQUEUE
//! queues of the router namespace (CONTRACTS §3), two per path, until
//! SIGTERM/SIGINT. A path that traverses a shared bottleneck hands each packet
//! its own link releases to the bottleneck's link (one queue for every path
//! and flow that crosses it); the verdict is given when the bottleneck
//! releases or drops it.
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
use linkemu::network::{FlowKey, FlowTable, LinkEvent, LinkSlot, NetLink, Network};
use linkemu::nfqueue::NfQueue;
use linkemu::scenario::{self, LinkLabel};
use serde_json::json;
use std::collections::{HashMap, VecDeque};
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
    #[arg(long, required_unless_present = "print_schema")]
    scenario: Option<PathBuf>,
    /// Trial seed; each link derives its own loss and jitter streams from it.
    #[arg(long, required_unless_present_any = ["validate", "print_schema"])]
    seed: Option<u64>,
    /// Trial clock origin (CLOCK_MONOTONIC ns); log lines carry t_ns relative to it.
    #[arg(long = "t0-ns", required_unless_present_any = ["validate", "print_schema"])]
    t0_ns: Option<u64>,
    /// Where to write the JSON Lines log (CONTRACTS §5.1).
    #[arg(long, required_unless_present_any = ["validate", "print_schema"])]
    log: Option<PathBuf>,
    /// NFQUEUE number of the first path's up link; its down link, then the
    /// next paths' up and down links follow (path i: base + 2i, base + 2i + 1).
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
    /// This is the one check of a resolved scenario: testbed/scenario.py asks it.
    #[arg(long)]
    validate: bool,
    /// Print the JSON Schema of the resolved scenario (generated from the
    /// emulator's types; netem-scenarios/resolved.schema.json) and exit.
    #[arg(long = "print-schema")]
    print_schema: bool,
}

fn ip(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

fn flows_json(flows: &FlowTable) -> serde_json::Value {
    serde_json::Value::Array(
        flows
            .iter()
            .map(|((src, dst), c)| {
                json!({"src": ip(*src), "dst": ip(*dst), "from_path": c.from_path,
                       "pkts_in": c.pkts_in, "bytes_in": c.bytes_in,
                       "pkts_out": c.pkts_out, "bytes_out": c.bytes_out, "drops": c.drops})
            })
            .collect(),
    )
}

/// A packet from NFQUEUE: its path link (whose queue gives the verdict), id,
/// size and addresses.
#[derive(Clone, Copy)]
struct NfPacket {
    path_link: usize,
    id: u32,
    bytes: u32,
    addrs: Option<FlowKey>,
}

/// A link as the emulator drives it: the packets it holds, by token.
struct NfLink {
    link: Link,
    packets: HashMap<u64, NfPacket>,
    next_token: u64,
    /// Packets a bottleneck refused on hand-in, reported by the next `poll`.
    refused: VecDeque<NfPacket>,
}

impl NfLink {
    fn new(link: Link) -> NfLink {
        NfLink {
            link,
            packets: HashMap::new(),
            next_token: 0,
            refused: VecDeque::new(),
        }
    }

    /// A packet enters at `at_ns`; Dropped if the link refuses it at once.
    fn enqueue(&mut self, packet: NfPacket, at_ns: u64) -> Verdict {
        let token = self.next_token;
        self.next_token += 1;
        let verdict = self.link.enqueue(token, packet.bytes, at_ns);
        if let Verdict::Queued = verdict {
            self.packets.insert(token, packet);
        }
        verdict
    }
}

impl NetLink for NfLink {
    type Packet = NfPacket;

    fn due(&self, _now_ns: u64) -> bool {
        true
    }

    fn poll(&mut self, now_ns: u64) -> Option<LinkEvent<NfPacket>> {
        if let Some(packet) = self.refused.pop_front() {
            return Some(LinkEvent::Dropped { packet });
        }
        self.link.advance_to(now_ns);
        let out = self.link.poll_output()?;
        let packet = self
            .packets
            .remove(&out.token)
            .expect("a released token was enqueued");
        Some(match out.decision {
            Decision::Accept => LinkEvent::Released {
                at_ns: out.at_ns,
                packet,
            },
            Decision::Drop(_) => LinkEvent::Dropped { packet },
        })
    }

    fn hand_in(&mut self, at_ns: u64, packet: NfPacket) {
        if let Verdict::Dropped(_) = self.enqueue(packet, at_ns) {
            self.refused.push_back(packet);
        }
    }

    fn flow(packet: &NfPacket) -> Option<(FlowKey, u32, usize)> {
        Some((packet.addrs?, packet.bytes, packet.path_link))
    }
}

/// The NFQUEUE number of a path link.
fn queue_of(args: &Args, path_link: usize) -> u16 {
    args.queue_base + path_link as u16
}

fn stats_line(
    slot: &LinkSlot,
    t_ns: i64,
    interval_ms: u64,
    stats: &linkemu::link::IntervalStats,
) -> serde_json::Value {
    let mut line = link_stats_line(t_ns, slot.name(), slot.dir.name(), interval_ms, stats);
    relabel(&mut line, slot);
    line
}

/// Bottleneck lines say `"bottleneck": NAME` where path lines say `"path": NAME`.
fn relabel(line: &mut serde_json::Value, slot: &LinkSlot) {
    if let LinkLabel::Bottleneck(name) = &slot.label {
        if let Some(obj) = line.as_object_mut() {
            obj.remove("path");
            obj.insert("bottleneck".into(), json!(name));
        }
    }
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

fn write_packet_events(
    out: &mut impl std::io::Write,
    links: &mut [NfLink],
    slots: &[LinkSlot],
    offset_ns: i64,
) {
    for (link, slot) in links.iter_mut().zip(slots) {
        for ev in link.link.take_packet_events() {
            let line = packet_event_line(offset_ns, slot.name(), slot.dir.name(), &ev);
            if let Err(e) = writeln!(out, "{line}") {
                eprintln!("linkemu: cannot write packet log: {e}");
                return;
            }
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.print_schema {
        println!(
            "{}",
            serde_json::to_string_pretty(&scenario::json_schema()).expect("schema is JSON")
        );
        return ExitCode::SUCCESS;
    }
    let Some(scenario_path) = args.scenario.clone() else {
        unreachable!("clap requires --scenario without --print-schema");
    };
    let scenario = match scenario::load(&scenario_path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("linkemu: {e}");
            return ExitCode::from(2);
        }
    };
    let seed = args.seed.unwrap_or(0);
    let network = match Network::from_scenario(&scenario, |spec, i| {
        Link::new(spec, seed, i).map(NfLink::new)
    }) {
        Ok(network) => network,
        Err(e) => {
            eprintln!("linkemu: scenario {}: {e}", scenario_path.display());
            return ExitCode::from(2);
        }
    };
    if args.validate {
        let slots = &network.slots;
        for (slot, link) in slots.iter().zip(&network.links) {
            let via = match slot.next_hop {
                Some(j) => format!(" -> bottleneck {}", slots[j].name()),
                None => String::new(),
            };
            let label = match &slot.label {
                LinkLabel::Path(n) => n.clone(),
                LinkLabel::Bottleneck(n) => format!("bottleneck {n}"),
            };
            println!("{label}/{}: {}{via}", slot.dir.name(), link.link.describe());
        }
        return ExitCode::SUCCESS;
    }
    let (Some(t0_ns), Some(log_path)) = (args.t0_ns, args.log.as_ref()) else {
        unreachable!("clap requires --t0-ns and --log without --validate");
    };
    match run(&args, &scenario, seed, t0_ns, log_path, network) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("linkemu: {e}");
            ExitCode::from(1)
        }
    }
}

type PacketLog = std::io::BufWriter<std::fs::File>;

fn run(
    args: &Args,
    scenario: &scenario::Scenario,
    seed: u64,
    t0_ns: u64,
    log_path: &std::path::Path,
    mut network: Network<NfLink>,
) -> Result<(), String> {
    let mut log = FileSink::create(log_path)
        .map_err(|e| format!("cannot create log file {}: {e}", log_path.display()))?;
    let mut packet_log = open_packet_log(args)?;
    install_signal_handlers();
    lock_memory_and_tighten_timers();
    let mut nfq = NfQueue::open().map_err(|e| format!("cannot open an NFQUEUE socket: {e}"))?;
    let path_links = network.path_links();
    let slots = network.slots.clone();
    bind_queues(args, &mut nfq, &slots[..path_links])?;
    // Virtual time 0 of every link is now: schedules and traces start here.
    let start_ns = monotonic_ns();
    let trial_t = |mono_ns: u64| mono_ns as i64 - t0_ns as i64;
    log.write_line(&start_line(
        args,
        scenario,
        seed,
        trial_t(start_ns),
        &network,
        &slots,
    ));
    log.flush();
    if let Some(out) = packet_log.as_mut() {
        write_packet_log_header(out, t0_ns, trial_t(start_ns), &mut network.links, &slots)?;
    }

    let interval_ns = STATS_INTERVAL_MS * 1_000_000;
    let tick_ns = args.tick_us * 1000;
    let mut next_stats_ns = interval_ns;
    let mut arrivals = Vec::with_capacity(1024);
    let mut last_accept: Vec<Option<u32>> = vec![None; path_links];
    let mut arrivals_total = 0u64;
    let mut arrivals_stamped = 0u64;
    let _stamping = enable_kernel_rx_timestamps();
    while !STOP.load(Ordering::SeqCst) {
        arrivals.clear();
        nfq.recv_batch(&mut arrivals)
            .map_err(|e| format!("reading NFQUEUE failed: {e}"))?;
        let now_ns = monotonic_ns().saturating_sub(start_ns);
        let pass_start_ns = now_ns;
        let (total, stamped) = enqueue_arrivals(args, &mut nfq, &mut network, &arrivals, now_ns);
        arrivals_total += total;
        arrivals_stamped += stamped;
        // What leaves the network is accepted, what it drops is dropped, at the
        // packet's own NFQUEUE.
        network.advance(now_ns, |_, event| match event {
            LinkEvent::Released { packet, .. } => last_accept[packet.path_link] = Some(packet.id),
            LinkEvent::Dropped { packet } => {
                nfq.drop_packet(queue_of(args, packet.path_link), packet.id)
            }
        });
        // Drops first: a batch ACCEPT covers every lower id still queued.
        for (i, last) in last_accept.iter_mut().enumerate() {
            if let Some(id) = last.take() {
                nfq.accept_up_to(queue_of(args, i), id);
            }
        }
        nfq.flush_verdicts()
            .map_err(|e| format!("sending verdicts failed: {e}"))?;
        if let Some(out) = packet_log.as_mut() {
            write_packet_events(out, &mut network.links, &slots, trial_t(start_ns));
        }
        for (link, slot) in network.links.iter_mut().zip(&slots) {
            for change in link.link.take_changes() {
                let mut line = schedule_line(
                    trial_t(start_ns + change.t_ns),
                    slot.name(),
                    slot.dir.name(),
                    &change,
                );
                relabel(&mut line, slot);
                log.write_line(&line);
            }
        }
        if now_ns >= next_stats_ns {
            let t = trial_t(start_ns + next_stats_ns);
            write_interval_stats(&mut log, &mut network, &slots, t);
            log.flush();
            while next_stats_ns <= now_ns {
                next_stats_ns += interval_ns;
            }
        }
        let release_ns = (network.links.iter())
            .filter_map(|l| l.link.next_release_bound())
            .min();
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
    write_totals(
        &mut log,
        &mut network,
        &slots,
        end_ns - start_ns,
        trial_t(end_ns),
    );
    if let Some(out) = packet_log.as_mut() {
        use std::io::Write;
        write_packet_events(out, &mut network.links, &slots, trial_t(start_ns));
        if let Err(e) = out.flush() {
            eprintln!("linkemu: cannot write packet log: {e}");
        }
    }
    write_kernel_counters(args, &mut log, &slots[..path_links], trial_t(end_ns));
    log.flush();
    for i in 0..path_links {
        let _ = nfq.unbind(queue_of(args, i));
    }
    if nfq.verdict_errors > 0 {
        eprintln!(
            "linkemu: the kernel rejected {} verdicts",
            nfq.verdict_errors
        );
    }
    Ok(())
}

fn open_packet_log(args: &Args) -> Result<Option<PacketLog>, String> {
    match &args.packet_log {
        None => Ok(None),
        Some(path) => Ok(Some(std::io::BufWriter::new(
            std::fs::File::create(path)
                .map_err(|e| format!("cannot create packet log {}: {e}", path.display()))?,
        ))),
    }
}

fn lock_memory_and_tighten_timers() {
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
}

/// One NFQUEUE per path link (`path_slots`: the path links, in queue order).
fn bind_queues(args: &Args, nfq: &mut NfQueue, path_slots: &[LinkSlot]) -> Result<(), String> {
    for (i, slot) in path_slots.iter().enumerate() {
        let q = queue_of(args, i);
        nfq.bind(q, COPY_BYTES, KERNEL_QUEUE_MAX_LEN).map_err(|e| {
            format!(
                "cannot bind NFQUEUE {q} ({}/{}): {e} (is another linkemu running?)",
                slot.name(),
                slot.dir.name()
            )
        })?;
    }
    Ok(())
}

/// The log's first line: the scenario, every link's description and which
/// bottleneck each chained link hands its packets to.
fn start_line(
    args: &Args,
    scenario: &scenario::Scenario,
    seed: u64,
    t_ns: i64,
    network: &Network<NfLink>,
    slots: &[LinkSlot],
) -> serde_json::Value {
    let described: serde_json::Map<String, serde_json::Value> = slots
        .iter()
        .zip(&network.links)
        .map(|(s, l)| {
            let key = match &s.label {
                LinkLabel::Path(n) => format!("{n}/{}", s.dir.name()),
                LinkLabel::Bottleneck(n) => format!("bottleneck {n}/{}", s.dir.name()),
            };
            (key, json!(l.link.describe()))
        })
        .collect();
    let chains: serde_json::Map<String, serde_json::Value> = slots
        .iter()
        .filter_map(|s| {
            let j = s.next_hop?;
            Some((
                format!("{}/{}", s.name(), s.dir.name()),
                json!(slots[j].name()),
            ))
        })
        .collect();
    json!({
        "t_ns": t_ns, "src": "emulator", "event": "start",
        "scenario": scenario.name, "seed": seed, "backend": "nfqueue",
        "queue_base": args.queue_base, "tick_us": args.tick_us, "links": described,
        "bottleneck_of": chains,
    })
}

/// The packet log's header (clock, format, links); turns on every link's
/// packet-event recording.
fn write_packet_log_header(
    out: &mut PacketLog,
    t0_ns: u64,
    start_t_ns: i64,
    links: &mut [NfLink],
    slots: &[LinkSlot],
) -> Result<(), String> {
    use std::io::Write;
    let mut header = format!(
        "# linkemu packet log: ms on the trial clock (t0_ns {t0_ns}); emulator start at \
         {:.3} ms; `+ bytes` arrival, `- bytes sojourn_ms` departure, `d bytes reason` drop\n",
        start_t_ns as f64 / 1e6
    );
    for (slot, link) in slots.iter().zip(links.iter_mut()) {
        header += &format!(
            "# {}/{}: {}\n",
            slot.name(),
            slot.dir.name(),
            link.link.describe()
        );
        link.link.record_packet_events();
    }
    out.write_all(header.as_bytes())
        .map_err(|e| format!("cannot write packet log: {e}"))
}

/// Feeds one batch of packets read from NFQUEUE to their path links at
/// `now_ns`; drops packets of unknown queues and those a link refuses.
/// Returns (packets fed, packets that carried a kernel receive stamp).
fn enqueue_arrivals(
    args: &Args,
    nfq: &mut NfQueue,
    network: &mut Network<NfLink>,
    arrivals: &[linkemu::nfqueue::QueuedPacket],
    now_ns: u64,
) -> (u64, u64) {
    let path_links = network.path_links();
    let (mut total, mut stamped) = (0u64, 0u64);
    // Kernel receive stamps are CLOCK_REALTIME: map them onto virtual time.
    let realtime_minus_virtual_ns = realtime_ns() as i64 - now_ns as i64;
    for p in arrivals {
        let Some(index) = p
            .queue
            .checked_sub(args.queue_base)
            .map(usize::from)
            .filter(|&i| i < path_links)
        else {
            nfq.drop_packet(p.queue, p.packet_id);
            continue;
        };
        total += 1;
        // The link clamps an arrival to its own clock, so a stamp a little
        // older than the link's last event is harmless.
        let arrival_ns = match p.rx_realtime_ns {
            Some(rx) => {
                stamped += 1;
                (rx as i64 - realtime_minus_virtual_ns).clamp(0, now_ns as i64) as u64
            }
            None => now_ns,
        };
        let packet = NfPacket {
            path_link: index,
            id: p.packet_id,
            bytes: p.bytes,
            addrs: p.addrs,
        };
        if let Verdict::Dropped(_) = network.links[index].enqueue(packet, arrival_ns) {
            nfq.drop_packet(p.queue, p.packet_id);
        }
    }
    (total, stamped)
}

/// One stats interval ending at trial time `t_ns`: every link's stats, and
/// each bottleneck's per-flow shares.
fn write_interval_stats(
    log: &mut FileSink,
    network: &mut Network<NfLink>,
    slots: &[LinkSlot],
    t_ns: i64,
) {
    for (index, slot) in slots.iter().enumerate() {
        let stats = network.links[index].link.take_interval();
        log.write_line(&stats_line(slot, t_ns, STATS_INTERVAL_MS, &stats));
        if let LinkLabel::Bottleneck(name) = &slot.label {
            let flows = network.take_flows_interval(index);
            if !flows.is_empty() {
                log.write_line(&json!({
                    "t_ns": t_ns, "src": "emulator", "event": "bottleneck_flows",
                    "bottleneck": name, "dir": slot.dir.name(),
                    "interval_ms": STATS_INTERVAL_MS, "flows": flows_json(&flows),
                }));
            }
        }
    }
}

/// At the end: brings every link to `elapsed_ns` and logs its totals (and each
/// bottleneck's per-flow totals) at trial time `t_ns`.
fn write_totals(
    log: &mut FileSink,
    network: &mut Network<NfLink>,
    slots: &[LinkSlot],
    elapsed_ns: u64,
    t_ns: i64,
) {
    for (index, slot) in slots.iter().enumerate() {
        let link = &mut network.links[index].link;
        link.advance_to(elapsed_ns);
        let mut line = totals_line(t_ns, slot.name(), slot.dir.name(), &link.totals());
        relabel(&mut line, slot);
        log.write_line(&line);
        if let LinkLabel::Bottleneck(name) = &slot.label {
            log.write_line(&json!({
                "t_ns": t_ns, "src": "emulator", "event": "bottleneck_flow_totals",
                "bottleneck": name, "dir": slot.dir.name(),
                "flows": flows_json(network.flows_total(index)),
            }));
        }
    }
}

/// Packets the kernel dropped on its own (never seen by the links), per path
/// link (`path_slots`, in queue order).
fn write_kernel_counters(args: &Args, log: &mut FileSink, path_slots: &[LinkSlot], t_ns: i64) {
    for c in linkemu::nfqueue::kernel_counters() {
        let path_link = (0..path_slots.len()).find(|&i| queue_of(args, i) == c.queue);
        if let Some(slot) = path_link.map(|i| &path_slots[i]) {
            let (path, dir) = (slot.name(), slot.dir.name());
            log.write_line(&json!({
                "t_ns": t_ns, "src": "emulator", "event": "nfqueue_totals",
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
}
