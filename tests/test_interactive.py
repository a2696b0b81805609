"""`./run_trials.sh --interactive`, driven headlessly: the printed URL opened by Chromium in the
host namespace plays through the emulated paths; Ctrl-C tears everything down."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from metrics.player_summary import summarize

REPO = Path(__file__).resolve().parent.parent
PORT = 18088  # not the default 8088, which a person may be using
PLAY_S = 20

pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces"),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium"),
    pytest.mark.skipif(
        not (REPO / "transport" / "target" / "release" / "mpproxy").is_file(),
        reason="needs mpproxy (scripts/setup.sh)",
    ),
    pytest.mark.timeout(600),
]


def wait_for_url(proc: subprocess.Popen, timeout_s: float = 300) -> str:
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen.append(line)
        if line.startswith("interactive: open "):
            return line.removeprefix("interactive: open ").strip()
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"no URL printed (exit {proc.poll()}): {''.join(seen)[-3000:]}")


def test_interactive_session_plays_over_both_paths_and_tears_down(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = subprocess.Popen(
        [str(REPO / "run_trials.sh"), "--interactive", "--scenario", "B1", "--cc", "lia",
         "--sched", "lrf", "--video-duration", str(PLAY_S), "--out", str(run),
         "--interactive-port", str(PORT)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        url = wait_for_url(proc)
        assert url.startswith(f"http://127.0.0.1:{PORT}/player/index.html?mpd=")
        shot = REPO / "docs" / "interactive-overlay.png"
        player_log = tmp_path / "player.jsonl"
        # Chromium in the host namespace: the page reaches the server only through the
        # forwarded port, i.e. through the client namespace, the paths and the transport.
        played = subprocess.run(
            ["node", str(REPO / "player" / "headless.mjs"), "--url", url,
             "--out", str(player_log), "--t0-ns", str(time.monotonic_ns()),
             "--timeout-s", str(PLAY_S + 40), "--screenshot", str(tmp_path / "shot.png"),
             "--screenshot-at-s", "12"],
            capture_output=True, text=True, timeout=PLAY_S + 120,
        )  # fmt: skip
        lines = [json.loads(x) for x in player_log.read_text().splitlines()]
        errors = [ln for ln in lines if ln["event"] == "error"]
        assert played.returncode == 0, (errors, played.stderr[-2000:])
        assert lines[-1]["event"] == "end"
        assert summarize(lines)["played_s"] >= PLAY_S - 1
        overlay = next(ln for ln in lines if ln["event"] == "screenshot")["overlay"]
        assert "wifi" in overlay["o-paths"] and "lte" in overlay["o-paths"], overlay
        if os.environ.get("TBX_SAVE_SHOT"):  # README's picture: TBX_SAVE_SHOT=1 pytest ...
            shutil.copy(tmp_path / "shot.png", shot)
        with urllib.request.urlopen(f"http://127.0.0.1:{PORT + 1}/stats.json") as r:
            stats = json.load(r)
        # The transport's server side sent video over both emulated paths.
        assert stats["bytes_total"]["wifi"] > 100_000 and stats["bytes_total"]["lte"] > 100_000
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal signals the whole group
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    trial = next((run / "trials").iterdir())
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "ok" and result["subflows_with_data"] == 2
    assert result["valid"] is False  # a person's session is not counted
    events = [json.loads(x) for x in (trial / "testbed.jsonl").read_text().splitlines()]
    namespaces = next(e for e in events if e["event"] == "topology_build")["namespaces"]
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not [ns for ns in namespaces.values() if ns in listed]
    leftover = subprocess.run(["pgrep", "-f", str(trial)], capture_output=True, text=True)
    assert leftover.stdout == "", leftover.stdout
    relay_sock = next(ln for ln in (trial / "logs" / "relay-client.stdout").read_text().split()
                      if ln.startswith("/tmp/tbx-relay-"))  # fmt: skip
    assert not Path(relay_sock).exists()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{PORT}/", timeout=2)
