import assert from "node:assert/strict";
import { test } from "node:test";
import { summarize } from "../web/lib/summary.mjs";

const sample = (media, bitrate, playing, dropped = 0, total = 0) => ({
  event: "sample",
  media_time_s: media,
  bitrate_bps: bitrate,
  playing,
  dropped_frames: dropped,
  total_frames: total,
});

test("summary counts stalls, switches, frames and the on-screen bitrate while playing", () => {
  const lines = [
    { event: "start" },
    { event: "startup", startup_delay_ms: 800 },
    sample(0.25, 800000, true),
    sample(0.5, 5240000, true),
    sample(0.5, 5240000, false),
    { event: "stall", duration_ms: 1500 },
    { event: "stall", duration_ms: 500 },
    { event: "quality_switch" },
    { event: "decode_overload", dropped_frames: 2 },
    sample(1.0, 5240000, true, 2, 30),
  ];
  const s = summarize(lines, "ended");
  assert.equal(s.event, "summary");
  assert.equal(s.ended, true);
  assert.equal(s.stalls, 2);
  assert.equal(s.stall_total_ms, 2000);
  assert.equal(s.stall_max_ms, 1500);
  assert.equal(s.quality_switches, 1);
  assert.equal(s.dropped_frames, 2);
  assert.equal(s.total_frames, 30);
  assert.equal(s.played_s, 1);
  assert.equal(s.mean_bitrate_bps, Math.round((800000 + 2 * 5240000) / 3));
  assert.equal(s.decode_overload_frames, 2);
  assert.equal(s.startup_delay_ms, 800);
});

test("a timed-out session is not ended", () => {
  const s = summarize([{ event: "start" }], "timeout");
  assert.equal(s.ended, false);
  assert.equal(s.reason, "timeout");
  assert.equal(s.mean_bitrate_bps, null);
  assert.equal(s.startup_delay_ms, null);
});
