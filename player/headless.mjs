#!/usr/bin/env node
// Headless player session: Debian's Chromium (puppeteer-core) plays the testbed page once, to
// the end or a timeout, and writes player.jsonl (docs/schemas/player.v1.schema.json) on the trial clock.
//
//   node player/headless.mjs --url <page url> --out <player.jsonl> --t0-ns <int> --timeout-s <n>
//        [--screenshot <png>] [--screenshot-at-s <media s>] [--chromium /usr/bin/chromium]
//
// Exit status: 0 the session ran (ended or timed out; the end line says which), 1 it failed
// (browser crash, page error, video element error; the end line says error), 2 bad arguments.
//
// Time: lines carry t_ns = CLOCK_MONOTONIC (process.hrtime.bigint) - t0. The page timestamps its
// events with performance.now() (monotonic, origin = its navigation); the offset between the two
// clocks is taken from the round trip with the smallest delay out of several (error <= half of
// that round trip, typically well under a millisecond), then every page time is mapped with it.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import puppeteer from "puppeteer-core";

const SRC = "player-dashjs";
const CLOCK_SYNC_ROUNDS = 9;
const BROWSER_CLOSE_TIMEOUT_MS = 5000;
const CHROMIUM_EXIT_WAIT_MS = 1000; // for the exit status when Chromium disconnects
const VIEWPORT = { width: 1280, height: 720 };
// Chromium flags: those of every headless Chromium of the testbed (chromium-flags.json, shared
// with metrics/browser.py: software decoding, no network of its own, no first-run UI), plus
// autoplay and the viewport of a playback session.
const CHROMIUM_FLAGS = [
  ...JSON.parse(fs.readFileSync(new URL("./chromium-flags.json", import.meta.url), "utf8")).flags,
  "--autoplay-policy=no-user-gesture-required",
  `--window-size=${VIEWPORT.width},${VIEWPORT.height}`,
];

function usage(message) {
  process.stderr.write(
    `headless.mjs: ${message}\n` +
      "usage: node player/headless.mjs --url <page url> --out <player.jsonl> --t0-ns <int> " +
      "--timeout-s <n> [--screenshot <png>] [--screenshot-at-s <s>] [--chromium <path>]\n",
  );
  process.exit(2);
}

function parseCli(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: "string" },
        out: { type: "string" },
        "t0-ns": { type: "string" },
        "timeout-s": { type: "string" },
        screenshot: { type: "string" },
        "screenshot-at-s": { type: "string" },
        chromium: { type: "string", default: "/usr/bin/chromium" },
      },
      strict: true,
    }));
  } catch (e) {
    usage(e.message);
  }
  for (const name of ["url", "out", "t0-ns", "timeout-s"]) {
    if (values[name] === undefined) usage(`--${name} is required`);
  }
  let url;
  try {
    url = new URL(values.url);
  } catch {
    usage(`--url ${JSON.stringify(values.url)} is not a URL (e.g. http://10.1.2.2:8080/player/index.html?mpd=...)`);
  }
  if (!url.searchParams.get("mpd")) usage(`--url ${values.url}: has no ?mpd= parameter`);
  if (!/^\d+$/.test(values["t0-ns"])) usage(`--t0-ns ${values["t0-ns"]}: must be a non-negative integer (CLOCK_MONOTONIC ns)`);
  const timeoutS = Number(values["timeout-s"]);
  if (!(timeoutS > 0)) usage(`--timeout-s ${values["timeout-s"]}: must be a number of seconds > 0`);
  const shotAt = values["screenshot-at-s"] === undefined ? null : Number(values["screenshot-at-s"]);
  if (shotAt !== null && !(shotAt >= 0)) usage(`--screenshot-at-s ${values["screenshot-at-s"]}: must be >= 0`);
  const outDir = path.dirname(path.resolve(values.out));
  if (!fs.existsSync(outDir)) usage(`--out ${values.out}: folder ${outDir} does not exist`);
  if (!fs.existsSync(values.chromium)) usage(`--chromium ${values.chromium}: not found`);
  return {
    url: url.href,
    mpd: new URL(url.searchParams.get("mpd"), url).href,
    out: path.resolve(values.out),
    t0Ns: BigInt(values["t0-ns"]),
    timeoutS,
    screenshot: values.screenshot ? path.resolve(values.screenshot) : null,
    screenshotAtS: shotAt,
    chromium: values.chromium,
  };
}

class Session {
  constructor(opts) {
    this.opts = opts;
    this.fd = fs.openSync(opts.out, "w");
    this.written = [];
    this.pending = []; // page events received before the clock offset is known
    this.offsetNs = null; // monotonic ns = page ms * 1e6 + offsetNs
    this.startTNs = null;
    this.done = null;
    this.finished = new Promise((resolve) => {
      this.done = resolve;
    });
    this.shotTaken = false;
    this.durationS = null;
  }

  nowTNs() {
    return Number(process.hrtime.bigint() - this.opts.t0Ns);
  }

  write(fields, tNs = this.nowTNs()) {
    const line = { t_ns: tNs, src: SRC, ...fields };
    fs.writeSync(this.fd, JSON.stringify(line) + "\n");
    this.written.push(line);
    return line;
  }

  pageToTNs(pageMs) {
    if (pageMs === null || pageMs === undefined || !Number.isFinite(pageMs)) return null;
    return Math.round(pageMs * 1e6 + this.offsetNs - Number(this.opts.t0Ns));
  }

  async syncClock(page) {
    let best = null;
    for (let i = 0; i < CLOCK_SYNC_ROUNDS; i++) {
      const before = process.hrtime.bigint();
      const pageMs = await page.evaluate(() => performance.now());
      const after = process.hrtime.bigint();
      const rttNs = Number(after - before);
      if (best === null || rttNs < best.rttNs) {
        const midNs = Number(before) + rttNs / 2;
        best = { rttNs, offsetNs: midNs - pageMs * 1e6 };
      }
    }
    this.offsetNs = best.offsetNs;
    this.clockRttNs = best.rttNs;
    for (const ev of this.pending.splice(0)) this.onPageEvent(ev);
  }

  // One event from the page: map its page times to the trial clock, write it.
  onPageEvent(ev) {
    if (this.offsetNs === null) {
      this.pending.push(ev);
      return;
    }
    const { page_ms: pageMs, event, ...rest } = ev;
    const tNs = this.pageToTNs(pageMs);
    switch (event) {
      case "startup":
        this.write({ event, startup_delay_ms: round3((tNs - this.startTNs) / 1e6) }, tNs);
        break;
      case "stall":
      case "decode_stall": {
        const startTNs = this.pageToTNs(rest.start_ms);
        const endTNs = this.pageToTNs(rest.end_ms);
        this.write(
          {
            event,
            start_t_ns: startTNs,
            end_t_ns: endTNs,
            duration_ms: round3(rest.duration_ms),
            media_time_s: round3(rest.media_time_s),
            open: rest.open,
            ...(event === "decode_stall" ? { buffer_s: round3(rest.buffer_s) } : {}),
          },
          endTNs,
        );
        break;
      }
      case "segment": {
        const { request_ms, first_byte_ms, end_ms, index, ...seg } = rest;
        const endTNs = this.pageToTNs(end_ms);
        this.write(
          {
            event,
            ...seg,
            request_t_ns: this.pageToTNs(request_ms),
            first_byte_t_ns: this.pageToTNs(first_byte_ms),
            end_t_ns: endTNs,
            segment_index: index,
          },
          endTNs ?? tNs,
        );
        break;
      }
      case "sample":
        this.write(
          {
            event,
            ...rest,
            media_time_s: round3(rest.media_time_s),
            buffer_s: round3(rest.buffer_s),
          },
          tNs,
        );
        this.maybeScreenshot(rest.media_time_s);
        break;
      case "representations":
        this.durationS = rest.duration_s;
        this.write({ event, ...rest }, tNs);
        break;
      case "quality_switch":
        this.write({ event, ...rest, media_time_s: round3(rest.media_time_s) }, tNs);
        break;
      case "live_seek":
        this.write(
          {
            event,
            from_media_time_s: round3(rest.from_media_time_s),
            to_media_time_s: round3(rest.to_media_time_s),
            skipped_s: round3(rest.skipped_s),
            live_latency_s: round3(rest.live_latency_s),
          },
          tNs,
        );
        break;
      case "playback_rate":
        this.write({ event, rate: rest.rate, live_latency_s: round3(rest.live_latency_s) }, tNs);
        break;
      case "error":
      case "decode_overload":
        this.write({ event, ...rest }, tNs);
        break;
      case "ended":
        this.done("ended");
        break;
      case "fatal":
        this.done("error");
        break;
      default:
        this.write({ event: "error", message: `unknown page event ${JSON.stringify(event)}` }, tNs);
    }
  }

  maybeScreenshot(mediaTimeS) {
    if (!this.opts.screenshot || this.shotTaken || !this.page) return;
    const at = this.opts.screenshotAtS ?? (this.durationS ? this.durationS * (2 / 3) : 5);
    if (mediaTimeS < at) return;
    this.shotTaken = true;
    // The overlay's text goes into the log with the picture, so a test can check the values
    // (read just before the picture; the overlay refreshes every 250 ms).
    let overlay = null;
    this.shot = this.page
      .evaluate(() =>
        Object.fromEntries(
          [...document.querySelectorAll("#overlay td[id]")].map((td) => [td.id, td.textContent]),
        ),
      )
      .then((text) => {
        overlay = text;
        return this.page.screenshot({ path: this.opts.screenshot });
      })
      .then(() => this.write({ event: "screenshot", path: this.opts.screenshot, overlay }))
      .catch((e) => this.write({ event: "error", message: `screenshot failed: ${e.message}` }));
  }

  async run() {
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tbx-chromium-profile-"));
    let browser = null;
    let reason = "error";
    const onSignal = (sig) => {
      this.write({ event: "error", message: `runner received ${sig}` });
      this.done("error");
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    const timer = setTimeout(() => this.done("timeout"), this.opts.timeoutS * 1000);
    try {
      browser = await puppeteer.launch({
        executablePath: this.opts.chromium,
        headless: false, // "--headless" is in CHROMIUM_FLAGS, exactly as documented
        args: CHROMIUM_FLAGS,
        userDataDir,
        defaultViewport: VIEWPORT,
        pipe: true,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      browser.on("disconnected", async () => {
        const how = await chromiumExit(browser);
        this.write({ event: "error", message: `Chromium disconnected (crashed or killed): ${how}` });
        this.done("error");
      });
      const page = await browser.newPage();
      this.page = page;
      page.on("error", (e) => {
        this.write({ event: "error", message: `page crashed: ${e.message}` });
        this.done("error");
      });
      page.on("pageerror", (e) => this.write({ event: "error", message: `page exception: ${e.message}` }));
      page.on("console", (msg) => {
        if (msg.type() === "error" || msg.type() === "warn") {
          process.stderr.write(`page ${msg.type()}: ${msg.text()}\n`);
        }
      });
      await page.exposeFunction("__testbedEmit", (ev) => this.onPageEvent(ev));
      const version = await browser.version();
      this.startTNs = this.nowTNs();
      this.write(
        { event: "start", player: "dashjs", url: this.opts.url, mpd: this.opts.mpd, browser: version },
        this.startTNs,
      );
      const response = await page.goto(this.opts.url, { waitUntil: "domcontentloaded", timeout: this.opts.timeoutS * 1000 });
      if (!response || !response.ok()) {
        throw new Error(`page ${this.opts.url}: HTTP ${response ? response.status() : "no response"}`);
      }
      await this.syncClock(page);
      reason = await this.finished;
      // A stall still open at the end is reported with open: true.
      const open = await page
        .evaluate(() => {
          const now = performance.now();
          const tb = window.__testbed;
          return [tb.stalls.finish(now), tb.decodeStalls.finish(now), tb.player.getBufferLength("video")];
        })
        .catch(() => [null, null, null]);
      if (open[0]) this.onPageEvent({ page_ms: open[0].end_ms, event: "stall", ...open[0] });
      if (open[1]) this.onPageEvent({ page_ms: open[1].end_ms, event: "decode_stall", ...open[1], buffer_s: open[2] });
      if (this.shot) await this.shot;
    } catch (e) {
      // A Chromium that died while the page was being set up shows here as a protocol error
      // ("Target closed"): name the browser's own exit too (docs/ORCHESTRATOR.md, "Faults").
      const exited = browser ? await chromiumExit(browser) : null;
      const gone = exited && exited !== "still running" ? `; Chromium exited with ${exited}` : "";
      this.write({ event: "error", message: e.message + gone });
      reason = "error";
    } finally {
      clearTimeout(timer);
      // Page events that never got a clock offset (the page failed before the sync) are still
      // logged, approximately: the latest of them is taken as "now".
      if (this.offsetNs === null) {
        const lastMs = Math.max(0, ...this.pending.map((ev) => ev.page_ms ?? 0));
        this.offsetNs = Number(process.hrtime.bigint()) - lastMs * 1e6;
        for (const ev of this.pending.splice(0)) this.onPageEvent(ev);
      }
      // The last line says only why the session ended: the summary (start-up, stalls, drops,
      // bitrate) is computed from the events by metrics/player_summary.py, nowhere else.
      // clock_sync_rtt_ns: the round trip of the clock mapping (its error is at most half of it).
      this.write({ event: "end", reason, clock_sync_rtt_ns: this.clockRttNs ?? null });
      fs.closeSync(this.fd);
      if (browser) await closeBrowser(browser);
      fs.rmSync(userDataDir, { recursive: true, force: true });
    }
    return reason;
  }
}

// How Chromium's main process ended ("signal SIGKILL", "status 1", "still running"). The pipe
// closes before Node reaps the process, so wait up to waitMs for its exit status.
async function chromiumExit(browser, waitMs = CHROMIUM_EXIT_WAIT_MS) {
  const proc = browser.process();
  if (!proc) return "exit unknown";
  if (proc.exitCode === null && proc.signalCode === null && waitMs > 0) {
    await Promise.race([
      new Promise((resolve) => proc.once("exit", resolve)),
      new Promise((resolve) => setTimeout(resolve, waitMs)),
    ]);
  }
  if (proc.signalCode) return `signal ${proc.signalCode}`;
  return proc.exitCode !== null ? `status ${proc.exitCode}` : "still running";
}

async function closeBrowser(browser) {
  const proc = browser.process();
  browser.removeAllListeners("disconnected");
  const closed = browser.close().catch(() => {});
  const timedOut = new Promise((resolve) => setTimeout(() => resolve("timeout"), BROWSER_CLOSE_TIMEOUT_MS));
  if ((await Promise.race([closed, timedOut])) === "timeout" && proc && proc.exitCode === null) {
    proc.kill("SIGKILL");
  }
}

function round3(x) {
  return x === null || x === undefined ? x : Math.round(x * 1000) / 1000;
}

const session = new Session(parseCli(process.argv.slice(2)));
const reason = await session.run();
process.exit(reason === "error" ? 1 : 0);
