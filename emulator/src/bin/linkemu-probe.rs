//! `linkemu-probe`: a UDP one-way delay and loss probe for the emulator
//! benchmark and integration test.
//!
//! Sender and receiver run in different network namespaces of one machine,
//! which share CLOCK_MONOTONIC, so the receiver can compute one-way delay
//! directly: each datagram carries its sequence number and send time.
//!
//! ```text
//! linkemu-probe recv --bind 10.1.2.2:9000 --out probe.csv --idle-s 2
//! linkemu-probe send --bind 10.1.1.2 --to 10.1.2.2:9000 --pps 1000 --count 5000 --bytes 100
//! ```
//! The receiver writes `seq,send_ns,recv_ns,bytes` per datagram received and
//! exits once no datagram came for `--idle-s` after the first one.

use clap::{Parser, Subcommand};
use linkemu::clock::monotonic_ns;
use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "linkemu-probe", about = "UDP one-way delay/loss probe")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Send numbered, timestamped datagrams at a fixed rate.
    Send {
        /// Local address to send from (picks the path).
        #[arg(long)]
        bind: std::net::IpAddr,
        #[arg(long)]
        to: SocketAddr,
        /// Datagrams per second.
        #[arg(long)]
        pps: f64,
        #[arg(long)]
        count: u64,
        /// UDP payload bytes (>= 16).
        #[arg(long, default_value_t = 100)]
        bytes: usize,
    },
    /// Receive datagrams and write one CSV line per datagram.
    Recv {
        #[arg(long)]
        bind: SocketAddr,
        #[arg(long)]
        out: std::path::PathBuf,
        /// Stop after this long without a datagram (once one has arrived).
        #[arg(long = "idle-s", default_value_t = 2.0)]
        idle_s: f64,
        /// Give up if nothing arrives at all within this long.
        #[arg(long = "timeout-s", default_value_t = 60.0)]
        timeout_s: f64,
    },
}

fn sleep_until(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec; EINTR just ends the sleep early.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

fn send(
    bind: std::net::IpAddr,
    to: SocketAddr,
    pps: f64,
    count: u64,
    bytes: usize,
) -> Result<(), String> {
    if bytes < 16 || pps <= 0.0 {
        return Err(format!(
            "--bytes is {bytes} (must be >= 16), --pps is {pps} (must be > 0)"
        ));
    }
    let socket = UdpSocket::bind(SocketAddr::new(bind, 0))
        .map_err(|e| format!("cannot bind {bind}: {e}"))?;
    let mut buf = vec![0u8; bytes];
    let gap_ns = (1e9 / pps) as u64;
    let start_ns = monotonic_ns() + 1_000_000;
    for seq in 0..count {
        sleep_until(start_ns + seq * gap_ns);
        buf[0..8].copy_from_slice(&seq.to_le_bytes());
        buf[8..16].copy_from_slice(&monotonic_ns().to_le_bytes());
        if let Err(e) = socket.send_to(&buf, to) {
            // A full socket buffer is not the link's loss: retry once, then count it.
            if e.kind() == std::io::ErrorKind::WouldBlock {
                std::thread::sleep(Duration::from_micros(100));
                let _ = socket.send_to(&buf, to);
            } else {
                return Err(format!("send to {to} failed: {e}"));
            }
        }
    }
    Ok(())
}

fn recv(
    bind: SocketAddr,
    out: &std::path::Path,
    idle_s: f64,
    timeout_s: f64,
) -> Result<(), String> {
    let socket = UdpSocket::bind(bind).map_err(|e| format!("cannot bind {bind}: {e}"))?;
    let rcvbuf: libc::c_int = 16 << 20;
    // SAFETY: setsockopt on our socket with a valid int.
    unsafe {
        use std::os::fd::AsRawFd;
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            &rcvbuf as *const _ as *const libc::c_void,
            4,
        );
    }
    socket
        .set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(|e| e.to_string())?;
    let mut rows: Vec<(u64, u64, u64, usize)> = Vec::with_capacity(1 << 20);
    let mut buf = [0u8; 65536];
    let started_ns = monotonic_ns();
    let mut last_ns = 0u64;
    loop {
        match socket.recv(&mut buf) {
            Ok(n) if n >= 16 => {
                let now = monotonic_ns();
                let seq = u64::from_le_bytes(buf[0..8].try_into().unwrap());
                let sent = u64::from_le_bytes(buf[8..16].try_into().unwrap());
                rows.push((seq, sent, now, n));
                last_ns = now;
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(format!("receive failed: {e}")),
        }
        let now = monotonic_ns();
        if last_ns > 0 && now - last_ns > (idle_s * 1e9) as u64 {
            break;
        }
        if last_ns == 0 && now - started_ns > (timeout_s * 1e9) as u64 {
            break;
        }
    }
    let file =
        std::fs::File::create(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut w = std::io::BufWriter::new(file);
    let write = |w: &mut std::io::BufWriter<std::fs::File>| -> std::io::Result<()> {
        writeln!(w, "seq,send_ns,recv_ns,bytes")?;
        for (seq, sent, got, n) in &rows {
            writeln!(w, "{seq},{sent},{got},{n}")?;
        }
        w.flush()
    };
    write(&mut w).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Command::Send {
            bind,
            to,
            pps,
            count,
            bytes,
        } => send(bind, to, pps, count, bytes),
        Command::Recv {
            bind,
            out,
            idle_s,
            timeout_s,
        } => recv(bind, &out, idle_s, timeout_s),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("linkemu-probe: {e}");
            ExitCode::from(2)
        }
    }
}
