"""The skip conditions the real-namespace tests share: root, and the binaries setup builds.

Under CI=true a skip for these reasons fails instead (conftest.py), so a CI machine that lost
a binary or root cannot pass by skipping.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MPPROXY = REPO / "transport" / "target" / "release" / "mpproxy"
LINKEMU = REPO / "emulator" / "target" / "release" / "linkemu"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces")
# --pcap records with dumpcap; the tests read the captures with tshark (Debian's tshark).
needs_capture_tools = pytest.mark.skipif(
    shutil.which("tshark") is None or shutil.which("dumpcap") is None,
    reason="tshark and dumpcap are not installed (scripts/apt-packages.txt)",
)


def needs_built(*binaries: Path) -> pytest.MarkDecorator:
    """Skip unless every binary exists (named in the reason, with how to build it)."""
    missing = [b.name for b in binaries if not b.is_file()]
    # "not built" is a reason conftest.py turns into a failure under CI=true.
    reason = f"{' and '.join(missing) or 'binaries'} not built (scripts/setup.sh)"
    return pytest.mark.skipif(bool(missing), reason=reason)
