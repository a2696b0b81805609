#!/usr/bin/python3
"""GStreamer player session: the same DASH session as the browser, without a browser.

    /usr/bin/python3 player/gst_player.py --mpd <url> --out <player.jsonl> --t0-ns <int> \
        --timeout-s <n> [--live-latency-s S]

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
* live mode (`--live-latency-s`, a dynamic MPD from server/live_mpd.py): dashdemux2's
  `presentation-delay` is the target, so it starts that far behind the live edge; every sample
  carries `live_latency_s` = wall clock - (MPD@availabilityStartTime + position), as dash.js's
  getCurrentLiveLatency() does. dashdemux2 has no catch-up of its own (GStreamer 1.22: no
  property for it), so this player does what dash.js does with `maxDrift`: once the latency is
  more than LIVE_MAX_DRIFT_S above the target, it seeks (flushing, accurate) to the target
  behind the live edge and logs `live_seek` with the media time skipped. There is no
  playback-rate catch-up (no `playback_rate` lines): the rate stays 1.

Exit status: 0 session ran (ended or timeout), 1 failed (pipeline error), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402
from stall import StallTracker  # noqa: E402 (player/stall.py, beside this script)

SRC = "player-gst"
SAMPLE_INTERVAL_MS = 250
SINK_MAX_LATENESS_NS = 20_000_000  # what GstVideoSink uses: later than 20 ms = dropped
HEALTHY_BUFFER_S = 1.0  # as player/web/lib/overload.mjs
MPD_NS = "{urn:mpeg:dash:schema:mpd:2011}"
# Live catch-up, as the dash.js page's settings (player/web/player.mjs LIVE_MAX_DRIFT_S): more
# than this above the target latency, jump to the target.
LIVE_MAX_DRIFT_S = 1.5
# After a catch-up seek, no other one until this much wall time has passed: the seek's own
# flush and re-buffering raise the latency for a moment.
LIVE_SEEK_COOLDOWN_S = 4.0
# The live session has ended once every segment was downloaded and the position is this close
# to the event's end (3 frames at 30 fps; with the last frame on screen GStreamer 1.22 reported
# 19.933 s of a 20 s event), or has not moved for LIVE_END_STUCK_SAMPLES samples in the last
# segment.
LIVE_END_MARGIN_S = 0.1
LIVE_END_STUCK_SAMPLES = 4
# At start-up dashdemux2 begins at the start of the segment holding (live edge - delay), up to a
# segment earlier than the target: more than this above the target at the first frame, the
# player seeks to the target, as dash.js starts there itself. Nothing was watched yet, so this
# is the start position, not a skip (no live_seek line).
LIVE_START_TOLERANCE_S = 0.5
DASH_DEMUXERS = ("dashdemux2", "dashdemux")


def parse_xs_datetime_unix_s(text: str | None) -> float | None:
    """MPD@availabilityStartTime (xs:dateTime, UTC 'Z' or an offset) -> Unix seconds."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


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
        "dynamic": root.get("type") == "dynamic",
        "availability_start_unix_s": parse_xs_datetime_unix_s(root.get("availabilityStartTime")),
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
        self.live_latency_s: float | None = getattr(args, "live_latency_s", None)
        self.last_live_seek_wall_s = -math.inf
        self.live_start_checked = False
        self.end_position_s: float | None = None
        self.end_position_samples = 0

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
        if self.live_latency_s is not None:
            self.playbin.connect("element-setup", self.on_element_setup)
        bus = self.playbin.get_bus()
        bus.add_signal_watch()
        bus.connect("message", self.on_message)
        return self.playbin

    def on_element_setup(self, _playbin: Gst.Element, element: Gst.Element) -> None:
        """Live mode: the DASH demuxer starts `presentation-delay` behind the live edge (its
        default is 10 s); the target latency goes there, in milliseconds."""
        factory = element.get_factory()
        if factory is not None and factory.get_name() in DASH_DEMUXERS:
            element.set_property("presentation-delay", f"{round(self.live_latency_s * 1000)}ms")

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
        if percent < 100 and self.live_event_downloaded():
            return  # nothing more will come: play out what is queued (see live_event_downloaded)
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
        latency = self.live_latency(pos)
        # Live: catch up before the sample is written, so that the sample which triggers the
        # start-position seek does not count as played at the start position's latency.
        repositioning = latency is not None and not final and self.catch_up(pos, latency)
        self.write(
            {
                "event": "sample",
                "media_time_s": round(pos, 3),
                "buffer_s": round(buffer_s, 3),
                "dropped_frames": dropped,
                "total_frames": self.rendered + dropped,
                **(
                    {"live_latency_s": latency, "playback_rate": 1.0}
                    if self.live_latency_s is not None
                    else {}
                ),
                "rep_id": rep.get("rep_id"),
                "bitrate_bps": rep.get("bitrate_bps"),
                "width": rep.get("width"),
                "height": rep.get("height"),
                "playing": self.first_frame
                and not stalled
                and not self.buffering
                and not repositioning,
            }
        )
        if not final and self.end_of_live_event(pos):
            self.stop("ended")
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

    # --- live ----------------------------------------------------------------------------

    def live_latency(self, position_s: float) -> float | None:
        """Seconds behind the live edge: wall clock - (availabilityStartTime + position), as
        dash.js's getCurrentLiveLatency() (client and server share the host's clock); None in
        VOD mode or before the first frame."""
        start = self.mpd.get("availability_start_unix_s")
        if self.live_latency_s is None or start is None or not self.first_frame:
            return None
        return round(time.time() - start - position_s, 3)

    def live_event_downloaded(self) -> bool:
        """Live mode: every segment of the event downloaded. dashdemux2 (1.22) never ends a
        dynamic MPD by itself: after the last segment it waits for a manifest update, although
        an MPD without minimumUpdatePeriod is never updated (ISO/IEC 23009-1) and this one
        ends at mediaPresentationDuration. So no EOS comes, the queues drain, and buffering
        falls below 100 % for good: the picture froze at media 17.8 s of 20 with 2.2 s
        queued until the timeout. From here on buffering messages are ignored, and the session
        ends when the position reaches the end (end_of_live_event)."""
        duration_s = self.mpd.get("duration_s")
        return (
            self.live_latency_s is not None
            and duration_s is not None
            and self.downloaded_end_s >= duration_s - 1e-3
        )

    def end_of_live_event(self, position_s: float) -> bool:
        """The last frame is on screen (within LIVE_END_MARGIN_S of the end) and everything
        was downloaded: the session ends as `ended`, as EOS would end it."""
        if not self.live_event_downloaded():
            return False
        if self.buffering:  # paused for buffering before the last segment came: resume
            self.on_buffering(100)
        duration_s = self.mpd["duration_s"]
        if position_s >= duration_s - LIVE_END_MARGIN_S:
            return True
        in_last_segment = position_s >= duration_s - (self.mpd["segment_s"] or 2.0)
        if in_last_segment and position_s == self.end_position_s:
            self.end_position_samples += 1
        else:
            self.end_position_s, self.end_position_samples = position_s, 0
        return self.end_position_samples >= LIVE_END_STUCK_SAMPLES

    def catch_up(self, position_s: float, latency_s: float) -> bool:
        """dash.js's maxDrift rule: more than LIVE_MAX_DRIFT_S behind the target, seek to the
        target behind the live edge (never past the end of the event); the media in between is
        skipped, logged as `live_seek`. At the first frame, the start position (no line).
        True when it moved to the start position."""
        if self.live_latency_s is None or self.reason is not None:
            return False
        if not self.live_start_checked:
            self.live_start_checked = True
            if latency_s > self.live_latency_s + LIVE_START_TOLERANCE_S:
                target_s = position_s + latency_s - self.live_latency_s
                flags = Gst.SeekFlags.FLUSH | Gst.SeekFlags.ACCURATE
                self.playbin.seek_simple(Gst.Format.TIME, flags, int(target_s * 1e9))
                self.last_live_seek_wall_s = time.monotonic()
                return True
            return False
        self.catch_up_drift(position_s, latency_s)
        return False

    def catch_up_drift(self, position_s: float, latency_s: float) -> None:
        """The maxDrift seek itself (see catch_up)."""
        if latency_s <= self.live_latency_s + LIVE_MAX_DRIFT_S:
            return
        duration_s = self.mpd.get("duration_s")
        if duration_s is not None and position_s + latency_s >= duration_s:
            # The event is over (every segment published): no live edge left to chase; the
            # latency grows with the wall clock from here (as on the dash.js page).
            return
        if time.monotonic() - self.last_live_seek_wall_s < LIVE_SEEK_COOLDOWN_S:
            return
        target_s = position_s + latency_s - self.live_latency_s
        if duration_s is not None:
            target_s = min(target_s, duration_s - (self.mpd["segment_s"] or 2.0))
        if target_s <= position_s + 0.1:
            return  # at the end of the event: nothing left to skip to
        self.last_live_seek_wall_s = time.monotonic()
        flags = Gst.SeekFlags.FLUSH | Gst.SeekFlags.ACCURATE
        if not self.playbin.seek_simple(Gst.Format.TIME, flags, int(target_s * 1e9)):
            self.write(
                {"event": "error", "message": f"live catch-up seek to {target_s:.3f} s refused"}
            )
            return
        self.write(
            {
                "event": "live_seek",
                "from_media_time_s": round(position_s, 3),
                "to_media_time_s": round(target_s, 3),
                "skipped_s": round(target_s - position_s, 3),
                "live_latency_s": latency_s,
            }
        )

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
            if self.live_latency_s is not None and not (
                self.mpd["dynamic"] and self.mpd["availability_start_unix_s"] is not None
            ):
                raise ValueError(
                    "--live-latency-s needs a dynamic MPD with availabilityStartTime "
                    "(server/live_mpd.py); this one is static or has none"
                )
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
    parser.add_argument(
        "--live-latency-s",
        type=float,
        default=None,
        help="live mode (dynamic MPD): target latency to the live edge in seconds",
    )
    args = parser.parse_args(argv)
    if not re.match(r"^https?://", args.mpd):
        parser.error(f"--mpd {args.mpd!r}: must be an http:// or https:// URL of an MPD")
    if args.t0_ns < 0:
        parser.error(f"--t0-ns {args.t0_ns}: must be >= 0")
    if not args.timeout_s > 0:
        parser.error(f"--timeout-s {args.timeout_s}: must be > 0")
    if args.live_latency_s is not None and not args.live_latency_s > 0:
        parser.error(f"--live-latency-s {args.live_latency_s}: must be a number of seconds > 0")
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
