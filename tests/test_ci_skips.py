"""Under CI=true a test that would skip for a missing binary, browser or root fails instead
(conftest.py); other skips stay skips, and outside CI nothing changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SAMPLE = """
import pytest

def test_needs_a_binary():
    pytest.skip("transport/target/release/mpproxy not built")

@pytest.mark.skipif(True, reason="needs root for network namespaces")
def test_needs_root():
    pass

def test_needs_a_kernel_feature():
    pytest.skip("this kernel has no sch_netem")
"""


def run_sample(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    sample = tmp_path / "test_sample.py"
    sample.write_text(SAMPLE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", str(sample)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_outside_ci_missing_binaries_and_root_skip(tmp_path: Path) -> None:
    proc = run_sample(tmp_path, None)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 skipped" in proc.stdout


def test_under_ci_missing_binaries_and_root_fail(tmp_path: Path) -> None:
    proc = run_sample(tmp_path, "true")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # A skip in the call phase becomes a failure, a skipif (setup phase) an error: both fail.
    assert "1 failed, 1 skipped, 1 error" in proc.stdout, proc.stdout
    assert "would have skipped (transport/target/release/mpproxy not built)" in proc.stdout
