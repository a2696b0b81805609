"""`python -m testbed` (= ./run_trials.sh): expand options into a trial matrix and run it.

Everything is validated before anything is created: an invalid scenario, an unknown
name or an impossible combination exits with status 2 and a message saying why, and no
folder, namespace or process exists afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from server.live_mpd import DEFAULT_LATENCY_S, latency_below_floor
from testbed import transports
from testbed.cpusets import CpuPlanError, choose_jobs, cpu_count
from testbed.env import kernel_caps
from testbed.registry import DEFAULT_PLAYER, NO_PLAYER_NAME, PLAYERS, TRANSPORTS
from testbed.spec import VIDEO_MODES, TrialSpec

REPO = Path(__file__).resolve().parent.parent

# ---- Defaults: the one place to change what `./run_trials.sh` runs. ----
# With no matrix option at all (--scenario, --transport, --cc, --sched, --player) it runs
# DEFAULT_MATRIX: 2 CCs x 2 schedulers of the user-space transport on the lossy seed-002
# scenario B1 (Wi-Fi at the edge of coverage: about 10 % loss for the first minute, so a
# short clip meets the loss; A1's first loss ramp starts only at 30 s), plus one control
# trial (no impairment) that tells whether the machine could play video cleanly (0 stalls,
# 0 dropped frames). With some of them given, the others take the single defaults below.
DEFAULT_MATRIX = (
    {"scenario": ["B1"], "transport": ["user"], "cc": ["bbr", "cubic"], "sched": ["lrf", "rr"]},
    {"scenario": ["control"], "transport": ["user"], "cc": ["cubic"], "sched": ["lrf"]},
)
DEFAULTS = {
    "scenario": "control",
    "transport": "user",
    "video_duration_s": 60,
    "reps": 1,
    "seed": 1,
    "jobs": 1,
}
# CC, scheduler and player defaults are per transport, in testbed/registry.py.
# The options whose absence (all of them) means DEFAULT_MATRIX.
MATRIX_OPTIONS = ("scenario", "transport", "cc", "sched", "player")
# `all` for --transport and --player: every real one (none is the control job, not a choice).
ALL_TRANSPORTS = tuple(t.name for t in TRANSPORTS.values() if t.in_all)
ALL_PLAYERS = tuple(p.name for p in PLAYERS.values() if p.in_all)
TRANSPORT_NAMES = tuple(TRANSPORTS)
PLAYER_NAMES = (*PLAYERS, NO_PLAYER_NAME)


class UsageError(Exception):
    """Invalid options; the message says which and what is valid. Exit status 2."""


def _csv(value: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"empty list: {value!r}")
    return list(dict.fromkeys(items))


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} must be at least 1")
    return number


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{number} must be > 0")
    return number


def _key_value(value: str) -> str:
    """One --cc-opt/--sched-opt: KEY=VALUE with a non-empty key."""
    key, equals, _ = value.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"{value!r} is not KEY=VALUE (e.g. hystart=false)")
    return value


def _options(given: list[str]) -> tuple[str, ...]:
    """KEY=VALUE options sorted by key; a key given twice keeps its last value (as mpproxy)."""
    pairs = dict(kv.split("=", 1) for kv in given)
    return tuple(f"{key}={pairs[key]}" for key in sorted(pairs))


def _reps(value: str) -> int | str:
    """`--reps N` or `--reps auto` (testbed/reps_auto.py)."""
    return "auto" if value == "auto" else _positive_int(value)


def _jobs(value: str) -> int | None:
    """`--jobs N` or `--jobs auto` (None: chosen from the CPUs once the matrix is known)."""
    return None if value == "auto" else _positive_int(value)


def _seed(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if not 0 <= number < 2**63:
        raise argparse.ArgumentTypeError(f"{number} must be in 0 .. 2^63-1")
    return number


def build_parser() -> argparse.ArgumentParser:
    d = DEFAULTS
    parser = argparse.ArgumentParser(
        prog="run_trials.sh",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Run a matrix of trials: scenario x transport x CC x scheduler x player x "
            "repetition.\nList options take comma-separated values; `all` expands to every "
            "valid value.\nWith none of --scenario/--transport/--cc/--sched/--player: the default "
            "matrix,\nB1 x user x {bbr,cubic} x {lrf,rr} x dashjs plus one control trial "
            "(5 trials,\nabout 10 minutes here). --transport none runs the control transfer "
            "instead of video\n(a short transfer across each emulated path; measured rate and "
            "RTT printed)."
        ),
        epilog=(
            "Results: results/<run>/trials/<trial-id>/ (one folder per trial, result.json "
            "when finished).\nRe-running the same command resumes: finished trials are "
            "skipped, unfinished ones redone.\nExit status: 0 all trials ok, 1 some failed, "
            "2 invalid options, 130 interrupted."
        ),
    )

    def names_option(flag: str, help_text: str) -> None:
        """A matrix option: comma-separated names, `all` expands; None when not given."""
        parser.add_argument(flag, type=_csv, default=None, metavar="NAMES", help=help_text)

    parser.add_argument(
        "--reproduce",
        default=None,
        metavar="SEED",
        help="re-run a seed paper's experiments and write docs/reproductions/<seed>.md: "
        "seed000..seed004 or all; --reps, --engine (sim: simulated parts and the page; emulate: "
        "the emulated cross-checks and seed002's emulated cells), --dry-run, --jobs and "
        "--video-duration (seed002) apply (testbed/reproduce.py)",
    )
    parser.add_argument(
        "--from",
        dest="reproduce_from",
        type=_csv,
        default=None,
        metavar="RUN[,RUN]",
        help="with --reproduce: build the page from these existing run folders (a simulated "
        "or emulated seed002 matrix run, or an emulated cross-check run) instead of running them",
    )
    names_option(
        "--scenario",
        f"scenario names (netem-scenarios/<name>.toml) or .toml paths; `all` = every "
        f"top-level scenario (default: {d['scenario']})",
    )
    names_option(
        "--transport",
        f"{', '.join(TRANSPORT_NAMES)}; `all` = {','.join(ALL_TRANSPORTS)} "
        f"(default: {d['transport']}; none = control transfer, no video)",
    )
    names_option(
        "--cc",
        "congestion controls; `all` = what each transport supports (user: mpproxy --list; "
        "kernel/tcp-*: the kernel's list) (default: per transport: "
        + ", ".join(f"{t.name}={t.default_cc}" for t in TRANSPORTS.values() if t.default_cc)
        + "; none has no CC)",
    )
    names_option(
        "--sched",
        "packet schedulers; `all` = what each transport supports (default: per "
        "transport: "
        + ", ".join(f"{t.name}={t.default_sched}" for t in TRANSPORTS.values() if t.default_sched)
        + "; tcp-* and none have none)",
    )
    for kind, example, what in (
        ("cc", "hystart=false", "congestion control"),
        ("sched", "predict=always", "scheduler"),
    ):
        parser.add_argument(
            f"--{kind}-opt",
            type=_key_value,
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help=f"{what} option of the user transport, repeatable (e.g. {example}); passed "
            f"to mpproxy and mpsim as --{kind}-opt, part of the trial id; a key the "
            f"{what} does not read or a bad value exits 2 (each algorithm's options: "
            "docs/algorithms/)",
        )
    names_option(
        "--player",
        f"{', '.join(PLAYER_NAMES)}; `all` = {','.join(ALL_PLAYERS)} "
        f"(default: {DEFAULT_PLAYER} for a streaming transport, none for --transport none; "
        "none only with --transport none)",
    )
    parser.add_argument(
        "--video-duration",
        type=_positive_int,
        default=d["video_duration_s"],
        metavar="SECONDS",
        help=f"length of the DASH clip in seconds (default: {d['video_duration_s']}; "
        "ignored with --player none)",
    )
    parser.add_argument(
        "--video-mode",
        choices=VIDEO_MODES,
        default="vod",
        help="vod: static MPD (default); live: dynamic MPD played at --live-latency-s behind "
        "the live edge, late media skipped (docs/PLAYER.md, 'Live mode'; dashjs and gstreamer)",
    )
    parser.add_argument(
        "--live-latency-s",
        type=_positive_float,
        default=DEFAULT_LATENCY_S,
        metavar="SECONDS",
        help="live mode's target latency to the live edge (default: "
        f"{DEFAULT_LATENCY_S:g}, two segment durations; a lower target is warned about: "
        "docs/PLAYER.md, 'Live mode')",
    )
    parser.add_argument(
        "--interactive",
        action="store_true",
        help="one cell, played by you: builds the trial, prints a URL for the host's browser "
        "(a loopback port forwarded into the client namespace), Ctrl-C ends it "
        "(testbed/interactive.py)",
    )
    parser.add_argument(
        "--interactive-port",
        type=_positive_int,
        default=8088,
        metavar="PORT",
        help="host loopback port of --interactive (the stats for the overlay use PORT+1)",
    )
    parser.add_argument(
        "--restart-on-reload",
        action="store_true",
        help="with --interactive: every load of the page restarts the scenario's clock "
        "(the emulator starts the scenario again; testbed/interactive.py)",
    )
    parser.add_argument(
        "--reps",
        type=_reps,
        default=d["reps"],
        metavar="N|auto",
        help=f"repetitions of every cell (default: {d['reps']}); auto = rounds of repetitions "
        "(same seeds in every cell) until the paired comparisons of stalls, stall time and QoE "
        "are decided or equivalent, --max-reps or --time-budget (testbed/reps_auto.py)",
    )
    parser.add_argument(
        "--max-reps",
        type=_positive_int,
        default=None,
        metavar="N",
        help="with --reps auto: at most N repetitions per cell (default: 30)",
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --reps auto: start no round that would end after SECONDS of wall time",
    )
    parser.add_argument(
        "--seed",
        type=_seed,
        default=d["seed"],
        metavar="N",
        help=f"base seed; repetition r uses seed N+r for the emulator's loss draws "
        f"(default: {d['seed']})",
    )
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=d["jobs"],
        metavar="N",
        help=f"trials run side by side, each in its own namespaces and CPU sets (default: "
        f"{d['jobs']}); auto = the most this machine can isolate: a streaming trial needs 2 "
        "CPUs (player, testbed), a control transfer 1; a larger N exits 2 saying why",
    )
    parser.add_argument(
        "--out",
        default=None,
        metavar="RUN",
        help="run name (results/RUN) or a folder path (default: derived from the options, "
        "so the same command resumes the same run)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_int,
        default=None,
        metavar="SECONDS",
        help="per-trial timeout in seconds (default: 120 + 3 x video duration with a "
        "player, 120 without)",
    )
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="RUN_DIR",
        help="rebuild summary.csv and report.html of an existing run folder; runs nothing",
    )
    parser.add_argument(
        "--executor",
        choices=("local", "slurm"),
        default="local",
        help="where trials run: local (this machine, --jobs at a time) or slurm (one job "
        "array on a Slurm cluster: one task per pending trial; the run folder must be on "
        "storage every node shares; see README) (default: local)",
    )
    parser.add_argument(
        "--slurm-opt",
        action="append",
        default=[],
        metavar="OPT",
        help="extra sbatch option for the job array, repeatable, e.g. "
        "--slurm-opt=--partition=net --slurm-opt=--time=30 (with --executor slurm)",
    )
    parser.add_argument(
        "--detach",
        action="store_true",
        help="with --executor slurm: return once the array is submitted; build the report "
        "later with --report, or re-run the command to resume",
    )
    parser.add_argument(
        "--trial-id",
        default=None,
        metavar="ID",
        help="run only this trial of the existing run given by --out (what each Slurm array "
        "task runs); the spec comes from the run's run.json",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="list scenarios, transports, players and each transport's CCs and schedulers",
    )
    parser.add_argument(
        "--sched-trace",
        action="store_true",
        help="user transport: every trial also writes the sender's per-decision scheduler "
        "trace (sched-trace-server.jsonl, docs/CONTRACTS.md) and its report shows a timeline",
    )
    parser.add_argument(
        "--engine",
        choices=("emulate", "sim"),
        default="emulate",
        help="emulate: real processes over emulated links in real time; sim: the same matrix "
        "in virtual time (user transport only; docs/SIMULATOR.md), --jobs defaults to every "
        "core (default: emulate)",
    )
    parser.add_argument(
        "--cross-validate",
        action="store_true",
        help="run the matrix on both engines (into RUN-emulate and RUN-sim) and compare them: "
        "per trial, and Kendall's tau-b per matrix (RUN-sim/crossval.json; docs/SIMULATOR.md)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the trials the options expand to, and where they would go; run nothing",
    )
    return parser


def _scenarios(requested: list[str], repo: Path) -> list[str]:
    from testbed.scenario import list_scenarios

    if "all" in requested:
        return [n for n in list_scenarios(repo) if "/" not in n]
    return requested


def _per_transport(
    kind: str,
    requested: list[str] | None,
    transport: str,
    supported: list[str] | None,
    default: str | None,
) -> list[str | None]:
    """Values of --cc or --sched for one transport, checked against what it supports."""
    if supported is None or default is None:
        return [None]  # this transport has no such thing; the option does not apply
    if requested is None:
        requested = [default]
    if "all" in requested:
        if not supported:
            raise UsageError(
                f"--{kind} all: cannot list the {kind} names of transport {transport} "
                f"(for user: is {transports.MPPROXY_BINARY} built?)"
            )
        return list(supported)
    if not supported:
        raise UsageError(
            f"--{kind}: cannot check {','.join(requested)} against transport {transport}: "
            f"its {kind} list is unavailable (for user: is {transports.MPPROXY_BINARY} built?)"
        )
    bad = [v for v in requested if v not in supported]
    if bad:
        raise UsageError(
            f"--{kind} {','.join(bad)}: not supported by transport {transport}; "
            f"valid: {', '.join(supported)}"
        )
    return list(requested)


@dataclass(frozen=True)
class Plan:
    """Validated options: every list checked, defaults filled in; `expand` only multiplies."""

    scenarios: list[str]
    players: list[str | None]
    cells: dict[str, tuple[list[str | None], list[str | None]]]  # transport -> (ccs, scheds)
    video_duration_s: int
    reps: int
    seed: int
    video_mode: str = "vod"
    live_latency_s: float = DEFAULT_LATENCY_S
    cc_opts: tuple[str, ...] = ()
    sched_opts: tuple[str, ...] = ()


def _validate_scenarios(args: argparse.Namespace, repo: Path) -> list[str]:
    from testbed.scenario import ScenarioError, load_resolved

    scenarios = _scenarios(args.scenario or [DEFAULTS["scenario"]], repo)
    for scenario in scenarios:
        try:
            load_resolved(scenario, repo, args.seed)
        except ScenarioError as exc:
            raise UsageError(str(exc)) from exc
    return scenarios


def _validate_names(
    option: str, requested: list[str], valid: tuple[str, ...], every: tuple[str, ...]
) -> list[str]:
    names = list(every) if "all" in requested else requested
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise UsageError(f"--{option} {','.join(unknown)}: unknown; valid: {', '.join(valid)}, all")
    return names


def _validate_players(args: argparse.Namespace, transport_names: list[str]) -> list[str | None]:
    names = _validate_names("player", args.player or [DEFAULT_PLAYER], PLAYER_NAMES, ALL_PLAYERS)
    streaming = [t for t in transport_names if TRANSPORTS[t].video]
    if not streaming and args.player is not None and names != [NO_PLAYER_NAME]:
        raise UsageError(
            "--transport none runs the control transfer and carries no video: "
            "use --player none with it"
        )
    if streaming and NO_PLAYER_NAME in names:
        raise UsageError(
            f"--player none with --transport {','.join(streaming)}: nothing would use the "
            "transport; --player none goes only with --transport none (choose --player "
            f"{', '.join(ALL_PLAYERS)} or all)"
        )
    return [None if n == NO_PLAYER_NAME else n for n in names]


def _validate_options(
    args: argparse.Namespace,
    cells: dict[str, tuple[list[str | None], list[str | None]]],
    repo: Path,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """--cc-opt/--sched-opt: only for transports that take them, and each one accepted by
    the binary (`mpproxy check`) with every CC or scheduler of the plan."""
    cc_opts, sched_opts = _options(args.cc_opt), _options(args.sched_opt)
    if not (cc_opts or sched_opts):
        return cc_opts, sched_opts
    given = " ".join(
        [*(f"--cc-opt {kv}" for kv in cc_opts), *(f"--sched-opt {kv}" for kv in sched_opts)]
    )
    refusing = [t for t in cells if not TRANSPORTS[t].algorithm_options]
    if refusing:
        takes = [t.name for t in TRANSPORTS.values() if t.algorithm_options]
        raise UsageError(
            f"{given}: transport {','.join(refusing)} takes no algorithm options (they set "
            f"options of the testbed's own CCs and schedulers: --transport {','.join(takes)})"
        )
    problems = []
    for transport, (ccs, scheds) in cells.items():
        module = transports.get(transport)
        problems += module.option_problems(repo, [c for c in ccs if c], [s for s in scheds if s],
                                           cc_opts, sched_opts)  # fmt: skip
    if problems:
        raise UsageError("\n  ".join([f"{given} refused:", *dict.fromkeys(problems)]))
    return cc_opts, sched_opts


def validate(args: argparse.Namespace, repo: Path, caps: dict) -> Plan:
    """Checks every option against the scenarios, the registry and what each transport
    supports; UsageError (exit 2) on anything invalid. Creates nothing."""
    if getattr(args, "restart_on_reload", False) and not args.interactive:
        raise UsageError("--restart-on-reload: only with --interactive (a page a person reloads)")
    scenarios = _validate_scenarios(args, repo)
    transport_names = _validate_names(
        "transport", args.transport or [DEFAULTS["transport"]], TRANSPORT_NAMES, ALL_TRANSPORTS
    )
    players = _validate_players(args, transport_names)
    if args.video_mode == "live":
        below = latency_below_floor(args.live_latency_s)
        if below:
            print(f"warning: --live-latency-s: {below}", file=sys.stderr)
    names = {t: transports.names(t, repo, caps) for t in transport_names}
    for kind, given, index in (("cc", args.cc, 0), ("sched", args.sched, 1)):
        if given is not None and all(names[t][index] is None for t in names):
            raise UsageError(
                f"--{kind} {','.join(given)}: transport {','.join(transport_names)} has no "
                f"{kind} to choose; leave --{kind} out"
            )
    cells = {}
    for t in transport_names:
        entry = TRANSPORTS[t]
        ccs, scheds = names[t]
        cells[t] = (
            _per_transport("cc", args.cc, t, ccs, entry.default_cc),
            _per_transport("sched", args.sched, t, scheds, entry.default_sched),
        )
    cc_opts, sched_opts = _validate_options(args, cells, repo)
    return Plan(scenarios, players, cells, args.video_duration, args.reps, args.seed,
                args.video_mode, args.live_latency_s, cc_opts, sched_opts)  # fmt: skip


def expand(plan: Plan) -> list[TrialSpec]:
    """The trial specs of a validated plan: scenario x transport x CC x scheduler x player x
    repetition. A transport without video runs once per cell with no player."""
    specs: list[TrialSpec] = []
    for transport, (cc_list, sched_list) in plan.cells.items():
        players = plan.players if TRANSPORTS[transport].video else [None]
        for scenario in plan.scenarios:
            for cc in cc_list:
                for sched in sched_list:
                    for player in players:
                        for rep in range(plan.reps):
                            specs.append(
                                TrialSpec(
                                    scenario=scenario,
                                    transport=transport,
                                    cc=cc,
                                    sched=sched,
                                    player=player,
                                    # the clip length means nothing without a player
                                    video_duration_s=plan.video_duration_s if player else 0,
                                    rep=rep,
                                    seed=plan.seed + rep,
                                    video_mode=plan.video_mode if player else "vod",
                                    live_latency_s=plan.live_latency_s,
                                    cc_opts=plan.cc_opts,
                                    sched_opts=plan.sched_opts,
                                )
                            )
    return specs


def preflight(specs: list[TrialSpec], caps: dict) -> None:
    """Each transport says what it cannot do (binaries missing, kernel lacks MPTCP, ...);
    UsageError listing every reason."""
    problems: list[str] = []
    for transport in dict.fromkeys(s.transport for s in specs):
        try:
            module = transports.get(transport)
        except transports.TransportUnavailable as exc:
            problems.append(str(exc))
            continue
        for spec in (s for s in specs if s.transport == transport):
            for reason in spec.problems() + module.preflight(spec, caps):
                line = f"{spec.trial_id()}: {reason}"
                if line not in problems:
                    problems.append(line)
    if problems:
        raise UsageError("cannot run:\n  " + "\n  ".join(problems))


def specs_for(args: argparse.Namespace, repo: Path, caps: dict) -> list[TrialSpec]:
    """validate, expand, preflight: the trials the options mean, or UsageError."""
    specs = expand(validate(args, repo, caps))
    preflight(specs, caps)
    return specs


def print_list(repo: Path, caps: dict) -> None:
    from testbed.scenario import list_scenarios

    scenarios = list_scenarios(repo)
    top = [n for n in scenarios if "/" not in n]
    print(f"scenarios: {' '.join(top)}  (+{len(scenarios) - len(top)} in subfolders)")
    print("players:")
    for entry in PLAYERS.values():
        print(f"  {entry.name:<9} {entry.carries}")
    print(f"  {NO_PLAYER_NAME:<9} no player (only with --transport none)")
    print("transports:")
    for name, entry in TRANSPORTS.items():
        try:
            transports.get(name)
            state = "available"
        except transports.TransportUnavailable as exc:
            state = f"unavailable: {exc}"
        ccs, scheds = transports.names(name, repo, caps)
        print(f"  {name:<9} {entry.carries}; {state}")
        for kind, listed in (("cc", ccs), ("sched", scheds)):
            shown = "(none)" if listed is None else " ".join(listed) or "(unknown)"
            print(f"            {kind + ':':<6} {shown}")


def _local_jobs(args: argparse.Namespace, specs: list[TrialSpec]) -> int:
    """--jobs for a local run, checked against the CPUs (CpuPlanError if it cannot isolate)."""
    if args.executor != "local":
        return 1  # Slurm places the trials itself
    streaming = any(spec.player is not None for spec in specs)
    jobs, why = choose_jobs(args.jobs, streaming, cpu_count())
    if args.jobs is None:
        print(f"--jobs auto: {jobs} at a time ({why})", file=sys.stderr)
    return jobs


def main(argv: list[str] | None = None, repo: Path = REPO) -> int:
    from testbed.topology import Interrupted

    try:
        return _main(argv, repo)
    except (Interrupted, KeyboardInterrupt):
        # Before the matrix runs nothing exists yet; after it, teardown has already run.
        print("run_trials.sh: interrupted", file=sys.stderr)
        return 130


def _run_interactive(
    args: argparse.Namespace, specs: list[TrialSpec], run_dir: Path, repo: Path
) -> int:
    """`--interactive`: one cell, played by a person through the emulated paths."""
    if len(specs) != 1 or specs[0].player is None:
        print(f"run_trials.sh --interactive: needs exactly one cell with a player; the "
              f"options give {len(specs)}: {', '.join(s.trial_id() for s in specs[:4])}",
              file=sys.stderr)  # fmt: skip
        return 2
    if os.geteuid() != 0:
        print("run_trials.sh: needs root (network namespaces, iptables, chrt)", file=sys.stderr)
        return 2
    from testbed.interactive import run_interactive

    spec = specs[0]
    return run_interactive(spec, run_dir / "trials" / spec.trial_id(), repo,
                           args.interactive_port, args.restart_on_reload)  # fmt: skip


def _run_sim(
    args: argparse.Namespace,
    specs: list[TrialSpec],
    run_dir: Path,
    sim_dir_for_crossval: Path | None,
    repo: Path,
    argv: list[str] | None,
) -> int | None:
    """`--engine sim` (returns its status), or the simulated half of `--cross-validate`
    (returns None: the emulated half follows)."""
    # Simulated trials are single processes: one per core, no CPU isolation plan.
    from testbed import engine_sim

    words = argv if argv is not None else sys.argv[1:]
    jobs_given = any(w == "--jobs" or w.startswith("--jobs=") for w in words)
    jobs = args.jobs if jobs_given and args.jobs else cpu_count()
    if sim_dir_for_crossval is not None:
        if not args.dry_run:
            status = engine_sim.run_sim_matrix(
                specs, sim_dir_for_crossval, repo, jobs=jobs, argv=argv
            )
            if status == 2:
                return 2
        return None
    if args.dry_run:
        print(f"{len(specs)} simulated trials into {run_dir}/trials/, {jobs} at a time:")
        for spec in specs:
            print(f"  {spec.trial_id()}")
        return 0
    return engine_sim.run_sim_matrix(specs, run_dir, repo, jobs=jobs, argv=argv)


def _main(argv: list[str] | None, repo: Path) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from testbed import matrix

    if args.report is not None:
        return matrix.rebuild_report(args.report)
    if args.reproduce is not None:
        from testbed import reproduce

        return reproduce.main(args, argv, repo)
    if args.reproduce_from is not None:
        print("run_trials.sh: --from goes with --reproduce SEED", file=sys.stderr)
        return 2
    if args.trial_id is not None:
        if not args.out:
            print("run_trials.sh: --trial-id needs --out RUN (the run the trial belongs to)",
                  file=sys.stderr)  # fmt: skip
            return 2
        if os.geteuid() != 0:
            print("run_trials.sh: needs root (network namespaces, iptables, chrt)", file=sys.stderr)
            return 2
        return matrix.run_one(matrix.run_dir_for(args.out, [], repo), args.trial_id, repo,
                              timeout_s=args.timeout)  # fmt: skip
    if args.executor != "slurm" and (args.detach or args.slurm_opt):
        print("run_trials.sh: --detach and --slurm-opt go with --executor slurm", file=sys.stderr)
        return 2
    caps = kernel_caps()
    if args.list:
        print_list(repo, caps)
        return 0
    if args.reps == "auto" or args.max_reps is not None or args.time_budget is not None:
        from testbed import reps_auto

        return reps_auto.main(args, argv, repo, caps)
    try:
        if all(getattr(args, option) is None for option in MATRIX_OPTIONS):
            specs = [
                spec
                for cell in DEFAULT_MATRIX
                for spec in specs_for(argparse.Namespace(**{**vars(args), **cell}), repo, caps)
            ]
        else:
            specs = specs_for(args, repo, caps)
    except UsageError as exc:
        print(f"run_trials.sh: {exc}", file=sys.stderr)
        return 2
    run_dir = matrix.run_dir_for(args.out, specs, repo)
    if args.interactive:
        return _run_interactive(args, specs, run_dir, repo)
    sim_dir_for_crossval = None
    if args.cross_validate:
        if args.executor != "local" or args.engine != "emulate":
            print("run_trials.sh: --cross-validate runs both engines locally; leave out "
                  "--engine and --executor", file=sys.stderr)  # fmt: skip
            return 2
        sim_dir_for_crossval = run_dir.with_name(run_dir.name + "-sim")
        run_dir = run_dir.with_name(run_dir.name + "-emulate")
    if args.engine == "sim" or sim_dir_for_crossval is not None:
        status = _run_sim(args, specs, run_dir, sim_dir_for_crossval, repo, argv)
        if status is not None:
            return status
    try:
        args.jobs = _local_jobs(args, specs)
    except CpuPlanError as exc:
        print(f"run_trials.sh: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(f"{len(specs)} trials into {run_dir}/trials/, {args.jobs} at a time:")
        for spec in specs:
            print(f"  {spec.trial_id()}")
        return 0
    if os.geteuid() != 0:
        print("run_trials.sh: needs root (network namespaces, iptables, chrt)", file=sys.stderr)
        return 2
    if args.sched_trace:
        # Read by testbed/transports/user.py when it builds the mpproxy command lines.
        os.environ[transports.SCHED_TRACE_ENV] = "1"
    if args.executor == "slurm":
        from testbed.slurm import run_slurm

        return run_slurm(
            specs,
            run_dir,
            repo,
            slurm_opts=args.slurm_opt,
            detach=args.detach,
            write_manifest=lambda: matrix.write_run_manifest(run_dir, specs, repo, argv),
        )
    status = matrix.run_matrix(
        specs, run_dir, repo, jobs=args.jobs, timeout_s=args.timeout, argv=argv
    )
    if sim_dir_for_crossval is not None and status in (0, 1):
        from testbed import crossval

        figures = crossval.write(run_dir, sim_dir_for_crossval)
        print(f"cross-validation ({sim_dir_for_crossval / 'crossval.json'}):")
        print(json.dumps(crossval.no_nan(figures), indent=2))
    return status
