//! One run of the player model (`run_player_observed`): its state, and one method per
//! thing the player does at a step (advance the playhead, show and sample, exchange HTTP
//! bytes, take in a finished response, request the next one). The loop that calls them in
//! this order, once per simulator step, is `run_player_observed` in `player.rs`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    BUFFER_AT_TOP_S, Fetch, HttpServer, INITIAL_BITRATE_BPS, Ladder, PageRequest, PlayerSpec,
    REQUEST_BYTES, REQUEST_GAP, RESPONSE_HEADER_BYTES, SAMPLE_EVERY, SCHEDULE_TIMEOUT, SideLoad,
    replace_from, step_side_loads, watchdog,
};
use crate::sim::abr::{AbrInput, BUFFER_TIME_DEFAULT_S, DashAbr, SegmentDone};
use crate::sim::endpoint::earliest;
use crate::sim::pair::Pair;
use crate::units::Instant;

/// The player's state during one run.
pub(super) struct Session<'a> {
    ladder: &'a Ladder,
    spec: &'a PlayerSpec,
    /// The `player.jsonl` events so far.
    pub(super) ev: Vec<Value>,
    segments: usize,
    content_s: f64,
    page_start: Instant,
    first_request: Instant,

    // ---- what to request: bitrate, ABR, the next segment ----
    rep: usize,
    bitrates: Vec<f64>,
    abr: DashAbr,
    /// The start-up segment's bitrate, until the first media segment has been re-requested
    /// (or not) after it.
    startup_rep: Option<usize>,
    refetch_checked: bool,
    /// The bitrate of the next media segment is decided (its init segment, BOLA's delay may
    /// come first).
    decided: bool,
    /// The schedule controller's next look while the buffer is full, and BOLA's request
    /// delay (`delayLoadingTime`).
    next_schedule_check: Option<Instant>,
    request_not_before: Instant,
    appended: u32,
    next_index: usize,
    init_done: Vec<bool>,
    fetch: Option<Fetch>,
    /// The page's requests on this connection (`conn` 0); the next of them to send.
    own_page_requests: Vec<&'a PageRequest>,
    next_page: usize,
    /// The page's side connections (`conn` k ≥ 1 is `pair.side[k - 1]`).
    side_loads: Vec<SideLoad>,
    server: HttpServer,
    zeros: Vec<u8>,
    readbuf: Vec<u8>,

    // ---- playout: media time buffered (end of the last appended segment) and played ----
    buffered_to_s: f64,
    played_s: f64,
    playing_since: Option<Instant>,
    started: bool,
    stall_start: Option<Instant>,
    stalls: u64,
    stall_total_ms: f64,
    stall_max_ms: f64,
    startup_ms: Option<f64>,
    /// (media start s, rep) per segment.
    shown: Vec<(f64, usize)>,
    switches: u64,
    last_shown_rep: Option<usize>,
    next_sample: Instant,
    last_progress: Instant,
}

impl<'a> Session<'a> {
    /// The session at the page's start: the `start` and `representations` events logged.
    pub(super) fn new(pair: &Pair, ladder: &'a Ladder, spec: &'a PlayerSpec) -> Session<'a> {
        let segments =
            ((spec.video_duration_s.min(ladder.duration_s)) / ladder.segment_s).ceil() as usize;
        let segments = segments.min(ladder.reps[0].segment_bytes.len());
        let content_s = segments as f64 * ladder.segment_s;
        let page_start = Instant::ZERO + spec.page_start;
        let first_request = Instant::ZERO + spec.first_request.max(spec.page_start);
        let page_start_ns = page_start.as_nanos();
        let ev = vec![
            json!({"t_ns": page_start_ns, "event": "start", "player": "sim", "url": "sim://server/manifest.mpd",
                   "mpd": ladder.mpd.display().to_string()}),
            json!({"t_ns": first_request.as_nanos(), "event": "representations", "duration_s": content_s,
            "reps": ladder.reps.iter().map(|r| json!({"rep_id": r.id, "bitrate_bps": r.bitrate_bps as u64,
                "width": r.width, "height": r.height})).collect::<Vec<_>>()}),
        ];
        let rep = ladder
            .reps
            .iter()
            .rposition(|r| r.bitrate_bps <= INITIAL_BITRATE_BPS)
            .unwrap_or(0);
        let side_count = spec.page_requests.iter().map(|r| r.conn).max().unwrap_or(0);
        assert!(
            side_count <= pair.side.len(),
            "page requests on connection {side_count}, but the pair has {} side connections",
            pair.side.len()
        );
        let side_loads: Vec<SideLoad> = (1..=side_count)
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
        Session {
            ladder,
            spec,
            ev,
            segments,
            content_s,
            page_start,
            first_request,
            rep,
            bitrates: ladder.reps.iter().map(|r| r.bitrate_bps).collect(),
            abr: DashAbr::default(),
            startup_rep: None,
            refetch_checked: false,
            decided: false,
            next_schedule_check: None,
            request_not_before: Instant::ZERO,
            appended: 0,
            next_index: 0,
            init_done: vec![false; ladder.reps.len()],
            fetch: None,
            own_page_requests: spec.page_requests.iter().filter(|r| r.conn == 0).collect(),
            next_page: 0,
            side_loads,
            server: HttpServer::default(),
            zeros: vec![0u8; 64 * 1024],
            readbuf: vec![0u8; 256 * 1024],
            buffered_to_s: 0.0,
            played_s: 0.0,
            playing_since: None,
            started: false,
            stall_start: None,
            stalls: 0,
            stall_total_ms: 0.0,
            stall_max_ms: 0.0,
            startup_ms: None,
            shown: Vec::new(),
            switches: 0,
            last_shown_rep: None,
            next_sample: page_start,
            last_progress: Instant::ZERO,
        }
    }

    /// Media time played at `now`.
    pub(super) fn played_at(&self, now: Instant) -> f64 {
        self.playing_since
            .map_or(self.played_s, |s| self.played_s + (now - s).as_secs_f64())
    }

    /// The playback clock: stops playback (and starts a stall, unless the video is over)
    /// when the buffer ran dry before `now`.
    pub(super) fn advance_playhead(&mut self, now: Instant) {
        if let Some(since) = self.playing_since {
            let p = self.played_s + (now - since).as_secs_f64();
            if p >= self.buffered_to_s - 1e-9 {
                // Ran dry at media time buffered_to_s.
                let dry_at =
                    since + Duration::from_secs_f64((self.buffered_to_s - self.played_s).max(0.0));
                self.played_s = self.buffered_to_s;
                self.playing_since = None;
                if self.played_s + 1e-6 < self.content_s {
                    self.stall_start = Some(dry_at);
                    self.abr.buffer_empty();
                }
            }
        }
    }

    /// On-screen quality switches up to `current_played`, and the periodic `sample` event.
    pub(super) fn show_and_sample(&mut self, now: Instant, current_played: f64) {
        let ladder = self.ladder;
        if let Some(&(_, r)) = self
            .shown
            .iter()
            .rev()
            .find(|(t, _)| *t <= current_played + 1e-9)
            && self.last_shown_rep != Some(r)
        {
            if let Some(from) = self.last_shown_rep {
                self.switches += 1;
                let to = &ladder.reps[r];
                self.ev.push(json!({"t_ns": now.as_nanos(), "event": "quality_switch",
                    "from_rep": ladder.reps[from].id, "to_rep": to.id, "bitrate_bps": to.bitrate_bps as u64,
                    "width": to.width, "height": to.height, "media_time_s": current_played}));
            }
            self.last_shown_rep = Some(r);
        }
        if now >= self.next_sample && now >= self.page_start {
            let r = self.last_shown_rep.unwrap_or(self.rep);
            let total_frames = (current_played * 30.0) as u64;
            self.ev.push(
                json!({"t_ns": now.as_nanos(), "event": "sample", "media_time_s": current_played,
                "buffer_s": (self.buffered_to_s - current_played).max(0.0), "dropped_frames": 0,
                "total_frames": total_frames, "rep_id": ladder.reps[r].id,
                "bitrate_bps": ladder.reps[r].bitrate_bps as u64, "width": ladder.reps[r].width,
                "height": ladder.reps[r].height, "playing": self.playing_since.is_some()}),
            );
            self.next_sample = now + SAMPLE_EVERY;
        }
    }

    /// Why the run ends at `now` (`ended`, `timeout`, `stuck`: the watchdog's message is
    /// logged as an `error` event and returned), or None to go on.
    pub(super) fn end(
        &mut self,
        pair: &Pair,
        now: Instant,
        current_played: f64,
    ) -> Option<(&'static str, Option<String>)> {
        if current_played + 1e-6 >= self.content_s && self.next_index >= self.segments {
            return Some(("ended", None));
        }
        if now.as_nanos() >= self.spec.timeout.as_nanos() as u64 {
            return Some(("timeout", None));
        }
        if let Some(message) = watchdog(pair, self.fetch.as_ref(), self.last_progress) {
            self.ev
                .push(json!({"t_ns": now.as_nanos(), "event": "error", "message": message}));
            return Some(("stuck", Some(message)));
        }
        None
    }

    /// The server (nginx) reads requests and writes responses; the client reads what
    /// arrived of the current response.
    pub(super) fn exchange(&mut self, pair: &mut Pair, now: Instant) {
        if let Some(s) = pair.server.as_mut() {
            let fetch = &self.fetch;
            self.server.serve(s, &self.zeros, &mut self.readbuf, || {
                fetch.as_ref().map(|f| f.bytes)
            });
        }
        loop {
            let n = pair.client.read(&mut self.readbuf);
            if n == 0 {
                break;
            }
            self.last_progress = now;
            if let Some(f) = self.fetch.as_mut() {
                f.first_byte_at.get_or_insert(now);
                f.received += n as u64;
            }
        }
    }

    /// Takes in the current response once it is complete: a page request ends there; a
    /// segment is logged and, if media, appended to the buffer.
    pub(super) fn finish_fetch(&mut self, now: Instant, current_played: f64) {
        if self
            .fetch
            .as_ref()
            .is_some_and(|f| f.page && f.received >= f.bytes)
        {
            self.fetch = None;
        }
        if let Some(f) = self.fetch.as_ref()
            && f.received >= f.bytes
        {
            let f = self.fetch.take().expect("checked");
            let secs = (now - f.request_at).as_secs_f64().max(1e-6);
            let payload = f.bytes - RESPONSE_HEADER_BYTES;
            let bps = payload as f64 * 8.0 / secs;
            let r = &self.ladder.reps[f.rep];
            let (media_type, url, index) = match f.index {
                None => ("init", format!("init-{}.m4s", r.id), Value::Null),
                Some(i) => (
                    "video",
                    format!("chunk-{}-{:05}.m4s", r.id, i + 1),
                    json!(i),
                ),
            };
            self.ev.push(
                json!({"t_ns": now.as_nanos(), "event": "segment", "url": url, "rep_id": r.id,
                "media_type": media_type, "bytes": payload, "request_t_ns": f.request_at.as_nanos(),
                "first_byte_t_ns": f.first_byte_at.map(|t| t.as_nanos()), "end_t_ns": now.as_nanos(),
                "throughput_bps": bps, "segment_index": index}),
            );
            match f.index {
                None => self.init_done[f.rep] = true,
                Some(i) => self.append_media(&f, i, now, current_played),
            }
            // dash.js asks for the next segment only after this one is appended and its
            // schedule controller runs again.
            self.request_not_before = self.request_not_before.max(now + REQUEST_GAP);
        }
    }

    /// Media segment `i` (the response `f`) is in: the ABR's sample, the buffer (or the
    /// screen, for a replacement ahead of the playhead), start-up, the end of a stall.
    fn append_media(&mut self, f: &Fetch, i: usize, now: Instant, current_played: f64) {
        let segment_s = self.ladder.segment_s;
        let start_s = i as f64 * segment_s;
        // dash.js's sample: first byte to last byte (Resource Timing), header
        // bytes included (transferSize).
        self.abr.segment_done(SegmentDone {
            start_s,
            duration_s: segment_s,
            rep: f.rep,
            request_s: f.request_at.as_nanos() as f64 / 1e9,
            finish_s: now.as_nanos() as f64 / 1e9,
            bytes: f.bytes,
            first_to_last_byte: f.first_byte_at.map_or(Duration::ZERO, |t| now - t),
            buffer_s: (self.buffered_to_s - current_played).max(0.0),
        });
        self.next_schedule_check = None;
        self.appended += 1;
        if start_s + 1e-9 >= self.buffered_to_s {
            self.shown.push((start_s, f.rep));
            self.buffered_to_s = (i + 1) as f64 * segment_s;
        } else if start_s > current_played + 1e-9 {
            // A replacement (after an up-switch) still ahead of the playhead: it is
            // the one shown.
            if let Some(entry) = self
                .shown
                .iter_mut()
                .rev()
                .find(|(t, _)| (*t - start_s).abs() < 1e-9)
            {
                entry.1 = f.rep;
            }
        }
        // Otherwise (the first segment re-requested after the start-up switch)
        // nothing changes on screen: playback began with the first copy.
        self.startup_rep.get_or_insert(f.rep);
        if !self.started {
            self.started = true;
            self.startup_ms = Some((now - self.page_start).as_secs_f64() * 1e3);
            self.ev
                .push(json!({"t_ns": now.as_nanos(), "event": "startup",
                           "startup_delay_ms": self.startup_ms}));
        }
        if let Some(s0) = self.stall_start.take() {
            let ms = (now - s0).as_secs_f64() * 1e3;
            self.stalls += 1;
            self.stall_total_ms += ms;
            self.stall_max_ms = self.stall_max_ms.max(ms);
            self.ev
                .push(json!({"t_ns": now.as_nanos(), "event": "stall",
                "start_t_ns": s0.as_nanos(), "end_t_ns": now.as_nanos(), "duration_ms": ms,
                "media_time_s": self.played_s, "open": false}));
        }
        if self.playing_since.is_none() && self.played_s < self.buffered_to_s {
            self.playing_since = Some(now);
        }
    }

    /// The next request, when it is due and the buffer has room: the page's own requests
    /// first, then segments. Returns when the player wants to look again (None: when
    /// something arrives), the side connections' requests included.
    pub(super) fn request(&mut self, pair: &mut Pair, now: Instant) -> Option<Instant> {
        let current_played = self.played_at(now);
        let buffer_s = self.buffered_to_s - current_played;
        let mut wake: Option<Instant> = None;
        let waiting_for = self
            .first_request
            .max(self.request_not_before)
            .max(self.next_schedule_check.unwrap_or(Instant::ZERO));
        let side_wake = step_side_loads(pair, &mut self.side_loads, &self.zeros, &mut self.readbuf);
        if let Some(page) = self.own_page_requests.get(self.next_page) {
            let at = Instant::ZERO + page.at;
            if now < at {
                wake = Some(at);
            } else if self.fetch.is_none() {
                let w = pair.client.write(&[b'G'; REQUEST_BYTES as usize]);
                debug_assert_eq!(w as u64, REQUEST_BYTES);
                self.last_progress = now;
                self.next_page += 1;
                self.fetch = Some(Fetch {
                    page: true,
                    rep: self.rep,
                    index: None,
                    bytes: page.body_bytes + RESPONSE_HEADER_BYTES,
                    received: 0,
                    request_at: now,
                    first_byte_at: None,
                });
            }
        } else if now < waiting_for {
            wake = Some(waiting_for);
        } else if self.fetch.is_none() && self.next_index < self.segments {
            wake = self.request_segment(pair, now, current_played, buffer_s);
        }
        earliest(wake, side_wake)
    }

    /// The next segment: once per media segment the ABR decides its bitrate (and may delay
    /// it, or go back to replace buffered segments after an up-switch); then the init or
    /// media segment is requested if the buffer has room. Returns when to look again.
    fn request_segment(
        &mut self,
        pair: &mut Pair,
        now: Instant,
        current_played: f64,
        buffer_s: f64,
    ) -> Option<Instant> {
        let ladder = self.ladder;
        let top = ladder.reps.len() - 1;
        let target = if self.rep == top {
            BUFFER_AT_TOP_S
        } else {
            BUFFER_TIME_DEFAULT_S
        };
        self.next_schedule_check = None;
        let room = buffer_s + ladder.segment_s < target || !self.started;
        // ABR for the next media segment (dash.js keeps the bitrate when no rule asks),
        // decided once: the init segment of a new bitrate is fetched and the media segment
        // follows at that bitrate (ScheduleController's `_initFragmentNeeded` clears
        // `shouldCheckPlaybackQuality`).
        if room && self.started && !self.decided {
            self.decide_bitrate(now, current_played, buffer_s);
        }
        if room && now >= self.request_not_before {
            let rep = self.rep;
            let (index, payload) = if self.init_done[rep] {
                let i = self.next_index;
                self.next_index += 1;
                self.decided = false;
                (Some(i), ladder.reps[rep].segment_bytes[i])
            } else {
                (None, ladder.reps[rep].init_bytes)
            };
            let req = vec![b'G'; REQUEST_BYTES as usize];
            let w = pair.client.write(&req);
            debug_assert_eq!(w as u64, REQUEST_BYTES);
            self.last_progress = now;
            self.fetch = Some(Fetch {
                page: false,
                rep,
                index,
                bytes: payload + RESPONSE_HEADER_BYTES,
                received: 0,
                request_at: now,
                first_byte_at: None,
            });
            None
        } else if now < self.request_not_before {
            Some(self.request_not_before)
        } else {
            let check = now + SCHEDULE_TIMEOUT;
            self.next_schedule_check = Some(check);
            Some(check)
        }
    }

    /// dash.js's ABR rules choose the next media segment's bitrate (and BOLA's delay). The
    /// first switch up after the start-up segment fetches the first segment again; a later
    /// one replaces buffered lower-bitrate segments ([`replace_from`]).
    fn decide_bitrate(&mut self, now: Instant, current_played: f64, buffer_s: f64) {
        self.decided = true;
        let input = AbrInput {
            buffer_s,
            current: self.rep,
            appended: self.appended,
        };
        let now_s = now.as_nanos() as f64 / 1e9;
        let choice = self
            .abr
            .choose(&self.bitrates, self.ladder.segment_s, now_s, input);
        let previous = self.rep;
        if let Some(r) = choice.rep {
            self.rep = r;
        }
        if choice.delay_s > 0.0 {
            self.request_not_before = now + Duration::from_secs_f64(choice.delay_s);
        }
        if !self.refetch_checked
            && let Some(first) = self.startup_rep
        {
            self.refetch_checked = true;
            if self.rep > first {
                self.next_index = 0;
            }
        } else if self.rep > previous
            && let Some(j) = replace_from(
                &self.shown,
                &self.bitrates,
                self.ladder.segment_s,
                current_played,
                self.buffered_to_s,
                self.rep,
            )
        {
            self.next_index = self.next_index.min(j);
        }
    }

    /// When the playing buffer runs dry, and the next `sample` event.
    pub(super) fn playout_wake(&self) -> Option<Instant> {
        let dry = self.playing_since.map(|since| {
            since + Duration::from_secs_f64((self.buffered_to_s - self.played_s).max(0.0))
        });
        earliest(dry, Some(self.next_sample))
    }

    /// The run's last events: a stall still open, and the `summary`.
    pub(super) fn finish(
        mut self,
        now: Instant,
        reason: &str,
        error: Option<String>,
    ) -> Vec<Value> {
        if let Some(s0) = self.stall_start {
            let ms = (now - s0).as_secs_f64() * 1e3;
            self.ev.push(
                json!({"t_ns": now.as_nanos(), "event": "stall", "start_t_ns": s0.as_nanos(),
                "end_t_ns": now.as_nanos(), "duration_ms": ms, "media_time_s": self.played_s, "open": true}),
            );
        }
        let played = self.played_at(now);
        let shown = &self.shown;
        let mean_bitrate = if shown.is_empty() {
            0.0
        } else {
            shown
                .iter()
                .map(|(_, r)| self.ladder.reps[*r].bitrate_bps)
                .sum::<f64>()
                / shown.len() as f64
        };
        self.ev.push(
            json!({"t_ns": now.as_nanos(), "event": "summary", "ended": reason == "ended",
            "reason": reason, "startup_delay_ms": self.startup_ms, "stalls": self.stalls,
            "stall_total_ms": self.stall_total_ms, "stall_max_ms": self.stall_max_ms, "dropped_frames": 0,
            "total_frames": (played * 30.0) as u64, "mean_bitrate_bps": mean_bitrate,
            "quality_switches": self.switches, "played_s": played.min(self.content_s),
            "decode_stalls": 0, "decode_stall_total_ms": 0.0, "decode_overload_frames": 0,
            "error": error}),
        );
        self.ev
    }
}
