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

use super::endpoint::earliest;
use super::pair::Pair;
use crate::connection::Connection;
use crate::units::Instant;
use session::Session;

mod session;

pub const REQUEST_BYTES: u64 = 400;
pub const RESPONSE_HEADER_BYTES: u64 = 300;
/// dash.js `buffer.bufferTimeAtTopQuality` (s).
const BUFFER_AT_TOP_S: f64 = 30.0;
const INITIAL_BITRATE_BPS: f64 = 1_000_000.0;
/// dash.js `scheduling.defaultTimeout`: while the buffer is at its target, the schedule
/// controller looks again this much later.
const SCHEDULE_TIMEOUT: Duration = Duration::from_millis(500);
const SAMPLE_EVERY: Duration = Duration::from_millis(250);
/// From a segment's last byte to the next segment request, when the buffer has room at once:
/// dash.js appends the segment to its SourceBuffer and its schedule controller runs again.
/// Measured, not derived: the median of 4 236 such gaps (p10 13 ms, p90 42 ms; gaps under
/// 400 ms, Resource Timing `responseEnd` to the next `startTime`) in the 67 emulated trials
/// of seed 002's study at c3be9f7 (docs/SIMULATOR.md "Request gap"). Without it the next
/// request overtakes the last ACKs of the previous response, and the response's first
/// burst is smaller than the emulated one by the packets still in flight.
pub const REQUEST_GAP: Duration = Duration::from_millis(21);
/// Watchdog: a response that gets no byte for this long of virtual time ends the run with
/// reason `stuck`. As long as the connections' idle timeout: a kernel sender keeps
/// retransmitting with its timeout backed off up to `TCP_RTO_MAX` (120 s), so a shorter limit
/// would end runs that the emulated engine lets go on (its testbed has no such watchdog; the
/// earlier 60 s did).
pub const NO_PROGRESS_LIMIT: Duration = crate::connection::DEFAULT_IDLE_TIMEOUT;

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
/// the player acts; e.g. to log the connections' stats over time, or to take the sender's
/// scheduler trace). It must only look (taking a trace's records is looking): the run is
/// the same with or without it.
pub fn run_player_observed(
    pair: &mut Pair,
    ladder: &Ladder,
    spec: &PlayerSpec,
    mut observe: impl FnMut(&mut Pair),
) -> Vec<Value> {
    let mut session = Session::new(pair, ladder, spec);
    let (reason, error) = loop {
        let now = pair.now;
        observe(pair);
        session.advance_playhead(now);
        let current_played = session.played_at(now);
        session.show_and_sample(now, current_played);
        if let Some(end) = session.end(pair, now, current_played) {
            break end;
        }
        session.exchange(pair, now);
        session.finish_fetch(now, current_played);
        let wake = earliest(session.request(pair, now), session.playout_wake());
        pair.app_wake_at = wake;
        if !pair.step() && pair.app_wake_at.is_none_or(|w| w <= pair.now) {
            session
                .ev
                .push(json!({"t_ns": pair.now.as_nanos(), "event": "error",
                           "message": "simulation went idle before the video ended"}));
            break ("error", None);
        }
    };
    session.finish(pair.now, reason, error)
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
