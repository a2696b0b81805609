import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DASHJS_RATE_MAX_RANGE,
  DASHJS_RATE_MIN_RANGE,
  joinDelayMs,
  liveSettings,
} from "../web/lib/live.mjs";

test("dash.js gets the page's target as its live delay, not the MPD's or its default", () => {
  for (const target of [4, 2.5, 8]) {
    const s = liveSettings(target).streaming;
    assert.equal(s.delay.liveDelay, target);
    // No fragment count: with liveDelay set dash.js ignores it, but one set would mean the
    // page relies on dash.js's precedence order to keep the target.
    assert.equal(s.delay.liveDelayFragmentCount, undefined);
  }
});

test("the catch-up is on, bounded, and within what dash.js 5.2.1 accepts", () => {
  const c = liveSettings(4).streaming.liveCatchup;
  assert.equal(c.enabled, true);
  assert.equal(c.mode, "liveCatchupModeDefault");
  // A bounded rate on both sides: NaN or a missing bound switches dash.js's rate control off
  // (Settings.js) and a bound outside its range is clamped or refused.
  const { min, max } = c.playbackRate;
  assert.ok(min < 0 && min >= DASHJS_RATE_MIN_RANGE[0] && min <= DASHJS_RATE_MIN_RANGE[1], `min ${min}`);
  assert.ok(max > 0 && max >= DASHJS_RATE_MAX_RANGE[0] && max <= DASHJS_RATE_MAX_RANGE[1], `max ${max}`);
  // The seek to the live edge needs a positive maxDrift (NaN or <= 0: never seek, and the
  // latency, hence the skipped-media metric, would grow without bound).
  assert.ok(Number.isFinite(c.maxDrift) && c.maxDrift > 0, `maxDrift ${c.maxDrift}`);
});

test("one host clock: no time server, and the event's end is the element's end", () => {
  const s = liveSettings(4).streaming;
  assert.equal(s.utcSynchronization.enabled, false);
  assert.equal(s.buffer.mediaSourceDurationInfinity, false);
});

test("a target that is not a positive number of seconds is refused", () => {
  for (const bad of [0, -1, NaN, Infinity, "4"]) {
    assert.throws(() => liveSettings(bad), RangeError, String(bad));
  }
});

test("the join waits until the latency reaches the target", () => {
  const ast = 1_700_000_000_000;
  // On air 1.2 s ago, paused at media time 0: 2.8 s to wait for a 4 s target.
  assert.equal(joinDelayMs(ast, 0, ast + 1200, 4), 2800);
  // Paused at 2 s (a start position inside the event): latency = 5 - 2 = 3 s, 1 s to wait.
  assert.equal(joinDelayMs(ast, 2, ast + 5000, 4), 1000);
  // Already at or past the target (the first segment came late): play at once.
  assert.equal(joinDelayMs(ast, 0, ast + 4000, 4), 0);
  assert.equal(joinDelayMs(ast, 0, ast + 6500, 4), 0);
});

test("the join refuses what it cannot compute", () => {
  assert.throws(() => joinDelayMs(NaN, 0, 1, 4), /availabilityStartMs/);
  assert.throws(() => joinDelayMs(0, undefined, 1, 4), /positionS/);
});
