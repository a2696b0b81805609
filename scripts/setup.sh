#!/usr/bin/env bash
# Installs everything the testbed needs, idempotently: Debian packages, the Python
# virtual environment (pinned), the npm packages (pinned by package-lock.json) and the
# Rust binaries (release). Fast when already done: each step is skipped while its inputs
# are unchanged (stamps in .setup-stamps/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
quiet=0
[[ "${1:-}" == "--quiet" ]] && quiet=1
say() { [[ $quiet == 1 ]] || echo "setup: $*" >&2; }
stamps="$root/.setup-stamps"
mkdir -p "$stamps"
export PATH="$HOME/.cargo/bin:$PATH"

if [[ $(id -u) != 0 ]]; then
  echo "setup: the testbed needs root (network namespaces, iptables, real-time priority); run as root" >&2
  exit 2
fi

# 1. Debian packages: install only the missing ones.
mapfile -t pkgs < <(grep -v '^\s*#' scripts/apt-packages.txt | grep -v '^\s*$')
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -q --no-install-recommends "${missing[@]}" >"$stamps/apt.log" 2>&1 || {
    echo "setup: apt-get install failed; see $stamps/apt.log" >&2; exit 1; }
  # Debian starts nginx when it is installed; the testbed runs its own nginx per trial.
  if [[ -f /run/nginx.pid ]]; then kill "$(cat /run/nginx.pid)" 2>/dev/null || true; fi
fi

# 2. Python virtual environment from Debian's python3, with pinned requirements.
req_hash=$(cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
if [[ ! -x .venv/bin/python || "$(cat "$stamps/venv" 2>/dev/null)" != "$req_hash" ]]; then
  say "creating Python environment (.venv)"
  [[ -x .venv/bin/python ]] || /usr/bin/python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  .venv/bin/pip install -q --disable-pip-version-check --no-deps -e .
  echo "$req_hash" >"$stamps/venv"
fi

# 3. npm packages of the player (dash.js, puppeteer-core), exactly as locked.
if [[ -f player/package-lock.json ]]; then
  npm_hash=$(sha256sum player/package-lock.json | cut -c1-16)
  if [[ ! -d player/node_modules || "$(cat "$stamps/npm" 2>/dev/null)" != "$npm_hash" ]]; then
    say "installing npm packages (player/)"
    (cd player && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    echo "$npm_hash" >"$stamps/npm"
  fi
fi

# 4. Rust binaries (cargo is incremental: about a second when nothing changed).
# One workspace (Cargo.toml at the root); emulator/target and transport/target link to target/.
say "building the Rust workspace (release)"
if ! cargo build --release --locked -q --workspace; then
  echo "setup: cargo build of the workspace failed (output above)" >&2
  exit 1
fi
say "ready"
