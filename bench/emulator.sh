#!/usr/bin/env bash
# Emulator accuracy benchmark: builds linkemu (release), then runs
# bench/emulator_bench.py as root in its own namespaces. Writes bench/emulator.json
# and prints the table that docs/EMULATOR.md quotes. Options go to the script
# (--tick-us N, --quick, --out PATH, --work DIR; see --help).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
(cd "$root/emulator" && cargo build --release --locked -q)
exec "$root/.venv/bin/python" "$root/bench/emulator_bench.py" "$@"
