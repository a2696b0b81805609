"""Interactive mode: one cell of the matrix, watched by a person in a browser.

    ./run_trials.sh --interactive --scenario B1 --cc lia --sched lrf [--video-mode live] \
        [--restart-on-reload]

Runs the trial as `run_trial` does (namespaces, emulator with the scenario's clock, transport,
nginx), but instead of the headless player it forwards a loopback port of the host into the
client namespace and prints the page's URL: what the browser plays crosses the emulated paths,
the CC and the scheduler. Ctrl-C (SIGINT) or SIGTERM ends the session; the trial then finishes
and tears down as any other (result.json written, the folder stays a trial folder for metrics;
there is no player.jsonl, the person is the player, so the trial is marked invalid: its
figures stay out of the aggregates).

Forwarding: a Unix socket is a file, reachable from every namespace, so two relays
(testbed/relay.py) join the host's 127.0.0.1:PORT to the server endpoint as the client
namespace sees it: one in the client namespace (supervised by the trial), one on the host.
The page's overlay shows per-path throughput from the transport's stats: a small HTTP server
on 127.0.0.1:PORT+1 serves `/stats.json`, the bytes the server side sent per path over the last
4 s (user transport: the `subflow` lines of transport-server.jsonl).

`--restart-on-reload`: every load of the page (the first and each reload) restarts the
scenario's clock, so that what the person watches starts at the scenario's time 0. The page
(player/web/player.mjs, `?scenario_restart=<url>`) POSTs to `/restart` of the same small server
before it starts dash.js, and waits for the answer; the server stops linkemu and starts it again
on the same resolved scenario and seed (testbed.trial.start_emulator: schedules and traces
count from its start). The finished scenario run's log is kept as
`emulator.before-restart-<n>.jsonl`, the new one is `emulator.jsonl` (what metrics reads), and
testbed.jsonl gets a `scenario_restart` line. Between the two emulators nothing is bound to the
NFQUEUE queues and the kernel drops the paths' packets (`gap_ms` in that line; TCP
retransmits them): a reload is a fresh start anyway. In live mode the stream goes on air again
with the scenario (a new live.mpd, a `live_on_air` line).
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from server.nginx import url_path
from testbed.players import go_on_air
from testbed.spec import TrialSpec
from testbed.supervisor import exit_how

EMULATOR_LOG = "emulator.jsonl"

DEFAULT_PORT = 8088
# Two segments' time: a player with a full buffer fetches one segment every 2 s, so a shorter
# window shows 0 between fetches.
STATS_WINDOW_S = 4.0
# A session has no natural end; the trial's watchdog must not end it (one day).
INTERACTIVE_TIMEOUT_S = 86_400
TRANSPORT_STATS = "transport-server.jsonl"


class PathRates:
    """Per-path send rate from the transport's cumulative per-subflow counters."""

    def __init__(self, stats: Path) -> None:
        self.stats = stats
        self.offset = 0
        self.latest: dict[tuple[Any, Any, str], int] = {}  # (conn, subflow, path) -> bytes
        self.history: list[tuple[float, dict[str, int]]] = []  # (t_s, path -> total bytes)
        self.lock = threading.Lock()

    def _read_new(self) -> None:
        try:
            with self.stats.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for raw in complete.splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if line.get("event") != "subflow" or line.get("path") is None:
                continue
            key = (line.get("conn"), line.get("subflow"), str(line["path"]))
            self.latest[key] = int(line.get("bytes_sent_total") or 0)
            totals: dict[str, int] = {}
            for (_, _, path), sent in self.latest.items():
                totals[path] = totals.get(path, 0) + sent
            self.history.append((int(line["t_ns"]) / 1e9, totals))

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            self._read_new()
            if not self.history:
                return {"source": str(self.stats.name), "paths": {}, "bytes_total": {}}
            now_s, now = self.history[-1]
            old_s, old = next(
                ((t, v) for t, v in self.history if t >= now_s - STATS_WINDOW_S), (now_s, now)
            )
            self.history = [h for h in self.history if h[0] >= now_s - 2 * STATS_WINDOW_S]
            span = max(now_s - old_s, 1e-3)
            return {
                "source": str(self.stats.name),
                "t_s": now_s,
                "paths": {p: (now[p] - old.get(p, 0)) * 8 / span for p in sorted(now)},
                "bytes_total": now,
            }


class ScenarioRestarter:
    """Restarts the scenario's clock: linkemu stopped and started again on the same resolved
    scenario and seed (one restart at a time; see the module's docstring)."""

    def __init__(self, ctx: Any, on_air: Any = None) -> None:
        self.ctx = ctx
        self.on_air = on_air  # live mode: puts the stream on air again (a new live.mpd)
        self.restarts = 0
        self.lock = threading.Lock()

    def restart(self, reason: str) -> dict[str, Any]:
        from testbed.trial import start_emulator

        with self.lock:
            self.restarts += 1
            n = self.restarts
            ctx = self.ctx
            asked_ns = time.monotonic_ns()
            old = ctx.emulator
            old_code = old.terminate() if old is not None else None
            log = Path(ctx.dir) / EMULATOR_LOG
            kept = Path(ctx.dir) / f"emulator.before-restart-{n}.jsonl"
            if log.exists():
                log.replace(kept)
            ctx.emulator = start_emulator(ctx, ctx.spec.seed, name=f"emulator-restart-{n}")
            start_t_ns = _emulator_start_t_ns(log)
            if self.on_air is not None:
                self.on_air()  # the live event starts again with the scenario
            line = {
                "restart": n,
                "reason": reason,
                "emulator": ctx.emulator.name,
                "previous_exit_status": old_code,
                "previous_log": kept.name,
                "emulator_start_t_ns": start_t_ns,
                "gap_ms": round((time.monotonic_ns() - asked_ns) / 1e6, 1),
            }
            if ctx.events:
                ctx.events.write("scenario_restart", **line)
            return line


def _emulator_start_t_ns(log: Path) -> int | None:
    """t_ns of the emulator's `start` line (its clock's origin on the trial clock)."""
    try:
        for raw in log.read_text().splitlines():
            line = json.loads(raw)
            if line.get("event") == "start":
                return int(line["t_ns"])
    except (OSError, ValueError, KeyError):
        return None
    return None


def stats_server(
    rates: PathRates, port: int, restarter: ScenarioRestarter | None = None
) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = json.dumps(rates.snapshot()).encode()
            self.reply(200 if self.path.startswith("/stats.json") else 404, body)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            # The page's load: a CORS "simple request" (POST without a body), no preflight.
            if not self.path.startswith("/restart") or restarter is None:
                self.reply(404, b'{"error": "no scenario restart (--restart-on-reload)"}')
                return
            try:
                body = json.dumps(restarter.restart("page load")).encode()
            except Exception as e:  # noqa: BLE001 - the page shows it; the trial goes on
                self.reply(500, json.dumps({"error": str(e)}).encode())
                return
            self.reply(200, body)

        def reply(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _Stop(Exception):
    pass


READY_TIMEOUT_S = 60


def _wait_until_served(url: str, timeout_s: float) -> None:
    """The URL is printed only once the whole chain answers (host relay, Unix socket, client
    relay, the transport's client side, the paths, nginx): relays and the transport's first
    connection take a moment, and a browser shows a reset connection, not a retry."""
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError as e:
            last = e
        time.sleep(0.5)
    raise RuntimeError(f"interactive: {url} not served after {timeout_s} s (last error: {last})")


def make_play(port: int, repo: Path, announce: Any = print, restart_on_reload: bool = False) -> Any:
    """The `play` hook of run_trial: forward, print the URL, wait for Ctrl-C; with
    `restart_on_reload` every page load restarts the scenario's clock."""

    def play(ctx: Any, endpoint: Any, content_dir: Path) -> None:
        live_latency_s = None
        on_air = None
        if ctx.spec.video_mode == "live":
            live_latency_s = float(ctx.spec.live_latency_s)

            def on_air() -> None:
                go_on_air(ctx, content_dir, live_latency_s)

            on_air()
        # A Unix socket path has at most 107 bytes: a short folder of its own, not the trial's.
        sock_dir = Path(tempfile.mkdtemp(prefix="tbx-relay-"))
        sock = sock_dir / "s"
        relay = str(repo / "testbed" / "relay.py")
        ctx.spawn("client", "relay-client", [sys.executable, relay, "--listen-unix", str(sock),
                  "--connect-tcp", f"{endpoint.host}:{endpoint.port}"], watch="exit")  # fmt: skip
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        host_log = open(Path(ctx.dir) / "logs" / "relay-host.stderr", "w")
        host_relay = subprocess.Popen(
            [sys.executable, relay, "--listen-tcp", f"127.0.0.1:{port}", "--connect-unix",
             str(sock)], stdout=subprocess.DEVNULL, stderr=host_log,
        )  # fmt: skip
        restarter = ScenarioRestarter(ctx, on_air) if restart_on_reload else None
        stats = stats_server(PathRates(Path(ctx.dir) / TRANSPORT_STATS), port + 1, restarter)
        # Its network figures are real, but no player measured the session: not counted.
        ctx.mark_invalid("interactive session: played by a person, no player.jsonl")
        previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

        def stop(signum: int, _frame: object) -> None:
            raise _Stop(signum)

        try:
            for s in previous:
                signal.signal(s, stop)
            url = (
                f"http://127.0.0.1:{port}{url_path(content_dir, live_latency_s)}"
                f"&stats=http://127.0.0.1:{port + 1}/stats.json"
            )
            if restarter is not None:
                url += f"&scenario_restart=http://127.0.0.1:{port + 1}/restart"
            _wait_until_served(url, READY_TIMEOUT_S)
            if ctx.events:
                ctx.events.write("interactive", url=url, port=port)
            announce(f"interactive: open {url}\ninteractive: Ctrl-C ends the session")
            while True:
                time.sleep(0.5)
                # Nothing here would notice a component dying: ask (the trial then fails).
                if (code := host_relay.poll()) is not None:
                    log = Path(ctx.dir) / "logs" / "relay-host.stderr"
                    raise RuntimeError(
                        f"process 'relay-host' exited early with {exit_how(code)} (see {log})"
                    )
                check_alive = getattr(ctx, "check_alive", None)
                if check_alive is not None:
                    check_alive()
        except _Stop:
            announce("interactive: stopping; the trial tears down")
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            stats.shutdown()
            stats.server_close()
            host_relay.terminate()
            try:
                host_relay.wait(timeout=5)
            except subprocess.TimeoutExpired:
                host_relay.kill()
                host_relay.wait()
            host_log.close()
            shutil.rmtree(sock_dir, ignore_errors=True)

    return play


def run_interactive(
    spec: TrialSpec, trial_dir: Path, repo: Path, port: int, restart_on_reload: bool = False
) -> int:
    from testbed.topology import Interrupted, install_signal_handlers
    from testbed.trial import run_trial

    install_signal_handlers()  # Ctrl-C before the page is up still tears everything down
    try:
        play = make_play(port, repo, restart_on_reload=restart_on_reload)
        result = run_trial(spec, trial_dir, repo, timeout_s=INTERACTIVE_TIMEOUT_S, play=play)
    except (Interrupted, KeyboardInterrupt):
        print(f"interactive: interrupted before the page was up; torn down ({trial_dir})",
              file=sys.stderr)  # fmt: skip
        return 130
    print(f"interactive: trial folder {trial_dir} ({result['status']})")
    return 0 if result["status"] == "ok" else 1
