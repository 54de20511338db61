#!/usr/bin/env bash
# `gpudoctor fleet` on a 10k-node fleet of reports, end to end (issue 21 item 13). Writes
# FLEET_NODES (default 10000) nodes x FLEET_WINDOWS (default 4) check --json reports (~26 KB
# each: 10k nodes x 4 = 1 GB) under BUILD_DIR/fleet_scale, then times with /usr/bin/time:
#   cold:   fleet --reports DIR --json with the index off (every file parsed): goal <= 3 s, <= 200 MB
#   cold_text: the same with the text report
#   index_build: the same run building the report index (and the query index)
#   indexed: the same run again, through the report index
#   card_first: the first card query after those runs (from the query index when the plain
#           run wrote one, else it reads through the report index and writes the query index)
#   card / slot: fleet card SERIAL / fleet slot NODE:BUS through the query index: goal <= 100 ms
#   card_trust / slot_trust: the same with --trust-dir-mtime (no stat per report; the build
#           binary only, and the baseline when FLEET_BASELINE_TRUST=1 says it has the flag)
#   stat_walk: find's stat of every report (the floor of an indexed query: its freshness check)
# and deletes the reports. Usage: bench/fleet_scale.sh [BUILD_DIR]
# Environment: FLEET_DIR=DIR uses (and keeps) reports already in DIR, generated there when
# missing; FLEET_BASELINE=BINARY measures that gpudoctor too, each figure side by side
# (binary=baseline / binary=build); FLEET_REPEAT=N runs card and slot N times (default 3).
set -u
build=${1:-build}
nodes=${FLEET_NODES:-10000}
windows=${FLEET_WINDOWS:-4}
repeat=${FLEET_REPEAT:-3}
baseline=${FLEET_BASELINE:-}
keep=0
if [ -n "${FLEET_DIR:-}" ]; then
  dir=$FLEET_DIR
  keep=1
else
  dir="$build/fleet_scale"
fi
cache_root=$(mktemp -d)
if [ $keep = 1 ]; then
  trap 'rm -rf "$cache_root"' EXIT
else
  trap 'rm -rf "$dir" "$cache_root"' EXIT
  rm -rf "$dir"
fi
if [ ! -d "$dir" ]; then
  "$build/bench/fleet_bench" --generate "$dir" --nodes "$nodes" --windows "$windows" || exit 1
  sync
fi
binaries=("build=$build/gpudoctor")
[ -n "$baseline" ] && binaries=("baseline=$baseline" "${binaries[@]}")
measure() {  # label, name, then the command
  local label=$1 name=$2
  shift 2
  local out
  # /usr/bin/time writes "TIME elapsed_s user_s sys_s max_rss_kib" on stderr, among the
  # command's own lines. CPU seconds (user + sys) are the figure on a loaded machine.
  out=$( (/usr/bin/time -f 'TIME %e %U %S %M' "$@" >/dev/null) 2>&1 | grep '^TIME' | tail -1)
  set -- $out
  echo "bench=fleet_cli_$name binary=$label nodes=$nodes windows=$windows seconds=$2" \
    "cpu_seconds=$(awk -v u="$3" -v s="$4" 'BEGIN { printf "%.3f", u + s }')" \
    "peak_rss_mib=$(($5 / 1024))"
}
half=$(printf 'node%05d' $((nodes / 2)))
serial="SN${half#node}-3"
# Each figure for every binary before the next figure (side by side under the same load);
# each binary has its own cache directory.
each() {  # name, env..., --, arguments after the binary
  local name=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do
    envs+=("$1")
    shift
  done
  shift
  for b in "${binaries[@]}"; do
    local label=${b%%=*} bin=${b#*=}
    mkdir -p "$cache_root/$label"
    measure "$label" "$name" env XDG_CACHE_HOME="$cache_root/$label" "${envs[@]}" "$bin" "$@"
  done
}
each cold GPUDOCTOR_FLEET_INDEX=off -- fleet --reports "$dir" --json
each cold_text GPUDOCTOR_FLEET_INDEX=off -- fleet --reports "$dir"
each index_build -- fleet --reports "$dir" --json
each indexed -- fleet --reports "$dir" --json
each card_first -- fleet card "$serial" --reports "$dir"
for _ in $(seq "$repeat"); do
  each card -- fleet card "$serial" --reports "$dir"
  each slot -- fleet slot "$half:0000:3a:00.0" --reports "$dir"
done
all_binaries=("${binaries[@]}")
[ "${FLEET_BASELINE_TRUST:-0}" = 1 ] || binaries=("build=$build/gpudoctor")
for _ in $(seq "$repeat"); do
  each card_trust -- fleet card "$serial" --reports "$dir" --trust-dir-mtime
  each slot_trust -- fleet slot "$half:0000:3a:00.0" --reports "$dir" --trust-dir-mtime
done
binaries=("${all_binaries[@]}")
measure find stat_walk find "$dir" -name '*.json' -printf '%s %T@\n'
for b in "${binaries[@]}"; do
  label=${b%%=*}
  echo "bench=fleet_cli_index binary=$label nodes=$nodes" \
    "index_mib=$(du -m "$cache_root/$label"/gpudoctor/*.idx | cut -f1)" \
    "query_index_mib=$(du -m "$cache_root/$label"/gpudoctor/*.idx.q | cut -f1)"
done
