import assert from "node:assert/strict";
import { test } from "node:test";
import { DecodeOverloadDetector } from "../web/lib/overload.mjs";

test("drops with a healthy buffer are decode overload", () => {
  const d = new DecodeOverloadDetector(1.0);
  assert.equal(d.sample(0, 5, false), null);
  assert.deepEqual(d.sample(3, 5, false), { dropped_frames: 3, buffer_s: 5 });
  assert.equal(d.overloadDroppedTotal, 3);
});

test("drops with an empty buffer or during a stall are not blamed on the machine", () => {
  const d = new DecodeOverloadDetector(1.0);
  d.sample(0, 0.2, false);
  assert.equal(d.sample(2, 0.2, false), null);
  assert.equal(d.sample(4, 6, true), null);
  assert.equal(d.sample(4, 6, false), null);
  assert.equal(d.overloadDroppedTotal, 0);
});
