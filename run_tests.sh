#!/usr/bin/env bash
# The test command: sets everything up (idempotent), then runs every test suite:
# Rust (cargo test, clippy, rustfmt), Python (ruff, pytest), JavaScript (node --test).
# Options: --quick skips tests marked slow.
# Under CI=true (as .ci/run runs) a test that would skip because a binary is not built, a
# browser is missing or the run is not root fails instead (conftest.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$root"
"$root/scripts/setup.sh" --quiet
export PATH="$HOME/.cargo/bin:$PATH"
# Tests marked `long` (many minutes each, e.g. an emulated --reps auto run interrupted and
# resumed) are documented commands of their own, outside the 25-minute suite.
if [[ "${1:-}" == "--quick" ]]; then
  selected="not slow and not long"
else
  selected="not long"
fi
status=0
run() { echo "== $*"; "$@" || status=1; }
# The transport's core crate stays sans-IO (docs/TRANSPORT.md, "Layers"): no I/O or
# command-line crate among its dependencies, no file, socket or libc call in its sources.
core_is_sans_io() {
  local deps
  deps="$(cargo tree --locked -q -p mptransport-core -e normal --prefix none)" || return 1
  if grep -E '^(libc|clap|serde_json|linkemu) ' <<<"$deps"; then
    echo "transport/core (mptransport-core) must not depend on the crates above" >&2
    return 1
  fi
  if grep -rnE 'std::fs|std::net|libc::' transport/core/src; then
    echo "transport/core/src must not use std::fs, std::net or libc (I/O is the runtime's)" >&2
    return 1
  fi
}
# One Cargo workspace (Cargo.toml at the root: emulator/ and transport/).
if [[ -f Cargo.toml ]]; then
  run cargo clippy --release --locked -q --workspace --all-targets -- -D warnings
  # rustfmt, as ruff format below: the workspace, then the fuzz crate it excludes.
  run cargo fmt --all --check
  run cargo fmt --check --manifest-path transport/fuzz/Cargo.toml
  run core_is_sans_io
  run cargo test --release --locked -q --workspace
elif [[ "${CI:-}" == true ]]; then
  echo "== Cargo.toml is missing: under CI every crate must build" >&2
  status=1
fi
run .venv/bin/ruff check .
run .venv/bin/ruff format --check .
if [[ -f player/package.json ]]; then
  run bash -c "cd player && node --test"
fi
# Python: the tests that need neither namespaces nor real time (no `netns` mark) on every core
# (pytest-xdist), then the real-time ones one at a time, so that nothing else loads the CPU
# under them. Each lists its slowest tests, so that a CI log shows where the suite's time goes
# (it must stay under 25 minutes).
run .venv/bin/pytest -n auto --durations=15 -m "($selected) and not netns"
run .venv/bin/pytest --durations=30 -m "($selected) and netns"
exit $status
