"""Live DASH: a dynamic MPD over the same encoded ladder as the static one.

`python -m server.live_mpd --content <folder> --out live.mpd [--latency-s 4]` writes one.

The content is encoded once (server/content.py) and stays a file set; what makes it live is the
manifest. This module rewrites the static `manifest.mpd` as `type="dynamic"` with
`availabilityStartTime` = the moment the stream "goes on air" (the trial sets it just before the
player starts). With the number-based `SegmentTemplate` (`duration` = one segment), segment N
(first N = 1) covers media time [(N-1) d, N d) and becomes available at
availabilityStartTime + N d, when its last frame has been "recorded"; a player computes the live
edge from the wall clock and requests only available segments, so media becomes available in real
time although nginx has every file from the start (the server does not refuse early requests; the
players never make them). `mediaPresentationDuration` is kept: the event ends with the clip, and
the player sees the end of the stream instead of waiting for a manifest update (there is none:
no `minimumUpdatePeriod`).

The target latency has a floor in segment durations (`MIN_LATENCY_SEGMENTS`, docs/PLAYER.md
"Live mode", "Target latency and segment duration"): a segment is published only once complete,
so at a target of L seconds and segments of d seconds the player has L - d seconds between a
segment's publication and the moment it must play its first frame, to notice it (dash.js polls
every 0.5 s) and download it. With L >= 2 d that budget is at least one segment duration, the
same as a VOD player's in steady state, so a path that carries the chosen rung in real time keeps
up; below it the path must deliver d seconds of media in L - d (2 s in 1 s at the old default
of 3 s: twice the rung's rate), or the player stalls at segment boundaries. The default target
is that floor, 2 d.

`suggestedPresentationDelay` carries the target latency (dash.js uses it as its live delay unless
the page sets one); `timeShiftBufferDepth` is the whole clip, so a player that falls behind can
still fetch what it missed instead of getting 404s (it is the catch-up logic, not the server, that
decides to skip). The client and the server run on one host, one clock: the players take the
wall clock as is (dash.js: `utcSynchronization.enabled = false`); no `UTCTiming` element is
needed, and none points outside the testbed.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from server.content import SEGMENT_S

LIVE_MANIFEST = "live.mpd"
# The target latency's floor in segment durations (module docstring); the default is the floor.
MIN_LATENCY_SEGMENTS = 2
DEFAULT_LATENCY_S = float(MIN_LATENCY_SEGMENTS * SEGMENT_S)


class LiveMpdError(Exception):
    """Bad input (exit status 2): the message names the file or value and what is valid."""


def latency_below_floor(latency_s: float, segment_s: float = SEGMENT_S) -> str | None:
    """A warning when `latency_s` is below MIN_LATENCY_SEGMENTS segment durations, else None.

    A lower target is a legitimate experiment (how a scheduler copes with less than one segment
    of margin), so it is a warning, not an error; a control trial at such a target is expected
    to stall at segment boundaries."""
    floor_s = MIN_LATENCY_SEGMENTS * segment_s
    if latency_s >= floor_s:
        return None
    return (
        f"live latency target {latency_s:g} s is below {MIN_LATENCY_SEGMENTS} segment durations "
        f"({floor_s:g} s with {segment_s:g} s segments): it leaves "
        f"{max(0.0, latency_s - segment_s):g} s between a segment's publication and its play-out, "
        "so the player needs a path faster than the rung's bitrate and stalls at segment "
        "boundaries otherwise (docs/PLAYER.md, 'Live mode')"
    )


def _xs_datetime(unix_s: float) -> str:
    """xs:dateTime in UTC with milliseconds, as DASH-IF IOP writes availabilityStartTime."""
    moment = datetime.fromtimestamp(unix_s, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _xs_duration(seconds: float) -> str:
    return f"PT{seconds:.3f}S"


def dynamic_mpd(static_mpd: str, availability_start_unix_s: float, latency_s: float) -> str:
    """The static MPD's text turned into a dynamic one (only the MPD element's attributes
    change; periods, adaptation sets and templates are kept byte for byte)."""
    if latency_s <= 0:
        raise LiveMpdError(f"latency {latency_s} s: must be > 0 seconds")
    match = re.search(r"<MPD\b[^>]*>", static_mpd)
    if not match:
        raise LiveMpdError("manifest: no <MPD ...> element")
    head = match.group(0)
    if 'type="static"' not in head:
        raise LiveMpdError('manifest: the MPD element has no type="static" (already live?)')
    if "<SegmentTemplate" not in static_mpd or "SegmentTimeline" in static_mpd:
        raise LiveMpdError(
            "manifest: expected number-based SegmentTemplate (duration=, $Number$) as "
            "server/content.py writes; found none or a SegmentTimeline"
        )
    duration = re.search(r'mediaPresentationDuration="([^"]+)"', head)
    if not duration:
        raise LiveMpdError("manifest: the MPD element has no mediaPresentationDuration")
    new_head = head.replace('type="static"', 'type="dynamic"')
    # GStreamer 1.22 cannot typefind the MPD in push mode (souphttpsrc) once the root element
    # grows by more than about 31 bytes: it plays it as application/xml, "no suitable plugins"
    # (reproduced with `gst-launch-1.0 filesrc location=live.mpd ! queue ! typefind !
    # fakesink -v`). The live attributes add ~150 bytes; xsi:schemaLocation, informative only
    # (it points readers at the schema, no player reads it), gives them the room.
    new_head = re.sub(r'\s*xsi:schemaLocation="[^"]*"', "", new_head, count=1)
    extra = (
        f'availabilityStartTime="{_xs_datetime(availability_start_unix_s)}" '
        f'publishTime="{_xs_datetime(time.time())}" '
        f'timeShiftBufferDepth="{duration.group(1)}" '
        f'suggestedPresentationDelay="{_xs_duration(latency_s)}"'
    )
    new_head = new_head.replace("<MPD", "<MPD " + extra, 1)
    return static_mpd.replace(head, new_head, 1)


def write_live_mpd(
    content_dir: Path, out: Path, availability_start_unix_s: float, latency_s: float
) -> Path:
    static = Path(content_dir) / "manifest.mpd"
    try:
        text = static.read_text()
    except OSError as e:
        raise LiveMpdError(
            f"{static}: cannot read ({e.strerror}); prepare the content first"
        ) from None
    try:
        live = dynamic_mpd(text, availability_start_unix_s, latency_s)
    except LiveMpdError as e:
        raise LiveMpdError(f"{static}: {e}") from None
    out = Path(out)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(live)
    tmp.replace(out)  # a player fetching it never sees half a file
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--content", type=Path, required=True, help="content folder")
    parser.add_argument("--out", type=Path, required=True, help="the dynamic MPD to write")
    parser.add_argument("--latency-s", type=float, default=DEFAULT_LATENCY_S)
    parser.add_argument(
        "--start-unix-s", type=float, default=None, help="availability start (default now)"
    )
    args = parser.parse_args(argv)
    try:
        write_live_mpd(args.content, args.out, args.start_unix_s or time.time(), args.latency_s)
    except LiveMpdError as e:
        print(f"live_mpd: {e}", file=sys.stderr)
        return 2
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
