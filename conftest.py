"""Repository-wide pytest hooks.

Under CI (`CI=true`, as `.ci/run` is run), a test that skips because a binary was not built,
a browser is missing or the run is not root FAILS instead: a broken build must not give a
green run by skipping the tests that would have shown it. Skips for other reasons (a kernel
feature this machine lacks, such as `sch_netem`) stay skips. Outside CI everything skips as
usual, so a developer without root can run the rest.
"""

from __future__ import annotations

import os
import re

import pytest

# Skip reasons that mean "the environment CI must provide is missing".
MUST_NOT_SKIP_IN_CI = re.compile(
    r"needs root|not built|build \S+ first|no chromium|needs debian's chromium|not installed",
    re.IGNORECASE,
)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def skip_reason(report: pytest.TestReport) -> str:
    """The reason text of a skipped report (pytest stores (file, line, reason))."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else longrepr
    return str(reason).removeprefix("Skipped: ")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # noqa: ARG001
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not report.skipped or not in_ci() or hasattr(report, "wasxfail"):
        return
    reason = skip_reason(report)
    if MUST_NOT_SKIP_IN_CI.search(reason):
        report.outcome = "failed"
        report.longrepr = (
            f"CI=true: this test would have skipped ({reason}); under CI a missing binary, "
            "browser or root is a failure. Build it (scripts/setup.sh) or run as root."
        )
