//! mpproxy end to end on loopback (no namespaces): a TCP source behind `mpproxy server`, a
//! TCP reader in front of `mpproxy client`, two subflows (two server ports); 5 MB arrive with
//! the same SHA-256, both sides log `subflow`/`conn` lines and a clean `conn_close`.
//! Also: bad arguments exit with status 2 and say what is valid.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

const MPPROXY: &str = env!("CARGO_BIN_EXE_mpproxy");

fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        // SIGTERM by PID so mpproxy flushes its stats, then reap.
        // SAFETY: signals a child we spawned, by its PID.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pattern(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn wait_for_line(path: &PathBuf, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if std::fs::read_to_string(path).is_ok_and(|s| s.contains(needle)) {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("no {needle} in {}", path.display());
}

#[test]
fn five_megabytes_over_two_loopback_subflows() {
    let dir = std::env::temp_dir().join(format!("tbx-core-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p1, p2, fwd, front) = (
        free_udp_port(),
        free_udp_port(),
        free_tcp_port(),
        free_tcp_port(),
    );
    let payload = pattern(5_000_000);
    let expected: [u8; 32] = Sha256::digest(&payload).into();

    let source = TcpListener::bind(("127.0.0.1", fwd)).unwrap();
    let data = payload.clone();
    let source_thread = thread::spawn(move || {
        let (mut s, _) = source.accept().unwrap();
        let mut req = [0u8; 4];
        s.read_exact(&mut req).unwrap();
        s.write_all(&data).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
    });

    let (s_stats, c_stats) = (dir.join("server.jsonl"), dir.join("client.jsonl"));
    let common = [
        "--cc", "cubic", "--sched", "lrf", "--t0-ns", "0", "--seed", "3",
    ];
    let _server = Kill(
        Command::new(MPPROXY)
            .args([
                "server",
                "--listen",
                &format!("127.0.0.1:{p1},127.0.0.1:{p2}"),
            ])
            .args(["--forward", &format!("127.0.0.1:{fwd}"), "--stats"])
            .arg(&s_stats)
            .args(common)
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let _client = Kill(
        Command::new(MPPROXY)
            .args(["client", "--listen", &format!("127.0.0.1:{front}")])
            .args(["--path", &format!("wifi=127.0.0.1:127.0.0.1:{p1}")])
            .args([
                "--path",
                &format!("lte=127.0.0.1:127.0.0.1:{p2}"),
                "--stats",
            ])
            .arg(&c_stats)
            .args(common)
            .spawn()
            .unwrap(),
    );
    wait_for_line(&s_stats, "\"start\"");
    wait_for_line(&c_stats, "\"start\"");

    let mut c = TcpStream::connect(("127.0.0.1", front)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    c.write_all(b"GET\n").unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    drop(c);
    source_thread.join().unwrap();
    assert_eq!(got.len(), payload.len());
    let actual: [u8; 32] = Sha256::digest(&got).into();
    assert_eq!(actual, expected, "stream differs");

    wait_for_line(&c_stats, "\"conn_close\"");
    wait_for_line(&s_stats, "\"conn_close\"");
    for stats in [&c_stats, &s_stats] {
        let text = std::fs::read_to_string(stats).unwrap();
        let mut paths = std::collections::BTreeSet::new();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("every line is JSON");
            assert!(
                v["t_ns"].is_i64() && v["src"].is_string() && v["event"].is_string(),
                "{line}"
            );
            if v["event"] == "subflow" {
                paths.insert(v["path"].as_str().unwrap().to_string());
            }
            if v["event"] == "conn_close" {
                assert_eq!(v["reason"], "clean", "{line}");
            }
        }
        assert_eq!(paths.into_iter().collect::<Vec<_>>(), vec!["lte", "wifi"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(MPPROXY).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn bad_arguments_exit_2_and_name_what_is_valid() {
    const PATH: &str = "wifi=127.0.0.1:127.0.0.1:9";
    // (arguments, what every message must name)
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &[
                "client",
                "--listen",
                "127.0.0.1:1",
                "--path",
                PATH,
                "--cc",
                "vegas",
            ],
            &["vegas", "reno", "bbr"],
        ),
        (
            &[
                "server",
                "--listen",
                "127.0.0.1:1",
                "--forward",
                "x:y",
                "--sched",
                "lrf",
            ],
            &["--forward"],
        ),
        (
            &["client", "--listen", "127.0.0.1:1", "--path", "wifi"],
            &["name=local_ip:server_ip:port"],
        ),
        (
            &[
                "client",
                "--listen",
                "127.0.0.1:1",
                "--path",
                PATH,
                "--sched",
                "fastest",
            ],
            &["minrtt"],
        ),
    ];
    for (args, named) in cases {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        for word in named {
            assert!(err.contains(word), "{args:?} must name {word}: {err}");
        }
    }
}

#[test]
fn list_prints_every_registered_name_as_json() {
    let (code, out, _) = run(&["--list"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cc: Vec<&str> = v["cc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(cc, mptransport::cc::names());
    let sched: Vec<&str> = v["sched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(sched, mptransport::sched::names());
    assert_eq!(v["sched_aliases"]["minrtt"], "lrf");
}
