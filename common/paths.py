"""The path names of a scenario that does not name its own: Wi-Fi and LTE, in file order
(docs/CONTRACTS.md §3 gives their addresses)."""

from __future__ import annotations

DEFAULT_PATH_NAMES = ("wifi", "lte")
