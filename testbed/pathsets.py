"""Which transports a scenario's path set allows, checked before anything starts.

A scenario has 1 to 8 paths with any names (testbed/topology.py gives path i, in file order,
the addresses 10.<i+1>.x.x). Most transports use every path, whatever its name: `user` (one
subflow per path), `kernel` (the first path opens the connection, every other is a `subflow`
endpoint) and `none` (the control transfer probes each path). A single-path baseline
`tcp-<name>` carries the video over the path called <name>, so a scenario without such a
path cannot run it; the matrix refuses that combination (exit 2) naming the scenario file,
its paths and the transports it can run, instead of failing inside the trial.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from testbed.registry import TRANSPORTS
from testbed.spec import TrialSpec

SINGLE_PATH_PREFIX = "tcp-"


def required_path(transport: str) -> str | None:
    """The path a transport needs by name (`tcp-lte` -> 'lte'), None when it uses them all."""
    if transport.startswith(SINGLE_PATH_PREFIX):
        return transport.removeprefix(SINGLE_PATH_PREFIX)
    return None


def runnable_transports(paths: Iterable[str]) -> list[str]:
    """The registered transports a scenario with these paths can run."""
    names = set(paths)
    return [t for t in TRANSPORTS if (need := required_path(t)) is None or need in names]


def transport_problem(transport: str, paths: list[str], where: str) -> str | None:
    """Why `transport` cannot run over `paths` (of the scenario file `where`), or None."""
    need = required_path(transport)
    if need is None or need in paths:
        return None
    return (
        f"{where}: transport {transport} plays over the path named '{need}', but the "
        f"scenario's paths are {', '.join(paths)} (no [paths.{need}]); valid transports for "
        f"it: {', '.join(runnable_transports(paths))}"
    )


def problems(specs: Iterable[TrialSpec], repo: Path) -> list[str]:
    """One line per (scenario, transport) of the matrix that its path set cannot carry.

    The scenarios were validated already; one that cannot be loaded here is left to that
    check (it reports it with file and field)."""
    from testbed.scenario import ScenarioError, load_resolved, scenario_file

    found: list[str] = []
    paths_of: dict[str, list[str] | None] = {}  # the path set does not depend on the seed
    for spec in specs:
        key = spec.scenario
        if key not in paths_of:
            try:
                paths_of[key] = list(load_resolved(spec.scenario, repo, spec.seed)["paths"])
            except (ScenarioError, KeyError, TypeError):
                paths_of[key] = None
        paths = paths_of[key]
        if paths is None:
            continue
        try:
            where = str(scenario_file(spec.scenario, repo))
        except ScenarioError:
            where = spec.scenario
        why = transport_problem(spec.transport, paths, f"scenario {spec.scenario} ({where})")
        if why is not None and why not in found:
            found.append(why)
    return found
