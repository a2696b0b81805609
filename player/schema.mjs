#!/usr/bin/env node
// Checks player.jsonl files against docs/schemas/player.v1.schema.json with a standard JSON
// Schema validator (ajv, draft 2020-12): the same schema file metrics/ validates with Python's
// jsonschema. Every malformed, truncated or out-of-schema line is reported with file and line.
//
//   node player/schema.mjs <player.jsonl>...   prints the problems; exit 1 if any, 2 bad usage
//
// On top of the per-line schema, the checks a schema cannot express: the first line is
// `start`, the last is the one `end` line, a stall's duration matches its start and end, and
// dropped_frames never exceeds total_frames.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SCHEMA_FILE = path.join(HERE, "..", "docs", "schemas", "player.v1.schema.json");
export const SCHEMA = JSON.parse(fs.readFileSync(SCHEMA_FILE, "utf8"));

const ajv = new Ajv2020({ allErrors: false, strict: false });
const validate = ajv.compile(SCHEMA);

/** Problems of one parsed line (empty list = valid), each naming the field. */
export function validateLine(obj) {
  if (validate(obj)) return semanticProblems(obj);
  const event = obj && typeof obj === "object" ? obj.event : undefined;
  return validate.errors
    .filter((e) => e.keyword !== "if")
    .map((e) => {
      const field =
        e.keyword === "required"
          ? [e.instancePath.slice(1), e.params.missingProperty].filter(Boolean).join(".")
          : e.instancePath.slice(1).replaceAll("/", ".") || "(line)";
      return `${event}.${field}: ${e.message}`;
    });
}

function semanticProblems(obj) {
  const problems = [];
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
 * nothing is skipped silently. The file must end with exactly one end line and a newline.
 */
export function checkText(text, name = "player.jsonl") {
  const lines = [];
  const problems = [];
  if (text.length === 0) return { lines, problems: [`${name}: empty file (no start, no end)`] };
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
  const ends = lines.filter((l) => l.event === "end").length;
  if (ends === 0) problems.push(`${name}: no end line (session cut short?)`);
  else if (ends > 1) problems.push(`${name}: ${ends} end lines (one expected)`);
  else if (lines.at(-1).event !== "end") problems.push(`${name}: the end line is not the last line`);
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
