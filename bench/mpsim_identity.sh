#!/usr/bin/env bash
# Runs two mpsim binaries over the same battery of configurations and compares every output
# file: the check that a speed change left the simulator's results as they were.
#
#   bench/mpsim_identity.sh OLD_MPSIM NEW_MPSIM [OUT_DIR]
#
# The battery (about 100 runs per binary, some minutes each side): the reproduction pages'
# time-based runs shortened to 15 s; every congestion control and every scheduler on a bulk
# and an application-limited transfer; scenario files with shared bottlenecks, schedules, an
# outage, LTE traces, Gilbert-Elliott loss and cross traffic of the three kinds; a path break;
# and player runs (a 180 s one-rung video and a 20 s four-rung ladder) with their transport
# logs. Output files must be byte-identical, except mpsim's `wall_s` field. Content comes
# from `python -m server.content` (cache/content, or CONTENT_CACHE). Exit 0: identical; 1:
# differences (listed); 2: bad arguments.
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "usage: bench/mpsim_identity.sh OLD_MPSIM NEW_MPSIM [OUT_DIR] (two executable mpsim binaries)" >&2
  exit 2
fi
OLD=$(realpath "$1"); NEW=$(realpath "$2")
cd "$(dirname "$0")/.."
OUT=$(realpath -m "${3:-results/mpsim-identity}")
CACHE=${CONTENT_CACHE:-cache/content}
mkdir -p "$OUT"
echo "mpsim identity: content (encoded once, cached in $CACHE)"
MPD_180=$(.venv/bin/python -m server.content --duration-s 180 --ladder 720p-top-only --cache "$CACHE")/manifest.mpd || exit 2
MPD_20=$(.venv/bin/python -m server.content --duration-s 20 --ladder 720p --cache "$CACHE")/manifest.mpd || exit 2

# Cross traffic: the Table I scenarios with a fixed CC (mpsim does not resolve "match"), and
# one with a UDP CBR flow and an on/off TCP flow.
sed 's/cc = "match"/cc = "reno"/' netem-scenarios/seed000-table1-0.01pct.toml > "$OUT/xt-reno.toml"
sed 's/cc = "match"/cc = "cubic"/' netem-scenarios/seed000-table1-0.1pct.toml > "$OUT/xt-cubic.toml"
sed '/^\[\[cross_traffic\]\]/,$d' netem-scenarios/seed000-table1-0.1pct.toml > "$OUT/xt-mixed.toml"
cat >> "$OUT/xt-mixed.toml" <<'EOF'
[[cross_traffic]]
kind = "udp_cbr"
path = "wifi"
direction = "down"
rate_bps = 20e6
start_s = 1.0
stop_s = 6.0

[[cross_traffic]]
kind = "tcp_onoff"
path = "lte"
direction = "down"
cc = "bbr"
on_s = 2.0
off_s = 1.5
EOF

battery() {
  local bin=$1 out=$2 n=0
  rm -rf "$out"; mkdir -p "$out"
  run() {
    n=$((n + 1))
    mkdir -p "$out/$n"
    "$bin" "$@" > "$out/$n/out.json" 2> "$out/$n/err.txt"
    echo $? > "$out/$n/rc"
  }
  player() { # scenario cc sched mpd video_s seed [extra...]
    local d="$out/player-$1-$2-$3-$5"; mkdir -p "$d/tl"
    run --scenario "$1" --cc "$2" --sched "$3" --player-mpd "$4" --video-duration "$5" --seed "$6" \
      --player-out "$d/player.jsonl" --transport-log-dir "$d/tl" "${@:7}"
  }
  local p2="--duration-s 15 --measure-from-s 5 --loss-direction down --sched lrf --seed 1"
  for cc in balia bbr; do
    for loss in 1e-05:1e-05 1e-05:0.01 0.1:0.1; do
      run --path "path1:100:50:${loss%%:*}" --path "path2:100:50:${loss##*:}" $p2 --cc $cc --recv-window-bytes 67108864
    done
    run --path path1:100:50:1e-05 --path path2:100:50:1e-05 $p2 --cc $cc
  done
  for cc in hbdp lia mpcubic; do
    run --path path1:500:50:0.001 --path path2:100:10:0.003 $p2 --bin-s 5 --cc $cc --recv-window-bytes 67108864
  done
  for cc in reno cubic bbr lia olia balia wvegas compound mpcubic coupled-bbr emptcp wmptcp hmptcp hbdp; do
    run --cc $cc --sched lrf --path wifi:20:20:0.01 --path lte:8:40:0.001 --bytes 8000000 --seed 3
  done
  for s in lrf minrtt rr redundant lpc let gr-sty tp-sty tr-sty arp blest ecf default-oot default-upstream; do
    run --cc cubic --sched $s --path wifi:20:10:0.02 --path lte:10:50:0:60000 --bytes 6000000 --seed 5
    run --cc lia --sched $s --path wifi:20:10:0.02 --path lte:10:50:0:60000 --bytes 3000000 --seed 6 \
      --app-write-bytes 300000 --app-interval-ms 500
  done
  for sc in "$OUT/xt-reno.toml" "$OUT/xt-cubic.toml" shared-bottleneck three-path seed000-path-break \
    seed000-asymmetric-rtt A1-lte-trace; do
    run --scenario "$sc" --cc bbr --sched lrf --bytes 10000000 --seed 2
    run --scenario "$sc" --cc lia --sched blest --bytes 10000000 --seed 2
  done
  run --scenario "$OUT/xt-reno.toml" --cc coupled-bbr --duration-s 10 --bin-s 1 --seed 4
  run --scenario "$OUT/xt-mixed.toml" --cc lia --sched lrf --duration-s 8 --bin-s 1 --seed 3
  run --scenario "$OUT/xt-mixed.toml" --cc cubic --sched blest --duration-s 8 --bin-s 1 --seed 3
  run --scenario seed002-families/B1-ge-burst3 --cc olia --sched default-oot --bytes 15000000 --seed 9
  run --scenario seed002-families/A1-lte-trace-att --cc bbr --sched ecf --bytes 15000000 --seed 9
  run --scenario seed002-families/A2-lteq500ms --cc balia --sched tr-sty --bytes 15000000 --seed 9
  run --path a:50:20:0.001 --path b:50:30:0.001 --break-path a:2 --cc bbr --sched arp --bytes 20000000 --seed 1
  for sc in A1 A2 B1 B2; do
    for cc in bbr lia; do
      for s in default-oot tp-sty; do player $sc $cc $s "$MPD_180" 60 7; done
    done
    player $sc cubic lrf "$MPD_20" 20 8
  done
  player seed002-families/A1-ge-burst10 compound gr-sty "$MPD_180" 60 7 --recv-window-bytes 131072
  echo "$n runs"
}

echo "mpsim identity: old binary $OLD"
battery "$OLD" "$OUT/old"
echo "mpsim identity: new binary $NEW"
battery "$NEW" "$OUT/new"
.venv/bin/python - "$OUT/old" "$OUT/new" <<'EOF'
import filecmp
import json
import sys
from pathlib import Path


def without_wall_time(path: Path) -> object:
    """mpsim's JSON output less its `wall_s` field (the text itself if it is not JSON)."""
    try:
        doc = json.loads(path.read_text())
    except ValueError:
        return path.read_text()
    if isinstance(doc, dict):
        doc.pop("wall_s", None)
    return doc


old, new = Path(sys.argv[1]), Path(sys.argv[2])
same, differ = 0, []
for a in sorted(p for p in old.rglob("*") if p.is_file()):
    b = new / a.relative_to(old)
    if a.name == "out.json":
        equal = b.is_file() and without_wall_time(a) == without_wall_time(b)
    else:
        equal = b.is_file() and filecmp.cmp(a, b, shallow=False)
    if equal:
        same += 1
    else:
        differ.append(str(a.relative_to(old)))
print(f"mpsim identity: {same} output files identical, {len(differ)} differ")
for d in differ[:50]:
    print(f"  differs: {d}")
sys.exit(1 if differ else 0)
EOF
