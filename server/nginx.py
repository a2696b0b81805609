"""nginx for one trial: a config generated from server/nginx.conf.template, run in the foreground.

`start(ctx, listen, content_dir, mptcp=...)` runs it in the trial's server namespace through
the supervisor (CONTRACTS.md §7). `serve(...)` runs it directly (loopback or any namespace via
`ip netns exec`) for tests and manual playback:

    .venv/bin/python -m server.nginx --listen 127.0.0.1:8080 --content cache/content/<hash>

Everything nginx writes goes under `<trial>/nginx/` (config, pid, temp files) and
`<trial>/nginx-access.jsonl` (CONTRACTS.md §5.5).
"""

from __future__ import annotations

import argparse
import ipaddress
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common.processes import stop_popen

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.template"
PLAYER_WEB = REPO / "player" / "web"
DASHJS = REPO / "player" / "node_modules" / "dashjs" / "dist" / "modern" / "umd" / "dash.all.min.js"
ACCESS_LOG = "nginx-access.jsonl"
READY_TIMEOUT_S = 10.0


class ServerConfigError(Exception):
    """Bad input (exit status 2): the message names the value and what is valid."""


def parse_listen(listen: list[str]) -> list[tuple[str, int]]:
    """`["10.1.2.2:8080", ...]` -> [(address, port)]; only explicit IP addresses are valid,
    so that nginx never binds to a wildcard outside the testbed's namespaces."""
    if not listen:
        raise ServerConfigError("listen: empty; give at least one ADDRESS:PORT, e.g. 10.1.2.2:8080")
    out = []
    for item in listen:
        host, sep, port_text = item.rpartition(":")
        try:
            addr = ipaddress.ip_address(host.strip("[]"))
            port = int(port_text)
        except ValueError:
            addr, port = None, 0
        if not sep or addr is None or not 0 < port < 65536 or addr.is_unspecified:
            raise ServerConfigError(
                f"listen: {item!r} is not valid; give a specific IP address and a port "
                "1-65535, e.g. 127.0.0.1:8080 (wildcards like 0.0.0.0 are refused)"
            )
        out.append((str(addr), port))
    return out


def render_config(
    prefix: Path,
    listen: list[str],
    content_dir: Path,
    access_log: Path,
    player_web: Path = PLAYER_WEB,
) -> str:
    content_dir = Path(content_dir).resolve()
    if not (content_dir / "manifest.mpd").is_file():
        raise ServerConfigError(
            f"content_dir {content_dir}: no manifest.mpd; prepare it with python -m server.content"
        )
    lines = []
    for addr, port in parse_listen(listen):
        host = f"[{addr}]" if ":" in addr else addr
        lines.append(f"        listen {host}:{port};")
    values = {
        "PREFIX": str(Path(prefix).resolve()),
        "ACCESS_LOG": str(Path(access_log).resolve()),
        "LISTEN": "\n".join(lines),
        "DASHJS": str(DASHJS),
        "PLAYER_WEB": str(Path(player_web).resolve()),
        "CONTENT_DIR": str(content_dir),
        "CONTENT_HASH": content_dir.name,
    }
    text = TEMPLATE.read_text()
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    if "{{" in text:
        raise RuntimeError(
            f"{TEMPLATE}: placeholder left unfilled: {text[text.index('{{') :][:40]}"
        )
    return text


def write_config(prefix: Path, listen: list[str], content_dir: Path, access_log: Path) -> Path:
    prefix = Path(prefix)
    for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    conf = prefix / "nginx.conf"
    conf.write_text(render_config(prefix, listen, content_dir, access_log))
    return conf


def nginx_argv(prefix: Path, conf: Path, *, mptcp: bool) -> list[str]:
    # -e stderr: nginx opens its compiled-in error log before reading the config otherwise.
    argv = ["nginx", "-p", str(Path(prefix).resolve()), "-e", "stderr", "-c", str(conf.resolve())]
    # mptcpize (LD_PRELOAD) turns nginx's TCP sockets into MPTCP ones; workers inherit it.
    return (["mptcpize", "run"] + argv) if mptcp else argv


def url_path(content_dir: Path, live_latency_s: float | None = None) -> str:
    """The page URL path for this content (CONTRACTS.md §3); with a latency, the live stream
    (the dynamic MPD server/live_mpd.py writes as <nginx prefix>/live.mpd)."""
    name = Path(content_dir).resolve().name
    if live_latency_s is None:
        return f"/player/index.html?mpd=/content/{name}/manifest.mpd"
    return f"/player/index.html?mpd=/content/{name}/live.mpd&live_latency_s={live_latency_s:g}"


def wait_ready(prefix: Path, is_alive: Any, name: str, timeout_s: float = READY_TIMEOUT_S) -> None:
    """nginx writes its pid file after it has bound every listening socket."""
    pid_file = Path(prefix) / "nginx.pid"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pid_file.is_file() and pid_file.read_text().strip():
            return
        if not is_alive():
            raise RuntimeError(f"{name} exited during start-up; see its stderr log")
        time.sleep(0.05)
    raise RuntimeError(f"{name}: no pid file {pid_file} after {timeout_s} s (not listening)")


def start(ctx: Any, listen: list[str], content_dir: Path, *, mptcp: bool) -> Any:
    """Start nginx in the trial's server namespace (supervised); returns once it listens."""
    prefix = Path(ctx.dir) / "nginx"
    conf = write_config(prefix, listen, content_dir, Path(ctx.dir) / ACCESS_LOG)
    # watch="exit": a trial whose server is gone fails at once, naming it (testbed/trial.py).
    proc = ctx.spawn("server", "nginx", nginx_argv(prefix, conf, mptcp=mptcp), watch="exit")

    def alive() -> bool:
        poll = getattr(proc, "poll", None) or getattr(getattr(proc, "popen", None), "poll", None)
        return poll is None or poll() is None

    wait_ready(prefix, alive, "nginx")
    return proc


@contextmanager
def serve(
    listen: list[str],
    content_dir: Path,
    *,
    mptcp: bool = False,
    netns: str | None = None,
    workdir: Path | None = None,
) -> Iterator[Path]:
    """Run nginx outside a trial (tests, manual playback); yields the folder holding
    nginx-access.jsonl. Stops nginx (by its PID) and removes a temporary folder on exit."""
    own_tmp = workdir is None
    base = Path(tempfile.mkdtemp(prefix="tbx-nginx-")) if own_tmp else Path(workdir)
    prefix = base / "nginx"
    conf = write_config(prefix, listen, content_dir, base / ACCESS_LOG)
    argv = nginx_argv(prefix, conf, mptcp=mptcp)
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    stderr = open(base / "nginx.stderr", "w")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        try:
            wait_ready(prefix, lambda: proc.poll() is None, "nginx")
        except RuntimeError as e:
            raise RuntimeError(f"{e}: {(base / 'nginx.stderr').read_text()[-2000:]}") from None
        yield base
    finally:
        stop_popen(proc, signal.SIGQUIT, 5.0)  # graceful: finishes the access log lines
        stderr.close()
        if own_tmp:
            shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m server.nginx",
        description="Serve prepared content and the player page (manual playback, tests).",
    )
    parser.add_argument("--listen", action="append", required=True, help="ADDRESS:PORT (repeat)")
    parser.add_argument("--content", type=Path, required=True, help="folder from server.content")
    parser.add_argument("--workdir", type=Path, default=None, help="where logs go (default temp)")
    parser.add_argument("--mptcp", action="store_true", help="run under mptcpize (kernel MPTCP)")
    args = parser.parse_args(argv)
    try:
        with serve(args.listen, args.content, mptcp=args.mptcp, workdir=args.workdir) as base:
            host = args.listen[0]
            print(f"serving http://{host}{url_path(args.content)} (logs in {base}); Ctrl-C stops")
            sys.stdout.flush()
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
    except ServerConfigError as e:
        print(f"server.nginx: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.exit(main())
