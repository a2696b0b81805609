// The testbed's player page: dash.js plays ?mpd=..., muted autoplay; measurements go to the
// live overlay and to window.__testbed (read by player/headless.mjs).
//
// Every measurement is an event object with times in page milliseconds (performance.now(),
// a monotonic clock whose origin is this page's navigation); the headless runner maps them to
// the trial clock. Field names follow player.jsonl (CONTRACTS.md §5.4) so the runner only
// converts times: *_ms page times -> *_t_ns.

import { DecodeOverloadDetector } from "./lib/overload.mjs";
import { joinDelayMs, liveSettings } from "./lib/live.mjs";
import { StallTracker } from "./lib/stall.mjs";

const SAMPLE_INTERVAL_MS = 250;
const OVERLAY_SEGMENTS = 8;
// readyState below HAVE_FUTURE_DATA: the element cannot advance, it is waiting for data.
const HAVE_FUTURE_DATA = 3;
// A wait with at least this much media buffered ahead is not the network's doing: the decoder
// (CPU) could not keep up. Chromium fires 'waiting' in both cases. dash.js declares its buffer
// empty at 0.3 s; 1 s leaves margin for a segment appended just before the check.
const DATA_STALL_MAX_BUFFER_S = 1.0;

const video = document.getElementById("video");
const params = new URLSearchParams(location.search);
const mpd = params.get("mpd");
// Live mode (?live_latency_s=4 with a dynamic MPD, server/live_mpd.py): the page joins the
// event at this target latency and dash.js keeps the latency to the live edge near it. Its
// catch-up (lib/live.mjs, docs/PLAYER.md "Live mode"): the playback rate moves within
// 1 +- 0.3 while the latency differs from the target, and once it drifts more than 1.5 s above
// the target dash.js seeks to the live edge, discarding the media in between (logged as
// live_seek with the media time skipped).
const liveLatencyS = params.has("live_latency_s") ? Number(params.get("live_latency_s")) : null;
// Interactive mode (testbed/interactive.py): ?stats=<url> of the transport's per-path rates;
// with --restart-on-reload, ?scenario_restart=<url>: every load of this page first asks the
// testbed to restart the scenario's clock (the emulator), and starts playing once it has.
const statsUrl = params.get("stats");
const scenarioRestartUrl = params.get("scenario_restart");
const STATS_INTERVAL_MS = 1000;
// A forward jump shorter than this is dash.js's gap jumper stepping over a hole between
// segments, not a catch-up (its smallGapLimit is 1.5 s; one frame at 30 fps is 0.033 s).
const LIVE_SEEK_MIN_S = 0.1;

const events = [];
const state = {
  startupMs: null,
  onScreen: null, // {rep_id, bitrate_bps, width, height}
  reps: [],
  segments: [],
  switches: 0,
  ended: false,
  lastSample: null,
  errors: [],
  // Live mode: the media time of the latest presented frame (requestVideoFrameCallback), the
  // position a catch-up seek leaves; media time skipped in all.
  presentedS: null,
  skippedS: 0,
  liveSeeks: 0,
  liveEventOver: false, // the whole live event is published: catch-up off
  // Live mode: playback waits (paused) until the latency reaches the target (joinLiveEvent).
  liveJoinPending: liveLatencyS !== null,
};
const stalls = new StallTracker();
// Waits with a full buffer (decoder starved of CPU), logged apart as decode_stall.
const decodeStalls = new StallTracker();
const overload = new DecodeOverloadDetector();

// The headless runner installs window.__testbedEmit (puppeteer exposeFunction) before the page
// loads; in a normal browser events only accumulate for the overlay and the console.
function emit(ev) {
  const line = { page_ms: performance.now(), ...ev };
  events.push(line);
  if (typeof window.__testbedEmit === "function") {
    window.__testbedEmit(line).catch(() => {});
  }
}

window.__testbed = {
  events,
  state,
  stalls,
  decodeStalls,
  version: 1,
  mpd,
};

function fail(message) {
  state.errors.push(message);
  document.getElementById("o-error").textContent = message;
  emit({ event: "error", message });
}

if (!mpd) {
  fail("no MPD: open this page as index.html?mpd=/content/<hash>/manifest.mpd");
} else if (typeof dashjs === "undefined") {
  fail("dash.all.min.js did not load (served from player/node_modules by nginx)");
} else if (scenarioRestartUrl) {
  restartScenario().finally(start);
} else {
  start();
}

// POST without a body: a CORS "simple request", no preflight. The answer (restart number, the
// new emulator's start on the trial clock) goes to window.__testbed.scenarioRestart.
async function restartScenario() {
  try {
    const response = await fetch(scenarioRestartUrl, { method: "POST", cache: "no-store" });
    window.__testbed.scenarioRestart = await response.json();
    if (!response.ok) fail(`scenario restart failed: ${window.__testbed.scenarioRestart.error}`);
  } catch (e) {
    fail(`scenario restart failed: ${e.message}`);
  }
}

function start() {
  const player = dashjs.MediaPlayer().create();
  window.__testbed.player = player;
  document.getElementById("dashjs-version").textContent = player.getVersion();
  player.updateSettings({ debug: { logLevel: dashjs.Debug.LOG_LEVEL_WARNING } });
  if (liveLatencyS !== null) {
    if (!(liveLatencyS > 0)) {
      fail(`live_latency_s=${params.get("live_latency_s")}: must be a number of seconds > 0`);
      return;
    }
    player.updateSettings(liveSettings(liveLatencyS));
    // No autoplay: the page starts playback itself at the target latency (joinLiveEvent).
    video.autoplay = false;
    video.addEventListener("canplay", () => joinLiveEvent(player));
  }
  const ev = dashjs.MediaPlayer.events;

  player.on(ev.STREAM_INITIALIZED, () => {
    state.reps = player.getRepresentationsByType("video").map((r) => ({
      rep_id: String(r.id),
      bitrate_bps: r.bandwidth,
      width: r.width,
      height: r.height,
    }));
    emit({ event: "representations", reps: state.reps, duration_s: player.duration() });
    // A frame may have been shown before the representations were known.
    if (state.onScreen && state.onScreen.rep_id === null) {
      state.onScreen = findRep(state.onScreen.width, state.onScreen.height);
    }
  });

  player.on(ev.FRAGMENT_LOADING_COMPLETED, (e) => onSegment(e));

  // dash.js BUFFER_EMPTY fires at its stall threshold (0.3 s of buffer left), sometimes before
  // the element actually stops; count it only once the element really lacks data.
  player.on(ev.BUFFER_EMPTY, (e) => {
    if (e.mediaType && e.mediaType !== "video") return;
    if (video.readyState < HAVE_FUTURE_DATA && !seekingByUser()) onWaiting();
  });
  player.on(ev.PLAYBACK_WAITING, () => {
    if (!seekingByUser()) onWaiting();
  });
  player.on(ev.ERROR, (e) => {
    const err = e.error || {};
    emit({ event: "error", message: `dash.js error ${err.code ?? ""}: ${err.message ?? e}` });
  });

  video.addEventListener("waiting", () => {
    if (!seekingByUser()) onWaiting();
  });
  video.addEventListener("playing", () => {
    const now = performance.now();
    const stall = stalls.playing(now);
    if (stall) emitStall(stall);
    const decodeStall = decodeStalls.playing(now);
    if (decodeStall) emit({ event: "decode_stall", ...decodeStall, buffer_s: bufferS() });
  });
  video.addEventListener("ended", onEnded);
  if (liveLatencyS !== null) {
    video.addEventListener("ratechange", () =>
      emit({ event: "playback_rate", rate: video.playbackRate, live_latency_s: liveLatency() }),
    );
    video.addEventListener("seeking", onLiveSeek);
  }
  video.addEventListener("error", () => {
    const err = video.error;
    fail(`video element error ${err ? err.code : "?"}: ${err ? err.message : "unknown"}`);
    emit({ event: "fatal" });
  });
  watchFrames();
  video.addEventListener("resize", () => onRendition(video.videoWidth, video.videoHeight));

  player.initialize(video, mpd, liveLatencyS === null);
  setInterval(sample, SAMPLE_INTERVAL_MS);
  setInterval(renderOverlay, SAMPLE_INTERVAL_MS);
  if (statsUrl) setInterval(pollPathStats, STATS_INTERVAL_MS);
}

// Live mode: start playing once the latency reaches the target (lib/live.mjs, joinDelayMs).
// video.play(), not player.play(): dash.js's play() takes the latency at that moment as its new
// target (PlaybackController._adjustLiveDelayAfterUserInteraction, meant for a viewer resuming
// after a pause), which would move the target whenever the first segment arrives late.
function joinLiveEvent(player) {
  if (!state.liveJoinPending) return;
  state.liveJoinPending = false;
  let waitMs = 0;
  try {
    const start = player.getManifest().availabilityStartTime;
    waitMs = joinDelayMs(new Date(start).getTime(), video.currentTime, Date.now(), liveLatencyS);
  } catch (e) {
    fail(`live join: no availabilityStartTime in the MPD (${e.message}); playing at once`);
  }
  setTimeout(() => {
    video.play().catch((e) => fail(`live join: play() failed: ${e.message}`));
  }, waitMs);
}

// The overlay's per-path throughput (what the transport's server side sent over the last
// 4 s, per emulated path, and in all); kept in window.__testbed.pathStats for a test to read.
async function pollPathStats() {
  try {
    const stats = await (await fetch(statsUrl, { cache: "no-store" })).json();
    window.__testbed.pathStats = stats;
    const parts = Object.entries(stats.paths || {}).map(
      ([path, bps]) =>
        `${path} ${(bps / 1e6).toFixed(2)} Mbit/s (${((stats.bytes_total[path] || 0) / 1e6).toFixed(1)} MB)`,
    );
    document.getElementById("o-paths").textContent = parts.length ? parts.join(" · ") : "no data yet";
  } catch (e) {
    document.getElementById("o-paths").textContent = `stats unavailable (${e.message})`;
  }
}

// Is the element short of data? Little buffered ahead, and more to come (near the end of the
// stream the buffer is short because everything is already there).
function shortOfData() {
  const t = video.currentTime;
  for (let i = 0; i < video.buffered.length; i++) {
    const end = video.buffered.end(i);
    if (video.buffered.start(i) <= t + 0.1 && end > t) {
      return end - t < DATA_STALL_MAX_BUFFER_S && !(end >= video.duration - 0.1);
    }
  }
  return true;
}

// Within this much of the end, with everything buffered, a wait means the stream is over.
const END_OF_STREAM_S = 0.25;

function onWaiting() {
  const now = performance.now();
  if (stalls.stalled || decodeStalls.stalled || state.ended) return;
  const remainingS = video.duration - video.currentTime;
  if (remainingS < END_OF_STREAM_S && !shortOfData()) {
    // dash.js can loop at the very end (its gap jumper seeks to a duration the media does not
    // reach) instead of firing 'ended': the video is over, say so and end the session.
    emit({
      event: "error",
      message: `playback waiting ${remainingS.toFixed(3)} s before the end; treated as ended`,
    });
    onEnded();
    return;
  }
  if (shortOfData()) {
    stalls.waiting(now, video.currentTime);
  } else {
    decodeStalls.waiting(now, video.currentTime);
  }
  renderOverlay();
}

function emitStall(stall) {
  emit({ event: "stall", ...stall });
  renderOverlay();
}

function onEnded() {
  if (state.ended) return;
  state.ended = true;
  const stall = stalls.ended(performance.now());
  if (stall) emitStall(stall);
  const decodeStall = decodeStalls.ended(performance.now());
  if (decodeStall) emit({ event: "decode_stall", ...decodeStall, buffer_s: bufferS() });
  sample();
  emit({ event: "ended" });
  renderOverlay();
}

// What is on screen: requestVideoFrameCallback reports the size of each presented frame (ground
// truth; dash.js QUALITY_CHANGE_RENDERED misreports the first rendition at start-up).
function watchFrames() {
  if (!("requestVideoFrameCallback" in HTMLVideoElement.prototype)) return;
  const onFrame = (_now, meta) => {
    // Live mode: the first frame is shown while the page waits to join (paused); start-up is
    // the first frame played.
    if (state.startupMs === null && !(liveLatencyS !== null && video.paused)) {
      state.startupMs = performance.now();
      emit({ event: "startup" });
    }
    onRendition(meta.width, meta.height);
    state.presentedS = meta.mediaTime;
    video.requestVideoFrameCallback(onFrame);
  };
  video.requestVideoFrameCallback(onFrame);
}

function onRendition(width, height) {
  if (!width || !height) return;
  const current = state.onScreen;
  if (current && current.width === width && current.height === height) return;
  const rep = findRep(width, height);
  if (current) {
    state.switches += 1;
    emit({
      event: "quality_switch",
      from_rep: current.rep_id,
      to_rep: rep.rep_id,
      bitrate_bps: rep.bitrate_bps,
      width,
      height,
      media_time_s: video.currentTime,
    });
  }
  state.onScreen = rep;
}

function findRep(width, height) {
  return (
    state.reps.find((r) => r.width === width && r.height === height) || {
      rep_id: null,
      bitrate_bps: null,
      width,
      height,
    }
  );
}

function onSegment(e) {
  const req = e.request;
  if (!req || e.error) return;
  const isInit = req.type === "InitializationSegment";
  if (!isInit && req.type !== "MediaSegment") return;
  const url = req.url;
  // Resource Timing gives fetch start / first byte / end on the page's monotonic clock; the
  // request's Date fields (wall clock, 1 ms) are the fallback.
  const timing = performance.getEntriesByName(new URL(url, location.href).href).at(-1);
  const wallToPage = (d) => (d ? new Date(d).getTime() - performance.timeOrigin : null);
  const requestMs = timing ? timing.startTime : wallToPage(req.startDate);
  const firstByteMs = timing && timing.responseStart > 0 ? timing.responseStart : wallToPage(req.firstByteDate);
  const endMs = timing && timing.responseEnd > 0 ? timing.responseEnd : wallToPage(req.endDate);
  const bytes = Number.isFinite(req.bytesLoaded) && req.bytesLoaded > 0
    ? req.bytesLoaded
    : (e.response && e.response.byteLength) || (timing ? timing.encodedBodySize : 0);
  const seconds = (endMs - requestMs) / 1000;
  const seg = {
    event: "segment",
    url,
    rep_id: req.representation ? String(req.representation.id) : null,
    media_type: isInit ? "init" : req.mediaType,
    bytes,
    request_ms: requestMs,
    first_byte_ms: firstByteMs,
    end_ms: endMs,
    throughput_bps: seconds > 0 ? Math.round((bytes * 8) / seconds) : null,
    index: Number.isFinite(req.index) ? req.index : null,
  };
  state.segments.unshift(seg);
  state.segments.length = Math.min(state.segments.length, OVERLAY_SEGMENTS);
  emit(seg);
}

// A wait during a seek is no stall in VOD (only a person seeks there). In live mode every seek
// after start-up is dash.js jumping to the live edge, and the wait for data at the new position
// is a stall the viewer sees (a frozen picture), so it counts.
function seekingByUser() {
  return video.seeking && (liveLatencyS === null || state.startupMs === null);
}

function liveLatency() {
  try {
    const latency = window.__testbed.player.getCurrentLiveLatency();
    return Number.isFinite(latency) ? latency : null;
  } catch {
    return null;
  }
}

// A seek after start-up in live mode is dash.js catching up with the live edge (the page never
// seeks by itself): the media between the last presented frame and the seek target is skipped.
function onLiveSeek() {
  if (state.startupMs === null || state.presentedS === null) return;
  const from = state.presentedS;
  const to = video.currentTime;
  if (to - from < LIVE_SEEK_MIN_S) return;
  state.liveSeeks += 1;
  state.skippedS += to - from;
  state.presentedS = to;
  emit({
    event: "live_seek",
    from_media_time_s: from,
    to_media_time_s: to,
    skipped_s: to - from,
    live_latency_s: liveLatency(),
  });
}

function bufferS() {
  const player = window.__testbed.player;
  try {
    const level = player.getBufferLength("video");
    return Number.isFinite(level) ? level : 0;
  } catch {
    return 0;
  }
}

// Samples (250 ms) spent at the very end without 'ended' before the session is ended anyway.
const STUCK_AT_END_SAMPLES = 4;
let samplesAtEnd = 0;

function checkEnd() {
  if (state.ended || !(video.duration > 0)) return;
  if (video.ended) {
    onEnded(); // the event can be missed when dash.js seeks to the end itself
    return;
  }
  samplesAtEnd = video.duration - video.currentTime < 0.05 ? samplesAtEnd + 1 : 0;
  if (samplesAtEnd >= STUCK_AT_END_SAMPLES) {
    emit({ event: "error", message: "at the end of the stream for 1 s without 'ended'; ended" });
    onEnded();
  }
}

// The end of a live event: once the wall clock passes availabilityStartTime + the event's
// duration (media time + latency = time on air >= duration), every segment is published and
// there is no live edge left to catch up with. dash.js's catch-up does not know that: its
// latency keeps growing with the wall clock, and its maxDrift seek goes to the end of the
// DVR window minus the live delay (PlaybackController.seekToCurrentLive), i.e. back to
// duration - target, again and again: the picture froze within the target latency of the end
// with that much buffered until the runner's timeout (seen twice with a 3 s target). So the
// catch-up is switched off when the event ends and the rest plays out as in VOD.
function endLiveCatchupAfterTheEvent() {
  if (liveLatencyS === null || state.liveEventOver || !(video.duration > 0)) return;
  const latency = liveLatency();
  if (latency === null || video.currentTime + latency < video.duration) return;
  state.liveEventOver = true;
  window.__testbed.player.updateSettings({ streaming: { liveCatchup: { enabled: false } } });
}

function sample() {
  if (!state.ended) setTimeout(checkEnd, 0);
  endLiveCatchupAfterTheEvent();
  const q = video.getVideoPlaybackQuality();
  const rep = state.onScreen;
  const buffer = bufferS();
  const line = {
    event: "sample",
    media_time_s: video.currentTime,
    buffer_s: buffer,
    dropped_frames: q.droppedVideoFrames,
    total_frames: q.totalVideoFrames,
    // Chromium's decoder counter (frames out of the decoder, shown or not): with
    // total_frames it tells frames dropped before decoding from those dropped after.
    decoded_frames: Number.isFinite(video.webkitDecodedFrameCount)
      ? video.webkitDecodedFrameCount
      : null,
    ...(liveLatencyS !== null
      ? { live_latency_s: liveLatency(), playback_rate: video.playbackRate }
      : {}),
    rep_id: rep ? rep.rep_id : null,
    bitrate_bps: rep ? rep.bitrate_bps : null,
    width: rep ? rep.width : null,
    height: rep ? rep.height : null,
    playing:
      state.startupMs !== null &&
      !video.paused &&
      !video.ended &&
      !stalls.stalled &&
      !decodeStalls.stalled,
  };
  state.lastSample = line;
  emit(line);
  const over = overload.sample(q.droppedVideoFrames, buffer, stalls.stalled);
  if (over) emit({ event: "decode_overload", ...over });
}

function renderOverlay() {
  const s = state.lastSample;
  const set = (id, text) => {
    document.getElementById(id).textContent = text;
  };
  const now = performance.now();
  const status = state.ended
    ? "ended"
    : stalls.stalled
      ? "STALLED"
      : state.startupMs === null
        ? state.liveJoinPending || (liveLatencyS !== null && video.paused)
          ? "joining at the target latency"
          : "loading"
        : video.paused
          ? "paused"
          : "playing";
  set("o-status", status);
  document.getElementById("o-status").className = stalls.stalled ? "stalled" : "";
  if (s) {
    set("o-media-time", `${s.media_time_s.toFixed(2)} s / ${(video.duration || 0).toFixed(0)} s`);
    set("o-buffer", `${s.buffer_s.toFixed(2)} s`);
    set("o-frames", `${s.dropped_frames} / ${s.total_frames}`);
  }
  const rep = state.onScreen;
  if (rep) {
    set("o-rendition", `${rep.width}x${rep.height} (rep ${rep.rep_id})`);
    set("o-bitrate", rep.bitrate_bps ? `${(rep.bitrate_bps / 1e6).toFixed(2)} Mbit/s` : "–");
  }
  if (state.startupMs !== null) set("o-startup", `${state.startupMs.toFixed(0)} ms`);
  set("o-stalls", `${stalls.count + (stalls.stalled ? 1 : 0)} (${stalls.totalMsAt(now).toFixed(0)} ms)`);
  set("o-switches", String(state.switches));
  if (liveLatencyS !== null) {
    const latency = liveLatency();
    set(
      "o-live",
      `${latency === null ? "–" : latency.toFixed(2)} s (target ${liveLatencyS} s) · rate ` +
        `${video.playbackRate.toFixed(2)} · skipped ${state.skippedS.toFixed(2)} s in ` +
        `${state.liveSeeks} seek(s)`,
    );
  }
  const body = document.querySelector("#o-segments tbody");
  body.replaceChildren(
    ...state.segments.map((seg) => {
      const tr = document.createElement("tr");
      const cells = [
        seg.media_type === "init" ? "init" : String(seg.index ?? ""),
        seg.rep_id ?? "?",
        (seg.bytes / 1000).toFixed(0),
        (seg.end_ms - seg.request_ms).toFixed(0),
        seg.throughput_bps ? (seg.throughput_bps / 1e6).toFixed(2) : "–",
      ];
      for (const c of cells) {
        const td = document.createElement("td");
        td.textContent = c;
        tr.appendChild(td);
      }
      return tr;
    }),
  );
}
