import assert from "node:assert/strict";
import { test } from "node:test";
import { StallTracker } from "../web/lib/stall.mjs";

test("waiting during the initial load is not a stall", () => {
  const s = new StallTracker();
  assert.equal(s.waiting(100, 0), false);
  assert.equal(s.playing(900), null);
  assert.equal(s.count, 0);
  assert.equal(s.finish(1000), null);
});

test("a stall after start-up has start, end, duration and media position", () => {
  const s = new StallTracker();
  s.playing(500);
  assert.equal(s.waiting(2000, 1.5), true);
  assert.equal(s.stalled, true);
  assert.equal(s.totalMsAt(2600), 600);
  const stall = s.playing(3250);
  assert.deepEqual(stall, { start_ms: 2000, end_ms: 3250, duration_ms: 1250, media_time_s: 1.5, open: false });
  assert.equal(s.count, 1);
  assert.equal(s.totalMs, 1250);
  assert.equal(s.maxMs, 1250);
});

test("repeated waiting signals (BUFFER_EMPTY + waiting) make one stall", () => {
  const s = new StallTracker();
  s.playing(0);
  s.waiting(1000, 1);
  assert.equal(s.waiting(1100, 1.01), false);
  s.playing(1500);
  s.waiting(5000, 4);
  s.playing(5200);
  assert.equal(s.count, 2);
  assert.equal(s.totalMs, 700);
  assert.equal(s.maxMs, 500);
});

test("a stall open when the session is cut is reported open", () => {
  const s = new StallTracker();
  s.playing(0);
  s.waiting(1000, 0.9);
  const stall = s.finish(4000);
  assert.equal(stall.open, true);
  assert.equal(stall.duration_ms, 3000);
});

test("ended closes a stall and stops counting", () => {
  const s = new StallTracker();
  s.playing(0);
  s.waiting(1000, 9.9);
  const stall = s.ended(1200);
  assert.equal(stall.open, false);
  assert.equal(s.waiting(1300, 10), false);
  assert.equal(s.finish(1400), null);
});

// The same vectors run against player/stall.py (tests/test_stall_vectors.py): one definition
// of a stall for both players.
import fs from "node:fs";

const VECTORS = JSON.parse(fs.readFileSync(new URL("./stall-vectors.json", import.meta.url), "utf8"));

for (const c of VECTORS.cases) {
  test(`shared vector: ${c.name}`, () => {
    const s = new StallTracker();
    for (const [call, tMs, ...rest] of c.steps) {
      const expected = rest.at(-1);
      if (call === "waiting") {
        assert.equal(s.waiting(tMs, rest[0]), expected, `${call} at ${tMs}`);
        continue;
      }
      const got = s[call](tMs);
      const mapped = got && {
        start: got.start_ms,
        end: got.end_ms,
        duration_ms: got.duration_ms,
        media_time_s: got.media_time_s,
        open: got.open,
      };
      assert.deepEqual(mapped, expected, `${call} at ${tMs}`);
    }
    assert.equal(s.count, c.count);
  });
}
