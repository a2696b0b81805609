"""The stall state machine for the GStreamer player (player/gst_player.py), step for step the
one of the dash.js page (player/web/lib/stall.mjs). Both are run on the same test vectors
(player/test/stall-vectors.json: node --test and tests/test_stall_vectors.py), so the two
players cannot define a stall differently.

A stall is playback waiting for data after it has started; the initial load is not one.

    loading --playing--> playing --waiting--> stalled --playing--> playing
       any --ended--> ended

A stall still open when the video ends is closed there (open: false: playback finished); one
open when the session is cut (timeout, error) is reported with open: true. Times here are
trial-clock nanoseconds; the page uses milliseconds.
"""

from __future__ import annotations


class StallTracker:
    def __init__(self) -> None:
        self.state = "loading"
        self.count = 0
        self.open_start_ns: int | None = None
        self.open_media_s: float | None = None

    @property
    def stalled(self) -> bool:
        return self.state == "stalled"

    def playing(self, t_ns: int) -> dict | None:
        """Playback runs (again). Returns the finished stall record, or None."""
        if self.state == "stalled":
            self.state = "playing"
            return self._close(t_ns, False)
        if self.state == "loading":
            self.state = "playing"
        return None

    def waiting(self, t_ns: int, media_s: float) -> bool:
        """Playback waits for data. Starts a stall only after start-up; repeats are one stall."""
        if self.state != "playing":
            return False
        self.state = "stalled"
        self.open_start_ns, self.open_media_s = t_ns, media_s
        return True

    def ended(self, t_ns: int) -> dict | None:
        """The video ended: a stall still open ends here."""
        stall = self._close(t_ns, False) if self.state == "stalled" else None
        self.state = "ended"
        return stall

    def finish(self, t_ns: int) -> dict | None:
        """The session is cut (timeout, error): an open stall is reported with open: true."""
        return self._close(t_ns, True) if self.state == "stalled" else None

    def _close(self, t_ns: int, is_open: bool) -> dict:
        start = self.open_start_ns if self.open_start_ns is not None else t_ns
        self.count += 1
        stall = {
            "start_t_ns": start,
            "end_t_ns": t_ns,
            "duration_ms": round(max(0, t_ns - start) / 1e6, 3),
            "media_time_s": self.open_media_s,
            "open": is_open,
        }
        self.open_start_ns = self.open_media_s = None
        return stall
