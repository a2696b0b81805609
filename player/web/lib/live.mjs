// Live mode's dash.js settings and the join rule, shared by the page (player.mjs) and the node
// tests (player/test/live.test.mjs). docs/PLAYER.md, "Live mode", gives the reasons.

// Catch-up by playback rate: the rate moves within 1 - LIVE_RATE_DELTA .. 1 + LIVE_RATE_DELTA
// while the latency differs from the target (dash.js's default mode: a sigmoid of the error).
export const LIVE_RATE_DELTA = 0.3;
// More than this above the target, dash.js seeks to the live edge minus the target, discarding
// the media in between (logged as live_seek with the media time skipped).
export const LIVE_MAX_DRIFT_S = 1.5;
// dash.js 5.2.1's valid catch-up rates (Settings.js, streaming.liveCatchup.playbackRate):
// min in [-0.5, 0], max in [0, 1].
export const DASHJS_RATE_MIN_RANGE = [-0.5, 0];
export const DASHJS_RATE_MAX_RANGE = [0, 1];

/** The dash.js settings (player.updateSettings) of a live session at `targetS` seconds. */
export function liveSettings(targetS) {
  if (!(Number.isFinite(targetS) && targetS > 0)) {
    throw new RangeError(`live target ${targetS}: must be a number of seconds > 0`);
  }
  return {
    streaming: {
      // The page's target, not the MPD's suggestedPresentationDelay (the same value, written
      // by server/live_mpd.py) nor dash.js's default of 4 segment durations.
      delay: { liveDelay: targetS },
      liveCatchup: {
        enabled: true,
        mode: "liveCatchupModeDefault",
        maxDrift: LIVE_MAX_DRIFT_S,
        playbackRate: { min: -LIVE_RATE_DELTA, max: LIVE_RATE_DELTA },
      },
      // Client and server share one host clock; no time server exists inside the testbed.
      utcSynchronization: { enabled: false },
      // The event has an end (mediaPresentationDuration): the element gets a finite duration
      // and fires 'ended' as in VOD.
      buffer: { mediaSourceDurationInfinity: false },
    },
  };
}

/**
 * Milliseconds to wait before starting playback so that the first frame is shown at the target
 * latency: the viewer joins the event at `targetS` behind the live edge, as dash.js does when it
 * joins a running stream (start position = live edge - target).
 *
 * The trial puts the event on air as the player starts (server/live_mpd.py), so the live edge
 * minus the target is before media time 0: dash.js starts at 0 as soon as the first segment is
 * published, one segment duration after the start, at a latency below the target, and then
 * slows playback down (rate 0.7) for several seconds to build the latency, with less than one
 * segment of margin at the first boundary. Paused at `positionS`, the latency grows with the
 * wall clock (latency = now - availabilityStartTime - position), so the wait is exact.
 *
 * @param {number} availabilityStartMs MPD@availabilityStartTime, Unix milliseconds
 * @param {number} positionS the paused position, media seconds
 * @param {number} nowMs the wall clock, Unix milliseconds (the host's; see utcSynchronization)
 * @param {number} targetS the target latency, seconds
 * @returns {number} milliseconds to wait, 0 if the latency is already at or above the target
 */
export function joinDelayMs(availabilityStartMs, positionS, nowMs, targetS) {
  for (const [name, v] of Object.entries({ availabilityStartMs, positionS, nowMs, targetS })) {
    if (!Number.isFinite(v)) throw new RangeError(`${name} ${v}: must be a finite number`);
  }
  const latencyS = (nowMs - availabilityStartMs) / 1000 - positionS;
  return Math.max(0, (targetS - latencyS) * 1000);
}
