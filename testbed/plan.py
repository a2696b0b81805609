"""The plan layer: what a matrix is, whether it can run, and running it.

`run_trials.sh`'s options (testbed/cli.py parses them) become trial specs here:
`validate` (options -> a checked `Plan`: every name against the scenarios, the registry and
what each transport supports; defaults filled in), `expand` (the plan's product of specs),
`preflight` (`TrialSpec.problems` and each transport's `preflight`); `specs_for` does all
three and `default_specs` adds DEFAULT_MATRIX. `run_plan` runs the specs on an engine and an
executor. Anything invalid raises UsageError (the CLI exits 2 with its message) before
anything is created. The reproductions (testbed/reproduce/) call this layer, never the CLI.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from server.live_mpd import DEFAULT_LATENCY_S, latency_below_floor
from testbed import pathsets, transports
from testbed.cpusets import CpuPlanError, choose_jobs, cpu_count
from testbed.registry import DEFAULT_PLAYER, NO_PLAYER_NAME, PLAYERS, TRANSPORTS
from testbed.spec import DEFAULT_LADDER_NAME, MIN_RECV_WINDOW_BYTES, TrialSpec

# ---- Defaults: the one place to change what `./run_trials.sh` runs. ----
# With no matrix option at all (--scenario, --transport, --cc, --sched, --player) it runs
# DEFAULT_MATRIX, built to answer one question in about 10 minutes on a 2-core machine: on
# a lossy Wi-Fi beside LTE, does the congestion control change the video? Seed-002 scenario
# B1 (about 10 % Wi-Fi loss for the first minute, so a short clip stays in the loss), the
# user transport's default scheduler lrf, BBR against CUBIC, DEFAULT_RUN["reps"] repetitions
# with seeds 1, 2, ... (one seed pairs the two cells). Why 2 cells and 9 repetitions: the
# report compares each pair of cells on 5 metrics with Holm over all comparisons, so its
# first decision needs p <= 0.05 / 5, which the exact Wilcoxon test reaches only with 8 or
# more pairs all in one direction (stats.min_pairs_to_decide); 9 pairs also decide when the
# smallest difference goes the other way, or when one pair is lost to an invalid trial.
# 4 cells would need 11 repetitions each, 45 trials. The 20 s clip keeps the 19 trials near
# 10 minutes (README.md, "What `./run_trials.sh` does with no options"). One control trial
# (no impairment) tells whether the machine could play video cleanly. With some matrix
# options given, the others take the single defaults below; --reps and --video-duration,
# when given, replace DEFAULT_RUN's (the control stays one trial).
DEFAULT_MATRIX = (
    {"scenario": ["B1"], "transport": ["user"], "cc": ["bbr", "cubic"], "sched": ["lrf"]},
    {"scenario": ["control"], "transport": ["user"], "cc": ["cubic"], "sched": ["lrf"], "reps": 1},
)
DEFAULT_RUN = {"reps": 9, "video_duration": 20}
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


# What validate() reads when an option is not given: run_trials.sh's parser defaults, for a
# caller that builds a request without the parser (`request`).
REQUEST_DEFAULTS = {
    "scenario": None,
    "transport": None,
    "cc": None,
    "sched": None,
    "player": None,
    "cc_opt": [],
    "sched_opt": [],
    "video_duration": None,  # None: DEFAULTS (DEFAULT_RUN for the default matrix)
    "video_mode": "vod",
    "live_latency_s": DEFAULT_LATENCY_S,
    "ladder": DEFAULT_LADDER_NAME,
    "recv_window_bytes": None,
    "reps": None,
    "seed": DEFAULTS["seed"],
    "interactive": False,
    "restart_on_reload": False,
}


def request(**given: object) -> argparse.Namespace:
    """Matrix options as the parser would give them (REQUEST_DEFAULTS for the rest)."""
    unknown = set(given) - set(REQUEST_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown matrix options: {', '.join(sorted(unknown))}")
    return argparse.Namespace(**{**REQUEST_DEFAULTS, **given})


def _options(given: list[str]) -> tuple[str, ...]:
    """KEY=VALUE options sorted by key; a key given twice keeps its last value (as mpproxy)."""
    pairs = dict(kv.split("=", 1) for kv in given)
    return tuple(f"{key}={pairs[key]}" for key in sorted(pairs))


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
    ladder: str = DEFAULT_LADDER_NAME
    recv_window_bytes: int | None = None


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


def _validate_ladder(args: argparse.Namespace, players: list[str | None]) -> str:
    """--ladder: a name of server.content.LADDERS, and only where a player plays it."""
    from server.content import LADDERS

    ladder = getattr(args, "ladder", DEFAULT_LADDER_NAME) or DEFAULT_LADDER_NAME
    if ladder not in LADDERS:
        raise UsageError(f"--ladder {ladder}: unknown; valid: {', '.join(LADDERS)}")
    if ladder != DEFAULT_LADDER_NAME and not any(players):
        raise UsageError(f"--ladder {ladder}: no player plays video in this matrix; leave it out")
    return ladder


def _validate_recv_window(args: argparse.Namespace, transport_names: list[str]) -> int | None:
    """--recv-window-bytes: None (auto) or at least MIN_RECV_WINDOW_BYTES, and only for the
    transports whose receive window this testbed sets (registry: algorithm_options)."""
    window = getattr(args, "recv_window_bytes", None)
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, int) or window < MIN_RECV_WINDOW_BYTES:
        raise UsageError(
            f"--recv-window-bytes {window}: must be an integer number of bytes >= "
            f"{MIN_RECV_WINDOW_BYTES} (the transport's smallest window), or auto (autotuned, the "
            "default)"
        )
    refusing = [t for t in transport_names if not TRANSPORTS[t].algorithm_options]
    if refusing:
        takes = [t.name for t in TRANSPORTS.values() if t.algorithm_options]
        raise UsageError(
            f"--recv-window-bytes {window}: transport {','.join(refusing)} takes none (it sets "
            f"the receive window of the testbed's own transport: --transport {','.join(takes)})"
        )
    return window


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
    video_duration_s = args.video_duration or DEFAULTS["video_duration_s"]
    reps = args.reps or DEFAULTS["reps"]
    ladder = _validate_ladder(args, players)
    window = _validate_recv_window(args, transport_names)
    return Plan(scenarios, players, cells, video_duration_s, reps, args.seed,
                args.video_mode, args.live_latency_s, cc_opts, sched_opts, ladder,
                window)  # fmt: skip


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
                                    ladder=plan.ladder if player else DEFAULT_LADDER_NAME,
                                    recv_window_bytes=plan.recv_window_bytes,
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
    if path_set_problems := pathsets.problems(specs, repo):  # testbed/pathsets.py
        raise UsageError("cannot run:\n  " + "\n  ".join(path_set_problems))
    preflight(specs, caps)
    return specs


def is_default_run(args: argparse.Namespace) -> bool:
    """Whether the options name no matrix at all, so the run is DEFAULT_MATRIX."""
    return all(getattr(args, option) is None for option in MATRIX_OPTIONS)


def default_specs(args: argparse.Namespace, repo: Path, caps: dict) -> list[TrialSpec]:
    """specs_for, or DEFAULT_MATRIX's cells when no matrix option is given at all (with
    DEFAULT_RUN's repetitions and clip unless --reps or --video-duration is given)."""
    if not is_default_run(args):
        return specs_for(args, repo, caps)
    given = {key: getattr(args, key) for key in DEFAULT_RUN if getattr(args, key) is not None}
    specs = [
        spec
        for cell in DEFAULT_MATRIX
        for spec in specs_for(
            argparse.Namespace(**{**vars(args), **DEFAULT_RUN, **given, **cell}), repo, caps
        )
    ]
    # Repetition by repetition (bbr r0, cubic r0, control, bbr r1, ...): every pair is
    # complete as soon as possible, the control runs early, and a drift of the machine's load
    # during the run falls on both cells of a pair alike.
    return sorted(specs, key=lambda spec: spec.rep)


def _print_plan(what: str, specs: list[TrialSpec], run_dir: Path, jobs: int) -> None:
    print(f"{len(specs)} {what} into {run_dir}/trials/, {jobs} at a time:")
    for spec in specs:
        print(f"  {spec.trial_id()}")


def local_jobs(requested: int | None, specs: list[TrialSpec]) -> int:
    """Trials side by side on this machine (`requested` None = auto), checked against the
    CPUs; UsageError when they cannot be isolated."""
    streaming = any(spec.player is not None for spec in specs)
    try:
        jobs, why = choose_jobs(requested, streaming, cpu_count())
    except CpuPlanError as exc:
        raise UsageError(str(exc)) from exc
    if requested is None:
        print(f"--jobs auto: {jobs} at a time ({why})", file=sys.stderr)
    return jobs


def _built(repo: Path) -> bool:
    """The Rust binaries are built from this checkout (else the reason is printed)."""
    from testbed.rust_build import ensure_built

    problem = ensure_built(repo)
    if problem:
        print(f"run_trials.sh: {problem}", file=sys.stderr)
    return problem is None


def run_plan(
    specs: list[TrialSpec],
    run_dir: Path,
    *,
    engine: str,
    executor: str = "local",
    jobs: int | None = None,
    timeout: int | None = None,
    repo: Path,
    argv: list[str] | None = None,
    dry_run: bool = False,
    slurm_opts: tuple[str, ...] | list[str] = (),
    detach: bool = False,
    report: bool = True,
) -> int:
    """Runs validated specs into `run_dir` and returns the run's exit status (0 all ok, 1
    some failed, 2 could not start). `engine` sim: the simulator, `jobs` at a time (None:
    one per core). emulate: real time, locally `jobs` side by side (None: as many as the CPUs
    can isolate) or as a Slurm job array (`executor` slurm). `dry_run` prints the trials and
    where they would go. `argv` is recorded in the run's run.json. `report=False` leaves out
    the simulated run's HTML report (a caller that reads the trials itself: its comparisons
    of every pair of cells cost more CPU than a large matrix's trials). UsageError when the
    machine cannot run them (CPUs, root)."""
    if engine == "sim":
        # Simulated trials are single processes: one per core, no CPU isolation plan.
        from testbed import engine_sim

        jobs = jobs or cpu_count()
        if dry_run:
            _print_plan("simulated trials", specs, run_dir, jobs)
            return 0
        # TESTBED_MPSIM names another build on purpose: it is run as it is.
        if not os.environ.get(engine_sim.MPSIM_ENV) and not _built(repo):
            return 2
        return engine_sim.run_sim_matrix(specs, run_dir, repo, jobs=jobs, argv=argv, report=report)
    from testbed import matrix

    jobs = local_jobs(jobs, specs) if executor == "local" else 1  # Slurm places the trials
    if dry_run:
        _print_plan("trials", specs, run_dir, jobs)
        return 0
    if os.geteuid() != 0:
        raise UsageError("needs root (network namespaces, iptables, chrt)")
    if not _built(repo):
        return 2
    if executor == "slurm":
        from testbed.slurm import run_slurm

        return run_slurm(
            specs,
            run_dir,
            repo,
            slurm_opts=list(slurm_opts),
            detach=detach,
            write_manifest=lambda: matrix.write_run_manifest(run_dir, specs, repo, argv),
        )
    return matrix.run_matrix(specs, run_dir, repo, jobs=jobs, timeout_s=timeout, argv=argv)
