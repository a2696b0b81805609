#!/usr/bin/env bash
# CPU cost of one player session per top-rung resolution, measured side by side (interleaved,
# so that the shared machine's load hits every resolution alike). Single-rendition 30 s clips
# (python -m server.content style, cached), played in a fresh namespace pair by
# bench/pair_session.py; prints one JSON line per session (cpu_s, cpu_pct_one_core, drops).
#   player/measure_cpu.sh [reps=3] [players="dashjs gstreamer"]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
reps=${1:-3}
players=${2:-dashjs gstreamer}
for rep in $(seq 1 "$reps"); do
  for player in $players; do
    for rung in 1920x1080@5240000 1280x720@5240000 1280x720@3000000 640x360@800000; do
      out=$(.venv/bin/python bench/pair_session.py --player "$player" --duration-s 30 \
        --only-rung "$rung" --out-dir "/tmp/tbx-media-cpu-$$")
      echo "{\"rung\": \"$rung\", \"rep\": $rep, ${out#\{}"
    done
  done
done
