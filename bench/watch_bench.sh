#!/usr/bin/env bash
# `gpudoctor watch` at 1 s with 8 fake GPUs (fake NVML, h100_busy) for WATCH_BENCH_SECONDS (default
# 600: the history packs its raw ticks every 10 minutes, a shorter run leaves that work out and
# flatters the figure), side by side in the same run with Debian's prometheus-node-exporter
# scraped once a second.
# Reports CPU seconds and peak RSS of each, CPU per tick vs CPU per scrape, and the history size.
# Targets (issue 23): <= 0.2% of one core, <= 0.25x node_exporter's CPU per scrape, <= 12 MiB
# peak RSS after 1 h (issue 9 had 0.5% and 20 MiB). NVML_LIB picks the fake NVML variant
# (default: build/tests/fake_nvml/libnvidia-ml.so.1, every symbol; .../minimal/ lacks
# nvmlDeviceGetFieldValues). Usage: bench/watch_bench.sh [BUILD_DIR]
# WATCH_BENCH_BASE=OTHER_BUILD_DIR also runs OTHER_BUILD_DIR/gpudoctor watch beside it, in the same
# run and on the same fake NVML library, and prints its figures with the prefix "base": a
# before/after comparison under the same load.
set -u
build=$(cd "${1:-build}" && pwd)
secs=${WATCH_BENCH_SECONDS:-600}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
hz=$(getconf CLK_TCK)

cpu_s() {  # utime + stime of a pid, in seconds
  awk -v hz="$hz" '{print ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo 0
}
hwm_kib() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
threads() { awk '/^Threads:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

export FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_busy.scenario"
# WATCH_BENCH_SEED_HOURS=H: both start on a copy of one history file that already holds H hours of
# 1 s ticks ending now (bench/store_size: every metric of 8 GPUs, so most of the series `watch`
# writes), the state of a node that has run `watch` for a while: retention deletes as it goes and
# each series' rows are spread over the file. Without it the file starts empty.
if [ -n "${WATCH_BENCH_SEED_HOURS:-}" ]; then
  seeder="$build/bench/store_size"
  [ -x "$seeder" ] || { echo "watch_bench: build $seeder first (--target store_size)" >&2; exit 1; }
  "$seeder" "$tmp/history.db" "$WATCH_BENCH_SEED_HOURS" 600 "$(date +%s)" >/dev/null 2>&1 ||
    { echo "watch_bench: seeding failed" >&2; exit 1; }
  # The seed's GPU ledger names store_size's synthetic cards, not the fake NVML's: left in, `watch`
  # would expect those 8 and open gpu.missing (crit) for the whole run. The samples stay.
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM gpus"); c.commit()' \
    "$tmp/history.db" || { echo "watch_bench: clearing the seed's GPU ledger failed" >&2; exit 1; }
  cp "$tmp/history.db" "$tmp/base.db"
  echo "history seeded: $WATCH_BENCH_SEED_HOURS h, $(du -m "$tmp/history.db" | cut -f1) MiB"
fi
"$build/gpudoctor" watch --interval 1 --db "$tmp/history.db" \
  --nvml-lib "${NVML_LIB:-$build/tests/fake_nvml/libnvidia-ml.so.1}" --skip-probes reachability \
  2>"$tmp/watch.log" &
wpid=$!
pids+=($wpid)
bpid=""
if [ -n "${WATCH_BENCH_BASE:-}" ]; then
  base=$(cd "$WATCH_BENCH_BASE" && pwd)
  "$base/gpudoctor" watch --interval 1 --db "$tmp/base.db" \
    --nvml-lib "${NVML_LIB:-$build/tests/fake_nvml/libnvidia-ml.so.1}" --skip-probes reachability \
    --listen 127.0.0.1:19836 2>"$tmp/base.log" &
  bpid=$!
  pids+=($bpid)
fi

npid=""
ne=$(command -v prometheus-node-exporter || true)
if [ -n "$ne" ]; then
  "$ne" --web.listen-address=127.0.0.1:19100 >/dev/null 2>&1 &
  npid=$!
  pids+=($npid)
fi
sleep 2
w0=$(cpu_s $wpid)
[ -n "$bpid" ] && b0=$(cpu_s $bpid)
[ -n "$npid" ] && n0=$(cpu_s $npid)
scrapes=0
bytes=0
for _ in $(seq "$secs"); do
  if [ -n "$npid" ]; then
    b=$(curl -s --max-time 2 http://127.0.0.1:19100/metrics | wc -c)
    bytes=$((bytes + b))
    scrapes=$((scrapes + 1))
  fi
  sleep 1
done
w1=$(cpu_s $wpid)
[ -n "$bpid" ] && b1=$(cpu_s $bpid)
wrss=$(hwm_kib $wpid)
wnow=$(rss_kib $wpid)
wthr=$(threads $wpid)
ticks=$(grep -c . "$tmp/watch.log" >/dev/null; echo "$secs")
awk -v a="$w0" -v b="$w1" -v s="$secs" -v kb="$wrss" -v now="$wnow" -v thr="$wthr" 'BEGIN {
  cpu = b - a
  printf "gpudoctor watch (8 fake GPUs, 1 s): %.2f CPU s over %d s = %.3f%% of one core, %.2f ms CPU per tick, peak RSS %.1f MiB, RSS at the end %.1f MiB, %d threads at the end (targets <= 0.2%%, <= 12 MiB after 1 h)\n",
    cpu, s, 100 * cpu / s, 1000 * cpu / s, kb / 1024, now / 1024, thr }'
if [ -n "$bpid" ]; then
  awk -v a="$b0" -v b="$b1" -v s="$secs" -v kb="$(hwm_kib $bpid)" -v thr="$(threads $bpid)" 'BEGIN {
    cpu = b - a
    printf "base gpudoctor watch (%s, same run): %.2f CPU s over %d s = %.3f%% of one core, %.2f ms CPU per tick, peak RSS %.1f MiB, %d threads at the end\n",
      "'"$base"'", cpu, s, 100 * cpu / s, 1000 * cpu / s, kb / 1024, thr }'
fi
if [ -n "$npid" ]; then
  n1=$(cpu_s $npid)
  nrss=$(hwm_kib $npid)
  awk -v a="$n0" -v b="$n1" -v n="$scrapes" -v kb="$nrss" -v by="$bytes" 'BEGIN {
    cpu = b - a
    printf "node_exporter (scraped every 1 s): %.2f CPU s over %d scrapes = %.2f ms CPU per scrape, %.0f bytes per scrape, peak RSS %.1f MiB\n",
      cpu, n, n ? 1000 * cpu / n : 0, n ? by / n : 0, kb / 1024 }'
  awk -v wa="$w0" -v wb="$w1" -v s="$secs" -v a="$n0" -v b="$n1" -v n="$scrapes" 'BEGIN {
    if (n > 0 && b > a) printf "watch CPU per tick / node_exporter CPU per scrape: %.2fx (target <= 0.25)\n", ((wb - wa) / s) / ((b - a) / n) }'
  [ -n "$bpid" ] && awk -v wa="$b0" -v wb="$b1" -v s="$secs" -v a="$n0" -v b="$n1" -v n="$scrapes" 'BEGIN {
    if (n > 0 && b > a) printf "base watch CPU per tick / node_exporter CPU per scrape: %.2fx\n", ((wb - wa) / s) / ((b - a) / n) }'
else
  echo "node_exporter: prometheus-node-exporter not installed (apt-get install prometheus-node-exporter)"
fi
kill -TERM $wpid 2>/dev/null
wait $wpid 2>/dev/null
size=$(stat -c %s "$tmp/history.db" 2>/dev/null || echo 0)
wal=$(stat -c %s "$tmp/history.db-wal" 2>/dev/null || echo 0)
awk -v s="$size" -v w="$wal" -v t="$secs" 'BEGIN {
  printf "history after %d s: %.2f MiB database + %.2f MiB WAL\n", t, s / 1048576, w / 1048576 }'
