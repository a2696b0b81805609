#!/usr/bin/env bash
# Installs everything the testbed needs, idempotently: Debian packages, the Python
# virtual environment (pinned), the npm packages (pinned by package-lock.json) and the
# Rust binaries (release). Fast when already done: each step is skipped while its inputs
# are unchanged (stamps in .setup-stamps/).
#
# Every step that does real work prints one line saying what it does and roughly how long
# it takes on this project's 2-core machines, also with --quiet (which only hides the
# "ready" line); its output goes to .setup-stamps/<step>.log, named when the step fails.
# Measured on a fresh clone at load average 14: venv 188 s, npm 31 s, emulator 382 s,
# transport 318 s (CARGO_BUILD_JOBS=1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
quiet=0
[[ "${1:-}" == "--quiet" ]] && quiet=1
stamps="$root/.setup-stamps"
mkdir -p "$stamps"
export PATH="$HOME/.cargo/bin:$PATH"

# step NAME "what it does" "about how long" command...: one line, output to the step's log;
# on failure the log's last lines and its path.
step() {
  local name=$1 what=$2 how_long=$3
  shift 3
  local log="$stamps/$name.log"
  echo "setup: $what (about $how_long; log: ${log#"$root"/})" >&2
  local started=$SECONDS
  if ! "$@" >"$log" 2>&1; then
    echo "setup: FAILED: $what; last lines of $log:" >&2
    tail -n 20 "$log" | sed 's/^/  | /' >&2
    exit 1
  fi
  echo "setup:   done in $((SECONDS - started)) s" >&2
}

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
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -q --no-install-recommends "$@"
  # Debian starts nginx when it is installed; the testbed runs its own nginx per trial.
  if [[ -f /run/nginx.pid ]]; then kill "$(cat /run/nginx.pid)" 2>/dev/null || true; fi
}
if ((${#missing[@]})); then
  step apt "installing ${#missing[@]} Debian packages (${missing[*]:0:6}$( ((${#missing[@]} > 6)) && echo ' ...'))" \
    "2-10 min on a fresh machine" apt_install "${missing[@]}"
fi

# 2. Python virtual environment from Debian's python3, with pinned requirements.
req_hash=$(cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
make_venv() {
  [[ -x .venv/bin/python ]] || /usr/bin/python3 -m venv .venv
  .venv/bin/pip install --disable-pip-version-check -r requirements.txt
  .venv/bin/pip install --disable-pip-version-check --no-deps -e .
}
if [[ ! -x .venv/bin/python || "$(cat "$stamps/venv" 2>/dev/null)" != "$req_hash" ]]; then
  step venv "creating the Python environment .venv (numpy, pandas, scipy, matplotlib, ...)" \
    "1-4 min" make_venv
  echo "$req_hash" >"$stamps/venv"
fi

# 3. npm packages of the player (dash.js, puppeteer-core, ajv), exactly as locked.
if [[ -f player/package-lock.json ]]; then
  npm_hash=$(sha256sum player/package-lock.json | cut -c1-16)
  if [[ ! -d player/node_modules || "$(cat "$stamps/npm" 2>/dev/null)" != "$npm_hash" ]]; then
    npm_install() { (cd player && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error); }
    step npm "installing the player's npm packages (player/node_modules)" "30 s" npm_install
    echo "$npm_hash" >"$stamps/npm"
  fi
fi

# 4. Rust binaries: one Cargo workspace (Cargo.toml at the root; emulator/target and
# transport/target are symlinks to target/). cargo is incremental; the line is printed only
# when a source file is newer than the last successful build (or there was none).
stamp="$stamps/cargo-workspace"
# The stamp lists the binaries the last build made: all must still exist.
if [[ -s $stamp && -z $(find Cargo.toml Cargo.lock emulator transport -path "*/target" -prune -o -type f -newer "$stamp" -print -quit) ]] &&
  xargs -a "$stamp" ls >/dev/null 2>&1; then
  :
else
  [[ -d target/release ]] && how_long="10 s-2 min (incremental)" || how_long="2-7 min the first time"
  cargo_build() { cargo build --release --locked --workspace; }
  step "cargo-workspace" "building the Rust workspace (emulator/, transport/; release)" "$how_long" cargo_build
  find target/release -maxdepth 1 -type f -executable >"$stamp"
fi
# 5. The default run's video: its ladder encoded once (server/content.py caches it in
# cache/content/), so that `./run_trials.sh` with no options spends its time on trials.
# One interpreter start: prints the clip length when its ladder is not cached yet, else nothing.
default_clip_s=$(.venv/bin/python -c "
from server.content import DEFAULT_CACHE, LADDER_FILE, content_hash, content_params
from testbed.plan import DEFAULT_RUN
s = DEFAULT_RUN['video_duration']
print('' if (DEFAULT_CACHE / content_hash(content_params(s, None)) / LADDER_FILE).is_file() else s)
")
if [[ -n $default_clip_s ]]; then
  encode_default() { .venv/bin/python -m server.content --duration-s "$default_clip_s" >/dev/null; }
  step content "encoding the default run's ${default_clip_s} s video ladder (FFmpeg)" "30 s-2 min" encode_default
fi
[[ $quiet == 1 ]] || echo "setup: ready" >&2
