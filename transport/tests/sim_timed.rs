//! The time-based bulk transfer (`sim::run_timed`, `mpsim --duration-s`): it runs for its
//! duration, counts goodput from `measure_from` on, and its per-path bins add up to what the
//! paths carried.

mod sim_harness;

use std::time::Duration;

use mptransport::sim::{Pair, TimedSpec, run_timed};
use sim_harness::{bdp_path as path, cfg};

#[test]
fn a_timed_run_lasts_its_duration_and_measures_after_start_up() {
    let paths = [path("wifi", 10.0, 10, 0.0), path("lte", 5.0, 20, 0.0)];
    let mut pair = Pair::new(cfg("cubic", "lrf"), cfg("cubic", "lrf"), &paths, 1);
    let spec = TimedSpec {
        duration: Duration::from_secs(6),
        measure_from: Duration::from_secs(2),
        bin: Some(Duration::from_secs(1)),
    };
    let r = run_timed(&mut pair, &spec, |_| {});
    assert!(r.ran_to_the_end(), "{:?}", r.outcome);
    assert!(
        (r.measured_s - 4.0).abs() < 0.01,
        "measured {} s",
        r.measured_s
    );
    // Lossless paths of 10 + 5 Mbit/s after start-up: close to full (headers take ~3 %).
    let mbps = r.goodput_bps() / 1e6;
    assert!((12.5..15.0).contains(&mbps), "goodput {mbps:.2} Mbit/s");
    // Start-up is left out: the whole run's rate is below the measured one.
    let whole_mbps = r.bytes_read_total as f64 * 8.0 / 6.0 / 1e6;
    assert!(
        whole_mbps < mbps,
        "whole {whole_mbps:.2} vs measured {mbps:.2}"
    );
    // Six 1 s bins per path, each path's bins never above its link, and the bins from 2 s on
    // add up to the path's acknowledged bytes over the measured interval.
    for (name, bins) in &r.acked_bytes_per_bin_per_path {
        assert_eq!(bins.len(), 6, "{name}: {bins:?}");
        let cap_bytes = if name == "wifi" {
            10e6 / 8.0
        } else {
            5e6 / 8.0
        };
        assert!(
            bins.iter().all(|&b| b as f64 <= cap_bytes * 1.05),
            "{name}: {bins:?}"
        );
        let measured = r
            .acked_bytes_measured_per_path
            .iter()
            .find(|(n, _)| n == name)
            .map(|x| x.1)
            .expect("path in both");
        let from_bins: u64 = bins[2..].iter().sum();
        let diff = from_bins.abs_diff(measured) as f64;
        assert!(
            diff <= 0.02 * measured as f64,
            "{name}: bins {from_bins} vs {measured}"
        );
    }
}

#[test]
#[should_panic(expected = "measure_from")]
fn measuring_from_beyond_the_duration_is_refused() {
    let mut pair = Pair::new(
        cfg("reno", "lrf"),
        cfg("reno", "lrf"),
        &[path("wifi", 10.0, 10, 0.0)],
        1,
    );
    let spec = TimedSpec {
        duration: Duration::from_secs(2),
        measure_from: Duration::from_secs(2),
        bin: None,
    };
    run_timed(&mut pair, &spec, |_| {});
}

fn mpsim(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mpsim"))
        .args(args)
        .output()
        .expect("mpsim runs")
}

#[test]
fn mpsim_runs_a_timed_transfer_with_loss_on_the_data_direction_only() {
    let out = mpsim(&[
        "--path",
        "a:10:10:0.02",
        "--duration-s",
        "3",
        "--measure-from-s",
        "1",
        "--bin-s",
        "1",
        "--loss-direction",
        "down",
        "--cc",
        "cubic",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(r["goodput_bps"].as_f64().unwrap() > 0.0, "{r}");
    assert_eq!(
        r["acked_bps_per_bin_per_path"]["a"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "{r}"
    );
    // Data direction drops at random, the ACK direction does not.
    assert!(
        r["links"]["a"]["down"]["drops_random"].as_u64().unwrap() > 0,
        "{r}"
    );
    assert_eq!(
        r["links"]["a"]["up"]["drops_random"].as_u64(),
        Some(0),
        "{r}"
    );
}

#[test]
fn mpsim_refuses_a_measure_window_outside_the_run() {
    for args in [
        &[
            "--path",
            "a:10:10:0",
            "--duration-s",
            "2",
            "--measure-from-s",
            "2",
        ][..],
        &["--path", "a:10:10:0", "--duration-s", "0"][..],
        &["--path", "a:10:10:0", "--duration-s", "2", "--bin-s", "5"][..],
    ] {
        let out = mpsim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("need"),
            "{args:?}"
        );
    }
}
