"""What one trial is: the spec (CONTRACTS §7) and its stable, filesystem-safe trial id.

The trial id is a pure function of the spec's fields, so re-running the same command
finds the same folders and resumes (issue 6). It is readable on purpose
(`A1__user__bbr__lrf__dashjs__v60__r0__s1`) so that `ls results/<run>/trials/` is a table
of contents.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

TRANSPORTS = ("user", "kernel", "tcp-wifi", "tcp-lte", "none")
PLAYERS = ("dashjs", "gstreamer", "none")
NOT_APPLICABLE = "-"  # cc/sched value for transports that have none

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


OPTIONAL_FIELDS = {"video_mode", "live_latency_s"}
VIDEO_MODES = ("vod", "live")


@dataclass(frozen=True)
class TrialSpec:
    scenario: str  # scenario name or path to a .toml
    transport: str  # "user" | "kernel" | "tcp-wifi" | "tcp-lte" | "none"
    cc: str  # "bbr", "cubic", ... ("-" when not applicable)
    sched: str  # "lrf", "default", ... ("-" when not applicable)
    player: str  # "dashjs" | "gstreamer" | "none"
    video_duration_s: int
    rep: int
    seed: int
    # "vod" (static MPD) or "live" (dynamic MPD, server/live_mpd.py, played at the target
    # latency live_latency_s). Optional in to_dict/from_dict for specs written before live mode.
    video_mode: str = "vod"
    live_latency_s: float = 3.0

    def trial_id(self) -> str:
        """Stable, readable, filesystem-safe; derived from the fields only."""
        parts = [
            scenario_label(self.scenario),
            _id_part(self.transport),
            _id_part(self.cc),
            _id_part(self.sched),
            _id_part(self.player),
            f"v{int(self.video_duration_s)}",
            *([_id_part(f"live{self.live_latency_s:g}")] if self.video_mode == "live" else []),
            f"r{int(self.rep)}",
            f"s{int(self.seed)}",
        ]
        return _ID_SEPARATOR.join(p.replace("_", "-") for p in parts)

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
        return cls(
            scenario=str(data["scenario"]),
            transport=str(data["transport"]),
            cc=str(data["cc"]),
            sched=str(data["sched"]),
            player=str(data["player"]),
            video_duration_s=int(data["video_duration_s"]),
            rep=int(data["rep"]),
            seed=int(data["seed"]),
            video_mode=str(data.get("video_mode", "vod")),
            live_latency_s=float(data.get("live_latency_s", 3.0)),
        )
