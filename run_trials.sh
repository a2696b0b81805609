#!/usr/bin/env bash
# Front door: sets everything up (idempotent), then runs trials. See --help.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/scripts/setup.sh" --quiet
exec "$root/.venv/bin/python" -m testbed "$@"
