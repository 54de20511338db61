#!/usr/bin/env bash
# The history store's share of `gpudoctor watch` CPU, side by side in one run: BUILD's watch and
# BASE's (the version before; required) with the same probes and fake NVML (8 GPUs,
# h100_busy), each with --db and with --no-db (the difference is the store's cost), for
# STORE_BENCH_SECONDS (default 90) after a 5 s warm-up. Prints ms CPU (utime+stime) per tick,
# peak RSS and the history file's size.
# Usage: bench/store_tick_bench.sh BUILD_DIR BASE_DIR   (PROBES=cpu,nvml by default;
#        PROBES=all runs every probe but reachability)
set -u
build=$(cd "${1:-build}" && pwd)
# Without a base (bench/run.sh passes only BUILD_DIR) the build is measured against itself: an
# A/A run, which shows this machine's noise.
base=$(cd "${2:-${1:-build}}" && pwd)
secs=${STORE_BENCH_SECONDS:-90}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
chmod 700 "$tmp"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
hz=$(getconf CLK_TCK)
cpu_s() { awk -v hz="$hz" '{print ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo 0; }
hwm_kib() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
export FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_busy.scenario"
nvml=${NVML_LIB:-$build/tests/fake_nvml/minimal/libnvidia-ml.so.1}
if [ "${PROBES:-cpu,nvml}" = all ]; then
  probe_args=(--skip-probes reachability)
else
  probe_args=(--probes "${PROBES:-cpu,nvml}")
fi
declare -A pid
for who in new base; do
  bin=$build/gpudoctor
  [ $who = base ] && bin=$base/gpudoctor
  for db in db nodb; do
    dbarg=(--db "$tmp/$who.db")
    [ $db = nodb ] && dbarg=(--no-db)
    "$bin" watch --interval 1 "${dbarg[@]}" --nvml-lib "$nvml" "${probe_args[@]}" --listen off \
      2>"$tmp/$who-$db.log" &
    pid[$who-$db]=$!
    pids+=($!)
  done
done
sleep 5
declare -A c0
for k in "${!pid[@]}"; do c0[$k]=$(cpu_s "${pid[$k]}"); done
sleep "$secs"
for k in new-db new-nodb base-db base-nodb; do
  c1=$(cpu_s "${pid[$k]}")
  awk -v k="$k" -v a="${c0[$k]}" -v b="$c1" -v s="$secs" -v h="$(hwm_kib "${pid[$k]}")" \
    'BEGIN {printf "%-10s %6.3f ms CPU/tick  peak RSS %5.1f MiB\n", k, (b - a) * 1000 / s, h / 1024}'
done
for who in new base; do
  echo "$who history: $(du -k "$tmp/$who.db" | cut -f1) KiB (+wal $(du -k "$tmp/$who.db-wal" 2>/dev/null | cut -f1) KiB)"
done
