"""Soak: hundreds of short emulated trials in a row, with what might grow sampled as they go.

    python -m testbed.soak --trials 200 --out results/soak            (as root)

runs one matrix of `--trials` short trials (`run_trials.sh --reps N`: by default control
transfers, `--transport none`, 1 s per path and direction; `--kind clip` plays 10 s clips
with the user transport and dash.js instead) and, before the first trial and after every
`--every` finished trials, writes one line to <out>/soak.jsonl with

- the runner's (the matrix process's) open files and resident memory (RSS);
- the machine's network namespaces (all, and the testbed's `tb-` ones), the testbed's cgroups
  (under mptcp-testbed/), the host's iptables rules (all tables), its processes (all, and
  those naming the run folder) and the testbed's state files;
- the disk used by the run folder, and per finished trial.

At the end <out>/soak.png plots them against the trials done, and the exit status is the
matrix's. Nothing should grow: a line per sample that rises with the trials is a leak.
The testbed-owned counts (tb- namespaces, cgroups, state files, processes naming the run)
are the ones to read on a busy machine; the machine-wide ones include other users.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from testbed.cpusets import CGROUP_ROOT, GROUP_PREFIX
from testbed.topology import NAMESPACE_PREFIX, STATE_DIR, list_namespaces

REPO = Path(__file__).resolve().parent.parent
SOAK_LOG = "soak.jsonl"
SOAK_PLOT = "soak.png"
POLL_S = 1.0
CONTROL_TRANSFER_S = "1"


def _count_lines(argv: list[str]) -> int:
    done = subprocess.run(argv, capture_output=True, text=True)
    return len([x for x in done.stdout.splitlines() if x.strip()])


def _rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _open_files(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def _ancestors() -> set[int]:
    """This process and its ancestors (the soak's own command line names the run folder)."""
    found, pid = set(), os.getpid()
    while pid > 1 and pid not in found:
        found.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return found


def _processes(run_dir: Path, runner_pid: int) -> tuple[int, int]:
    """(all processes, those whose command line names the run folder: the runner and its
    trials while they run; none once it has exited, or something was left)."""
    total = naming = 0
    needle = str(run_dir).encode()
    mine = _ancestors() | {runner_pid}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        total += 1
        if int(entry.name) in mine:
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                naming += needle in f.read()
        except OSError:
            continue
    return total, naming


def _disk_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue
    return total


def sample(runner_pid: int, run_dir: Path, trials_done: int) -> dict:
    namespaces = list_namespaces()
    iptables = sum(_count_lines(["iptables", "-w", "-t", t, "-S"])
                   for t in ("filter", "mangle", "nat", "raw"))  # fmt: skip
    cgroups = [p for p in CGROUP_ROOT.glob(f"**/{GROUP_PREFIX}/*") if p.is_dir()]
    processes, processes_of_run = _processes(run_dir, runner_pid)
    disk = _disk_bytes(run_dir)
    return {
        "t_unix_s": round(time.time(), 3),
        "trials_done": trials_done,
        "runner_open_files": _open_files(runner_pid),
        "runner_rss_kb": _rss_kb(runner_pid),
        "namespaces": len(namespaces),
        "testbed_namespaces": len([n for n in namespaces if n.startswith(NAMESPACE_PREFIX)]),
        "testbed_cgroups": len(cgroups),
        "iptables_rules": iptables,
        "processes": processes,
        "processes_naming_run": processes_of_run,
        "state_files": len(list(STATE_DIR.glob("*.json"))) if STATE_DIR.is_dir() else 0,
        "disk_bytes": disk,
        "disk_bytes_per_trial": round(disk / trials_done) if trials_done else None,
    }


def matrix_argv(kind: str, trials: int, out: Path) -> list[str]:
    argv = [str(REPO / "run_trials.sh"), "--scenario", "control", "--reps", str(trials),
            "--jobs", "1", "--out", str(out)]  # fmt: skip
    if kind == "control":
        return argv + ["--transport", "none", "--player", "none"]
    return argv + ["--transport", "user", "--cc", "cubic", "--sched", "lrf",
                   "--player", "dashjs", "--video-duration", "10"]  # fmt: skip


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("runner_open_files", "runner open files"),
        ("runner_rss_kb", "runner RSS (kB)"),
        ("testbed_namespaces", "tb- namespaces"),
        ("testbed_cgroups", "testbed cgroups"),
        ("iptables_rules", "host iptables rules"),
        ("processes_naming_run", "processes naming the run"),
        ("processes", "processes (machine)"),
        ("state_files", "topology state files"),
        ("disk_bytes_per_trial", "disk per trial (bytes)"),
    ]
    figure, axes = plt.subplots(3, 3, figsize=(12, 8), sharex=True)
    x = [r["trials_done"] for r in rows]
    for ax, (key, title) in zip(axes.flat, panels, strict=True):
        ax.plot(x, [r.get(key) for r in rows], marker="o", markersize=3)
        ax.set_title(title, fontsize=10)
        ax.set_ylim(bottom=0)
    for ax in axes[-1]:
        ax.set_xlabel("trials done")
    figure.suptitle(f"soak: {x[-1] if x else 0} trials, sampled every few trials")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def run(kind: str, trials: int, out: Path, every: int) -> int:
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = out / SOAK_LOG
    env = {**os.environ, "TESTBED_CONTROL_TRANSFER_S": CONTROL_TRANSFER_S}
    proc = subprocess.Popen(matrix_argv(kind, trials, out), env=env)  # the runner (exec'd)
    rows = [sample(proc.pid, out, 0)]
    next_at = every
    with open(log, "a", encoding="utf-8") as sink:
        sink.write(json.dumps(rows[0]) + "\n")
        sink.flush()
        while proc.poll() is None:
            time.sleep(POLL_S)
            done = len(list(out.glob("trials/*/result.json")))
            if done >= next_at and proc.poll() is None:
                rows.append(sample(proc.pid, out, done))
                sink.write(json.dumps(rows[-1]) + "\n")
                sink.flush()
                next_at = (done // every + 1) * every
        final = sample(proc.pid, out, len(list(out.glob("trials/*/result.json"))))
        final["runner_open_files"] = final["runner_rss_kb"] = None  # it has exited
        rows.append(final)
        sink.write(json.dumps(final) + "\n")
    plot(rows, out / SOAK_PLOT)
    print(f"soak: {log} ({len(rows)} samples), {out / SOAK_PLOT}")
    return proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.soak", description=__doc__)
    parser.add_argument("--trials", type=int, default=200, help="how many trials (default 200)")
    parser.add_argument("--out", type=Path, required=True, help="the run folder")
    parser.add_argument("--every", type=int, default=10, help="sample every N trials (10)")
    parser.add_argument(
        "--kind", choices=("control", "clip"), default="control",
        help="control: control transfers (default); clip: 10 s dash.js clips",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.trials < 1 or args.every < 1:
        print("python -m testbed.soak: --trials and --every must be at least 1", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("python -m testbed.soak: needs root (network namespaces)", file=sys.stderr)
        return 2
    return run(args.kind, args.trials, args.out, args.every)


if __name__ == "__main__":
    sys.exit(main())
