"""Per-trial network: three namespaces, one veth path per scenario path, policy routing
(CONTRACTS §3).

    client (tb-<hex6>-c)          router (tb-<hex6>-r)           server (tb-<hex6>-s)
    wifi 10.1.1.2/24 ──veth── c-wifi 10.1.1.1 | s-wifi 10.1.2.1 ──veth── wifi 10.1.2.2/24
    lte  10.2.1.2/24 ──veth── c-lte  10.2.1.1 | s-lte  10.2.2.1 ──veth── lte  10.2.2.2/24
    ...  path i (0-based, scenario file order) uses 10.<i+1>.1.0/24 and 10.<i+1>.2.0/24

The address plan is generated from the scenario's path names (`path_plans`) and written
into trial.json (`address_plan`). Cross-traffic endpoints live in the client and server
namespaces with their own addresses, 10.<i+1>.1.<100+k> (client) and 10.<i+1>.2.<100+k>
(server) for flow k on path i, so their packets cross the same emulated links (and any
bottleneck) as the multipath connection's, and the emulator's per-flow counters tell them
apart.

Lifecycle and teardown (docs/ORCHESTRATOR.md):

* A state file `/run/mptcp-testbed/<hex6>.json` is written *before* any namespace
  exists; it names the owner (pid + start time), the namespaces and every spawned pid.
* Teardown (context exit, exception, SIGINT/SIGTERM turned into `Interrupted`):
  supervised processes get SIGTERM then SIGKILL, then anything still inside the
  namespaces (`ip netns pids`) is killed, then the namespaces are deleted (their veths
  go with them), then the state file is removed.
* `sweep_stale()` runs before each topology is built: it tears down what state files of
  *dead* owners name, and only that. A live owner's pid whose start time differs from
  the recorded one is a reused pid, so that owner is dead.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from common.paths import DEFAULT_PATH_NAMES
from testbed.supervisor import (
    EventLog,
    Process,
    is_same_process,
    proc_start_ticks,
    terminate_all,
)

STATE_DIR = Path(os.environ.get("TESTBED_STATE_DIR", "/run/mptcp-testbed"))
NAMESPACE_PREFIX = "tb-"
TMP_PREFIX = "tbx-trial-"  # a trial's TMPDIR: <tempdir>/tbx-trial-<hex6>
MTU_BYTES = 1500
STRAGGLER_GRACE_S = 1.0  # SIGTERM to leftovers in a namespace, then SIGKILL
STATE_FILE_NAME = re.compile(r"[0-9a-f]{6}\.json")
EMPTY_STATE_MAX_AGE_S = 60.0  # an empty state file older than this is a dead claim

ROLES = ("client", "router", "server")
_ROLE_SUFFIX = {"client": "c", "router": "r", "server": "s"}


class TopologyError(RuntimeError):
    pass


@dataclass(frozen=True)
class PathPlan:
    """One access network's addresses and interfaces (CONTRACTS §3 table)."""

    name: str  # "wifi" | "lte"; also the client's and the server's interface name
    table: int  # policy-routing table number (client and router)
    client_addr: str
    router_client_side_iface: str
    router_client_side_addr: str
    router_server_side_iface: str
    router_server_side_addr: str
    server_addr: str
    client_subnet: str
    server_subnet: str


MAX_PATHS = 8  # = emulator/src/scenario.rs MAX_PATHS; linkemu --validate enforces it
CROSS_HOST_BASE = 100  # cross-traffic flow k of a path: host number 100 + k
MAX_CROSS_FLOWS_PER_PATH = 50  # = scenario.rs MAX_CROSS_FLOWS_PER_PATH


def path_plans(names: list[str] | tuple[str, ...]) -> dict[str, PathPlan]:
    """The address plan: path i (file order) gets 10.<i+1>.1.0/24 on the client side,
    10.<i+1>.2.0/24 on the server side and policy-routing table 101 + i."""
    if not 1 <= len(names) <= MAX_PATHS:
        raise TopologyError(f"{len(names)} paths; the address plan has room for 1 to {MAX_PATHS}")
    plans = {}
    for i, name in enumerate(names):
        n = i + 1
        plans[name] = PathPlan(
            name, 101 + i, f"10.{n}.1.2", f"c-{name}", f"10.{n}.1.1", f"s-{name}",
            f"10.{n}.2.1", f"10.{n}.2.2", f"10.{n}.1.0/24", f"10.{n}.2.0/24",
        )  # fmt: skip
    return plans


def cross_addresses(plan: PathPlan, k: int) -> tuple[str, str]:
    """(client, server) address of cross-traffic flow k on a path."""
    if not 0 <= k < MAX_CROSS_FLOWS_PER_PATH:
        raise TopologyError(f"cross-traffic flow {k}: at most {MAX_CROSS_FLOWS_PER_PATH} a path")
    host = CROSS_HOST_BASE + k
    return (
        plan.client_addr.rsplit(".", 1)[0] + f".{host}",
        plan.server_addr.rsplit(".", 1)[0] + f".{host}",
    )


def nfqueue_hooks(plans: dict[str, PathPlan]) -> list[tuple[int, str, str, str]]:
    """(queue number, path, direction, router in-interface): path i's up link is queue 2i,
    its down link 2i + 1 (CONTRACTS §3; linkemu numbers its links the same way)."""
    hooks = []
    for i, plan in enumerate(plans.values()):
        hooks.append((2 * i, plan.name, "up", plan.router_client_side_iface))
        hooks.append((2 * i + 1, plan.name, "down", plan.router_server_side_iface))
    return hooks


# The two-path default (wifi, lte), as before N paths existed.
PATHS: dict[str, PathPlan] = path_plans(DEFAULT_PATH_NAMES)
NFQUEUE_HOOKS: tuple[tuple[int, str, str, str], ...] = tuple(nfqueue_hooks(PATHS))

# Offloads off so that packets crossing the namespaces are MTU-sized: with TSO/GSO on,
# the sender hands 64 KB super-packets to the veth and one emulated loss draw would drop
# dozens of segments; GRO would re-merge them in the router. Checksum and scatter-gather
# offload go too, because TSO depends on them. tests/test_topology.py checks the sizes.
OFFLOAD_FEATURES_OFF = (
    "rx", "tx", "sg", "tso", "gso", "gro", "tx-udp-segmentation", "tx-gso-list",
    "rx-gro-list", "rx-udp-gro-forwarding",
)  # fmt: skip


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived; unwinds like KeyboardInterrupt so teardown runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


# --- signals -> exception -----------------------------------------------------------------

_signal_state = {"raised": False, "teardown_depth": 0, "pending": 0}


def _on_signal(signum: int, _frame: object) -> None:
    # The first signal unwinds the stack; later ones (a second Ctrl-C, or the one the
    # terminal sends to the whole group) must not interrupt the teardown it started.
    if _signal_state["raised"]:
        return
    if _signal_state["teardown_depth"] > 0:
        _signal_state["pending"] = signum
        return
    _signal_state["raised"] = True
    raise Interrupted(signum)


def install_signal_handlers() -> bool:
    """Turn SIGINT/SIGTERM into `Interrupted` (main thread only). True if installed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _on_signal)
    return True


@contextmanager
def shielded_from_signals() -> Iterator[None]:
    """Signals during the block (a teardown, an archive being written) are remembered, not
    raised; the first is raised as `Interrupted` after it."""
    _signal_state["teardown_depth"] += 1
    try:
        yield
    finally:
        _signal_state["teardown_depth"] -= 1
    pending = _signal_state["pending"]
    if pending and _signal_state["teardown_depth"] == 0 and not _signal_state["raised"]:
        _signal_state["pending"] = 0
        _signal_state["raised"] = True
        raise Interrupted(pending)


# --- small helpers ------------------------------------------------------------------------


def _run(argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise TopologyError(
            f"command failed (status {done.returncode}): {' '.join(argv)}\n{done.stderr.strip()}"
        )
    return done


def list_namespaces() -> list[str]:
    out = _run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def namespace_pids(namespace: str) -> list[int]:
    out = _run(["ip", "netns", "pids", namespace], check=False).stdout
    return [int(tok) for tok in out.split() if tok.isdigit()]


def kill_namespace_processes(namespace: str, grace_s: float = STRAGGLER_GRACE_S) -> list[int]:
    """SIGTERM then SIGKILL every process inside `namespace`. Returns the pids found."""
    found: list[int] = []
    own = os.getpid()
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGKILL):
        pids = [p for p in namespace_pids(namespace) if p != own]
        if not pids:
            break
        found.extend(p for p in pids if p not in found)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and namespace_pids(namespace):
            time.sleep(0.05)
    return found


def delete_namespace(namespace: str) -> None:
    if namespace in list_namespaces():
        _run(["ip", "netns", "del", namespace], check=False)


def _write_json_atomically(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def namespace_names(hex6: str) -> dict[str, str]:
    return {role: f"{NAMESPACE_PREFIX}{hex6}-{_ROLE_SUFFIX[role]}" for role in ROLES}


# --- sweep --------------------------------------------------------------------------------


def sweep_stale(state_dir: Path = STATE_DIR) -> list[str]:
    """Remove namespaces and processes of state files whose owner is dead; only those.

    Returns one line per removed thing, for the log.
    """
    removed: list[str] = []
    if not state_dir.is_dir():
        return removed
    for state_file in sorted(state_dir.glob("*.json")):
        if not STATE_FILE_NAME.fullmatch(state_file.name):
            continue  # other components keep files here too; only <hex6>.json are ours
        try:
            state = json.loads(state_file.read_text())
            owner_pid = int(state["owner_pid"])
            owner_ticks = state["owner_start_ticks"]
            namespaces = [str(ns) for ns in state["namespaces"].values()]
        except FileNotFoundError:
            continue  # another sweep or its owner removed it meanwhile
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # An empty file is a claim whose owner died before writing it (no namespace
            # exists yet at that point); after a while it is safe to drop.
            try:
                age_s = time.time() - state_file.stat().st_mtime
                if state_file.stat().st_size == 0 and age_s > EMPTY_STATE_MAX_AGE_S:
                    state_file.unlink(missing_ok=True)
                    removed.append(f"empty state file {state_file}")
                    continue
            except FileNotFoundError:
                continue
            print(f"sweep: ignoring unreadable state file {state_file}: {exc}", file=sys.stderr)
            continue
        if is_same_process(owner_pid, owner_ticks):
            continue
        for proc in state.get("processes", []):
            pid, ticks = int(proc["pid"]), proc.get("start_ticks")
            if is_same_process(pid, ticks):
                try:
                    os.kill(pid, signal.SIGKILL)
                    removed.append(f"process {pid} ({proc.get('name')})")
                except ProcessLookupError:
                    pass
        tmp_dir = Path(str(state.get("tmp_dir") or ""))
        if tmp_dir.name.startswith(TMP_PREFIX) and tmp_dir.is_dir():  # only ours, by name
            shutil.rmtree(tmp_dir, ignore_errors=True)
            removed.append(f"temporary folder {tmp_dir}")
        for ns in namespaces:
            if not ns.startswith(NAMESPACE_PREFIX):
                continue  # never touch anything that is not ours by name
            if ns in list_namespaces():
                for pid in kill_namespace_processes(ns):
                    removed.append(f"process {pid} in {ns}")
                delete_namespace(ns)
                removed.append(f"namespace {ns}")
        state_file.unlink(missing_ok=True)
        removed.append(f"state file {state_file}")
    return removed


# --- the topology -------------------------------------------------------------------------


@dataclass(frozen=True)
class Namespaces:
    client: str
    router: str
    server: str

    def of(self, role: str) -> str:
        if role not in ROLES:
            raise ValueError(f"role '{role}' is not one of {', '.join(ROLES)}")
        return getattr(self, role)


class Topology:
    """Three namespaces and two paths for one trial; a context manager (teardown guaranteed)."""

    def __init__(
        self,
        trial_dir: Path,
        hex6: str,
        t0_ns: int,
        events: EventLog,
        state_dir: Path,
        path_names: tuple[str, ...] = DEFAULT_PATH_NAMES,
        cross_flows: dict[str, int] | None = None,
    ) -> None:
        self.plans = path_plans(path_names)
        self.cross_flows = {p: n for p, n in (cross_flows or {}).items() if n > 0}
        for path in self.cross_flows:
            if path not in self.plans:
                raise TopologyError(f"cross traffic on path '{path}', which is not in the plan")
        self.trial_dir = trial_dir
        self.hex6 = hex6
        self.t0_ns = t0_ns
        self.events = events
        self.state_dir = state_dir
        self.state_file = state_dir / f"{hex6}.json"
        self.ns = Namespaces(**namespace_names(hex6))
        # The trial's processes' TMPDIR: a killed player leaves its profile and Chromium its
        # own folders there, and teardown (or the sweep of a dead owner) removes it. Short,
        # under /tmp: Chromium binds a Unix socket (at most 107 bytes of path) in TMPDIR.
        self.tmp_dir = Path(tempfile.gettempdir()) / f"{TMP_PREFIX}{hex6}"
        self.processes: list[Process] = []
        self.torn_down = False
        self._lock = threading.Lock()
        self._owner_pid = os.getpid()

    # construction

    @classmethod
    def create(
        cls,
        trial_dir: Path,
        *,
        t0_ns: int | None = None,
        events: EventLog | None = None,
        state_dir: Path = STATE_DIR,
        path_names: tuple[str, ...] | list[str] = DEFAULT_PATH_NAMES,
        cross_flows: dict[str, int] | None = None,
    ) -> Topology:
        """Sweep stale state, then build the namespaces, veths, addresses and routes.

        path_names: the scenario's paths, in file order (the address plan's order);
        cross_flows: cross-traffic flows per path (each gets its own address pair).
        """
        path_plans(tuple(path_names))  # refuse a bad plan before anything is built
        trial_dir = Path(trial_dir)
        t0_ns = time.monotonic_ns() if t0_ns is None else t0_ns
        events = events or EventLog(trial_dir / "testbed.jsonl", t0_ns)
        for line in sweep_stale(state_dir):
            events.write("sweep", removed=line)
        state_dir.mkdir(parents=True, exist_ok=True)
        existing = set(list_namespaces())
        while True:
            hex6 = secrets.token_hex(3)
            if any(ns in existing for ns in namespace_names(hex6).values()):
                continue
            try:
                # O_EXCL: two trials starting at once never get the same hex6.
                fd = os.open(state_dir / f"{hex6}.json", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                os.close(fd)
                break
            except FileExistsError:
                continue
        topo = cls(trial_dir, hex6, t0_ns, events, state_dir, tuple(path_names), cross_flows)
        topo._save_state()
        try:
            topo.tmp_dir.mkdir(mode=0o700)
            topo._build()
        except BaseException:
            topo.teardown()
            raise
        return topo

    def _save_state(self) -> None:
        state = {
            "schema": 1,
            "owner_pid": self._owner_pid,
            "owner_start_ticks": proc_start_ticks(self._owner_pid),
            "trial_dir": str(self.trial_dir),
            "namespaces": {role: self.ns.of(role) for role in ROLES},
            "tmp_dir": str(self.tmp_dir),
            "processes": [
                {"name": p.name, "pid": p.pid, "start_ticks": p.start_ticks}
                for p in self.processes
                if p.pid is not None
            ],
        }
        _write_json_atomically(self.state_file, state)

    def _ip(self, role: str, *args: str) -> None:
        _run(["ip", "-n", self.ns.of(role), *args])

    def _sysctl(self, role: str, *settings: str) -> None:
        _run(["ip", "netns", "exec", self.ns.of(role), "sysctl", "-q", "-w", *settings])

    def _build(self) -> None:
        self.events.write("topology_build", namespaces=self.ns.__dict__)
        for role in ROLES:
            _run(["ip", "netns", "add", self.ns.of(role)])
        for role in ROLES:
            self._ip(role, "link", "set", "lo", "up")
            # rp_filter off: the router forwards by input interface, and replies may leave
            # the server by a path whose subnet is not the source's (weak host model).
            # IPv6 off: no router solicitations or DAD in the emulated links' counters.
            self._sysctl(
                role,
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            )
        self._sysctl("router", "net.ipv4.ip_forward=1")

        client, router, server = self.ns.client, self.ns.router, self.ns.server
        for plan in self.plans.values():
            # Create each veth end directly in its namespace: names never clash in the
            # root namespace, so trials can be built side by side.
            _run(["ip", "link", "add", "name", plan.name, "netns", client, "mtu", str(MTU_BYTES),
                  "type", "veth", "peer", "name", plan.router_client_side_iface,
                  "netns", router, "mtu", str(MTU_BYTES)])  # fmt: skip
            _run(["ip", "link", "add", "name", plan.router_server_side_iface, "netns", router,
                  "mtu", str(MTU_BYTES), "type", "veth", "peer", "name", plan.name,
                  "netns", server, "mtu", str(MTU_BYTES)])  # fmt: skip
            ends = (
                ("client", plan.name, f"{plan.client_addr}/24"),
                ("router", plan.router_client_side_iface, f"{plan.router_client_side_addr}/24"),
                ("router", plan.router_server_side_iface, f"{plan.router_server_side_addr}/24"),
                ("server", plan.name, f"{plan.server_addr}/24"),
            )
            for role, iface, addr in ends:
                self._ip(role, "addr", "add", addr, "dev", iface)
                self._disable_offloads(role, iface)
                self._sysctl(role, f"net.ipv4.conf.{iface}.rp_filter=0")
                self._ip(role, "link", "set", iface, "up")

            # Client: the source address picks the path.
            self._ip("client", "route", "add", plan.client_subnet, "dev", plan.name,
                     "src", plan.client_addr, "table", str(plan.table))  # fmt: skip
            self._ip("client", "route", "add", "default", "via", plan.router_client_side_addr,
                     "dev", plan.name, "table", str(plan.table))  # fmt: skip
            self._ip("client", "rule", "add", "from", plan.client_addr, "table", str(plan.table))
            # Router: the input interface picks the path to the server, whatever server
            # address the client used.
            self._ip("router", "route", "add", "default", "via", plan.server_addr,
                     "dev", plan.router_server_side_iface, "table", str(plan.table))  # fmt: skip
            self._ip("router", "rule", "add", "iif", plan.router_client_side_iface,
                     "table", str(plan.table))  # fmt: skip
            # Server: replies to each client subnet go back the way they came.
            self._ip("server", "route", "add", plan.client_subnet, "via",
                     plan.router_server_side_addr, "dev", plan.name)  # fmt: skip
            # Cross-traffic endpoints: their own addresses on the same interfaces, routed
            # like the path's own address (so they cross the same emulated links).
            for k in range(self.cross_flows.get(plan.name, 0)):
                client_addr, server_addr = cross_addresses(plan, k)
                self._ip("client", "addr", "add", f"{client_addr}/24", "dev", plan.name)
                self._ip("client", "rule", "add", "from", client_addr, "table", str(plan.table))
                self._ip("server", "addr", "add", f"{server_addr}/24", "dev", plan.name)
        first = next(iter(self.plans.values()))
        self._ip("client", "route", "add", "default", "via", first.router_client_side_addr,
                 "dev", first.name)  # fmt: skip
        self.events.write("topology_ready", hex6=self.hex6, paths=list(self.plans))

    def address_plan(self) -> dict:
        """The generated addresses, for trial.json (CONTRACTS §3)."""
        hooks = {(path, d): q for q, path, d, _ in nfqueue_hooks(self.plans)}
        out = {}
        for plan in self.plans.values():
            cross = [cross_addresses(plan, k) for k in range(self.cross_flows.get(plan.name, 0))]
            out[plan.name] = {
                "client": plan.client_addr,
                "router_client_side": f"{plan.router_client_side_iface} "
                f"{plan.router_client_side_addr}",
                "router_server_side": f"{plan.router_server_side_iface} "
                f"{plan.router_server_side_addr}",
                "server": plan.server_addr,
                "table": plan.table,
                "nfqueue_up": hooks[(plan.name, "up")],
                "nfqueue_down": hooks[(plan.name, "down")],
                "cross_client": [c for c, _ in cross],
                "cross_server": [s for _, s in cross],
            }
        return out

    def _disable_offloads(self, role: str, iface: str) -> None:
        argv = ["ip", "netns", "exec", self.ns.of(role), "ethtool", "-K", iface]
        for feature in OFFLOAD_FEATURES_OFF:
            argv += [feature, "off"]
        done = _run(argv, check=False)
        # ethtool exits non-zero when a feature is fixed; what matters is the result.
        state = self.run(role, ["ethtool", "-k", iface]).stdout
        still_on = [
            name
            for name in (
                "tcp-segmentation-offload",
                "generic-segmentation-offload",
                "generic-receive-offload",
                "tx-checksumming",
            )  # fmt: skip
            if f"{name}: on" in state
        ]
        if still_on:
            raise TopologyError(
                f"could not turn off offloads {still_on} on {iface} in {self.ns.of(role)}: "
                f"{done.stderr.strip()}"
            )

    # use

    def run(
        self, role: str, argv: list[str], check: bool = True, **kw: object
    ) -> subprocess.CompletedProcess:
        """Run argv to completion inside a namespace (output captured as text by default)."""
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        full = ["ip", "netns", "exec", self.ns.of(role), *[str(a) for a in argv]]
        done = subprocess.run(full, **kw)  # type: ignore[call-overload]
        if check and done.returncode != 0:
            raise TopologyError(
                f"in {self.ns.of(role)}: {' '.join(map(str, argv))} exited with status "
                f"{done.returncode}: {(done.stderr or '').strip()[-2000:]}"
            )
        return done

    def spawn(
        self,
        role: str,
        name: str,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        rt_priority: int | None = None,
        critical: bool = False,
        watch: str | None = None,
    ) -> Process:
        """Start a supervised process in a namespace; it is stopped at teardown. `watch`:
        the trial fails when it exits early (supervisor.Process)."""
        if self.torn_down:
            raise TopologyError(f"cannot spawn '{name}': topology {self.hex6} is torn down")
        if any(p.name == name for p in self.processes):
            raise TopologyError(f"a process named '{name}' already runs in this trial")
        proc = Process(
            name=name,
            role=role,
            namespace=self.ns.of(role),
            argv=argv,
            log_dir=self.trial_dir / "logs",
            events=self.events,
            t0_ns=self.t0_ns,
            env={"TMPDIR": str(self.tmp_dir), **(env or {})},
            rt_priority=rt_priority,
            critical=critical,
            watch=watch,
        )
        with self._lock:
            self.processes.append(proc)
            proc.start()
            self._save_state()
        return proc

    def install_nfqueue_hooks(self) -> None:
        """Send every forwarded packet to the emulator's queue (CONTRACTS §3 numbers)."""
        for queue, _path, _direction, iface in nfqueue_hooks(self.plans):
            self.run("router", ["iptables", "-w", "-t", "mangle", "-A", "FORWARD", "-i", iface,
                                "-j", "NFQUEUE", "--queue-num", str(queue)])  # fmt: skip

    # teardown

    def teardown(self, grace_s: float = 5.0) -> list[str]:
        """Stop everything and delete the namespaces. Idempotent; never raises Exception."""
        problems: list[str] = []
        if self.torn_down:
            return problems
        with shielded_from_signals():
            self.events.write("phase", phase="teardown")
            # Non-critical first (players, transports), the emulator last, so that
            # nothing is cut off by a vanished link while it shuts down.
            for critical in (False, True):
                group = [p for p in self.processes if p.critical == critical]
                try:
                    terminate_all(group, grace_s)
                except Exception as exc:  # keep going: the namespaces must still go
                    problems.append(f"stopping {[p.name for p in group]}: {exc}")
            for role in ROLES:
                ns = self.ns.of(role)
                try:
                    leftovers = kill_namespace_processes(ns)
                    if leftovers:
                        self.events.write("killed_leftovers", namespace=ns, pids=leftovers)
                    delete_namespace(ns)
                except Exception as exc:
                    problems.append(f"deleting {ns}: {exc}")
            shutil.rmtree(self.tmp_dir, ignore_errors=True)
            remaining = [ns for ns in self.ns.__dict__.values() if ns in list_namespaces()]
            if remaining:
                problems.append(f"namespaces still present after teardown: {remaining}")
            else:
                self.state_file.unlink(missing_ok=True)
            self.torn_down = True
            self.events.write("teardown_done", problems=problems)
        return problems

    def __enter__(self) -> Topology:
        return self

    def __exit__(self, *exc: object) -> None:
        self.teardown()


# --- manual use and tests: `python -m testbed.topology hold|sweep` ---------------------------


def _main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m testbed.topology",
        description="Build a trial topology by hand (hold) or remove stale ones (sweep).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    hold = sub.add_parser("hold", help="build a topology, start a sleeper per namespace, wait")
    hold.add_argument("trial_dir", type=Path, help="folder for testbed.jsonl and logs/")
    sub.add_parser("sweep", help="remove namespaces/processes of dead owners")
    args = parser.parse_args(argv)
    if args.command == "sweep":
        for line in sweep_stale():
            print(f"removed {line}")
        return 0
    install_signal_handlers()
    try:
        with Topology.create(args.trial_dir) as topo:
            pids = {
                role: topo.spawn(role, f"sleeper-{role}", ["sleep", "3600"]).pid for role in ROLES
            }
            print(json.dumps({"hex6": topo.hex6, "namespaces": topo.ns.__dict__, "pids": pids}))
            sys.stdout.flush()
            while True:
                time.sleep(1)
    except Interrupted as exc:
        print(f"{exc}; torn down", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
