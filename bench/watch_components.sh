#!/usr/bin/env bash
# Where a `watch` tick's CPU goes, by component: the same binary in configurations that add one
# part at a time (the tick's own machinery with the cpu probe alone, + the history, NVML alone on
# idle and on busy GPUs, every probe without and with the history), one after another, each for
# SECONDS_MEASURED (default 45) after 8 s of warm-up. 8 fake GPUs without FieldValues, reachability
# skipped, no HTTP listener. Prints CPU ms (perf stat task-clock) and context switches per tick.
# Usage: bench/watch_components.sh [BUILD_DIR]   (needs perf; docs/cost.md "Twelfth round")
set -u
build=$(cd "${1:-build}" && pwd)
secs=${SECONDS_MEASURED:-45}
here=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "watch_components: needs perf" >&2; exit 1; }
lib="$build/tests/fake_nvml/minimal/libnvidia-ml.so.1"
d=$(mktemp -d)
chmod 700 "$d"
pid=""
cleanup() { [ -n "$pid" ] && pkill -P "$pid" 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT
# measure NAME SCENARIO WATCH_ARGS...
# `watch` runs under `perf stat` (counting from 8 s after its start): every thread it ever had is
# counted, also workers started after the count began; `perf stat -p PID` would count only the
# threads alive when it attached, and the worker pool starts new ones (a stall's fresh workers, an
# idle worker's replacement after kWorkerIdleTimeout).
measure() {
  local name=$1 scenario=$2
  shift 2
  FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/$scenario.scenario" \
    perf stat -D 8000 -x, -e task-clock,context-switches -o "$d/$name.stat" -- \
    "$build/gpudoctor" watch --interval 1 --nvml-lib "$lib" --listen off "$@" 2>"$d/$name.log" &
  pid=$!
  sleep $((8 + secs))
  pkill -INT -P "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  pid=""
  awk -F, -v n="$name" -v s="$secs" '
      $3 == "task-clock" { cpu = $1 / s } $3 == "context-switches" { cs = $1 / s }
      END { printf "%-28s %6.2f ms a tick, %5.1f context switches a tick\n", n, cpu, cs }' \
    "$d/$name.stat"
}
measure "cpu probe, no history" h100_busy --no-db --probes cpu
measure "cpu probe, history" h100_busy --db "$d/cpu.db" --probes cpu
measure "nvml, idle GPUs, no history" h100_healthy --no-db --probes nvml
measure "nvml, busy GPUs, no history" h100_busy --no-db --probes nvml
measure "all probes, no history" h100_busy --no-db --skip-probes reachability
measure "all probes, history" h100_busy --db "$d/all.db" --skip-probes reachability
