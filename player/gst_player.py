#!/usr/bin/python3
"""GStreamer player session: the same DASH session as the browser, without a browser.

    /usr/bin/python3 player/gst_player.py --mpd <url> --out <player.jsonl> --t0-ns <int> \
        --timeout-s <n>

Runs with Debian's python3 (it has `gi`). playbin (dashdemux2 + decodebin) decodes the video
into a clock-synchronised fakesink (sync=true, qos=true, max-lateness 20 ms like a video sink):
a frame the machine decodes too late is dropped and reported in a QoS message, as a real
display would drop it. Writes player.jsonl (CONTRACTS.md §5.4, src player-gst) with the same
events as the headless runner:

* stall: a BUFFERING message below 100 % once the first segment has played (the pipeline is
  paused until 100 %, the usual GStreamer buffering protocol); buffering before that is the
  initial load, not a stall.
* dropped_frames: the QoS "dropped" counters of the sink and the decoder (cumulative);
  total_frames = frames shown + dropped.
* segment: from the demuxer's adaptive-streaming-statistics messages, whose times come from
  gst_util_get_timestamp (CLOCK_MONOTONIC, the trial clock's base).
* what is on screen: width/height of the caps of the buffers the sink renders; the
  representation is the MPD's Representation with that size.
* no decode_stall events: a GStreamer buffering message does not tell a decoder wait from a
  network wait, so the summary's decode_stalls read 0 for this player by definition.
* the last line is `end` with the reason (ended, timeout, error); the summary is computed by
  metrics/player_summary.py from these events.
* buffer_s: media time downloaded ahead of the position (segment numbers of the
  $Number$ template x segment duration, both read from the MPD).

Exit status: 0 session ran (ended or timeout), 1 failed (pipeline error), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402
from stall import StallTracker  # noqa: E402 (player/stall.py, beside this script)

SRC = "player-gst"
SAMPLE_INTERVAL_MS = 250
SINK_MAX_LATENESS_NS = 20_000_000  # what GstVideoSink uses: later than 20 ms = dropped
HEALTHY_BUFFER_S = 1.0  # as player/web/lib/overload.mjs
MPD_NS = "{urn:mpeg:dash:schema:mpd:2011}"


def parse_duration_s(text: str | None) -> float | None:
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", text or "")
    if not m:
        return None
    h, mi, s = m.groups()
    return int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0)


def read_mpd(url: str) -> dict:
    """Representations (id, bandwidth, size) and the segment template of the MPD."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        root = ET.fromstring(resp.read())
    reps = []
    segment_s = None
    media_template = None
    for rep in root.iter(f"{MPD_NS}Representation"):
        reps.append(
            {
                "rep_id": rep.get("id"),
                "bitrate_bps": int(rep.get("bandwidth", 0)),
                "width": int(rep.get("width", 0)),
                "height": int(rep.get("height", 0)),
            }
        )
        tmpl = rep.find(f"{MPD_NS}SegmentTemplate")
        if tmpl is not None and tmpl.get("duration"):
            segment_s = int(tmpl.get("duration")) / int(tmpl.get("timescale", 1))
            media_template = tmpl.get("media")
    return {
        "reps": reps,
        "segment_s": segment_s,
        "media_template": media_template,
        "duration_s": parse_duration_s(root.get("mediaPresentationDuration")),
    }


class Session:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.t0_ns = args.t0_ns
        self.out = open(args.out, "w")
        self.mpd: dict = {"reps": [], "segment_s": None, "media_template": None, "duration_s": None}
        self.stalls = StallTracker()
        self.start_t_ns = 0
        self.first_frame = False
        self.rendered = 0
        self.dropped_by_element: dict[str, int] = {}
        self.on_screen: dict | None = None
        self.caps_size: tuple[int, int] | None = None
        self.downloaded_end_s = 0.0
        self.fragment_bytes_total = 0
        self.buffering = False
        self.last_dropped = None
        self.reason: str | None = None

    def now_t_ns(self) -> int:
        return time.monotonic_ns() - self.t0_ns

    def write(self, fields: dict, t_ns: int | None = None) -> None:
        line = {"t_ns": self.now_t_ns() if t_ns is None else t_ns, "src": SRC, **fields}
        self.out.write(json.dumps(line) + "\n")
        self.out.flush()

    # --- pipeline ------------------------------------------------------------------------

    def build(self) -> Gst.Element:
        self.playbin = Gst.ElementFactory.make("playbin", "player")
        if self.playbin is None:
            raise RuntimeError("GStreamer playbin not available (gstreamer1.0-plugins-base)")
        sink = Gst.ElementFactory.make("fakesink", "videosink")
        sink.set_property("sync", True)
        sink.set_property("qos", True)
        sink.set_property("max-lateness", SINK_MAX_LATENESS_NS)
        sink.set_property("signal-handoffs", True)
        sink.connect("handoff", self.on_handoff)
        self.sink = sink
        self.playbin.set_property("video-sink", sink)
        self.playbin.set_property("audio-sink", Gst.ElementFactory.make("fakesink", "audiosink"))
        flags = self.playbin.get_property("flags")
        flags &= ~(1 << 2)  # no subtitles
        self.playbin.set_property("flags", flags)
        self.playbin.set_property("uri", self.args.mpd)
        bus = self.playbin.get_bus()
        bus.add_signal_watch()
        bus.connect("message", self.on_message)
        return self.playbin

    def on_handoff(self, _sink: Gst.Element, _buffer: Gst.Buffer, pad: Gst.Pad) -> None:
        # Streaming thread: keep it short; sizes are read from the caps actually rendered.
        self.rendered += 1
        caps = pad.get_current_caps()
        if caps is not None:
            s = caps.get_structure(0)
            ok_w, w = s.get_int("width")
            ok_h, h = s.get_int("height")
            if ok_w and ok_h:
                self.caps_size = (w, h)
        if not self.first_frame:
            self.first_frame = True
            t_ns = self.now_t_ns()
            GLib.idle_add(self.on_first_frame, t_ns)

    def on_first_frame(self, t_ns: int) -> bool:
        self.write(
            {"event": "startup", "startup_delay_ms": round((t_ns - self.start_t_ns) / 1e6, 3)}, t_ns
        )
        self.stalls.playing(t_ns)
        return False

    def on_message(self, _bus: Gst.Bus, msg: Gst.Message) -> None:
        t = msg.type
        if t == Gst.MessageType.EOS:
            self.stop("ended")
        elif t == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            self.write(
                {"event": "error", "message": f"{msg.src.get_name()}: {err.message} ({debug})"}
            )
            self.stop("error")
        elif t == Gst.MessageType.WARNING:
            err, _ = msg.parse_warning()
            print(f"gst warning from {msg.src.get_name()}: {err.message}", file=sys.stderr)
        elif t == Gst.MessageType.BUFFERING:
            self.on_buffering(msg.parse_buffering())
        elif t == Gst.MessageType.QOS:
            _fmt, processed, dropped = msg.parse_qos_stats()
            # Counters are cumulative per element; the sink and the decoder each report theirs.
            name = msg.src.get_path_string()
            before = self.dropped_by_element.get(name, 0)
            self.dropped_by_element[name] = max(before, int(dropped))
            if int(dropped) > before:
                self.on_qos_drop(msg, name, int(processed), int(dropped))
        elif t == Gst.MessageType.ELEMENT:
            s = msg.get_structure()
            if s is not None and s.get_name() == "adaptive-streaming-statistics":
                self.on_fragment(s)

    def on_qos_drop(self, msg: Gst.Message, element: str, processed: int, dropped: int) -> None:
        """A `qos` line per QoS message that dropped a buffer, with its reason, the evidence
        metrics/drops.py needs to call a drop decoder-side. GStreamer posts QoS messages only
        for buffers dropped because they were late for the clock: at the sink (rendered too
        late: `late-at-sink`) or in the decoder, which skips decoding when upstream QoS says
        it runs late (`decoder-skip`)."""
        _live, _running, _stream, _timestamp, _duration = msg.parse_qos()
        jitter_ns, proportion, _quality = msg.parse_qos_values()
        is_sink = "sink" in element.rsplit("/", 1)[-1]
        self.write(
            {
                "event": "qos",
                "element": element,
                "reason": "late-at-sink" if is_sink else "decoder-skip",
                "dropped": dropped,
                "processed": processed,
                "jitter_ns": int(jitter_ns),
                "proportion": float(proportion),
            }
        )

    def on_buffering(self, percent: int) -> None:
        t_ns = self.now_t_ns()
        if percent < 100 and not self.buffering:
            self.buffering = True
            self.playbin.set_state(Gst.State.PAUSED)
            position_s = self.position_s()
            # The initial load lasts until the first segment has played: GStreamer's first
            # buffering cycle can end with part of it queued and start again at once (seen at
            # media 0.08 s on an unimpaired path while the demuxer switched up), which is
            # start-up, not a stall (CONTRACTS §5.4).
            if self.first_frame and position_s >= (self.mpd["segment_s"] or 2.0):
                self.stalls.waiting(t_ns, position_s)
        elif percent >= 100 and self.buffering:
            self.buffering = False
            self.playbin.set_state(Gst.State.PLAYING)
            stall = self.stalls.playing(t_ns) if self.first_frame else None
            if stall:
                self.write({"event": "stall", **stall}, t_ns)

    def on_fragment(self, s: Gst.Structure) -> None:
        """One downloaded media segment. GStreamer 1.22's dashdemux2 reports fragment-size
        cumulatively per stream (init segments included, never reported on their own) and
        fragment-start-time in microseconds; so bytes = the difference of consecutive sizes,
        and the request time = fragment-stop-time (monotonic ns) - fragment-download-time."""
        uri = s.get_string("uri") or ""
        ok_stop, stop_ns = s.get_uint64("fragment-stop-time")
        ok_size, size = s.get_uint64("fragment-size")
        ok_dl, download_ns = s.get_uint64("fragment-download-time")
        if not (ok_stop and ok_size):
            return  # the manifest's own statistics message
        bytes_ = (
            int(size) - self.fragment_bytes_total
            if size >= self.fragment_bytes_total
            else int(size)
        )
        self.fragment_bytes_total = int(size)
        rep_id, index = self.segment_of(uri)
        if index is not None and self.mpd["segment_s"]:
            self.downloaded_end_s = max(self.downloaded_end_s, index * self.mpd["segment_s"])
        stop_t = stop_ns - self.t0_ns
        self.write(
            {
                "event": "segment",
                "url": uri,
                "rep_id": rep_id,
                "media_type": "video",
                "bytes": bytes_,
                "request_t_ns": stop_t - download_ns if ok_dl else None,
                # adaptive-streaming-statistics has no first-byte time
                "first_byte_t_ns": None,
                "end_t_ns": stop_t,
                "throughput_bps": round(bytes_ * 8e9 / download_ns)
                if ok_dl and download_ns
                else None,
                "segment_index": index,
            },
            stop_t,
        )

    def segment_of(self, uri: str) -> tuple[str | None, int | None]:
        """Representation id and segment number from the MPD's media template."""
        tmpl = self.mpd["media_template"]
        name = uri.rsplit("/", 1)[-1]
        if tmpl:
            pattern = re.escape(tmpl)
            pattern = pattern.replace(re.escape("$RepresentationID$"), r"(?P<rep>[^/]+?)")
            pattern = re.sub(r"\\\$Number(%0\d+d)?\\\$", r"(?P<num>\\d+)", pattern)
            m = re.fullmatch(pattern, name)
            if m:
                return m.group("rep"), int(m.group("num"))
        m = re.fullmatch(r"init-(.+)\.m4s", name)
        return (m.group(1) if m else None), None

    # --- samples ---------------------------------------------------------------------------

    def position_s(self) -> float:
        ok, pos = self.playbin.query_position(Gst.Format.TIME)
        return pos / 1e9 if ok and pos >= 0 else 0.0

    def dropped_total(self) -> int:
        return sum(self.dropped_by_element.values())

    def sample(self, final: bool = False) -> bool:
        if self.reason is not None and not final:
            return False
        pos = self.position_s()
        dropped = self.dropped_total()
        buffer_s = max(0.0, self.downloaded_end_s - pos)
        if self.caps_size and (
            not self.on_screen
            or self.caps_size != (self.on_screen["width"], self.on_screen["height"])
        ):
            rep = next(
                (r for r in self.mpd["reps"] if (r["width"], r["height"]) == self.caps_size),
                {
                    "rep_id": None,
                    "bitrate_bps": None,
                    "width": self.caps_size[0],
                    "height": self.caps_size[1],
                },
            )
            if self.on_screen:
                self.write(
                    {
                        "event": "quality_switch",
                        "from_rep": self.on_screen["rep_id"],
                        "to_rep": rep["rep_id"],
                        "bitrate_bps": rep["bitrate_bps"],
                        "width": rep["width"],
                        "height": rep["height"],
                        "media_time_s": round(pos, 3),
                    }
                )
            self.on_screen = rep
        rep = self.on_screen or {}
        stalled = self.stalls.stalled
        self.write(
            {
                "event": "sample",
                "media_time_s": round(pos, 3),
                "buffer_s": round(buffer_s, 3),
                "dropped_frames": dropped,
                "total_frames": self.rendered + dropped,
                "rep_id": rep.get("rep_id"),
                "bitrate_bps": rep.get("bitrate_bps"),
                "width": rep.get("width"),
                "height": rep.get("height"),
                "playing": self.first_frame and not stalled and not self.buffering,
            }
        )
        # Frames dropped with a healthy buffer: the machine, not the network (overload.mjs).
        if self.last_dropped is not None and dropped > self.last_dropped:
            if not stalled and buffer_s >= HEALTHY_BUFFER_S:
                self.write(
                    {
                        "event": "decode_overload",
                        "dropped_frames": dropped - self.last_dropped,
                        "buffer_s": round(buffer_s, 3),
                    }
                )
        self.last_dropped = dropped
        return True

    # --- lifecycle -------------------------------------------------------------------------

    def stop(self, reason: str) -> bool:
        if self.reason is None:
            self.reason = reason
            self.loop.quit()
        return False

    def write_start(self, **extra: str) -> None:
        """The `start` line; the session's clock starts with it."""
        self.start_t_ns = self.now_t_ns()
        start = {
            "event": "start",
            "player": "gstreamer",
            "url": self.args.mpd,
            "mpd": self.args.mpd,
        }
        self.write({**start, **extra}, self.start_t_ns)

    def run(self) -> str:
        self.loop = GLib.MainLoop()
        try:
            self.mpd = read_mpd(self.args.mpd)
        except Exception as e:  # noqa: BLE001 - any failure to fetch/parse is a session error
            self.write_start()
            self.write({"event": "error", "message": f"MPD {self.args.mpd}: {e}"})
            self.reason = "error"
            self.finish()
            return "error"
        self.build()
        self.write_start(gstreamer=Gst.version_string())
        self.write(
            {
                "event": "representations",
                "reps": self.mpd["reps"],
                "duration_s": self.mpd["duration_s"],
            }
        )
        GLib.timeout_add(SAMPLE_INTERVAL_MS, self.sample)
        GLib.timeout_add(int(self.args.timeout_s * 1000), self.stop, "timeout")
        for sig in (signal.SIGTERM, signal.SIGINT):
            GLib.unix_signal_add(GLib.PRIORITY_HIGH, sig, self.on_signal, sig)
        if self.playbin.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
            self.write({"event": "error", "message": "pipeline refused to start (PLAYING failed)"})
            self.reason = "error"
        else:
            self.loop.run()
        self.finish()
        return self.reason or "error"

    def on_signal(self, sig: int) -> bool:
        self.write({"event": "error", "message": f"player received signal {sig}"})
        return self.stop("error")

    def finish(self) -> None:
        if getattr(self, "playbin", None) is not None:
            if self.reason == "ended":
                self.sample(final=True)  # the final counters, after EOS
            # At EOS an open stall ends with the video (as on the dash.js page); a cut session
            # reports it open.
            now = self.now_t_ns()
            stall = self.stalls.ended(now) if self.reason == "ended" else self.stalls.finish(now)
            if stall:
                self.write({"event": "stall", **stall})
            self.playbin.set_state(Gst.State.NULL)
        # Events only: the summary is computed by metrics/player_summary.py.
        self.write({"event": "end", "reason": self.reason or "error"})
        self.out.close()


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="GStreamer DASH player session -> player.jsonl")
    parser.add_argument("--mpd", required=True, help="http URL of manifest.mpd")
    parser.add_argument("--out", required=True, help="player.jsonl to write")
    parser.add_argument(
        "--t0-ns", type=int, required=True, help="trial clock origin (CLOCK_MONOTONIC ns)"
    )
    parser.add_argument("--timeout-s", type=float, required=True, help="end the session after this")
    args = parser.parse_args(argv)
    if not re.match(r"^https?://", args.mpd):
        parser.error(f"--mpd {args.mpd!r}: must be an http:// or https:// URL of an MPD")
    if args.t0_ns < 0:
        parser.error(f"--t0-ns {args.t0_ns}: must be >= 0")
    if not args.timeout_s > 0:
        parser.error(f"--timeout-s {args.timeout_s}: must be > 0")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        parser.error(f"--out {args.out}: folder {out_dir} does not exist")
    return args


def main() -> int:
    args = parse_args(sys.argv[1:])
    Gst.init(None)
    reason = Session(args).run()
    return 1 if reason == "error" else 0


if __name__ == "__main__":
    sys.exit(main())
