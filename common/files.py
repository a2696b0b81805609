"""The one atomic JSON writer: readers see the old file or the new one, never half of it.

result.json's presence means "this trial finished" (docs/CONTRACTS.md §2), and state files
are read by other processes, so every JSON file a reader may open while it is being
written goes through `write_json_atomically`.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any


def write_json_atomically(path: Path, data: Any, *, durable: bool = True) -> None:
    """Writes `data` as indented JSON to a temporary file beside `path` (named after the
    writing process and thread, so concurrent writers do not share it), syncs it, then
    renames it over `path`. `durable=False` skips the sync: still atomic for readers, but a
    power cut may lose the file (for outputs cheap to recompute, e.g. simulated trials, where
    the sync costs more than the trial)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)
        out.write("\n")
        if durable:
            out.flush()
            os.fsync(out.fileno())
    os.replace(tmp, path)
