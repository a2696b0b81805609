"""tc/netem backend: a resolved scenario (CONTRACTS §4) as tc commands in the router namespace.

For kernels that have sch_netem. The user-space emulator (emulator/, `linkemu`) stays the
default and the one the tests exercise; this backend exists so a scenario can also run where
netem is the accepted reference. This kernel has no sch_netem, so the module is tested on
the command lists it generates only.

Where each link lives. Shaping happens on the router's egress interface of each direction
(CONTRACTS §3): wifi/up leaves through `s-wifi`, wifi/down through `c-wifi`, lte/up through
`s-lte`, lte/down through `c-lte`. Each of the four interfaces gets

    root 1:   netem  delay D [J]  [loss random P% | loss gemodel ...]
    1:1 → 10: tbf    rate R bit  burst B  (limit BYTES | latency T)     (constant-rate links)

Differences from the user-space emulator (each scenario's own ones: `differences()`):

* Order of operations: netem drops and delays first, then tbf queues and serialises; the
  emulator drops, queues, serialises, then delays. Throughput and base RTT are the same; a
  queue drop happens after the delay instead of before it.
* Queue limit: tbf counts bytes, so `packets = N` becomes `limit N x 1500` bytes (small
  packets such as ACKs take less room); `ms = T` becomes tbf `latency T`. The netem stage
  itself holds up to NETEM_LIMIT_PACKETS packets so it never drops on its own.
* Rate: tbf releases bursts of up to `burst` bytes (max(2 x 1514, 1 ms at the rate)) at line
  speed; the emulator serialises packet by packet. Trace-driven rates (`kind: trace`) have no
  tc equivalent: such scenarios are refused (NetemUnsupported, exit status 2).
* Jitter: `delay D J` with no `distribution` option draws U(D - J, D + J) like the emulator
  (sch_netem.c tabledist() without a table; tc-netem(8) says the default is Normal, but tc
  loads a table only when `distribution` is given, and iproute2 6.1 has no uniform.dist, so
  `distribution uniform` fails). But netem sorts packets by release time, so jitter REORDERS
  packets (the contract says it must not). Not floored at the serialisation end.
* Gilbert-Elliott: netem's `loss gemodel p r 1-h 1-k` takes p = p_good_to_bad,
  r = p_bad_to_good, 1-h = loss_in_bad, 1-k = loss_in_good (tc-netem(8)), as percentages. The
  kernel (sch_netem.c, loss_gilb_ell) moves the state and then draws the loss with the
  probability of the state the packet arrived in; the emulator draws it in the new state.
  Stationary loss rates are the same; bursts start one packet later in netem.
* Seeds: the kernel's netem RNG is not seeded from the trial seed (Debian 12's iproute2 6.1
  has no `seed` option), so loss patterns differ from run to run and from the emulator's.
* Schedules: applied by re-issuing `tc qdisc change` at the right times from one Python
  loop with absolute deadlines (`run_plan`), not by sleeping shell commands. `netem change`
  restates every parameter (netem resets what a change omits). Ramps become steps every
  `ramp_step_s` (default 0.1 s). Each change costs a `tc` process start (a few ms of
  lateness, reported by run_plan).
* Outages: `loss random 100%` for the interval. Packets already delayed or queued when it
  starts are still delivered (the emulator also drops packets still being serialised), and
  the drops count as netem drops, not `drops_outage`.
* Logs: no `emulator.jsonl`; read counters with `tc -s -j qdisc show dev <iface>`.

Print the commands a scenario becomes (exit 2 if it is invalid or needs the emulator):

    python -m testbed.netem_backend SCENARIO [--seed N] [--netns ROUTER_NS] [--ramp-step-s 0.1]
"""

from __future__ import annotations

import argparse
import heapq
import math
import platform
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# CONTRACTS §3: the router interface a direction's packets leave through.
ROUTER_EGRESS = {
    ("wifi", "up"): "s-wifi",
    ("wifi", "down"): "c-wifi",
    ("lte", "up"): "s-lte",
    ("lte", "down"): "c-lte",
}
LINK_ORDER = (("wifi", "up"), ("wifi", "down"), ("lte", "up"), ("lte", "down"))
# The netem stage only delays and drops at random; it must never be the queue that
# overflows (its limit counts the packets being delayed too).
NETEM_LIMIT_PACKETS = 100_000
QUEUE_PACKET_BYTES = 1500
MIN_BURST_BYTES = 2 * 1514  # tbf needs at least one MTU-sized frame, plus one for slack
DEFAULT_RAMP_STEP_S = 0.1


class NetemUnsupported(Exception):
    """The scenario uses something tc/netem cannot emulate."""

    exit_status = 2

    def __init__(self, source: str, reasons: list[str]):
        self.reasons = reasons
        lines = [f"{source}: cannot run with the netem backend"] + [f"  {r}" for r in reasons]
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class TimedCommand:
    t_s: float  # seconds since the trial clock origin at which to run it
    argv: tuple[str, ...]
    why: str  # e.g. "paths.wifi.down: loss_p 0.0125"


@dataclass(frozen=True)
class NetemPlan:
    setup: tuple[tuple[str, ...], ...]
    timeline: tuple[TimedCommand, ...]  # sorted by t_s
    teardown: tuple[tuple[str, ...], ...]
    differences: tuple[str, ...]


@dataclass
class _LinkState:
    rate_bps: int | None  # None: unlimited
    delay_ms: float
    jitter_ms: float
    loss: dict
    loss_p: float | None  # Bernoulli only
    queue: dict
    in_outage: bool = False
    history: list[str] = field(default_factory=list)


def unsupported(resolved: dict) -> list[str]:
    """Reasons this resolved scenario cannot run under netem (empty: it can)."""
    reasons = []
    for path_name, direction in LINK_ORDER:
        rate = resolved["paths"][path_name][direction]["rate"]
        if rate["kind"] == "trace":
            reasons.append(
                f"paths.{path_name}.{direction}.rate: trace-driven rate ({rate['file']}) has no "
                "tc equivalent; use the user-space emulator"
            )
    return reasons


def differences(resolved: dict) -> list[str]:
    """The documented differences that matter for this particular scenario."""
    notes = []
    for path_name, direction in LINK_ORDER:
        link = resolved["paths"][path_name][direction]
        where = f"paths.{path_name}.{direction}"
        fields = {e.get("field") for e in link["schedule"]}
        if link["jitter_ms"] > 0 or "jitter_ms" in fields:
            notes.append(f"{where}: netem jitter reorders packets; the emulator's does not")
        if link["loss"]["kind"] == "gilbert_elliott":
            notes.append(
                f"{where}: netem draws Gilbert-Elliott loss in the state before the transition"
            )
        if link["queue"]["kind"] == "packets" and link["rate"]["kind"] == "constant":
            notes.append(
                f"{where}: queue of {link['queue']['limit']} packets becomes "
                f"{link['queue']['limit'] * QUEUE_PACKET_BYTES} bytes in tbf"
            )
        if any(e["op"] == "ramp" for e in link["schedule"]):
            notes.append(f"{where}: ramps are applied as steps")
        if any(e["op"] == "outage" for e in link["schedule"]):
            notes.append(f"{where}: outages are 100 % netem loss; queued packets still leave")
        if link["loss"]["kind"] != "none":
            notes.append(f"{where}: netem's loss draws are not seeded from the trial seed")
    return notes


def _us(ms: float) -> str:
    return f"{int(round(ms * 1000))}us"


def _percent(p: float) -> str:
    return f"{p * 100:.7g}%"


def _netem_args(state: _LinkState) -> list[str]:
    args = ["netem", "limit", str(NETEM_LIMIT_PACKETS), "delay", _us(state.delay_ms)]
    if state.jitter_ms > 0:
        args.append(_us(state.jitter_ms))  # no table: the kernel draws uniformly
    if state.in_outage:
        args += ["loss", "random", "100%"]
    elif state.loss["kind"] == "bernoulli" and state.loss_p:
        args += ["loss", "random", _percent(state.loss_p)]
    elif state.loss["kind"] == "gilbert_elliott":
        ge = state.loss
        args += [
            "loss",
            "gemodel",
            _percent(ge["p_good_to_bad"]),
            _percent(ge["p_bad_to_good"]),
            _percent(ge["loss_in_bad"]),  # tc's "1-h": loss probability in the bad state
            _percent(ge["loss_in_good"]),  # tc's "1-k": loss probability in the good state
        ]
    return args


def burst_bytes(rate_bps: int) -> int:
    """tbf bucket: one millisecond at the rate, at least two full frames."""
    return max(MIN_BURST_BYTES, math.ceil(rate_bps / 8 / 1000))


def _tbf_args(state: _LinkState) -> list[str]:
    assert state.rate_bps is not None
    args = ["tbf", "rate", f"{state.rate_bps}bit", "burst", str(burst_bytes(state.rate_bps))]
    queue = state.queue
    if queue["kind"] == "packets":
        args += ["limit", str(int(queue["limit"]) * QUEUE_PACKET_BYTES)]
    elif queue["kind"] == "bytes":
        args += ["limit", str(int(queue["limit"]))]
    else:
        args += ["latency", _us(queue["limit"])]
    return args


def _netem_cmd(verb: str, dev: str, state: _LinkState) -> tuple[str, ...]:
    return ("tc", "qdisc", verb, "dev", dev, "root", "handle", "1:", *_netem_args(state))


def _tbf_cmd(verb: str, dev: str, state: _LinkState) -> tuple[str, ...]:
    return ("tc", "qdisc", verb, "dev", dev, "parent", "1:1", "handle", "10:", *_tbf_args(state))


def _initial_state(link: dict) -> _LinkState:
    rate = link["rate"]
    return _LinkState(
        rate_bps=int(rate["bps"]) if rate["kind"] == "constant" else None,
        delay_ms=float(link["delay_ms"]),
        jitter_ms=float(link["jitter_ms"]),
        loss=link["loss"],
        loss_p=float(link["loss"]["p"]) if link["loss"]["kind"] == "bernoulli" else None,
        queue=link["queue"],
    )


def _get(state: _LinkState, name: str) -> float:
    value = getattr(state, name)
    return float(value) if value is not None else 0.0


def _set(state: _LinkState, name: str, value: float) -> None:
    if name == "rate_bps":
        state.rate_bps = max(1, int(round(value)))
    elif name == "loss_p":
        state.loss_p = min(1.0, max(0.0, float(value)))
    else:
        setattr(state, name, max(0.0, float(value)))


def _link_timeline(
    link: dict, dev: str, where: str, ramp_step_s: float, duration_s: float
) -> tuple[_LinkState, list[TimedCommand]]:
    """Walk one link's schedule in time order and emit a tc change at every change point.

    Changes at or after the scenario's end (e.g. the end of an outage that lasts to the
    end) are not emitted: the trial is over by then.
    """
    state = _initial_state(link)
    # (t_s, seq, action, payload): actions are ("set", field, value), ("outage", on/off),
    # ("ramp", field, target, until_s) which expands into "set" actions when reached.
    pending: list[tuple[float, int, str, tuple]] = []
    seq = 0
    for event in link["schedule"]:
        if event["op"] == "outage":
            pending.append((event["t_s"], seq, "outage", (True,)))
            pending.append((event["until_s"], seq + 1, "outage", (False,)))
            seq += 2
        elif event["op"] == "step":
            pending.append((event["t_s"], seq, "set", (event["field"], event["value"])))
            seq += 1
        else:
            payload = (event["field"], event["value"], event["until_s"])
            pending.append((event["t_s"], seq, "ramp", payload))
            seq += 1
    heapq.heapify(pending)

    commands: list[TimedCommand] = []
    while pending:
        t_s = pending[0][0]
        netem_changed = tbf_changed = False
        notes = []
        while pending and pending[0][0] == t_s:
            _, _, action, payload = heapq.heappop(pending)
            if action == "outage":
                state.in_outage = payload[0]
                netem_changed = True
                notes.append("outage starts" if payload[0] else "outage ends")
                continue
            if action == "ramp":
                name, target, until_s = payload
                start = _get(state, name)
                n_steps = max(1, math.ceil((until_s - t_s) / ramp_step_s - 1e-9))
                for k in range(1, n_steps + 1):
                    at = until_s if k == n_steps else t_s + k * ramp_step_s
                    value = start + (target - start) * (at - t_s) / (until_s - t_s)
                    heapq.heappush(pending, (round(at, 9), seq, "set", (name, value)))
                    seq += 1
                continue
            name, value = payload
            _set(state, name, value)
            notes.append(f"{name} {value:g}")
            if name == "rate_bps":
                tbf_changed = True
            else:
                netem_changed = True
        why = f"{where}: {', '.join(notes)}"
        if t_s >= duration_s:
            continue
        if netem_changed:
            commands.append(TimedCommand(t_s, _netem_cmd("change", dev, state), why))
        if tbf_changed and state.rate_bps is not None:
            commands.append(TimedCommand(t_s, _tbf_cmd("change", dev, state), why))
    return _initial_state(link), commands


def plan(resolved: dict, *, ramp_step_s: float = DEFAULT_RAMP_STEP_S) -> NetemPlan:
    """The tc commands (run in the router namespace) that apply `resolved`."""
    reasons = unsupported(resolved)
    if not ramp_step_s > 0:
        reasons.append(f"ramp_step_s = {ramp_step_s}: must be > 0")
    if reasons:
        raise NetemUnsupported(resolved.get("source", resolved.get("name", "?")), reasons)
    setup: list[tuple[str, ...]] = []
    timeline: list[TimedCommand] = []
    teardown: list[tuple[str, ...]] = []
    for path_name, direction in LINK_ORDER:
        link = resolved["paths"][path_name][direction]
        dev = ROUTER_EGRESS[(path_name, direction)]
        where = f"paths.{path_name}.{direction}"
        state, commands = _link_timeline(link, dev, where, ramp_step_s, resolved["duration_s"])
        setup.append(_netem_cmd("replace", dev, state))
        if state.rate_bps is not None:
            setup.append(_tbf_cmd("replace", dev, state))
        timeline.extend(commands)
        teardown.append(("tc", "qdisc", "del", "dev", dev, "root"))
    timeline.sort(key=lambda c: c.t_s)  # stable: per-link order kept at equal times
    return NetemPlan(tuple(setup), tuple(timeline), tuple(teardown), tuple(differences(resolved)))


def run_plan(
    netem_plan: NetemPlan,
    run: Callable[[Sequence[str]], object],
    t0_ns: int,
    *,
    now_ns: Callable[[], int] = time.monotonic_ns,
    sleep_s: Callable[[float], object] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
    max_sleep_s: float = 0.1,
) -> list[float]:
    """Run setup, then each timed command at its absolute deadline t0_ns + t_s.

    `run` executes one argv in the router namespace (e.g. Topology.run("router", argv)).
    Deadlines are absolute, so lateness never accumulates. Returns the lateness in seconds
    of each timed command; stops early (without teardown, which the caller owns) when
    stop() turns true.
    """
    for argv in netem_plan.setup:
        run(list(argv))
    lateness_s = []
    for command in netem_plan.timeline:
        deadline_ns = t0_ns + int(round(command.t_s * 1e9))
        while True:
            if stop():
                return lateness_s
            remaining_s = (deadline_ns - now_ns()) / 1e9
            if remaining_s <= 0:
                break
            sleep_s(min(remaining_s, max_sleep_s))
        lateness_s.append((now_ns() - deadline_ns) / 1e9)
        run(list(command.argv))
    return lateness_s


def kernel_has_netem(
    modules_root: Path = Path("/lib/modules"), loaded: Path = Path("/sys/module/sch_netem")
) -> bool:
    """True when sch_netem is built in or available as a module for the running kernel."""
    release_dir = modules_root / platform.release()
    builtin = release_dir / "modules.builtin"
    if builtin.is_file() and "sch_netem" in builtin.read_text(errors="replace"):
        return True
    dep = release_dir / "modules.dep"
    if dep.is_file() and "sch_netem.ko" in dep.read_text(errors="replace"):
        return True
    return loaded.is_dir()


def main(argv: list[str] | None = None) -> int:
    from testbed.scenario import ScenarioError, load_resolved

    parser = argparse.ArgumentParser(
        prog="python -m testbed.netem_backend",
        description="Print the tc/netem commands a scenario becomes (setup, timed, teardown).",
    )
    parser.add_argument("scenario", help="scenario name or .toml path")
    parser.add_argument("--seed", type=int, default=1, help="trial seed (default 1)")
    parser.add_argument("--netns", help="prefix each command with `ip netns exec NETNS`")
    parser.add_argument(
        "--ramp-step-s",
        type=float,
        default=DEFAULT_RAMP_STEP_S,
        help=f"interval of the steps a ramp becomes (default {DEFAULT_RAMP_STEP_S})",
    )
    args = parser.parse_args(argv)
    repo = Path(__file__).resolve().parent.parent
    try:
        netem_plan = plan(
            load_resolved(args.scenario, repo, args.seed), ramp_step_s=args.ramp_step_s
        )
    except (ScenarioError, NetemUnsupported) as exc:
        print(exc, file=sys.stderr)
        return 2
    prefix = ["ip", "netns", "exec", args.netns] if args.netns else []

    def show(argv: Sequence[str]) -> str:
        return shlex.join([*prefix, *argv])

    print("# setup")
    for argv in netem_plan.setup:
        print(show(argv))
    print(f"# timed changes ({len(netem_plan.timeline)}), seconds since the trial clock origin")
    for command in netem_plan.timeline:
        print(f"{command.t_s:9.3f}  {show(command.argv)}")
    print("# teardown")
    for argv in netem_plan.teardown:
        print(show(argv))
    print("# differences from the user-space emulator for this scenario")
    for note in netem_plan.differences:
        print(f"#   {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
