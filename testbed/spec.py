"""What one trial is: the spec (CONTRACTS §7) and its stable, filesystem-safe trial id.

The trial id is a pure function of the spec's fields, so re-running the same command
finds the same folders and resumes. It is readable on purpose
(`A1__user__bbr__lrf__dashjs__v60__r0__s1`) so that `ls results/<run>/trials/` is a table
of contents.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from server.live_mpd import DEFAULT_LATENCY_S
from testbed.registry import NO_PLAYER_NAME, NOT_APPLICABLE_ID, PLAYERS, TRANSPORTS

# Values older trial.json files used where a spec now has None.
_LEGACY_NONE = {"cc": NOT_APPLICABLE_ID, "sched": NOT_APPLICABLE_ID, "player": NO_PLAYER_NAME}

# Characters kept as they are in an id part; anything else becomes "-".
_SAFE_PART = re.compile(r"[^A-Za-z0-9.+=-]")
_ID_SEPARATOR = "__"


def _id_part(value: str) -> str:
    """One field of the id: safe characters only, never empty, never the separator."""
    part = _SAFE_PART.sub("-", value).strip(".")
    return part or "x"


def scenario_label(scenario: str) -> str:
    """Short name of a scenario for ids and tables.

    A bare name (`A1`) stays as it is. A path (`netem-scenarios/A1.toml`,
    `/tmp/x/A1.toml`) becomes its stem plus a 6-hex hash of the path as given, so two
    different files with the same stem never share a trial folder.
    """
    if "/" in scenario or scenario.endswith((".toml", ".yaml", ".yml", ".json")):
        digest = hashlib.sha256(scenario.encode()).hexdigest()[:6]
        return f"{_id_part(Path(scenario).stem)}-{digest}"
    return _id_part(scenario)


OPTIONAL_FIELDS = {
    "video_mode", "live_latency_s", "cc_opts", "sched_opts", "ladder", "recv_window_bytes",
}  # fmt: skip
VIDEO_MODES = ("vod", "live")
# The content ladder a trial plays (server/content.py LADDERS); the default is the 4-rung one.
DEFAULT_LADDER_NAME = "720p"
# The smallest fixed receive window mpproxy and mpsim take (transport/core/src/connection/mod.rs,
# MIN_RECV_WINDOW_BYTES); a smaller --recv-window-bytes would be raised to it silently.
MIN_RECV_WINDOW_BYTES = 64 * 1024


@dataclass(frozen=True)
class TrialSpec:
    scenario: str  # scenario name or path to a .toml
    transport: str  # a name of testbed/registry.py TRANSPORTS
    cc: str | None  # "bbr", "cubic", ...; None when the transport has none
    sched: str | None  # "lrf", "default", ...; None when the transport has none
    player: str | None  # a name of registry PLAYERS; None: no player (control transfer)
    video_duration_s: int
    rep: int
    seed: int
    # "vod" (static MPD) or "live" (dynamic MPD, server/live_mpd.py, played at the target
    # latency live_latency_s). Optional in to_dict/from_dict for specs written before live mode.
    video_mode: str = "vod"
    live_latency_s: float = DEFAULT_LATENCY_S
    # Options of the CC and the scheduler ("key=value", sorted by key), given to mpproxy and
    # mpsim as --cc-opt/--sched-opt; only transports whose registry entry takes
    # algorithm_options have them. Optional in to_dict/from_dict (older specs have none).
    cc_opts: tuple[str, ...] = ()
    sched_opts: tuple[str, ...] = ()
    # The DASH content ladder (a name of server.content.LADDERS), e.g. "720p-top-only": one
    # rendition, so the player cannot switch down. Optional in to_dict/from_dict.
    ladder: str = DEFAULT_LADDER_NAME
    # A fixed receive window in bytes for mpproxy and mpsim (--recv-window-bytes); None: the
    # transport autotunes it as Linux does. Optional in to_dict/from_dict.
    recv_window_bytes: int | None = None

    def option_argv(self) -> list[str]:
        """--cc-opt K=V ... --sched-opt K=V ... [--recv-window-bytes N] for mpproxy and mpsim."""
        return [
            *(arg for kv in self.cc_opts for arg in ("--cc-opt", kv)),
            *(arg for kv in self.sched_opts for arg in ("--sched-opt", kv)),
            *(
                ["--recv-window-bytes", str(self.recv_window_bytes)]
                if self.recv_window_bytes is not None
                else []
            ),
        ]

    def trial_id(self) -> str:
        """Stable, readable, filesystem-safe; derived from the fields only."""
        parts = [
            scenario_label(self.scenario),
            _id_part(self.transport),
            _id_part(self.cc or NOT_APPLICABLE_ID),
            _id_part(self.sched or NOT_APPLICABLE_ID),
            _id_part(self.player or NO_PLAYER_NAME),
            f"v{int(self.video_duration_s)}",
            *([_id_part(f"live{self.live_latency_s:g}")] if self.video_mode == "live" else []),
            *([_id_part("ccopt-" + "+".join(self.cc_opts))] if self.cc_opts else []),
            *([_id_part("schedopt-" + "+".join(self.sched_opts))] if self.sched_opts else []),
            *([_id_part(f"ladder-{self.ladder}")] if self.ladder != DEFAULT_LADDER_NAME else []),
            *([f"rwnd{int(self.recv_window_bytes)}"] if self.recv_window_bytes is not None else []),
            f"r{int(self.rep)}",
            f"s{int(self.seed)}",
        ]
        return _ID_SEPARATOR.join(p.replace("_", "-") for p in parts)

    def problems(self) -> list[str]:
        """What the registry says this spec cannot be (empty: consistent): a video transport
        needs a player, the control transfer takes none, and a transport without a CC or
        scheduler choice takes None for it. Each transport's preflight checks the rest."""
        entry = TRANSPORTS[self.transport]
        reasons = []
        if entry.video and self.player is None:
            reasons.append(
                f"transport {self.transport} carries video; player must be one of "
                f"{', '.join(PLAYERS)}"
            )
        if not entry.video and self.player is not None:
            reasons.append(
                f"transport {self.transport} carries no video; player must be none, "
                f"not {self.player}"
            )
        if self.recv_window_bytes is not None and not entry.algorithm_options:
            takes = [t.name for t in TRANSPORTS.values() if t.algorithm_options]
            reasons.append(
                f"transport {self.transport} takes no --recv-window-bytes (it sets the receive "
                f"window of the testbed's own transport: transport {', '.join(takes)})"
            )
        if self.ladder != DEFAULT_LADDER_NAME and self.player is None:
            reasons.append(
                f"--ladder {self.ladder}: transport {self.transport} plays no video; leave "
                "--ladder out"
            )
        if (self.cc_opts or self.sched_opts) and not entry.algorithm_options:
            takes = [t.name for t in TRANSPORTS.values() if t.algorithm_options]
            reasons.append(
                f"transport {self.transport} takes no --cc-opt/--sched-opt (they set options "
                f"of the testbed's own algorithms: transport {', '.join(takes)})"
            )
        for kind, value, default in (
            ("CC", self.cc, entry.default_cc),
            ("scheduler", self.sched, entry.default_sched),
        ):
            if default is None and value is not None:
                reasons.append(
                    f"transport {self.transport} has no {kind} to choose (got {value}); "
                    "leave it out"
                )
        return reasons

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrialSpec:
        """Inverse of to_dict; unknown or missing fields are errors naming the field."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        missing = sorted(names - set(data) - OPTIONAL_FIELDS)
        if unknown or missing:
            raise ValueError(
                f"trial spec: unknown fields {unknown}, missing fields {missing}; "
                f"valid fields are {sorted(names)}"
            )
        if data["transport"] not in TRANSPORTS:
            raise ValueError(
                f"trial spec: transport {data['transport']!r} is unknown; "
                f"valid: {', '.join(TRANSPORTS)}"
            )
        if data["player"] not in (*PLAYERS, None, NO_PLAYER_NAME):
            raise ValueError(
                f"trial spec: player {data['player']!r} is unknown; valid: {', '.join(PLAYERS)} "
                "or null"
            )

        def optional(name: str) -> str | None:
            value = data[name]
            return None if value in (None, _LEGACY_NONE[name]) else str(value)

        return cls(
            scenario=str(data["scenario"]),
            transport=str(data["transport"]),
            cc=optional("cc"),
            sched=optional("sched"),
            player=optional("player"),
            video_duration_s=int(data["video_duration_s"]),
            rep=int(data["rep"]),
            seed=int(data["seed"]),
            video_mode=str(data.get("video_mode", "vod")),
            live_latency_s=float(data.get("live_latency_s", DEFAULT_LATENCY_S)),
            cc_opts=tuple(str(kv) for kv in data.get("cc_opts", ())),
            sched_opts=tuple(str(kv) for kv in data.get("sched_opts", ())),
            ladder=str(data.get("ladder") or DEFAULT_LADDER_NAME),
            recv_window_bytes=(
                None if data.get("recv_window_bytes") is None else int(data["recv_window_bytes"])
            ),
        )
