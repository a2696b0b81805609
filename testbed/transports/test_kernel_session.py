"""The kernel transport makes the player's sockets MPTCP by wrapping client-side spawns."""

from __future__ import annotations

from typing import Any

from testbed.transports import kernel_session


class FakeContext:
    def __init__(self) -> None:
        self.spawned: list[tuple[str, str, list[str]]] = []

    def spawn(self, role: str, name: str, argv: list[str], **kw: Any) -> str:
        self.spawned.append((role, name, argv))
        return name


def test_client_spawns_run_under_mptcpize_and_server_spawns_do_not() -> None:
    ctx = FakeContext()
    kernel_session._wrap_client_spawns(ctx)
    ctx.spawn("client", "player", ["node", "player/headless.mjs", "--url", "x"])
    ctx.spawn("server", "other", ["true"])
    ctx.spawn("client", "again", ["mptcpize", "run", "node"])  # never wrapped twice
    assert ctx.spawned == [
        ("client", "player", ["mptcpize", "run", "node", "player/headless.mjs", "--url", "x"]),
        ("server", "other", ["true"]),
        ("client", "again", ["mptcpize", "run", "node"]),
    ]
