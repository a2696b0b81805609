//! The DASH player model over the simulated connection: the watchdog ends a run that stops
//! making progress with a reason, and the case that once hung (B1, compound × ecf, seed 2:
//! a subflow left in its RTO-loss state after its lost data was delivered on the other
//! subflow, while ECF waited for it) plays to the end.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;
mod sim_harness;

use mptransport::connection::Config;
use mptransport::sim::player::{
    Ladder, NO_PROGRESS_LIMIT, PlayerSpec, REQUEST_GAP, Representation, run_player,
};
use mptransport::sim::{LinkSpec, Pair};
use serde_json::Value;
use sim_harness::bdp_path;

/// Media segment sizes (bytes) of the first 90 s of the content pipeline's 180 s ladder
/// (`server/content.py`, 2 s segments), highest bitrate first as in its MPD: the sizes the
/// hanging trial streamed.
const SEGMENT_BYTES: [&[u64]; 4] = [
    // representation 0: init 832 B
    &[
        1628862, 1359517, 1316847, 1361200, 1305227, 1326896, 1317729, 1321632, 1310408, 1315216,
        1305515, 1316104, 1314904, 1312307, 1302718, 1316422, 1303082, 1321043, 1302463, 1309457,
        1304237, 1311836, 1318355, 1307627, 1317868, 1303525, 1316674, 1305186, 1313568, 1311814,
        1310334, 1309900, 1308325, 1314765, 1304972, 1311081, 1306646, 1312355, 1312662, 1304992,
        1315777, 1306701, 1312758, 1314368, 1308549,
    ],
    // representation 1: init 833 B
    &[
        854561, 782772, 757407, 777084, 741554, 780123, 760034, 791175, 750818, 762901, 749515,
        758257, 741567, 763448, 750924, 749950, 746621, 752682, 752059, 750260, 749285, 751431,
        751450, 745588, 754020, 753129, 748953, 749307, 752037, 749869, 752680, 746165, 755138,
        747560, 751909, 749153, 750881, 748495, 754234, 748645, 749365, 752734, 750989, 741755,
        756126,
    ],
    // representation 2: init 832 B
    &[
        381979, 384299, 384117, 388248, 382287, 392690, 383898, 390475, 388924, 384922, 376344,
        385336, 378813, 381959, 375590, 377390, 370853, 378327, 376107, 378327, 372947, 377169,
        369978, 377978, 373431, 380803, 374186, 375790, 371398, 377511, 373896, 378233, 374493,
        377062, 370706, 377942, 372446, 381253, 373915, 377109, 370846, 377860, 374868, 377629,
        373485,
    ],
    // representation 3: init 833 B
    &[
        206207, 207675, 204674, 206255, 198052, 202821, 200910, 212627, 212713, 211853, 199439,
        204259, 200695, 202663, 202321, 200732, 197216, 202338, 199256, 203405, 201564, 200317,
        198035, 200933, 199171, 204354, 199815, 201295, 197415, 200842, 199646, 203338, 200482,
        200360, 198157, 201524, 199542, 202083, 200651, 201082, 198164, 201198, 198861, 203494,
        200567,
    ],
];
const INIT_BYTES: [u64; 4] = [832, 833, 832, 833];
const BITRATES: [(u64, u32, u32); 4] = [
    (5_240_000, 1280, 720),
    (3_000_000, 960, 540),
    (1_500_000, 768, 432),
    (800_000, 640, 360),
];

/// Writes that ladder as an MPD plus segment files of the right sizes (sparse) into `dir`.
fn write_ladder(dir: &Path) -> std::path::PathBuf {
    let mut reps = String::new();
    for (i, (bps, w, h)) in BITRATES.iter().enumerate() {
        reps += &format!(
            "<Representation id=\"{i}\" mimeType=\"video/mp4\" bandwidth=\"{bps}\" \
             width=\"{w}\" height=\"{h}\"><SegmentTemplate timescale=\"1000000\" \
             duration=\"2000000\" initialization=\"init-$RepresentationID$.m4s\" \
             media=\"chunk-$RepresentationID$-$Number%05d$.m4s\" startNumber=\"1\">\
             </SegmentTemplate></Representation>\n"
        );
        let sized = |name: String, len: u64| {
            std::fs::File::create(dir.join(name))
                .and_then(|f| f.set_len(len))
                .expect("segment file");
        };
        sized(format!("init-{i}.m4s"), INIT_BYTES[i]);
        for (n, len) in SEGMENT_BYTES[i].iter().enumerate() {
            sized(format!("chunk-{i}-{:05}.m4s", n + 1), *len);
        }
    }
    let mpd = dir.join("manifest.mpd");
    std::fs::write(
        &mpd,
        format!(
            "<MPD type=\"static\" mediaPresentationDuration=\"PT1M30.0S\"><Period>\
             <AdaptationSet contentType=\"video\">\n{reps}</AdaptationSet></Period></MPD>\n"
        ),
    )
    .expect("mpd");
    mpd
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-player-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// mpsim run with the 90 s ladder (written to a temporary folder `name`, removed after)
/// and `args`.
fn mpsim_on_the_ladder(name: &str, args: &[&str]) -> Output {
    let dir = temp_dir(name);
    let mpd = write_ladder(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_mpsim"))
        .arg("--player-mpd")
        .arg(&mpd)
        .args(args)
        .output()
        .expect("mpsim runs");
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn b1_compound_ecf_seed_2_plays_to_the_end() {
    let args = "--scenario B1 --seed 2 --cc compound --sched ecf --video-duration 90";
    let out = mpsim_on_the_ladder("b1", &args.split(' ').collect::<Vec<_>>());
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "mpsim output: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let summary = &r["player_summary"];
    // Before the fix: segment 40 (requested at 50.4 s) never arrived, reason "timeout".
    assert_eq!(summary["reason"], "ended", "{summary}");
    assert_eq!(summary["played_s"], 90.0, "{summary}");
    assert!(out.status.success());
}

/// Default connections (seed 1) over one path, "wifi", of `mbps` each way with `one_way_ms`
/// delay, no loss and a one-BDP queue; and its link, for tests that change it.
fn wifi_pair(mbps: f64, one_way_ms: u64) -> (Pair, LinkSpec) {
    let path = bdp_path("wifi", mbps, one_way_ms, 0.0);
    let link = path.up;
    (
        Pair::new(Config::default(), Config::default(), &[path], 1),
        link,
    )
}

fn ladder() -> Ladder {
    Ladder {
        mpd: "synthetic.mpd".into(),
        segment_s: 2.0,
        duration_s: 20.0,
        reps: vec![Representation {
            id: "0".into(),
            bitrate_bps: 1e6,
            width: 640,
            height: 360,
            init_bytes: 1000,
            segment_bytes: vec![250_000; 10],
        }],
    }
}

#[test]
fn the_watchdog_ends_a_run_whose_path_died_with_the_state_in_the_reason() {
    let (mut pair, link) = wifi_pair(10.0, 20);
    // Let the first segments through, then cut the path for good.
    let mut spec = PlayerSpec::immediate(20.0, Duration::from_secs(3));
    let first = run_player(&mut pair, &ladder(), &spec);
    assert_eq!(first.last().unwrap()["reason"], "timeout");
    for down in [false, true] {
        pair.set_link(0, down, LinkSpec { loss: 1.0, ..link });
    }
    spec.timeout = NO_PROGRESS_LIMIT + Duration::from_secs(300);
    let events = run_player(&mut pair, &ladder(), &spec);
    let summary = events.last().unwrap();
    assert_eq!(summary["reason"], "stuck", "{summary}");
    let message = summary["error"].as_str().unwrap();
    assert!(message.contains("subflow wifi"), "{message}");
    // The connections' idle timeout (as long as the watchdog's limit) closes them; the
    // watchdog stops there, before the run's own limit.
    let t_s = summary["t_ns"].as_f64().unwrap() / 1e9;
    assert!(t_s < 3.0 + NO_PROGRESS_LIMIT.as_secs_f64() + 1.0, "{t_s}");
    assert!(
        events.iter().any(|e| e["event"] == "error"),
        "an error event for player.jsonl"
    );
}

/// The whole ladder of the content pipeline, in memory (sizes as in `SEGMENT_BYTES`, lowest
/// bitrate first as `Ladder::load` sorts it), cut to `segments` segments.
fn full_ladder(segments: usize) -> Ladder {
    let reps = (0..4)
        .rev()
        .map(|i| Representation {
            id: i.to_string(),
            bitrate_bps: BITRATES[i].0 as f64,
            width: BITRATES[i].1,
            height: BITRATES[i].2,
            init_bytes: INIT_BYTES[i],
            segment_bytes: SEGMENT_BYTES[i][..segments].to_vec(),
        })
        .collect();
    Ladder {
        mpd: "synthetic.mpd".into(),
        segment_s: 2.0,
        duration_s: 2.0 * segments as f64,
        reps,
    }
}

#[test]
fn the_player_starts_on_the_testbeds_clock_and_refetches_the_first_segment_after_switching_up() {
    // A 50 Mbit/s path: the start-up bitrate (800 kbit/s) is left for the top at once.
    let (mut pair, _) = wifi_pair(50.0, 10);
    let spec = PlayerSpec {
        video_duration_s: 20.0,
        timeout: Duration::from_secs(120),
        page_start: Duration::from_millis(1200),
        first_request: Duration::from_millis(2300),
        page_requests: Vec::new(),
    };
    let events = run_player(&mut pair, &full_ladder(10), &spec);
    let of = |name: &'static str| events.iter().filter(move |e| e["event"] == name);
    assert_eq!(of("start").next().unwrap()["t_ns"], 1_200_000_000u64);
    let segments: Vec<&Value> = of("segment").collect();
    let first_request = segments[0]["request_t_ns"].as_u64().unwrap();
    assert!(first_request >= 2_300_000_000, "{first_request}");
    // The start-up delay counts from the page's start, as the emulated player's does.
    let startup = of("startup").next().unwrap();
    let startup_ms = startup["startup_delay_ms"].as_f64().unwrap();
    let startup_t_ms = startup["t_ns"].as_f64().unwrap() / 1e6;
    assert!(
        (startup_ms - (startup_t_ms - 1200.0)).abs() < 1e-6,
        "{startup}"
    );
    // init-3, chunk-3-00001, init-0, chunk-0-00001 (again, at the top), chunk-0-00002, ...
    let urls: Vec<&str> = segments
        .iter()
        .map(|s| s["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        &urls[..5],
        [
            "init-3.m4s",
            "chunk-3-00001.m4s",
            "init-0.m4s",
            "chunk-0-00001.m4s",
            "chunk-0-00002.m4s"
        ]
    );
    // The re-fetched copy is not shown: the first 2 s play at the start-up bitrate.
    let switch = of("quality_switch").next().unwrap();
    assert_eq!(switch["from_rep"], "3");
    assert!(
        switch["media_time_s"].as_f64().unwrap() >= 2.0 - 1e-6,
        "{switch}"
    );
    let summary = events.last().unwrap();
    assert_eq!(summary["reason"], "ended", "{summary}");
}

#[test]
fn back_to_back_segments_are_requested_one_request_gap_after_the_last_byte() {
    // 1 Mbit/s segments over 0.8 Mbit/s: the buffer never reaches its target, so every
    // request follows the previous response as soon as dash.js would send it.
    let (mut pair, _) = wifi_pair(0.8, 20);
    let spec = PlayerSpec::immediate(20.0, Duration::from_secs(120));
    let events = run_player(&mut pair, &ladder(), &spec);
    let segments: Vec<&Value> = events.iter().filter(|e| e["event"] == "segment").collect();
    assert_eq!(segments.len(), 11, "init + 10 media segments");
    for pair in segments.windows(2) {
        let end = pair[0]["end_t_ns"].as_u64().unwrap();
        let next = pair[1]["request_t_ns"].as_u64().unwrap();
        assert_eq!(
            next - end,
            REQUEST_GAP.as_nanos() as u64,
            "{} -> {}",
            pair[0],
            pair[1]
        );
    }
    assert_eq!(events.last().unwrap()["reason"], "ended");
}

#[test]
fn mpsim_rejects_a_negative_start_time_with_exit_2() {
    let out = mpsim_on_the_ladder(
        "negative-start",
        &["--scenario", "B1", "--player-first-request-s=-1"],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--player-first-request-s -1"), "{stderr}");
}

/// The page's own requests (`PlayerSpec::page_requests`): on the video's connection each goes
/// out at its time, one at a time, its response crosses the connection, and the first
/// segment request waits for the last of them; a side connection's request is answered on
/// that connection, over the same link.
#[test]
fn the_page_requests_go_first_and_the_first_segment_waits_for_their_responses() {
    use mptransport::sim::player::{PageRequest, RESPONSE_HEADER_BYTES};
    // 10 Mbit/s, 10 ms each way: a 2 MB page response takes about 1.7 s.
    let (mut pair, _) = wifi_pair(10.0, 10);
    pair.add_connection(Config::default(), Config::default(), 77);
    let page_requests = vec![
        // A side connection of the page (`conn` 1): its 1 MB crosses the same link.
        PageRequest {
            at: Duration::from_millis(1300),
            body_bytes: 1_000_000,
            conn: 1,
        },
        PageRequest {
            at: Duration::from_millis(1400),
            body_bytes: 20_000,
            conn: 0,
        },
        PageRequest {
            at: Duration::from_millis(2000),
            body_bytes: 2_000_000,
            conn: 0,
        },
        PageRequest {
            at: Duration::from_millis(2100),
            body_bytes: 2_600,
            conn: 0,
        },
    ];
    let spec = PlayerSpec {
        video_duration_s: 10.0,
        timeout: Duration::from_secs(120),
        page_start: Duration::from_millis(1200),
        first_request: Duration::from_millis(2300),
        page_requests: page_requests.clone(),
    };
    let events = run_player(&mut pair, &full_ladder(5), &spec);
    let segments: Vec<&Value> = events.iter().filter(|e| e["event"] == "segment").collect();
    // The 2 MB response cannot be in before 2.0 s + 1.6 s (its bytes at 10 Mbit/s); the
    // third page request follows it, and only then the first segment request.
    let first_request = segments[0]["request_t_ns"].as_u64().unwrap();
    assert!(first_request > 3_600_000_000, "{first_request}");
    // Everything the server wrote: every segment's and every page response's bytes.
    let server = pair.server.as_ref().expect("server connection");
    let segment_bytes: u64 = segments
        .iter()
        .map(|s| s["bytes"].as_u64().unwrap() + RESPONSE_HEADER_BYTES)
        .sum();
    let page_bytes: u64 = page_requests
        .iter()
        .map(|p| p.body_bytes + RESPONSE_HEADER_BYTES)
        .sum();
    let own_page_bytes: u64 = page_requests
        .iter()
        .filter(|p| p.conn == 0)
        .map(|p| p.body_bytes + RESPONSE_HEADER_BYTES)
        .sum();
    assert_eq!(
        server.counters().bytes_written_total,
        segment_bytes + own_page_bytes
    );
    // The side connection's server answered its request, and its client read it all.
    let side = &pair.side[0];
    let side_server = side.server.as_ref().expect("side server connection");
    assert_eq!(
        side_server.counters().bytes_written_total,
        1_000_000 + RESPONSE_HEADER_BYTES
    );
    assert_eq!(
        side.client.counters().bytes_delivered_total,
        1_000_000 + RESPONSE_HEADER_BYTES
    );
    // Both connections' bytes crossed the one down link.
    let down = pair.link_counters(0, true);
    assert!(down.bytes_out >= page_bytes + segment_bytes, "{down:?}");
    assert_eq!(events.last().unwrap()["reason"], "ended");
}

#[test]
fn mpsim_rejects_a_page_request_without_its_size_with_exit_2() {
    let out = mpsim_on_the_ladder(
        "bad-page-request",
        &["--scenario", "B1", "--player-page-request", "1.4"],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--player-page-request 1.4: expected AT_S:BODY_BYTES[:CONN]"),
        "{stderr}"
    );
}
