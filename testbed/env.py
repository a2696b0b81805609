"""What the machine was when a trial ran: kernel, git commit, tool versions, CPUs.

Written into every trial.json (CONTRACTS §2) so that a result can be traced back to
the software that produced it. Each tool is asked once per process.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
from functools import cache
from pathlib import Path

# tool -> (argv asking its version, which stream answers). A missing tool is recorded
# as null, never an error: trial.json says what was there.
TOOL_VERSION_COMMANDS: dict[str, list[str]] = {
    "chromium": ["chromium", "--version"],
    "nginx": ["nginx", "-v"],
    "ffmpeg": ["ffmpeg", "-hide_banner", "-version"],
    "gst": ["gst-launch-1.0", "--version"],
    "rustc": ["rustc", "--version"],
    "node": ["node", "--version"],
    "iptables": ["iptables", "--version"],
    "iproute2": ["ip", "-V"],
}
TOOL_TIMEOUT_S = 20.0


def _tool_path(exe: str) -> str | None:
    cargo_bin = Path.home() / ".cargo" / "bin"
    return shutil.which(exe) or shutil.which(exe, path=str(cargo_bin))


@cache
def tool_version(tool: str) -> str | None:
    """First non-empty output line of the tool's version command, or None if absent."""
    argv = list(TOOL_VERSION_COMMANDS[tool])
    exe = _tool_path(argv[0])
    if exe is None:
        return None
    argv[0] = exe
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        if line.strip():
            return line.strip()
    return None


def tool_versions() -> dict[str, str | None]:
    return {tool: tool_version(tool) for tool in TOOL_VERSION_COMMANDS}


DIRTY_MARK = "-dirty"  # appended to a commit when tracked files differed from it


def git_dirty_paths(repo: Path) -> list[str] | None:
    """Tracked files that differ from HEAD (`git status --porcelain --untracked-files=no`),
    so that a `-dirty` commit says what differed; None when git cannot tell."""
    try:
        status = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
        )
    except OSError:
        return None
    if status.returncode != 0:
        return None
    return [line[3:] for line in status.stdout.splitlines() if line.strip()]


def _git_head(repo: Path) -> str | None:
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
        )
    except OSError:
        return None
    return head.stdout.strip() if head.returncode == 0 else None


def _marked(head: str | None, dirty_paths: list[str] | None) -> str | None:
    return None if head is None else head + (DIRTY_MARK if dirty_paths else "")


def git_commit(repo: Path) -> str | None:
    """HEAD of the repository, with `-dirty` when tracked files differ from it."""
    return _marked(_git_head(repo), git_dirty_paths(repo))


def short_commit(commit: str, digits: int = 12) -> str:
    """`commit` cut to its first `digits` characters, keeping its `-dirty` mark."""
    dirty = commit.endswith(DIRTY_MARK)
    return commit.removesuffix(DIRTY_MARK)[:digits] + (DIRTY_MARK if dirty else "")


def collect_env(repo: Path) -> dict:
    """The `env` object of trial.json."""
    dirty_paths = git_dirty_paths(repo)  # once: the mark and the list describe one look
    return {
        "kernel": platform.release(),
        "git_commit": _marked(_git_head(repo), dirty_paths),
        "git_dirty_paths": dirty_paths,
        "tools": tool_versions(),
        "python": platform.python_version(),
        "hostname": socket.gethostname(),
        "cpus": os.cpu_count(),
        "loadavg_1m": os.getloadavg()[0],
    }


def _proc_words(path: str) -> list[str]:
    try:
        return Path(path).read_text().split()
    except OSError:
        return []


def kernel_caps() -> dict:
    """The capability dict passed to transports' preflight.

    kernel_config.probe.probe() when that module is importable (its full dict); otherwise
    the few fields the orchestrator needs, read from /proc/sys, in the same shape.
    """
    try:
        from kernel_config.probe import probe

        return probe()
    except Exception:  # the probe is another component; never let it stop a trial list
        enabled = _proc_words("/proc/sys/net/mptcp/enabled")
        return {
            "kernel_release": platform.release(),
            "mptcp": {
                "present": bool(enabled),
                "enabled": enabled == ["1"],
                "available_schedulers": _proc_words("/proc/sys/net/mptcp/available_schedulers")
                or (["default"] if enabled else []),
            },
            "tcp_cc": {
                "available": _proc_words("/proc/sys/net/ipv4/tcp_available_congestion_control"),
            },
        }


def mpproxy_names(binary: Path) -> tuple[list[str], list[str]] | None:
    """CC and scheduler names from `mpproxy --list` (CONTRACTS §6), or None if absent.

    Accepts JSON ({"cc": [...], "sched": [...]}) or lines such as `cc: bbr cubic` /
    `sched: lrf rr`.
    """
    if not binary.is_file():
        return None
    try:
        done = subprocess.run(
            [str(binary), "--list"], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    text = done.stdout
    try:
        import json

        data = json.loads(text)
        return [str(x) for x in data["cc"]], [str(x) for x in data["sched"]]
    except (ValueError, KeyError, TypeError):
        pass
    found: dict[str, list[str]] = {"cc": [], "sched": []}
    for line in text.splitlines():
        match = re.match(r"\s*(cc|congestion[ _-]?controls?|sched\w*)\s*[:=]\s*(.*)", line, re.I)
        if match:
            key = "cc" if match.group(1).lower().startswith(("cc", "cong")) else "sched"
            found[key] += [w for w in re.split(r"[\s,]+", match.group(2)) if w]
    if not found["cc"] and not found["sched"]:
        return None
    return found["cc"], found["sched"]
