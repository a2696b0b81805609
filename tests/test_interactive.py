"""`./run_trials.sh --interactive`, driven headlessly: the printed URL opened by Chromium in the
host namespace plays through the emulated paths; Ctrl-C tears everything down. The session
records packet captures too (`--pcap`): a person's session is where a capture is most often
wanted, and Ctrl-C must still leave complete, readable files."""

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
from markers import MPPROXY, needs_built, needs_capture_tools, needs_root

from metrics import pcap as pcap_metrics
from metrics.player_summary import summarize
from metrics.schemas import check_file
from testbed import capture

REPO = Path(__file__).resolve().parent.parent
PORT = 18088  # not the default 8088, which a person may be using
PLAY_S = 20

pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    needs_root,
    pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium"),
    needs_built(MPPROXY),
    needs_capture_tools,
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
         "--interactive-port", str(PORT), "--pcap"],
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
    assert_captures_complete(trial / "pcap")


def assert_captures_complete(pcap_dir: Path) -> None:
    """Ctrl-C ended the session, yet each path side has a capture that tshark reads to its end,
    holding the session's video, and capture.json lists them all."""
    summary = json.loads((pcap_dir / "capture.json").read_text())
    listed = sorted(f["file"] for f in summary["files"])
    assert listed == sorted(capture.capture_file(p, s) for p in ("wifi", "lte")
                            for s in ("client", "server")), listed  # fmt: skip
    for entry in summary["files"]:
        # tshark_rows raises when tshark cannot read the file to its end (a capture cut short
        # in the middle of a packet makes tshark exit 2).
        packets = pcap_metrics.tshark_rows(pcap_dir / entry["file"])
        # Over 100 kB of video crossed each path (the stats above); ip.len is each packet's
        # own length, whatever the snap length kept of it.
        assert sum(int(p["ip_len"] or 0) for p in packets) > 100_000, (entry, len(packets))
        assert entry["cap_hit"] is False and entry["bytes"] > 0, entry


# Opens the page, waits, reloads, waits: each load of the page POSTs /restart first
# (player/web/player.mjs); prints what the page got back for each load.
RELOAD_SCRIPT = """
import { createRequire } from "node:module";
const require = createRequire(process.argv[2]);
const puppeteer = require("puppeteer-core");
const flags = require("./chromium-flags.json").flags;
const [url, waitMs] = [process.argv[3], Number(process.argv[4])];
const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true,
  args: [...flags, "--autoplay-policy=no-user-gesture-required"], pipe: true });
try {
  const page = await browser.newPage();
  const loads = [];
  for (const step of ["load", "reload"]) {
    if (step === "load") await page.goto(url); else await page.reload();
    await new Promise((r) => setTimeout(r, waitMs));
    loads.push(await page.evaluate(() => ({
      restart: window.__testbed.scenarioRestart ?? null,
      media_time_s: document.getElementById("video").currentTime,
    })));
  }
  console.log(JSON.stringify(loads));
} finally {
  await browser.close();
}
"""
RELOAD_WAIT_S = 6


def emulator_lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def schedule_from_start(lines: list[dict]) -> list[tuple[int, str, float]]:
    """(ms after the emulator's start, path, value) of its first schedule changes."""
    start = next(ln["t_ns"] for ln in lines if ln["event"] == "start")
    changes = [ln for ln in lines if ln["event"] == "schedule"][:3]
    return [(round((c["t_ns"] - start) / 1e6), c["path"], c["value"]) for c in changes]


@pytest.mark.parametrize("mode", ["vod", "live"])
def test_restart_on_reload_restarts_the_scenario_clock(tmp_path: Path, mode: str) -> None:
    run = tmp_path / "run"
    port = PORT + (10 if mode == "vod" else 20)
    proc = subprocess.Popen(
        [str(REPO / "run_trials.sh"), "--interactive", "--restart-on-reload", "--scenario", "B1",
         "--cc", "lia", "--sched", "lrf", "--video-duration", str(PLAY_S), "--out", str(run),
         "--interactive-port", str(port), "--video-mode", mode],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        url = wait_for_url(proc)
        assert f"&scenario_restart=http://127.0.0.1:{port + 1}/restart" in url
        script = tmp_path / "reload.mjs"
        script.write_text(RELOAD_SCRIPT)
        done = subprocess.run(
            ["node", str(script), str(REPO / "player" / "package.json"), url,
             str(RELOAD_WAIT_S * 1000)],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        loads = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    # Each load of the page restarted the scenario before playing.
    assert [load["restart"]["restart"] for load in loads] == [1, 2], loads
    trial = next((run / "trials").iterdir())
    events = [json.loads(x) for x in (trial / "testbed.jsonl").read_text().splitlines()]
    restarts = [e for e in events if e["event"] == "scenario_restart"]
    assert [(e["restart"], e["reason"]) for e in restarts] == [(1, "page load"), (2, "page load")]
    assert [e["previous_exit_status"] for e in restarts] == [0, 0]  # stopped cleanly
    # The logs: the scenario ran three times (trial start, load, reload), each from its own
    # start; the last one is emulator.jsonl, the one metrics reads.
    runs = [trial / "emulator.before-restart-1.jsonl", trial / "emulator.before-restart-2.jsonl",
            trial / "emulator.jsonl"]  # fmt: skip
    logs = [emulator_lines(p) for p in runs]
    starts = [next(ln["t_ns"] for ln in lines if ln["event"] == "start") for lines in logs]
    assert starts[1:] == [e["emulator_start_t_ns"] for e in restarts]
    # (a scenario_restart line is written once its emulator has started)
    assert starts[0] < starts[1] <= restarts[0]["t_ns"] < starts[2] <= restarts[1]["t_ns"]
    # The schedule's time reset: the reload's run (>= RELOAD_WAIT_S long) began with the same
    # changes at the same offsets from its start as the first run did (same seed).
    assert schedule_from_start(logs[1]) == schedule_from_start(logs[0])
    assert schedule_from_start(logs[1]), "B1 has a schedule: its changes must be logged"
    assert check_file(trial / "testbed.jsonl") == []  # scenario_restart is in its schema
    # Live: the stream went on air with every start of the scenario.
    on_air = [e for e in events if e["event"] == "live_on_air"]
    assert len(on_air) == (3 if mode == "live" else 0)
    # Nothing left behind.
    namespaces = next(e for e in events if e["event"] == "topology_build")["namespaces"]
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not [ns for ns in namespaces.values() if ns in listed]
    leftover = subprocess.run(["pgrep", "-f", str(trial)], capture_output=True, text=True)
    assert leftover.stdout == "", leftover.stdout
