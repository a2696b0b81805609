import assert from "node:assert/strict";
import { test } from "node:test";
import { checkText, validateLine } from "../schema.mjs";
import { summarize } from "../web/lib/summary.mjs";

const base = { t_ns: 1, src: "player-dashjs" };
const start = { ...base, event: "start", player: "dashjs", url: "http://h/p", mpd: "http://h/m.mpd" };
const stall = {
  ...base,
  event: "stall",
  start_t_ns: 1_000_000_000,
  end_t_ns: 1_500_000_000,
  duration_ms: 500,
  media_time_s: 3.2,
  open: false,
};
const summary = { ...base, ...summarize([stall], "ended") };
const toText = (objs) => objs.map((o) => JSON.stringify(o)).join("\n") + "\n";

test("a well-formed log passes", () => {
  const { problems, lines } = checkText(toText([start, stall, summary]));
  assert.deepEqual(problems, []);
  assert.equal(lines.length, 3);
});

test("a malformed line is reported with its line number, not skipped", () => {
  const text = toText([start]) + '{"t_ns": 5, "src": "player-dashjs", "event": \n' + toText([summary]);
  const { problems } = checkText(text, "p.jsonl");
  assert.equal(problems.length, 1);
  assert.match(problems[0], /^p\.jsonl:2: malformed JSON/);
});

test("a truncated last line and a missing summary are reported", () => {
  const text = toText([start, stall]) + '{"t_ns": 9, "src": "player-dash';
  const { problems } = checkText(text, "p.jsonl");
  assert.ok(problems.some((p) => /^p\.jsonl:3: truncated line/.test(p)), problems.join("\n"));
  assert.ok(problems.some((p) => /no summary line/.test(p)), problems.join("\n"));
});

test("missing and mistyped fields, unknown events and bad enums are reported", () => {
  assert.deepEqual(validateLine({ ...stall, duration_ms: "500" })[0], 'stall.duration_ms: "500" is not num');
  assert.match(validateLine({ ...base, event: "sample" })[0], /sample\.media_time_s: missing/);
  assert.match(validateLine({ ...base, event: "stal" })[0], /event: "stal" is not one of/);
  assert.match(validateLine({ ...stall, src: "vlc" })[0], /src: "vlc"/);
  assert.match(validateLine({ ...stall, duration_ms: 900 })[0], /end - start = 500 ms/);
  assert.match(validateLine({ ...summary, reason: "done" })[0], /summary.reason/);
});

test("extra fields are allowed (the contract is extended additively)", () => {
  assert.deepEqual(validateLine({ ...stall, extra_field: 1 }), []);
});
