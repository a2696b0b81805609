"""`python -m testbed` (= ./run_trials.sh): the command line. It parses the options and
dispatches to a mode: a matrix run (testbed/plan.py validates, expands and runs it), --report,
--reproduce (testbed/reproduce/), --trial-id, --interactive, --list, --cross-validate.

Everything is validated before anything is created: an invalid scenario, an unknown
name or an impossible combination exits with status 2 and a message saying why, and no
folder, namespace or process exists afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from common.environment import scoped_environ
from server.content import LADDERS
from server.live_mpd import DEFAULT_LATENCY_S
from testbed import capture, transports
from testbed.engine_sim import SIM_STATS_INTERVAL_ENV
from testbed.env import kernel_caps
from testbed.plan import (
    ALL_PLAYERS,
    ALL_TRANSPORTS,
    DEFAULT_RUN,
    DEFAULTS,
    PLAYER_NAMES,
    TRANSPORT_NAMES,
    UsageError,
    default_specs,
    run_plan,
)
from testbed.registry import DEFAULT_PLAYER, NO_PLAYER_NAME, PLAYERS, TRANSPORTS
from testbed.spec import DEFAULT_LADDER_NAME, MIN_RECV_WINDOW_BYTES, VIDEO_MODES, TrialSpec

REPO = Path(__file__).resolve().parent.parent


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


def _reps(value: str) -> int | str:
    """`--reps N` or `--reps auto` (testbed/reps_auto.py)."""
    return "auto" if value == "auto" else _positive_int(value)


def _recv_window(value: str) -> int | None:
    """`--recv-window-bytes N` (N >= MIN_RECV_WINDOW_BYTES) or `auto` (None: autotuned)."""
    if value == "auto":
        return None
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an integer number of bytes or auto (autotuned, the default)"
        ) from None
    if number < MIN_RECV_WINDOW_BYTES:
        raise argparse.ArgumentTypeError(
            f"{number} must be >= {MIN_RECV_WINDOW_BYTES} bytes (the transport's smallest "
            "window), or auto (autotuned, the default)"
        )
    return number


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
    parser = argparse.ArgumentParser(
        prog="run_trials.sh",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Run a matrix of trials: scenario x transport x CC x scheduler x player x "
            "repetition.\nList options take comma-separated values; `all` expands to every "
            "valid value.\nWith none of --scenario/--transport/--cc/--sched/--player: the default "
            "matrix,\nB1 x user x {bbr,cubic} x lrf x dashjs, 20 s clips, 9 repetitions paired by "
            "seed,\nplus one control trial (19 trials, about 10 minutes on 2 cores): its report "
            "says\nwhether the CC changed the video. --transport none runs the control transfer "
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

    _add_mode_options(parser)
    _add_matrix_options(parser)
    _add_run_options(parser)
    _add_capture_options(parser)
    return parser


def _add_mode_options(parser: argparse.ArgumentParser) -> None:
    """--reproduce/--from: the seed papers' pages instead of a matrix."""
    parser.add_argument(
        "--reproduce",
        default=None,
        metavar="SEED",
        help="re-run a seed paper's experiments and write docs/reproductions/<seed>.md: "
        "seed000..seed004 or all; --reps, --engine (sim: simulated parts and the page; emulate: "
        "the emulated cross-checks and seed002's emulated cells), --dry-run, --jobs and "
        "--video-duration (seed002) apply (testbed/reproduce/)",
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


def _add_matrix_options(parser: argparse.ArgumentParser) -> None:
    """What the matrix is: scenario x transport x CC x scheduler x player, the clip."""
    d = DEFAULTS

    def names_option(flag: str, help_text: str) -> None:
        """A matrix option: comma-separated names, `all` expands; None when not given."""
        parser.add_argument(flag, type=_csv, default=None, metavar="NAMES", help=help_text)

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
        default=None,
        metavar="SECONDS",
        help=f"length of the DASH clip in seconds (default: {d['video_duration_s']}; the "
        f"default matrix: {DEFAULT_RUN['video_duration']}; "
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
        "--ladder",
        choices=sorted(LADDERS),
        default=DEFAULT_LADDER_NAME,
        help=f"the DASH content ladder (default: {DEFAULT_LADDER_NAME}, 4 rungs; 720p-top-only: "
        "its 5.24 Mbit/s top rung alone, so the player cannot switch down; server/content.py)",
    )
    parser.add_argument(
        "--recv-window-bytes",
        type=_recv_window,
        default=None,
        metavar="BYTES|auto",
        help="the user transport's receive window: a fixed size in bytes (>= "
        f"{MIN_RECV_WINDOW_BYTES}) for mpproxy and mpsim, or auto (default: autotuned as "
        "Linux does)",
    )


def _add_capture_options(parser: argparse.ArgumentParser) -> None:
    """What trials record beyond their default logs: packet captures (--pcap and its
    settings: testbed/capture.py, docs/CAPTURES.md), the scheduler's decisions, and mpsim's
    transport log interval. Each reaches the trials through the run's environment."""
    parser.add_argument(
        "--sched-trace",
        action="store_true",
        help="user transport: every trial also writes the sender's per-decision scheduler "
        "trace (sched-trace-server.jsonl, docs/CONTRACTS.md) and its report shows a timeline",
    )
    parser.add_argument(
        "--sim-stats-interval-ms",
        type=_positive_int,
        default=None,
        metavar="MS",
        help="with --engine sim: the sender's subflow and conn lines every MS ms of virtual "
        "time (mpsim's default 1000; emulated trials log every 100): for reading loss "
        "episodes and windows closely (`python -m metrics losses`); results are unchanged",
    )
    parser.add_argument(
        "--pcap",
        action="store_true",
        help="every trial also captures packets on both router interfaces of each path "
        "(pcap/<path>-client-side.pcap, -server-side.pcap, pcap/capture.json; docs/CAPTURES.md)",
    )
    parser.add_argument(
        "--pcap-snaplen",
        type=int,
        default=capture.DEFAULT_SNAPLEN_BYTES,
        metavar="BYTES",
        help="with --pcap: bytes kept of each packet (default: %(default)s, headers only)",
    )
    parser.add_argument(
        "--pcap-max-mb",
        type=float,
        default=capture.DEFAULT_MAX_MB,
        metavar="MB",
        help="with --pcap: size cap of each capture file; a capture that reaches it stops and "
        "capture.json says so (default: %(default)s)",
    )


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """How the matrix runs: by hand, repetitions, seed, jobs, folder, engine, executor, other
    modes."""
    d = DEFAULTS
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
        default=None,
        metavar="N|auto",
        help=f"repetitions of every cell (default: {d['reps']}; the default matrix: "
        f"{DEFAULT_RUN['reps']}, and 1 control trial); auto = rounds of repetitions "
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


def _sim_jobs(args: argparse.Namespace, argv: list[str] | None) -> int | None:
    """--jobs for the simulator: as given, else None (one per core); the parser's default
    of 1 is for emulated trials."""
    words = argv if argv is not None else sys.argv[1:]
    jobs_given = any(w == "--jobs" or w.startswith("--jobs=") for w in words)
    return args.jobs if jobs_given else None


def _dispatch_other_modes(
    args: argparse.Namespace, argv: list[str] | None, repo: Path
) -> int | None:
    """--report, --reproduce, --trial-id and the option combinations that belong to none:
    their status, or None for a matrix run."""
    from testbed import matrix

    if args.report is not None:
        return matrix.rebuild_report(args.report)
    auto = [
        flag
        for flag, given in (
            ("--reps auto", args.reps == "auto"),
            ("--max-reps", args.max_reps is not None),
            ("--time-budget", args.time_budget is not None),
        )
        if given
    ]
    if auto and args.reproduce is not None:
        print(f"run_trials.sh: {', '.join(auto)} cannot go with --reproduce: a reproduction "
              "runs the repetitions its page states (--reps N overrides them); --reps auto "
              "goes with a matrix run", file=sys.stderr)  # fmt: skip
        return 2
    if args.reproduce is not None:
        from testbed.reproduce import run

        return run.main(args, argv, repo)
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
    return None


def _cross_validate(
    args: argparse.Namespace, specs: list[TrialSpec], run_dir: Path, repo: Path, argv
) -> int:
    """--cross-validate: the matrix in the simulator (RUN-sim), then emulated (RUN-emulate),
    then the comparison (RUN-sim/crossval.json)."""
    if args.executor != "local" or args.engine != "emulate":
        raise UsageError(
            "--cross-validate runs both engines locally; leave out --engine and --executor"
        )
    sim_dir = run_dir.with_name(run_dir.name + "-sim")
    emulate_dir = run_dir.with_name(run_dir.name + "-emulate")
    if not args.dry_run:
        status = run_plan(specs, sim_dir, engine="sim", jobs=_sim_jobs(args, argv), repo=repo,
                          argv=argv)  # fmt: skip
        if status == 2:
            return 2
    status = run_plan(specs, emulate_dir, engine="emulate", jobs=args.jobs, timeout=args.timeout,
                      repo=repo, argv=argv, dry_run=args.dry_run)  # fmt: skip
    if not args.dry_run and status in (0, 1):
        from testbed import crossval

        figures = crossval.write(emulate_dir, sim_dir)
        print(f"cross-validation ({sim_dir / 'crossval.json'}):")
        print(json.dumps(crossval.no_nan(figures), indent=2))
    return status


def _run_environment(args: argparse.Namespace) -> tuple[dict[str, str], list[str]]:
    """What the run's trial processes inherit (captures, scheduler traces), or what is wrong
    with the options. Set only for the run: a caller's later runs start clean."""
    env: dict[str, str] = {}
    problems: list[str] = []
    if args.pcap:
        simulated = args.engine == "sim" or args.cross_validate
        env, problems = capture.run_environment(args.pcap_snaplen, args.pcap_max_mb, simulated)
    if args.sched_trace:
        # Read by testbed/transports/user.py when it builds the mpproxy command lines.
        env[transports.SCHED_TRACE_ENV] = "1"
    if args.sim_stats_interval_ms is not None:
        if args.engine != "sim" and not args.cross_validate:
            problems.append(
                f"--sim-stats-interval-ms {args.sim_stats_interval_ms}: applies to simulated "
                "trials (--engine sim or --cross-validate); emulated ones log every 100 ms"
            )
        # Read by testbed/engine_sim.py when it builds mpsim's command line.
        env[SIM_STATS_INTERVAL_ENV] = str(args.sim_stats_interval_ms)
    return env, problems


def _run(
    args: argparse.Namespace, specs: list, run_dir: Path, repo: Path, argv: list[str] | None
) -> int:
    if args.interactive:
        return _run_interactive(args, specs, run_dir, repo)
    if args.cross_validate:
        return _cross_validate(args, specs, run_dir, repo, argv)
    sim = args.engine == "sim"
    return run_plan(
        specs,
        run_dir,
        engine=args.engine,
        executor=args.executor,
        jobs=_sim_jobs(args, argv) if sim else args.jobs,
        timeout=args.timeout,
        repo=repo,
        argv=argv,
        dry_run=args.dry_run,
        slurm_opts=args.slurm_opt,
        detach=args.detach,
    )


def _main(argv: list[str] | None, repo: Path) -> int:
    args = build_parser().parse_args(argv)
    status = _dispatch_other_modes(args, argv, repo)
    if status is not None:
        return status
    caps = kernel_caps()
    if args.list:
        print_list(repo, caps)
        return 0
    # Captures, scheduler traces and mpsim's log interval reach the trials through the
    # environment, for the rounds of --reps auto as for a fixed count.
    run_env, problems = _run_environment(args)
    if problems:
        print(f"run_trials.sh: {'; '.join(problems)}", file=sys.stderr)
        return 2
    if args.reps == "auto" or args.max_reps is not None or args.time_budget is not None:
        from testbed import reps_auto

        with scoped_environ(run_env):
            return reps_auto.main(args, argv, repo, caps)
    from testbed import matrix

    try:
        specs = default_specs(args, repo, caps)
        run_dir = matrix.run_dir_for(args.out, specs, repo)
        with scoped_environ(run_env):
            return _run(args, specs, run_dir, repo, argv)
    except UsageError as exc:
        print(f"run_trials.sh: {exc}", file=sys.stderr)
        return 2
