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
