"""Every transport and player the testbed knows, one entry each: the spec (testbed/spec.py),
the command line (testbed/cli.py), the trial runner (testbed/trial.py, testbed/players.py)
and the transport plug-ins (testbed/transports/) all read these tables, so a name, a default
or a command line is written once.

Adding a transport: one plug-in module (testbed/transports/<name>.py with preflight, start,
finish) and one `Transport` line below. Adding a player: one `Player` line with its argv
builder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from server.live_mpd import LIVE_MANIFEST
from server.nginx import url_path


@dataclass(frozen=True)
class Transport:
    name: str
    carries: str  # what it carries, for --list and --help
    module: str  # plug-in module: preflight(spec, caps), start(ctx), finish(ctx)
    video: bool  # True: a player streams over it; False: the control transfer runs instead
    default_cc: str | None  # None: the transport has no congestion control to choose
    default_sched: str | None  # None: no scheduler to choose
    in_all: bool = True  # part of `--transport all`
    # Takes --cc-opt/--sched-opt (options of its own CC and scheduler implementations).
    algorithm_options: bool = False


TRANSPORTS: dict[str, Transport] = {
    t.name: t
    for t in (
        Transport(
            "user", "video over the user-space MPTCP (mpproxy), both paths",
            "testbed.transports.user", True, "cubic", "lrf", algorithm_options=True,
        ),
        Transport(
            "kernel", "video over the kernel's MPTCP, both paths",
            "testbed.transports.kernel", True, "cubic", "default",
        ),
        Transport(
            "tcp-wifi", "video over plain TCP on the Wi-Fi path only",
            "testbed.transports.tcp", True, "cubic", None,
        ),
        Transport(
            "tcp-lte", "video over plain TCP on the LTE path only",
            "testbed.transports.tcp", True, "cubic", None,
        ),
        Transport(
            "none", "no video: a timed transfer and RTT echoes across each path (control)",
            "testbed.transports.none", False, None, None, in_all=False,
        ),
    )
}  # fmt: skip


@dataclass(frozen=True)
class PlayerLaunch:
    """What a player's command line is built from."""

    repo: Path
    host: str
    port: int
    content_dir: Path
    out: Path  # player.jsonl
    t0_ns: int
    timeout_s: int
    live_latency_s: float | None = None  # live mode (server/live_mpd.py), both players

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"


def dashjs_argv(launch: PlayerLaunch) -> list[str]:
    return [
        "node", str(launch.repo / "player" / "headless.mjs"),
        "--url", launch.base_url + url_path(launch.content_dir, launch.live_latency_s),
        "--out", str(launch.out), "--t0-ns", str(launch.t0_ns),
        "--timeout-s", str(launch.timeout_s),
    ]  # fmt: skip


def gstreamer_argv(launch: PlayerLaunch) -> list[str]:
    manifest = "manifest.mpd" if launch.live_latency_s is None else LIVE_MANIFEST
    mpd_path = f"/content/{Path(launch.content_dir).name}/{manifest}"
    live = (
        [] if launch.live_latency_s is None else ["--live-latency-s", f"{launch.live_latency_s:g}"]
    )
    return [
        "/usr/bin/python3", str(launch.repo / "player" / "gst_player.py"),
        "--mpd", launch.base_url + mpd_path,
        "--out", str(launch.out), "--t0-ns", str(launch.t0_ns),
        "--timeout-s", str(launch.timeout_s), *live,
    ]  # fmt: skip


@dataclass(frozen=True)
class Player:
    name: str
    carries: str  # what it is, for --list and --help
    argv: Callable[[PlayerLaunch], list[str]]
    in_all: bool = True  # part of `--player all`


PLAYERS: dict[str, Player] = {
    p.name: p
    for p in (
        Player("dashjs", "dash.js in headless Chromium (player/headless.mjs)", dashjs_argv),
        Player("gstreamer", "GStreamer playbin, no browser (player/gst_player.py)", gstreamer_argv),
    )
}
DEFAULT_PLAYER = "dashjs"
# On the command line and in trial ids, the absence of a player (None in a spec) is `none`.
NO_PLAYER_NAME = "none"
# In trial ids, a CC or scheduler that does not apply (None in a spec) is `-`.
NOT_APPLICABLE_ID = "-"


def transport(name: str) -> Transport:
    """The entry of a transport name; ValueError naming the valid ones."""
    try:
        return TRANSPORTS[name]
    except KeyError:
        raise ValueError(f"unknown transport {name!r}; valid: {', '.join(TRANSPORTS)}") from None


def player(name: str) -> Player:
    """The entry of a player name; ValueError naming the valid ones."""
    try:
        return PLAYERS[name]
    except KeyError:
        raise ValueError(f"unknown player {name!r}; valid: {', '.join(PLAYERS)}") from None
