#!/usr/bin/env bash
# The test command: sets everything up (idempotent), then runs every test suite:
# Rust (cargo test, clippy), Python (ruff, pytest), JavaScript (node --test).
# Options: --quick skips tests marked slow.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$root"
"$root/scripts/setup.sh" --quiet
export PATH="$HOME/.cargo/bin:$PATH"
pytest_args=()
[[ "${1:-}" == "--quick" ]] && pytest_args+=(-m "not slow")
status=0
run() { echo "== $*"; "$@" || status=1; }
run cargo clippy --release --locked -q --workspace --all-targets -- -D warnings
run cargo test --release --locked -q --workspace
run .venv/bin/ruff check .
run .venv/bin/ruff format --check .
if [[ -f player/package.json ]]; then
  run bash -c "cd player && node --test"
fi
run .venv/bin/pytest "${pytest_args[@]}"
exit $status
