#!/usr/bin/env bash
# `gpudoctor fleet` on a 10k-node fleet of reports, end to end (issue 21 item 13). Writes
# FLEET_NODES (default 10000) nodes x FLEET_WINDOWS (default 4) check --json reports (~26 KB
# each: 10k nodes x 4 = 1 GB) under BUILD_DIR/fleet_scale, then times with /usr/bin/time:
#   cold:   fleet --reports DIR --json with the index off (every file parsed): goal <= 3 s, <= 200 MB
#   cold_text: the same with the text report
#   index:  the same run building the report index
#   card_first: the first card query (reads through the report index, writes the query index)
#   card / slot: fleet card SERIAL / fleet slot NODE:BUS through the query index: goal <= 100 ms
#   stat_walk: find's stat of every report (the floor of an indexed query: its freshness check)
# and deletes the reports. Usage: bench/fleet_scale.sh [BUILD_DIR]
set -u
build=${1:-build}
nodes=${FLEET_NODES:-10000}
windows=${FLEET_WINDOWS:-4}
dir="$build/fleet_scale"
cache=$(mktemp -d)
trap 'rm -rf "$dir" "$cache"' EXIT
rm -rf "$dir"
"$build/bench/fleet_bench" --generate "$dir" --nodes "$nodes" --windows "$windows" || exit 1
sync
measure() {  # name, then the command
  local name=$1
  shift
  local out
  # /usr/bin/time writes "TIME elapsed_s user_s sys_s max_rss_kib" on stderr, among the
  # command's own lines. CPU seconds (user + sys) are the figure on a loaded machine.
  out=$( (/usr/bin/time -f 'TIME %e %U %S %M' "$@" >/dev/null) 2>&1 | grep '^TIME' | tail -1)
  set -- $out
  echo "bench=fleet_cli_$name nodes=$nodes windows=$windows seconds=$2" \
    "cpu_seconds=$(awk -v u="$3" -v s="$4" 'BEGIN { printf "%.2f", u + s }')" \
    "peak_rss_mib=$(($5 / 1024))"
}
half=$(printf 'node%05d' $((nodes / 2)))
serial="SN${half#node}-3"
XDG_CACHE_HOME=$cache GPUDOCTOR_FLEET_INDEX=off measure cold "$build/gpudoctor" fleet --reports "$dir" --json
XDG_CACHE_HOME=$cache GPUDOCTOR_FLEET_INDEX=off measure cold_text "$build/gpudoctor" fleet --reports "$dir"
XDG_CACHE_HOME=$cache measure index_build "$build/gpudoctor" fleet --reports "$dir" --json
XDG_CACHE_HOME=$cache measure indexed "$build/gpudoctor" fleet --reports "$dir" --json
XDG_CACHE_HOME=$cache measure card_first "$build/gpudoctor" fleet card "$serial" --reports "$dir"
XDG_CACHE_HOME=$cache measure card "$build/gpudoctor" fleet card "$serial" --reports "$dir"
XDG_CACHE_HOME=$cache measure slot "$build/gpudoctor" fleet slot "$half:0000:3a:00.0" --reports "$dir"
measure stat_walk find "$dir" -name '*.json' -printf '%s %T@\n'
echo "bench=fleet_cli_index nodes=$nodes index_mib=$(du -m "$cache"/gpudoctor/*.idx | cut -f1)" \
  "query_index_mib=$(du -m "$cache"/gpudoctor/*.idx.q | cut -f1)"
