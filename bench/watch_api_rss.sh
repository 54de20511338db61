#!/usr/bin/env bash
# `watch`'s RSS while it serves the dashboard's history ranges, binaries side by side: each runs on
# its own copy of one history file seeded with SEED_HOURS (default 24) of 1 s ticks ending now
# (bench/store_size: every metric of 8 GPUs), listening on 127.0.0.1; after 15 s each is asked for
# the last 1 h, 24 h and 7 d of four GPU metrics (every GPU's series) through /api/v1/history,
# one request at a time. Prints VmHWM before and after the requests and the slowest request.
# Usage: bench/watch_api_rss.sh BUILD_DIR [BINARY...]   (default: BUILD_DIR/gpudoctor)
set -u
build=$(cd "${1:?BUILD_DIR}" && pwd)
shift
[ $# -gt 0 ] || set -- "$build/gpudoctor"
here=$(cd "$(dirname "$0")" && pwd)
seeder="$build/bench/store_size"
[ -x "$seeder" ] || { echo "watch_api_rss: build $seeder first (--target store_size)" >&2; exit 1; }
command -v curl >/dev/null || { echo "watch_api_rss: needs curl" >&2; exit 1; }
. "$here/watch_side_by_side.sh"  # the fake NVML ($lib), $d, $pids and their cleanup
"$seeder" "$d/seed.db" "${SEED_HOURS:-24}" 600 "$(date +%s)" >/dev/null 2>&1 ||
  { echo "watch_api_rss: seeding failed" >&2; exit 1; }
hwm() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
i=0
for bin in "$@"; do
  mkdir -m 700 "$d/$i"
  cp "$d/seed.db" "$d/$i/h.db"
  "$bin" watch --interval 1 --db "$d/$i/h.db" --nvml-lib "$lib" --skip-probes reachability \
    --listen "127.0.0.1:$((19890 + i))" >/dev/null 2>&1 &
  pids+=($!)
  i=$((i + 1))
done
sleep 15
i=0
for bin in "$@"; do
  p=${pids[$i]}
  before=$(hwm "$p")
  slowest=0
  for m in gpudoctor_gpu_temperature_celsius gpudoctor_gpu_power_watts \
    gpudoctor_gpu_utilization_ratio gpudoctor_gpu_memory_used_bytes; do
    for s in 1h 24h 7d; do
      t=$(curl -s -o /dev/null -w '%{time_total}' \
        "http://127.0.0.1:$((19890 + i))/api/v1/history?metric=$m&since=$s")
      slowest=$(awk -v a="$slowest" -v b="$t" 'BEGIN { print (b > a) ? b : a }')
    done
  done
  awk -v b="$bin" -v x="$before" -v y="$(hwm "$p")" -v s="$slowest" 'BEGIN {
    printf "%s: VmHWM %.1f MiB before the requests, %.1f MiB after; slowest request %.3f s\n",
      b, x / 1024, y / 1024, s }'
  i=$((i + 1))
done
