// Stall state machine, shared by the page (live overlay, headless log) and the node tests.
// player/stall.py is the same machine for the GStreamer player; both run the vectors of
// player/test/stall-vectors.json, so the two players define a stall the same way.
//
// A stall is playback waiting for data after it has started (CONTRACTS.md §5.4); the initial
// load is not one. States:
//
//   loading --playing--> playing --waiting--> stalled --playing--> playing
//      any --ended--> ended
//
// Under MSE Chromium never fires dash.js PLAYBACK_STALLED; a stall shows as the video element's
// 'waiting' (dash.js PLAYBACK_WAITING) and as dash.js BUFFER_EMPTY. The page feeds `waiting`
// from both (BUFFER_EMPTY only once the element really lacks data, see player.mjs) and
// `playing` from the element's 'playing' event. Times are page milliseconds (performance.now()).

export class StallTracker {
  constructor() {
    this.state = "loading";
    this.count = 0;
    this.totalMs = 0;
    this.maxMs = 0;
    this.openStartMs = null;
    this.openMediaTimeS = null;
  }

  /** Playback runs (again). Returns the finished stall record, or null. */
  playing(tMs) {
    if (this.state === "stalled") {
      const stall = this.#close(tMs, false);
      this.state = "playing";
      return stall;
    }
    if (this.state === "loading") this.state = "playing";
    return null;
  }

  /** Playback waits for data. Starts a stall only after start-up; repeated calls are one stall. */
  waiting(tMs, mediaTimeS) {
    if (this.state !== "playing") return false;
    this.state = "stalled";
    this.openStartMs = tMs;
    this.openMediaTimeS = mediaTimeS;
    return true;
  }

  /** The video ended: a stall still open ends here (the stream ran out, playback finished). */
  ended(tMs) {
    const stall = this.state === "stalled" ? this.#close(tMs, false) : null;
    this.state = "ended";
    return stall;
  }

  /** The session is cut (timeout, error): an open stall is reported with open: true. */
  finish(tMs) {
    return this.state === "stalled" ? this.#close(tMs, true) : null;
  }

  /** Stall time so far including the one in progress (for the live overlay). */
  totalMsAt(tMs) {
    return this.totalMs + (this.state === "stalled" ? tMs - this.openStartMs : 0);
  }

  get stalled() {
    return this.state === "stalled";
  }

  #close(tMs, open) {
    const durationMs = Math.max(0, tMs - this.openStartMs);
    this.count += 1;
    this.totalMs += durationMs;
    this.maxMs = Math.max(this.maxMs, durationMs);
    const stall = {
      start_ms: this.openStartMs,
      end_ms: tMs,
      duration_ms: durationMs,
      media_time_s: this.openMediaTimeS,
      open,
    };
    this.openStartMs = null;
    this.openMediaTimeS = null;
    return stall;
  }
}
