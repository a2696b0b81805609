"""Environment variables set for the duration of one run, then restored.

The CLI hands run-wide settings (captures, scheduler traces) to trial processes through the
environment they inherit. Setting them on `os.environ` for good leaked them into whatever the
same Python process ran next (a test suite calling `cli.main` twice, say); this scope ends
with the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def scoped_environ(updates: Mapping[str, str]) -> Iterator[None]:
    """Set `updates` in os.environ inside the block; restore the previous values after it."""
    previous = {name: os.environ.get(name) for name in updates}
    os.environ.update(updates)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
