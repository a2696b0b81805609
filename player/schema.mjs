#!/usr/bin/env node
// player.jsonl schema (CONTRACTS.md §5.4, extensions in docs/PLAYER.md) and a reader that
// reports every malformed, truncated or out-of-schema line with file and line number.
//
//   node player/schema.mjs <player.jsonl>...   prints the problems; exit 1 if any, 2 bad usage
//
// Both players (player-dashjs, player-gst) are held to the same schema. Extra fields are allowed
// (the contract is extended additively); missing or mistyped fields and unknown events are not.

import fs from "node:fs";
import { pathToFileURL } from "node:url";

const INT = "int";
const NUM = "num";
const STR = "str";
const BOOL = "bool";
const ARR = "array";
const nullable = (t) => `${t}|null`;

const STALL_FIELDS = {
  start_t_ns: INT,
  end_t_ns: INT,
  duration_ms: NUM,
  media_time_s: NUM,
  open: BOOL,
};

export const EVENT_FIELDS = {
  start: { player: STR, url: STR, mpd: STR },
  startup: { startup_delay_ms: NUM },
  sample: {
    media_time_s: NUM,
    buffer_s: NUM,
    dropped_frames: INT,
    total_frames: INT,
    rep_id: nullable(STR),
    bitrate_bps: nullable(INT),
    width: nullable(INT),
    height: nullable(INT),
    playing: BOOL,
  },
  stall: STALL_FIELDS,
  decode_stall: { ...STALL_FIELDS, buffer_s: nullable(NUM) },
  quality_switch: {
    from_rep: nullable(STR),
    to_rep: nullable(STR),
    bitrate_bps: nullable(INT),
    width: INT,
    height: INT,
    media_time_s: NUM,
  },
  segment: {
    url: STR,
    rep_id: nullable(STR),
    media_type: STR,
    bytes: INT,
    request_t_ns: nullable(INT),
    first_byte_t_ns: nullable(INT),
    end_t_ns: nullable(INT),
    throughput_bps: nullable(NUM),
  },
  error: { message: STR },
  decode_overload: { dropped_frames: INT, buffer_s: NUM },
  // GStreamer: one line per QoS message that dropped a buffer (player/gst_player.py).
  qos: { element: STR, reason: STR, dropped: INT, processed: INT, jitter_ns: INT },
  representations: { reps: ARR, duration_s: nullable(NUM) },
  screenshot: { path: STR, overlay: "object" },
  summary: {
    ended: BOOL,
    reason: STR,
    startup_delay_ms: nullable(NUM),
    stalls: INT,
    stall_total_ms: NUM,
    stall_max_ms: NUM,
    dropped_frames: INT,
    total_frames: INT,
    mean_bitrate_bps: nullable(NUM),
    quality_switches: INT,
    played_s: NUM,
  },
};

const SOURCES = new Set(["player-dashjs", "player-gst"]);
const MEDIA_TYPES = new Set(["video", "audio", "init"]);
const REASONS = new Set(["ended", "timeout", "error"]);

function typeOk(value, type) {
  if (type.endsWith("|null")) return value === null || typeOk(value, type.slice(0, -5));
  switch (type) {
    case INT:
      return Number.isInteger(value);
    case NUM:
      return typeof value === "number" && Number.isFinite(value);
    case STR:
      return typeof value === "string";
    case BOOL:
      return typeof value === "boolean";
    case ARR:
      return Array.isArray(value);
    case "object":
      return value !== null && typeof value === "object" && !Array.isArray(value);
    default:
      throw new Error(`schema.mjs: unknown type ${type}`);
  }
}

/** Problems of one parsed line (empty list = valid). */
export function validateLine(obj) {
  const problems = [];
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return ["not a JSON object"];
  if (!Number.isInteger(obj.t_ns)) problems.push(`t_ns: ${JSON.stringify(obj.t_ns)} is not an integer`);
  if (!SOURCES.has(obj.src)) problems.push(`src: ${JSON.stringify(obj.src)} is not one of ${[...SOURCES].join(", ")}`);
  const fields = EVENT_FIELDS[obj.event];
  if (!fields) {
    problems.push(`event: ${JSON.stringify(obj.event)} is not one of ${Object.keys(EVENT_FIELDS).join(", ")}`);
    return problems;
  }
  for (const [name, type] of Object.entries(fields)) {
    if (!(name in obj)) problems.push(`${obj.event}.${name}: missing (${type})`);
    else if (!typeOk(obj[name], type)) {
      problems.push(`${obj.event}.${name}: ${JSON.stringify(obj[name])} is not ${type}`);
    }
  }
  if (problems.length) return problems;
  if (obj.event === "segment" && !MEDIA_TYPES.has(obj.media_type)) {
    problems.push(`segment.media_type: ${JSON.stringify(obj.media_type)} is not video, audio or init`);
  }
  if (obj.event === "summary" && !REASONS.has(obj.reason)) {
    problems.push(`summary.reason: ${JSON.stringify(obj.reason)} is not ended, timeout or error`);
  }
  if (obj.event === "stall" || obj.event === "decode_stall") {
    if (obj.end_t_ns < obj.start_t_ns) problems.push(`${obj.event}: end_t_ns before start_t_ns`);
    const spanMs = (obj.end_t_ns - obj.start_t_ns) / 1e6;
    if (Math.abs(spanMs - obj.duration_ms) > 1) {
      problems.push(`${obj.event}.duration_ms: ${obj.duration_ms} but end - start = ${spanMs} ms`);
    }
  }
  if (obj.event === "sample" && obj.dropped_frames > obj.total_frames) {
    problems.push(`sample: dropped_frames ${obj.dropped_frames} > total_frames ${obj.total_frames}`);
  }
  return problems;
}

/**
 * Reads a player.jsonl text. Returns {lines, problems}: every problem names the line number;
 * nothing is skipped silently. The file must end with exactly one summary line and a newline.
 */
export function checkText(text, name = "player.jsonl") {
  const lines = [];
  const problems = [];
  if (text.length === 0) return { lines, problems: [`${name}: empty file (no start, no summary)`] };
  const raw = text.split("\n");
  const truncated = raw.at(-1) !== "";
  if (!truncated) raw.pop();
  raw.forEach((line, i) => {
    const where = `${name}:${i + 1}`;
    if (truncated && i === raw.length - 1) {
      problems.push(`${where}: truncated line (no final newline): ${line.slice(0, 80)}`);
      return;
    }
    let obj;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      problems.push(`${where}: malformed JSON (${e.message}): ${line.slice(0, 80)}`);
      return;
    }
    for (const p of validateLine(obj)) problems.push(`${where}: ${p}`);
    lines.push(obj);
  });
  const summaries = lines.filter((l) => l.event === "summary").length;
  if (summaries === 0) problems.push(`${name}: no summary line (session cut short?)`);
  else if (summaries > 1) problems.push(`${name}: ${summaries} summary lines (one expected)`);
  else if (lines.at(-1).event !== "summary") problems.push(`${name}: summary is not the last line`);
  if (lines.length && lines[0].event !== "start") problems.push(`${name}:1: first line is not start`);
  return { lines, problems };
}

export function checkFile(file) {
  return checkText(fs.readFileSync(file, "utf8"), file);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write("usage: node player/schema.mjs <player.jsonl>...\n");
    process.exit(2);
  }
  let bad = 0;
  for (const file of files) {
    if (!fs.existsSync(file)) {
      process.stderr.write(`${file}: no such file\n`);
      process.exit(2);
    }
    const { lines, problems } = checkFile(file);
    for (const p of problems) process.stdout.write(`${p}\n`);
    if (problems.length) bad += 1;
    else process.stdout.write(`${file}: ok (${lines.length} lines)\n`);
  }
  process.exit(bad ? 1 : 0);
}
