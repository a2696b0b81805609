"""player/gst_player.py's live rules without a pipeline: the start position, the maxDrift
catch-up seek (logged as live_seek), its cooldown, no catch-up once the event is over, and the
end of the event (dashdemux2 never sends EOS on a dynamic MPD). Runs under Debian's python3,
which has `gi` (the player's interpreter); a fake playbin records the seeks."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GST_PYTHON = "/usr/bin/python3"

SCRIPT = r"""
import argparse, json, sys, time
sys.path.insert(0, sys.argv[1])
import gst_player as g

class FakePlaybin:
    def __init__(self):
        self.seeks = []
    def seek_simple(self, fmt, flags, position_ns):
        self.seeks.append(position_ns / 1e9)
        return True
    def set_state(self, state):
        pass

def session(out):
    args = argparse.Namespace(t0_ns=0, out=out, live_latency_s=3.0, mpd="http://x/live.mpd")
    s = g.Session(args)
    s.mpd = {"reps": [], "segment_s": 2.0, "media_template": None, "duration_s": 20.0,
             "dynamic": True, "availability_start_unix_s": 0.0}
    s.playbin = FakePlaybin()
    s.first_frame = True
    return s

out = {}
s = session(sys.argv[2])
out["start_returned"] = s.catch_up(0.1, 5.0)  # first frame 2 s late: start position, silent
out["start_seeks"] = list(s.playbin.seeks)
s.catch_up(2.0, 4.4)           # within target + 1.5 s: nothing
s.last_live_seek_wall_s = -1e9  # past the cooldown
s.catch_up(4.0, 5.0)           # 2 s above the target: seek 2 s ahead, logged
s.catch_up(6.1, 5.0)           # again at once: the cooldown holds it back
out["drift_seeks"] = list(s.playbin.seeks)
s.last_live_seek_wall_s = -1e9
s.catch_up(16.0, 9.0)          # media + latency = 25 s > 20 s: the event is over, no seek
out["after_event_seeks"] = list(s.playbin.seeks)
s.downloaded_end_s = 18.0
out["end_before_last_segment"] = s.end_of_live_event(19.99)
s.downloaded_end_s = 20.0
out["end_at_last_frame"] = s.end_of_live_event(19.933)
s2 = session(sys.argv[2] + ".2")
s2.downloaded_end_s = 20.0
out["stuck"] = [s2.end_of_live_event(18.5) for _ in range(5)]
out["parsed_ast"] = g.parse_xs_datetime_unix_s("2023-11-14T22:13:20.250Z")
s.out.flush()
print(json.dumps(out))
"""


@pytest.mark.skipif(
    shutil.which(GST_PYTHON) is None
    or subprocess.run([GST_PYTHON, "-c", "import gi"], capture_output=True).returncode != 0,
    reason="needs Debian's python3 with gi (python3-gi)",
)
def test_live_catch_up_and_end_rules(tmp_path: Path) -> None:
    log = tmp_path / "player.jsonl"
    done = subprocess.run(
        [GST_PYTHON, "-c", SCRIPT, str(REPO / "player"), str(log)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["start_seeks"] == [pytest.approx(2.1)]  # 0.1 + 5.0 - 3.0: to the target
    assert out["start_returned"] is True  # that sample is not counted as played
    assert out["drift_seeks"] == [pytest.approx(2.1), pytest.approx(6.0)]  # 4 + 5 - 3
    assert out["after_event_seeks"] == out["drift_seeks"]
    assert out["end_before_last_segment"] is False
    assert out["end_at_last_frame"] is True  # within 0.1 s of 20 s with everything downloaded
    assert out["stuck"] == [False, False, False, False, True]  # 4 samples without moving
    assert out["parsed_ast"] == pytest.approx(1_700_000_000.25)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    seeks = [ln for ln in lines if ln["event"] == "live_seek"]  # the start position is not one
    assert [(s["from_media_time_s"], s["to_media_time_s"], s["skipped_s"]) for s in seeks] == [
        (4.0, 6.0, 2.0)
    ]
    assert seeks[0]["live_latency_s"] == 5.0
