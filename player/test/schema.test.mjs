import assert from "node:assert/strict";
import { test } from "node:test";
import { checkText, validateLine } from "../schema.mjs";

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
const end = { ...base, event: "end", reason: "ended" };
const toText = (objs) => objs.map((o) => JSON.stringify(o)).join("\n") + "\n";

test("a well-formed log passes", () => {
  const { problems, lines } = checkText(toText([start, stall, end]));
  assert.deepEqual(problems, []);
  assert.equal(lines.length, 3);
});

test("a malformed line is reported with its line number, not skipped", () => {
  const text = toText([start]) + '{"t_ns": 5, "src": "player-dashjs", "event": \n' + toText([end]);
  const { problems } = checkText(text, "p.jsonl");
  assert.equal(problems.length, 1);
  assert.match(problems[0], /^p\.jsonl:2: malformed JSON/);
});

test("a truncated last line and a missing end line are reported", () => {
  const text = toText([start, stall]) + '{"t_ns": 9, "src": "player-dash';
  const { problems } = checkText(text, "p.jsonl");
  assert.ok(problems.some((p) => /^p\.jsonl:3: truncated line/.test(p)), problems.join("\n"));
  assert.ok(problems.some((p) => /no end line/.test(p)), problems.join("\n"));
});

test("missing and mistyped fields, unknown events and bad enums name the field", () => {
  assert.match(validateLine({ ...stall, duration_ms: "500" })[0], /^stall\.duration_ms: must be number/);
  assert.match(validateLine({ ...base, event: "sample" })[0], /^sample\.media_time_s: must have required/);
  assert.match(validateLine({ ...base, event: "stal" })[0], /^stal\.event: must be equal to one of/);
  assert.match(validateLine({ ...stall, src: "vlc" })[0], /^stall\.src: must be equal to one of/);
  assert.match(validateLine({ ...stall, duration_ms: 900 })[0], /end - start = 500 ms/);
  assert.match(validateLine({ ...end, reason: "done" })[0], /^end\.reason: must be equal to one of/);
});

test("extra fields are allowed (the contract is extended additively)", () => {
  assert.deepEqual(validateLine({ ...stall, extra_field: 1 }), []);
});
