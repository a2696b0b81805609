//! A DASH player model over a simulated connection, in virtual time. It writes the same
//! `player.jsonl` events as the real players (docs/CONTRACTS.md section 5.4) with
//! `src: "player-sim"`, so `metrics/` reads simulated trials unchanged.
//!
//! What it models (details and approximations in docs/SIMULATOR.md):
//! * HTTP/1.1 on one persistent connection, as nginx serves it: the client writes a request
//!   of `REQUEST_BYTES`, the server answers with `RESPONSE_HEADER_BYTES` plus the segment's
//!   real size, read from the encoded ladder (the MPD and the `.m4s` files in the content
//!   cache). One request at a time, as dash.js fetches one video segment at a time.
//! * The page's own requests ([`PageRequest`]): on the video's connection before its first
//!   segment, and on further connections of the pair (the browser's other connections for
//!   the page), each HTTP/1.1 one request at a time.
//! * A playout buffer: playback starts once the first media segment is in, drains in real
//!   (virtual) time, stalls when it runs dry, resumes when a segment arrives.
//! * dash.js's default ABR rules ([`super::abr`]: throughput model, throughput rule, BOLA
//!   from 12 s of buffer, insufficient-buffer rule). Start at the highest bitrate ≤ 1 Mbit/s
//!   (dash.js's default initial bitrate).
//! * Buffer target: 18 s, 30 s when at the top quality (dash.js 5's `bufferTimeDefault` and
//!   `bufferTimeAtTopQuality`); the next segment is requested once buffer + one segment
//!   stays below it (`ScheduleController._shouldBuffer`).
//! * The testbed's start-up: the page opens at `PlayerSpec::page_start` (the `start` event;
//!   the emulated trial's Chromium launch) and the first request goes out at
//!   `PlayerSpec::first_request` (page, dash.js and MPD loaded), both on the scenario's clock.
//! * After the start-up segment, dash.js requests the first media segment again at the
//!   bitrate it switches up to (seen in every emulated trial's nginx log); the copy is a
//!   throughput sample but is not shown (playback already began at the start-up bitrate).
//! * Replacements after an up-switch ([`replace_from`], as the emulated dash.js trials do
//!   it): the buffered lower-bitrate segments are downloaded again from the one under the
//!   playhead on, except with one to 1.25 segments buffered; a replacement that arrives
//!   before the playhead is shown instead.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::abr::{AbrInput, BUFFER_TIME_DEFAULT_S, DashAbr, SegmentDone};
use super::endpoint::earliest;
use super::pair::Pair;
use crate::connection::Connection;
use crate::units::Instant;

pub const REQUEST_BYTES: u64 = 400;
pub const RESPONSE_HEADER_BYTES: u64 = 300;
/// dash.js `buffer.bufferTimeAtTopQuality` (s).
const BUFFER_AT_TOP_S: f64 = 30.0;
const INITIAL_BITRATE_BPS: f64 = 1_000_000.0;
/// dash.js `scheduling.defaultTimeout`: while the buffer is at its target, the schedule
/// controller looks again this much later.
const SCHEDULE_TIMEOUT: Duration = Duration::from_millis(500);
const SAMPLE_EVERY: Duration = Duration::from_millis(250);
/// Watchdog: a response that gets no byte for this long of virtual time ends the run with
/// reason `stuck` (an outage that long would also have closed the connection: its idle
/// timeout is 30 s).
pub const NO_PROGRESS_LIMIT: Duration = Duration::from_secs(60);

#[derive(Clone, Debug)]
pub struct Representation {
    pub id: String,
    pub bitrate_bps: f64,
    pub width: u32,
    pub height: u32,
    pub init_bytes: u64,
    /// Sizes of the media segments, in order.
    pub segment_bytes: Vec<u64>,
}

#[derive(Clone, Debug)]
pub struct Ladder {
    pub mpd: PathBuf,
    pub segment_s: f64,
    pub duration_s: f64,
    /// Sorted by bitrate, lowest first.
    pub reps: Vec<Representation>,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let start = tag
        .match_indices(&key)
        .find(|(i, _)| *i == 0 || tag.as_bytes()[i - 1].is_ascii_whitespace())?
        .0
        + key.len();
    let end = tag[start..].find('"')? + start;
    Some(tag[start..end].to_string())
}

/// `PT12.0S`, `PT1M30.5S`, `PT1H2M3S` → seconds.
fn iso_duration_s(s: &str) -> Option<f64> {
    let rest = s.strip_prefix("PT")?;
    let mut total = 0.0;
    let mut num = String::new();
    for c in rest.chars() {
        match c {
            'H' => total += num.parse::<f64>().ok()? * 3600.0,
            'M' => total += num.parse::<f64>().ok()? * 60.0,
            'S' => total += num.parse::<f64>().ok()?,
            _ => {
                num.push(c);
                continue;
            }
        }
        num.clear();
    }
    Some(total)
}

impl Ladder {
    /// Reads the video adaptation set of an MPD written by the content pipeline
    /// (SegmentTemplate with `$RepresentationID$` and `$Number%05d$`) and the sizes of its
    /// segment files next to it.
    pub fn load(mpd: &Path) -> Result<Ladder, String> {
        let text = std::fs::read_to_string(mpd).map_err(|e| format!("{}: {e}", mpd.display()))?;
        let dir = mpd.parent().unwrap_or(Path::new("."));
        let err = |what: &str| format!("{}: {what}", mpd.display());
        let duration_s = attr(&text, "mediaPresentationDuration")
            .and_then(|d| iso_duration_s(&d))
            .ok_or_else(|| err("no mediaPresentationDuration"))?;
        let video = text
            .split("<AdaptationSet")
            .skip(1)
            .find(|a| a.contains("contentType=\"video\"") || a.contains("video/mp4"))
            .ok_or_else(|| err("no video AdaptationSet"))?;
        let mut reps = Vec::new();
        let mut segment_s = 0.0;
        for chunk in video.split("<Representation").skip(1) {
            let tag = &chunk[..chunk.find('>').unwrap_or(chunk.len())];
            let tag = format!(" {tag}");
            let id = attr(&tag, "id").ok_or_else(|| err("Representation without id"))?;
            let bitrate_bps: f64 = attr(&tag, "bandwidth")
                .and_then(|b| b.parse().ok())
                .ok_or_else(|| err("Representation without bandwidth"))?;
            let width = attr(&tag, "width")
                .and_then(|w| w.parse().ok())
                .unwrap_or(0);
            let height = attr(&tag, "height")
                .and_then(|h| h.parse().ok())
                .unwrap_or(0);
            let tpl_at = chunk
                .find("<SegmentTemplate")
                .ok_or_else(|| err("Representation without SegmentTemplate"))?;
            let tpl = &chunk[tpl_at..];
            let tpl = format!(" {}", &tpl[..tpl.find('>').unwrap_or(tpl.len())]);
            let timescale: f64 = attr(&tpl, "timescale")
                .and_then(|t| t.parse().ok())
                .unwrap_or(1.0);
            let dur: f64 = attr(&tpl, "duration")
                .and_then(|d| d.parse().ok())
                .ok_or_else(|| err("SegmentTemplate without duration"))?;
            segment_s = dur / timescale;
            let start: u64 = attr(&tpl, "startNumber")
                .and_then(|s| s.parse().ok())
                .unwrap_or(1);
            let init = attr(&tpl, "initialization").ok_or_else(|| err("no initialization"))?;
            let media = attr(&tpl, "media").ok_or_else(|| err("no media template"))?;
            let size = |name: &str| -> Result<u64, String> {
                let p = dir.join(name);
                std::fs::metadata(&p)
                    .map(|m| m.len())
                    .map_err(|e| format!("{}: {e}", p.display()))
            };
            let init_bytes = size(&init.replace("$RepresentationID$", &id))?;
            let count = (duration_s / segment_s).ceil() as u64;
            let mut segment_bytes = Vec::new();
            for n in start..start + count {
                let name = media
                    .replace("$RepresentationID$", &id)
                    .replace("$Number%05d$", &format!("{n:05}"))
                    .replace("$Number$", &n.to_string());
                segment_bytes.push(size(&name)?);
            }
            reps.push(Representation {
                id,
                bitrate_bps,
                width,
                height,
                init_bytes,
                segment_bytes,
            });
        }
        if reps.is_empty() {
            return Err(err("no video Representation"));
        }
        reps.sort_by(|a, b| a.bitrate_bps.total_cmp(&b.bitrate_bps));
        Ok(Ladder {
            mpd: mpd.to_path_buf(),
            segment_s,
            duration_s,
            reps,
        })
    }
}

/// Below this much buffer (in segments, and at least one segment), an up-switch replaces
/// nothing: the band where the emulated dash.js went on with the next segment (see
/// [`replace_from`]).
const NO_REPLACEMENT_BELOW_SEGMENTS: f64 = 1.25;

/// Where dash.js goes on after an up-switch to `new_rep` (after the start-up decision), as
/// the emulated trials show it (docs/SIMULATOR.md, "Replacements after an up-switch"): it
/// downloads again from the segment under the playhead, at the new bitrate, and on from
/// there, when a segment from there on is buffered at a lower bitrate; except when the
/// buffer holds at least one segment but less than `NO_REPLACEMENT_BELOW_SEGMENTS`, where it
/// goes on with the next segment. None: no replacement (the next segment comes next).
/// `shown`: (media start s, bitrate index) of the buffered segments (the last entry for a
/// start counts).
///
/// dash.js 5.2.1's `_prepareForFastQualitySwitch` reads as replacing from 1.5 segments
/// ahead of the playhead with at least that much buffered. The 355 up-switches after the
/// start-up decision in two emulated cross-validation runs (162 trials) replaced from the
/// playhead's own segment instead (260, with 1.3 to 16 s buffered; 8 from the segment after it,
/// 2 from the one before) or not at all (85, 84 of them with 2 to 2.75 s buffered); this
/// rule classifies 277 of the 355 (`python -m testbed.upswitches`). The code path behind
/// the difference is not identified.
pub fn replace_from(
    shown: &[(f64, usize)],
    bitrates: &[f64],
    segment_s: f64,
    playhead_s: f64,
    buffered_to_s: f64,
    new_rep: usize,
) -> Option<usize> {
    let buffer_s = buffered_to_s - playhead_s;
    if buffer_s <= 1e-9
        || (buffer_s >= segment_s && buffer_s < NO_REPLACEMENT_BELOW_SEGMENTS * segment_s)
    {
        return None;
    }
    let from = (playhead_s / segment_s).floor() as usize;
    let buffered = (buffered_to_s / segment_s).round() as usize;
    let rep_at = |j: usize| {
        shown
            .iter()
            .rev()
            .find(|(t, _)| (*t - j as f64 * segment_s).abs() < 1e-9)
            .map(|&(_, r)| r)
    };
    (from..buffered)
        .any(|j| rep_at(j).is_some_and(|r| bitrates[r] < bitrates[new_rep]))
        .then_some(from)
}

/// A request the page makes (a file of the page, the MPD): sent at `at` on the scenario's
/// clock, or when the previous response on its connection is in (HTTP/1.1, one request at a
/// time); the response is `RESPONSE_HEADER_BYTES` plus `body_bytes`. `conn` 0 is the video's
/// connection (its page requests come before the first segment request); k ≥ 1 is the
/// pair's side connection k − 1 ([`Pair::add_connection`]). It logs no player event (the
/// real player does not log page resources either).
#[derive(Clone, Debug, PartialEq)]
pub struct PageRequest {
    pub at: Duration,
    pub body_bytes: u64,
    pub conn: usize,
}

/// The server (nginx) side of one connection: bytes of requests read so far, responses
/// still to write and what is left of the one being written.
#[derive(Default)]
struct HttpServer {
    req_bytes: u64,
    todo: std::collections::VecDeque<u64>,
    pending_write: u64,
}

impl HttpServer {
    /// Reads what requests arrived; each complete one (`REQUEST_BYTES`) queues the response
    /// size `response_for` gives (none: no response); writes queued responses (zeros) in
    /// order as far as the connection takes them.
    fn serve(
        &mut self,
        server: &mut Connection,
        zeros: &[u8],
        readbuf: &mut [u8],
        mut response_for: impl FnMut() -> Option<u64>,
    ) {
        loop {
            let n = server.read(readbuf);
            if n == 0 {
                break;
            }
            self.req_bytes += n as u64;
        }
        while self.req_bytes >= REQUEST_BYTES {
            self.req_bytes -= REQUEST_BYTES;
            if let Some(b) = response_for() {
                self.todo.push_back(b);
            }
        }
        loop {
            if self.pending_write == 0 {
                match self.todo.pop_front() {
                    Some(b) => self.pending_write = b,
                    None => break,
                }
            }
            let chunk = self.pending_write.min(zeros.len() as u64) as usize;
            let w = server.write(&zeros[..chunk]);
            self.pending_write -= w as u64;
            if w == 0 {
                break;
            }
        }
    }
}

/// HTTP/1.1 on one side connection of the page: the client's requests still to send and
/// the response it waits for; the server's side.
#[derive(Default)]
struct SideLoad {
    to_send: std::collections::VecDeque<PageRequest>,
    awaiting_bytes: Option<u64>,
    received: u64,
    /// Response sizes of the requests sent, answered in order by the server.
    sent: std::collections::VecDeque<u64>,
    server: HttpServer,
}

/// One step of the page's side connections: the servers answer what they read, the clients
/// read, and each sends its next request when it is due and the previous one is answered.
/// Returns the earliest time a request waits for.
fn step_side_loads(
    pair: &mut Pair,
    loads: &mut [SideLoad],
    zeros: &[u8],
    readbuf: &mut [u8],
) -> Option<Instant> {
    let now = pair.now;
    let mut wake: Option<Instant> = None;
    for (load, c) in loads.iter_mut().zip(pair.side.iter_mut()) {
        if let Some(s) = c.server.as_mut() {
            load.server
                .serve(s, zeros, readbuf, || load.sent.pop_front());
        }
        loop {
            let n = c.client.read(readbuf);
            if n == 0 {
                break;
            }
            load.received += n as u64;
        }
        if load.awaiting_bytes.is_some_and(|b| load.received >= b) {
            load.received -= load.awaiting_bytes.take().unwrap_or(0);
        }
        if load.awaiting_bytes.is_none()
            && let Some(next) = load.to_send.front()
        {
            let at = Instant::ZERO + next.at;
            if now >= at {
                let bytes = next.body_bytes + RESPONSE_HEADER_BYTES;
                let w = c.client.write(&[b'G'; REQUEST_BYTES as usize]);
                debug_assert_eq!(w as u64, REQUEST_BYTES);
                load.awaiting_bytes = Some(bytes);
                load.sent.push_back(bytes);
                load.to_send.pop_front();
            } else {
                wake = earliest(wake, Some(at));
            }
        }
    }
    wake
}

pub struct PlayerSpec {
    pub video_duration_s: f64,
    /// Give up (summary reason "timeout") after this much virtual time.
    pub timeout: Duration,
    /// When the page opens (the `start` event; start-up delay counts from here).
    pub page_start: Duration,
    /// When the first request (the first init segment) goes out; at least `page_start`, and
    /// not before the last of `page_requests` is answered.
    pub first_request: Duration,
    /// The page's own requests, on this connection (before the first segment) and on the
    /// pair's side connections, in order per connection.
    pub page_requests: Vec<PageRequest>,
}

impl PlayerSpec {
    /// A player that starts requesting at time 0 (no page load).
    pub fn immediate(video_duration_s: f64, timeout: Duration) -> PlayerSpec {
        PlayerSpec {
            video_duration_s,
            timeout,
            page_start: Duration::ZERO,
            first_request: Duration::ZERO,
            page_requests: Vec::new(),
        }
    }
}

/// Why the watchdog stops a run early: a connection closed, or the current response got no
/// byte for [`NO_PROGRESS_LIMIT`]. The message names the state of both sides.
fn watchdog(pair: &Pair, fetch: Option<&Fetch>, last_progress: Instant) -> Option<String> {
    let closed = pair.client.is_closed() || pair.server.as_ref().is_some_and(|s| s.is_closed());
    let silent = fetch.is_some() && pair.now - last_progress >= NO_PROGRESS_LIMIT;
    if !(closed || silent) {
        return None;
    }
    let what = if closed {
        "a connection closed before the video ended".to_string()
    } else {
        format!(
            "no byte of the current response for {} s of virtual time",
            NO_PROGRESS_LIMIT.as_secs()
        )
    };
    let fetch = fetch.map_or("no request outstanding".to_string(), |f| {
        format!(
            "request at {:.3} s for {} B, {} B received",
            f.request_at.as_nanos() as f64 / 1e9,
            f.bytes,
            f.received
        )
    });
    let server = pair
        .server
        .as_ref()
        .map_or("no server connection".to_string(), |s| s.describe_state());
    Some(format!(
        "{what} ({fetch}); server: {server}; client: {}",
        pair.client.describe_state()
    ))
}

struct Fetch {
    /// A page request (`PlayerSpec::page_requests`), not a segment.
    page: bool,
    rep: usize,
    /// None = the init segment.
    index: Option<usize>,
    bytes: u64,
    received: u64,
    request_at: Instant,
    first_byte_at: Option<Instant>,
}

/// Plays the ladder over `pair` (server = nginx, client = the player) and returns the
/// `player.jsonl` lines (without `t_ns`/`src`, which the caller adds: `t_ns` is in `"t_ns"`).
pub fn run_player(pair: &mut Pair, ladder: &Ladder, spec: &PlayerSpec) -> Vec<Value> {
    run_player_observed(pair, ladder, spec, |_| {})
}

/// As [`run_player`], with `observe` called with the pair at every step of the run (before
/// the player acts; e.g. to log the connections' stats over time). It only looks: the run is
/// the same with or without it.
pub fn run_player_observed(
    pair: &mut Pair,
    ladder: &Ladder,
    spec: &PlayerSpec,
    mut observe: impl FnMut(&Pair),
) -> Vec<Value> {
    let mut ev: Vec<Value> = Vec::new();
    let now_ns = |p: &Pair| p.now.as_nanos();
    let segments =
        ((spec.video_duration_s.min(ladder.duration_s)) / ladder.segment_s).ceil() as usize;
    let segments = segments.min(ladder.reps[0].segment_bytes.len());
    let content_s = segments as f64 * ladder.segment_s;
    let page_start = Instant::ZERO + spec.page_start;
    let first_request = Instant::ZERO + spec.first_request.max(spec.page_start);
    let page_start_ns = page_start.as_nanos();
    ev.push(
        json!({"t_ns": page_start_ns, "event": "start", "player": "sim", "url": "sim://server/manifest.mpd",
                   "mpd": ladder.mpd.display().to_string()}),
    );
    ev.push(
        json!({"t_ns": first_request.as_nanos(), "event": "representations", "duration_s": content_s,
        "reps": ladder.reps.iter().map(|r| json!({"rep_id": r.id, "bitrate_bps": r.bitrate_bps as u64,
            "width": r.width, "height": r.height})).collect::<Vec<_>>()}),
    );

    let mut rep = ladder
        .reps
        .iter()
        .rposition(|r| r.bitrate_bps <= INITIAL_BITRATE_BPS)
        .unwrap_or(0);
    let bitrates: Vec<f64> = ladder.reps.iter().map(|r| r.bitrate_bps).collect();
    let mut abr = DashAbr::default();
    // The start-up segment's bitrate, until the first media segment has been re-requested
    // (or not) after it.
    let mut startup_rep: Option<usize> = None;
    let mut refetch_checked = false;
    // The bitrate of the next media segment is decided (its init segment, BOLA's delay may
    // come first).
    let mut decided = false;
    // The schedule controller's next look while the buffer is full, and BOLA's request
    // delay (`delayLoadingTime`).
    let mut next_schedule_check: Option<Instant> = None;
    let mut request_not_before = Instant::ZERO;
    let mut appended = 0u32;
    let mut next_index = 0usize;
    let mut init_done: Vec<bool> = vec![false; ladder.reps.len()];
    let mut fetch: Option<Fetch> = None;
    // The page's requests on this connection (`conn` 0); the next of them to send.
    let own_page_requests: Vec<&PageRequest> =
        spec.page_requests.iter().filter(|r| r.conn == 0).collect();
    let mut next_page = 0usize;
    // The page's side connections (`conn` k ≥ 1 is `pair.side[k - 1]`).
    let side_count = spec.page_requests.iter().map(|r| r.conn).max().unwrap_or(0);
    assert!(
        side_count <= pair.side.len(),
        "page requests on connection {side_count}, but the pair has {} side connections",
        pair.side.len()
    );
    let mut side_loads: Vec<SideLoad> = (1..=side_count)
        .map(|k| SideLoad {
            to_send: spec
                .page_requests
                .iter()
                .filter(|r| r.conn == k)
                .cloned()
                .collect(),
            ..SideLoad::default()
        })
        .collect();
    let mut server = HttpServer::default();
    let zeros = vec![0u8; 64 * 1024];
    let mut readbuf = vec![0u8; 256 * 1024];
    // Playout: media time buffered (end of the last appended segment) and played.
    let mut buffered_to_s = 0.0f64;
    let mut played_s = 0.0f64;
    let mut playing_since: Option<Instant> = None;
    let mut started = false;
    let mut stall_start: Option<Instant> = None;
    let (mut stalls, mut stall_total_ms, mut stall_max_ms) = (0u64, 0.0f64, 0.0f64);
    let mut startup_ms: Option<f64> = None;
    let mut shown: Vec<(f64, usize)> = Vec::new(); // (media start s, rep) per segment
    let mut switches = 0u64;
    let mut last_shown_rep: Option<usize> = None;
    let mut next_sample = page_start;
    let mut reason = "ended";
    let mut error: Option<String> = None;
    let mut last_progress = Instant::ZERO;

    loop {
        let now = pair.now;
        observe(pair);
        // Playback clock.
        if let Some(since) = playing_since {
            let p = played_s + (now - since).as_secs_f64();
            if p >= buffered_to_s - 1e-9 {
                // Ran dry at media time buffered_to_s.
                let dry_at = since + Duration::from_secs_f64((buffered_to_s - played_s).max(0.0));
                played_s = buffered_to_s;
                playing_since = None;
                if played_s + 1e-6 < content_s {
                    stall_start = Some(dry_at);
                    abr.buffer_empty();
                }
            }
        }
        let current_played = playing_since.map_or(played_s, |s| played_s + (now - s).as_secs_f64());
        // On-screen quality switches.
        if let Some(&(_, r)) = shown
            .iter()
            .rev()
            .find(|(t, _)| *t <= current_played + 1e-9)
            && last_shown_rep != Some(r)
        {
            if let Some(from) = last_shown_rep {
                switches += 1;
                let to = &ladder.reps[r];
                ev.push(json!({"t_ns": now_ns(pair), "event": "quality_switch",
                    "from_rep": ladder.reps[from].id, "to_rep": to.id, "bitrate_bps": to.bitrate_bps as u64,
                    "width": to.width, "height": to.height, "media_time_s": current_played}));
            }
            last_shown_rep = Some(r);
        }
        if now >= next_sample && now >= page_start {
            let r = last_shown_rep.unwrap_or(rep);
            let total_frames = (current_played * 30.0) as u64;
            ev.push(
                json!({"t_ns": now_ns(pair), "event": "sample", "media_time_s": current_played,
                "buffer_s": (buffered_to_s - current_played).max(0.0), "dropped_frames": 0,
                "total_frames": total_frames, "rep_id": ladder.reps[r].id,
                "bitrate_bps": ladder.reps[r].bitrate_bps as u64, "width": ladder.reps[r].width,
                "height": ladder.reps[r].height, "playing": playing_since.is_some()}),
            );
            next_sample = now + SAMPLE_EVERY;
        }
        if current_played + 1e-6 >= content_s && next_index >= segments {
            break;
        }
        if now.as_nanos() >= spec.timeout.as_nanos() as u64 {
            reason = "timeout";
            break;
        }
        if let Some(message) = watchdog(pair, fetch.as_ref(), last_progress) {
            reason = "stuck";
            ev.push(json!({"t_ns": now_ns(pair), "event": "error", "message": message}));
            error = Some(message);
            break;
        }

        // Server (nginx): read requests, queue and write responses.
        if let Some(s) = pair.server.as_mut() {
            server.serve(s, &zeros, &mut readbuf, || fetch.as_ref().map(|f| f.bytes));
        }
        // Client: receive the current response.
        loop {
            let n = pair.client.read(&mut readbuf);
            if n == 0 {
                break;
            }
            last_progress = now;
            if let Some(f) = fetch.as_mut() {
                f.first_byte_at.get_or_insert(now);
                f.received += n as u64;
            }
        }
        if fetch
            .as_ref()
            .is_some_and(|f| f.page && f.received >= f.bytes)
        {
            fetch = None;
        }
        if let Some(f) = fetch.as_ref()
            && f.received >= f.bytes
        {
            let f = fetch.take().expect("checked");
            let secs = (now - f.request_at).as_secs_f64().max(1e-6);
            let payload = f.bytes - RESPONSE_HEADER_BYTES;
            let bps = payload as f64 * 8.0 / secs;
            let r = &ladder.reps[f.rep];
            let (media_type, url, index) = match f.index {
                None => ("init", format!("init-{}.m4s", r.id), Value::Null),
                Some(i) => (
                    "video",
                    format!("chunk-{}-{:05}.m4s", r.id, i + 1),
                    json!(i),
                ),
            };
            ev.push(
                json!({"t_ns": now_ns(pair), "event": "segment", "url": url, "rep_id": r.id,
                "media_type": media_type, "bytes": payload, "request_t_ns": f.request_at.as_nanos(),
                "first_byte_t_ns": f.first_byte_at.map(|t| t.as_nanos()), "end_t_ns": now_ns(pair),
                "throughput_bps": bps, "segment_index": index}),
            );
            match f.index {
                None => init_done[f.rep] = true,
                Some(i) => {
                    let start_s = i as f64 * ladder.segment_s;
                    // dash.js's sample: first byte to last byte (Resource Timing), header
                    // bytes included (transferSize).
                    abr.segment_done(SegmentDone {
                        start_s,
                        duration_s: ladder.segment_s,
                        rep: f.rep,
                        request_s: f.request_at.as_nanos() as f64 / 1e9,
                        finish_s: now.as_nanos() as f64 / 1e9,
                        bytes: f.bytes,
                        first_to_last_byte: f.first_byte_at.map_or(Duration::ZERO, |t| now - t),
                        buffer_s: (buffered_to_s - current_played).max(0.0),
                    });
                    next_schedule_check = None;
                    appended += 1;
                    if start_s + 1e-9 >= buffered_to_s {
                        shown.push((start_s, f.rep));
                        buffered_to_s = (i + 1) as f64 * ladder.segment_s;
                    } else if start_s > current_played + 1e-9 {
                        // A replacement (after an up-switch) still ahead of the playhead: it is
                        // the one shown.
                        if let Some(entry) = shown
                            .iter_mut()
                            .rev()
                            .find(|(t, _)| (*t - start_s).abs() < 1e-9)
                        {
                            entry.1 = f.rep;
                        }
                    }
                    // Otherwise (the first segment re-requested after the start-up switch)
                    // nothing changes on screen: playback began with the first copy.
                    startup_rep.get_or_insert(f.rep);
                    if !started {
                        started = true;
                        startup_ms = Some((now - page_start).as_secs_f64() * 1e3);
                        ev.push(json!({"t_ns": now_ns(pair), "event": "startup",
                                       "startup_delay_ms": startup_ms}));
                    }
                    if let Some(s0) = stall_start.take() {
                        let ms = (now - s0).as_secs_f64() * 1e3;
                        stalls += 1;
                        stall_total_ms += ms;
                        stall_max_ms = stall_max_ms.max(ms);
                        ev.push(json!({"t_ns": now_ns(pair), "event": "stall",
                            "start_t_ns": s0.as_nanos(), "end_t_ns": now_ns(pair), "duration_ms": ms,
                            "media_time_s": played_s, "open": false}));
                    }
                    if playing_since.is_none() && played_s < buffered_to_s {
                        playing_since = Some(now);
                    }
                }
            }
        }
        // Next request, when the buffer has room.
        let current_played = playing_since.map_or(played_s, |s| played_s + (now - s).as_secs_f64());
        let buffer_s = buffered_to_s - current_played;
        let top = ladder.reps.len() - 1;
        let target = if rep == top {
            BUFFER_AT_TOP_S
        } else {
            BUFFER_TIME_DEFAULT_S
        };
        let mut wake: Option<Instant> = None;
        let waiting_for = first_request
            .max(request_not_before)
            .max(next_schedule_check.unwrap_or(Instant::ZERO));
        let side_wake = step_side_loads(pair, &mut side_loads, &zeros, &mut readbuf);
        if let Some(page) = own_page_requests.get(next_page) {
            let at = Instant::ZERO + page.at;
            if now < at {
                wake = Some(at);
            } else if fetch.is_none() {
                let w = pair.client.write(&[b'G'; REQUEST_BYTES as usize]);
                debug_assert_eq!(w as u64, REQUEST_BYTES);
                last_progress = now;
                next_page += 1;
                fetch = Some(Fetch {
                    page: true,
                    rep,
                    index: None,
                    bytes: page.body_bytes + RESPONSE_HEADER_BYTES,
                    received: 0,
                    request_at: now,
                    first_byte_at: None,
                });
            }
        } else if now < waiting_for {
            wake = Some(waiting_for);
        } else if fetch.is_none() && next_index < segments {
            next_schedule_check = None;
            if buffer_s + ladder.segment_s < target || !started {
                // ABR for the next media segment (dash.js keeps the bitrate when no rule
                // asks), decided once: the init segment of a new bitrate is fetched and the
                // media segment follows at that bitrate (ScheduleController's
                // `_initFragmentNeeded` clears `shouldCheckPlaybackQuality`).
                if started && !decided {
                    decided = true;
                    let input = AbrInput {
                        buffer_s,
                        current: rep,
                        appended,
                    };
                    let now_s = now.as_nanos() as f64 / 1e9;
                    let choice = abr.choose(&bitrates, ladder.segment_s, now_s, input);
                    let previous = rep;
                    if let Some(r) = choice.rep {
                        rep = r;
                    }
                    if choice.delay_s > 0.0 {
                        request_not_before = now + Duration::from_secs_f64(choice.delay_s);
                    }
                    if !refetch_checked && let Some(first) = startup_rep {
                        refetch_checked = true;
                        if rep > first {
                            next_index = 0;
                        }
                    } else if rep > previous
                        && let Some(j) = replace_from(
                            &shown,
                            &bitrates,
                            ladder.segment_s,
                            current_played,
                            buffered_to_s,
                            rep,
                        )
                    {
                        next_index = next_index.min(j);
                    }
                }
            }
            if (buffer_s + ladder.segment_s < target || !started) && now >= request_not_before {
                let (index, payload) = if init_done[rep] {
                    let i = next_index;
                    next_index += 1;
                    decided = false;
                    (Some(i), ladder.reps[rep].segment_bytes[i])
                } else {
                    (None, ladder.reps[rep].init_bytes)
                };
                let req = vec![b'G'; REQUEST_BYTES as usize];
                let w = pair.client.write(&req);
                debug_assert_eq!(w as u64, REQUEST_BYTES);
                last_progress = now;
                fetch = Some(Fetch {
                    page: false,
                    rep,
                    index,
                    bytes: payload + RESPONSE_HEADER_BYTES,
                    received: 0,
                    request_at: now,
                    first_byte_at: None,
                });
            } else if now < request_not_before {
                wake = Some(request_not_before);
            } else {
                let check = now + SCHEDULE_TIMEOUT;
                next_schedule_check = Some(check);
                wake = Some(check);
            }
        }
        if let Some(since) = playing_since {
            let dry = since + Duration::from_secs_f64((buffered_to_s - played_s).max(0.0));
            wake = earliest(wake, Some(dry));
        }
        wake = earliest(wake, Some(next_sample));
        wake = earliest(wake, side_wake);
        pair.app_wake_at = wake;
        if !pair.step() && pair.app_wake_at.is_none_or(|w| w <= pair.now) {
            reason = "error";
            ev.push(json!({"t_ns": now_ns(pair), "event": "error",
                           "message": "simulation went idle before the video ended"}));
            break;
        }
        if pair.now < wake.unwrap_or(pair.now) && pair.app_wake_at.is_some() {
            // step() stopped at the application timer or earlier; nothing else to do.
        }
    }
    let now = pair.now;
    if let Some(s0) = stall_start {
        let ms = (now - s0).as_secs_f64() * 1e3;
        ev.push(
            json!({"t_ns": now_ns(pair), "event": "stall", "start_t_ns": s0.as_nanos(),
            "end_t_ns": now_ns(pair), "duration_ms": ms, "media_time_s": played_s, "open": true}),
        );
    }
    let played = playing_since.map_or(played_s, |s| played_s + (now - s).as_secs_f64());
    let mean_bitrate = if shown.is_empty() {
        0.0
    } else {
        shown
            .iter()
            .map(|(_, r)| ladder.reps[*r].bitrate_bps)
            .sum::<f64>()
            / shown.len() as f64
    };
    ev.push(
        json!({"t_ns": now_ns(pair), "event": "summary", "ended": reason == "ended",
        "reason": reason, "startup_delay_ms": startup_ms, "stalls": stalls,
        "stall_total_ms": stall_total_ms, "stall_max_ms": stall_max_ms, "dropped_frames": 0,
        "total_frames": (played * 30.0) as u64, "mean_bitrate_bps": mean_bitrate,
        "quality_switches": switches, "played_s": played.min(content_s),
        "decode_stalls": 0, "decode_stall_total_ms": 0.0, "decode_overload_frames": 0,
        "error": error}),
    );
    ev
}

#[cfg(test)]
mod tests {
    use super::replace_from;

    const BITRATES: [f64; 4] = [800_000.0, 1_500_000.0, 3_000_000.0, 5_240_000.0];

    #[test]
    fn an_up_switch_replaces_from_the_playheads_segment() {
        // 10 segments of 2 s buffered at index 1, playhead at 5 s (segment 2), 15 s buffered.
        let shown: Vec<(f64, usize)> = (0..10).map(|i| (f64::from(i) * 2.0, 1)).collect();
        assert_eq!(replace_from(&shown, &BITRATES, 2.0, 5.0, 20.0, 3), Some(2));
        // Not when what is buffered is as good as the new bitrate.
        assert_eq!(replace_from(&shown, &BITRATES, 2.0, 5.0, 20.0, 1), None);
        // 2.5 s buffered (1.25 segments): replaced from the playhead's segment 8.
        assert_eq!(replace_from(&shown, &BITRATES, 2.0, 17.5, 20.0, 3), Some(8));
        // 2.2 s buffered (one segment or more, under 1.25): the next segment comes next.
        assert_eq!(replace_from(&shown, &BITRATES, 2.0, 17.8, 20.0, 3), None);
        // 1.5 s buffered (the playhead in the last buffered segment): segment 9 again.
        assert_eq!(replace_from(&shown, &BITRATES, 2.0, 18.5, 20.0, 3), Some(9));
        // Nothing buffered ahead: nothing to replace.
        assert_eq!(replace_from(&shown, &BITRATES, 2.0, 20.0, 20.0, 3), None);
        // Segments from the playhead's on replaced already (the last entry for a start
        // counts): nothing lower is left.
        let mut replaced = shown.clone();
        replaced.extend((2..10).map(|i| (f64::from(i) * 2.0, 3)));
        assert_eq!(replace_from(&replaced, &BITRATES, 2.0, 5.0, 20.0, 3), None);
    }
}
