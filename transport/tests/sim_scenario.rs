//! `mpsim --scenario`: a shipped scenario runs on linkemu's link model in virtual time, and the
//! random loss it applies is the scenario's (schedule and noise included).

use std::process::Command;

use serde_json::Value;

fn mpsim(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mpsim"))
        .args(args)
        .output()
        .expect("mpsim runs");
    assert!(
        out.status.success(),
        "mpsim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("mpsim prints one JSON object")
}

#[test]
fn b1_loss_on_wifi_matches_the_scheduled_loss() {
    let r = mpsim(&[
        "--scenario",
        "B1",
        "--cc",
        "cubic",
        "--sched",
        "lrf",
        "--bytes",
        "50000000",
    ]);
    assert_eq!(r["byte_exact_and_clean"], true, "{r}");
    let wifi_down = &r["links"]["wifi"]["down"];
    let drops = wifi_down["drops_random"].as_f64().unwrap();
    let expected = wifi_down["expected_random_drops"].as_f64().unwrap();
    let pkts = wifi_down["pkts_in"].as_f64().unwrap();
    // Expected = sum over arriving packets of the loss probability in force (the ramp and the
    // seeded +-50 % noise steps of B1): measured within +-10 % relative.
    assert!(expected > 100.0, "too few packets to judge: {wifi_down}");
    assert!(
        (drops / expected - 1.0).abs() <= 0.10,
        "wifi down: {drops} random drops, {expected} expected ({wifi_down})"
    );
    // The transfer ends well before B1's ramp starts at 60 s, so the loss rate is the
    // scenario's 10 % mean (the noise is multiplicative with mean 1).
    let virtual_s = r["virtual_s"].as_f64().unwrap();
    assert!(virtual_s < 60.0, "{virtual_s}");
    assert!(
        (drops / pkts / 0.10 - 1.0).abs() <= 0.10,
        "wifi down loss {:.4} vs 0.10",
        drops / pkts
    );
    // LTE and the up links have no random loss in B1.
    for (path, dir) in [("lte", "down"), ("lte", "up"), ("wifi", "up")] {
        assert_eq!(r["links"][path][dir]["drops_random"], 0, "{path} {dir}");
    }
}

#[test]
fn the_same_seed_repeats_and_another_seed_differs() {
    let args = |seed: &'static str| {
        [
            "--scenario",
            "B1",
            "--cc",
            "reno",
            "--sched",
            "minrtt",
            "--bytes",
            "5000000",
            "--seed",
            seed,
        ]
    };
    let a = mpsim(&args("3"));
    let b = mpsim(&args("3"));
    let c = mpsim(&args("4"));
    assert_eq!(a["links"], b["links"]);
    assert_ne!(a["links"], c["links"]);
}

#[test]
fn a_scenario_that_does_not_exist_is_an_error_for_people() {
    let out = Command::new(env!("CARGO_BIN_EXE_mpsim"))
        .args(["--scenario", "no-such-scenario", "--bytes", "1000"])
        .output()
        .expect("mpsim runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-scenario"), "{err}");
}

#[test]
fn a_shared_bottleneck_carries_both_subflows_and_the_cross_traffic() {
    // netem-scenarios/shared-bottleneck.toml: both paths cross one 20 Mbit/s link (down),
    // shared with one single-path CUBIC flow on the Wi-Fi path; the access links are
    // 100 Mbit/s, so only the shared link limits.
    let r = mpsim(&[
        "--scenario",
        "shared-bottleneck",
        "--cc",
        "cubic",
        "--sched",
        "lrf",
        "--bytes",
        "20000000",
    ]);
    assert_eq!(r["byte_exact_and_clean"], true, "{r}");
    let core = &r["bottlenecks"][0];
    assert_eq!(core["name"], "core", "{r}");
    assert_eq!(core["dir"], "down");
    // Every data packet of both subflows and of the cross flow crossed the shared link.
    let sent: u64 = ["wifi", "lte"]
        .iter()
        .map(|p| r["links"][*p]["down"]["pkts_out"].as_u64().unwrap())
        .sum();
    assert_eq!(core["pkts_in"].as_u64().unwrap(), sent, "{r}");
    let cross = &r["cross_traffic"][0];
    assert_eq!(
        (cross["path"].as_str(), cross["kind"].as_str()),
        (Some("wifi"), Some("tcp"))
    );
    let cross_bytes = cross["bytes_received"].as_f64().unwrap();
    let virtual_s = r["virtual_s"].as_f64().unwrap();
    let mp_bps = r["goodput_bps"].as_f64().unwrap();
    let cross_bps = cross_bytes * 8.0 / virtual_s;
    // Both got a real share of the 20 Mbit/s link, and together no more than it carries.
    assert!(
        mp_bps > 2e6 && cross_bps > 2e6,
        "mp {mp_bps} cross {cross_bps}"
    );
    assert!(mp_bps + cross_bps < 20e6, "mp {mp_bps} cross {cross_bps}");
    assert!(
        core["drops_queue"].as_u64().unwrap() > 0,
        "the flows competed: {core}"
    );
}

#[test]
fn udp_cross_traffic_takes_its_rate_from_the_path() {
    let dir = std::env::temp_dir().join(format!("sim-cbr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("cbr.toml");
    std::fs::write(
        &toml,
        "name = \"cbr\"\ndescription = \"10 Mbit/s path, 4 Mbit/s UDP down\"\nduration_s = 60.0\n\
         [paths.wifi]\nrate = { bps = 10_000_000 }\ndelay_ms = 10.0\n\
         [[cross_traffic]]\nkind = \"udp_cbr\"\npath = \"wifi\"\ndirection = \"down\"\n\
         count = 2\nrate_bps = 2_000_000\npacket_bytes = 1200\n",
    )
    .unwrap();
    let r = mpsim(&[
        "--scenario",
        toml.to_str().unwrap(),
        "--cc",
        "reno",
        "--bytes",
        "10000000",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(r["byte_exact_and_clean"], true, "{r}");
    let virtual_s = r["virtual_s"].as_f64().unwrap();
    let udp_pkts: f64 = (0..2)
        .map(|i| r["cross_traffic"][i]["pkts_sent"].as_f64().unwrap())
        .sum();
    // 2 × 2 Mbit/s of 1200 B packets: about 417 packets/s while the transfer ran.
    let rate = udp_pkts * 1200.0 * 8.0 / virtual_s;
    assert!(
        (rate / 4e6 - 1.0).abs() < 0.1,
        "UDP {rate} bit/s over {virtual_s} s"
    );
    // The transfer got what the UDP flows left (6 Mbit/s), minus headers and sawtooth.
    let goodput = r["goodput_bps"].as_f64().unwrap();
    assert!(goodput > 3e6 && goodput < 6e6, "{goodput}");
}
