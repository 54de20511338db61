#!/usr/bin/env bash
# `gpudoctor watch` resident memory over time, several binaries side by side in one run (issue 23:
# <= 12 MiB peak RSS after 1 h): each runs at 1 s with 8 fake GPUs (h100_busy, the fake NVML
# without nvmlDeviceGetFieldValues unless NVML_LIB says otherwise), its own history database and
# loopback port. Every EVERY seconds (default 60) prints per binary: RSS, peak RSS (VmHWM),
# anonymous and file-backed RSS in MiB, CPU per tick so far, and CPU per tick over the last EVERY
# seconds (the steady state: a cost that grows with uptime shows there first). Give each binary its own file
# (copy it): code pages shared between two processes are not released (memory_upkeep.h).
# Usage: bench/watch_rss.sh BUILD_DIR SECONDS BINARY[:LABEL]...
#   e.g. cp /old/build/gpudoctor /tmp/gd_before; cp build/gpudoctor /tmp/gd_after
#        bench/watch_rss.sh build 1200 /tmp/gd_before:before /tmp/gd_after:after
set -u
build=$(cd "${1:?BUILD_DIR}" && pwd)
secs=${2:?SECONDS}
shift 2
every=${EVERY:-60}
here=$(cd "$(dirname "$0")" && pwd)
nvml=${NVML_LIB:-$build/tests/fake_nvml/minimal/libnvidia-ml.so.1}
tmp=$(mktemp -d)
hz=$(getconf CLK_TCK)
pids=()
labels=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
export FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_busy.scenario"
port=$((19900 + RANDOM % 50))
for arg in "$@"; do
  bin=${arg%%:*}
  label=${arg#*:}
  [ "$label" = "$arg" ] && label=$(basename "$bin")
  port=$((port + 1))
  "$bin" watch --interval 1 --db "$tmp/$label.db" --listen "127.0.0.1:$port" --nvml-lib "$nvml" \
    --skip-probes reachability >/dev/null 2>"$tmp/$label.log" &
  pids+=($!)
  labels+=("$label")
done
sleep 2
declare -a cpu0 cpu_last
for i in "${!pids[@]}"; do
  cpu0[$i]=$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")
  cpu_last[$i]=${cpu0[$i]}
done
t0=$SECONDS
t_last=0
while [ $((SECONDS - t0)) -lt "$secs" ]; do
  sleep "$every"
  line="t=$((SECONDS - t0))s"
  for i in "${!pids[@]}"; do
    p=${pids[$i]}
    [ -e "/proc/$p/status" ] || { line="$line | ${labels[$i]} exited"; continue; }
    c=$(awk '{print $14 + $15}' "/proc/$p/stat")
    line="$line | ${labels[$i]} $(awk '/^(VmRSS|VmHWM|RssAnon|RssFile):/ {v[$1] = $2}
      END {printf "rss %.1f peak %.1f anon %.1f file %.1f", v["VmRSS:"] / 1024, v["VmHWM:"] / 1024,
           v["RssAnon:"] / 1024, v["RssFile:"] / 1024}' "/proc/$p/status")"
    line="$line $(awk -v c="$c" -v c0="${cpu0[$i]}" -v cl="${cpu_last[$i]}" -v hz="$hz" \
      -v s=$((SECONDS - t0)) -v ls=$((SECONDS - t0 - t_last)) \
      'BEGIN {printf "cpu/tick %.2f ms (last %d s: %.2f ms)", 1000 * (c - c0) / hz / s, ls,
              1000 * (c - cl) / hz / (ls > 0 ? ls : 1)}')"
    cpu_last[$i]=$c
  done
  t_last=$((SECONDS - t0))
  echo "$line"
done
