"""Open files: a trial needs MIN_OPEN_FILES descriptors (Chromium alone opens hundreds).

Before anything of a trial starts, the soft RLIMIT_NOFILE is raised to MIN_OPEN_FILES when
the hard limit allows it (what any process may do); when the hard limit itself is lower, the
trial fails at once with a reason naming both limits and the command that raises them,
instead of a player dying later with a misleading error (Node.js reports a module it cannot
open as not found). Descriptors that run out during a trial anyway fail it with the error
that hit them (`[Errno 24] Too many open files`).
"""

from __future__ import annotations

import resource

MIN_OPEN_FILES = 1024


def ensure_open_files(needed: int = MIN_OPEN_FILES) -> str | None:
    """Raise the soft limit to `needed` if it is lower; the reason it cannot be, or None."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return None
    if hard != resource.RLIM_INFINITY and hard < needed:
        return (
            f"too few open files allowed: RLIMIT_NOFILE is {soft} (hard limit {hard}); a trial "
            f"needs {needed} (Chromium alone opens hundreds). Raise it where run_trials.sh "
            f"starts, e.g. `ulimit -n {needed}` (as root, or in /etc/security/limits.conf)"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return None
