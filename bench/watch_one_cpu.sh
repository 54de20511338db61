#!/usr/bin/env bash
# What keeping `watch`'s threads on one CPU saves ([watch] one_cpu, watch/cpu_placement.h): the
# same binary alone on the machine, by default (one CPU) and with --any-cpu in turn, RUNS runs
# (default 6: one, any, one, any, ...) of SECONDS_MEASURED (default 75) each after 8 s of
# warm-up, as one watch runs on a node. 8 fake GPUs without FieldValues (h100_busy), every probe,
# history on, no HTTP listener. CPU from each thread's /proc/PID/task/TID/schedstat (nanoseconds,
# not 10-ms ticks), also by thread name (gd-worker, gd-store, ...: core/thread_name.h), and the
# load average at both ends of each run (the machine should be idle).
# BESIDE=1 runs the two side by side instead, in alternating start order (two watches competing
# for the same CPUs: not how a node runs it). BASE=OTHER_BUILD_DIR compares two builds the same
# way instead (both with the default placement: "new" is BUILD_DIR, "base" is OTHER_BUILD_DIR).
# Usage: bench/watch_one_cpu.sh [BUILD_DIR]  (docs/cost.md, seventeenth and eighteenth rounds)
set -u
build=$(cd "${1:-build}" && pwd)
secs=${SECONDS_MEASURED:-75}
runs=${RUNS:-6}
here=$(cd "$(dirname "$0")" && pwd)
lib="$build/tests/fake_nvml/minimal/libnvidia-ml.so.1"
export FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_busy.scenario"
d=$(mktemp -d)
pids=()
cleanup() {
  [ ${#pids[@]} -gt 0 ] && kill -INT "${pids[@]}" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$d"
}
trap cleanup EXIT
# The CPU every thread of PID has used so far, in nanoseconds.
cpu_ns() {
  local sum=0 t
  for t in /proc/"$1"/task/*; do sum=$((sum + $(cut -d' ' -f1 "$t/schedstat" 2>/dev/null || echo 0))); done
  echo "$sum"
}
# "ROLE NS" per thread of PID: its name (core/thread_name.h; the main thread keeps the program's
# name) and the CPU it has used so far, in nanoseconds.
cpu_by_role() {
  local t
  for t in /proc/"$1"/task/*; do
    echo "$(cat "$t/comm" 2>/dev/null || echo gone) $(cut -d' ' -f1 "$t/schedstat" 2>/dev/null || echo 0)"
  done
}
# "role ms/tick, ..." from two cpu_by_role listings (threads that left in between are not counted).
roles_a_tick() {
  awk -v s="$secs" 'FNR == NR { b[$1] += $2; next } { a[$1] += $2 }
    END { for (r in a) printf "%s %.3f\n", r, (a[r] - b[r]) / s / 1e6 }' "$1" "$2" |
    sort -k2 -nr | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 } END { print "" }'
}
# The two modes compared: one CPU and any CPU, or (BASE set) this build and the base build.
if [ -n "${BASE:-}" ]; then
  base=$(cd "$BASE" && pwd)
  a=new b=base
else
  a=one b=any
fi
# start MODE: one watch in the background, its pid appended to pids.
start() {
  local extra=() bin="$build/gpudoctor"
  [ "$1" = any ] && extra=(--any-cpu)
  [ "$1" = base ] && bin="$base/gpudoctor"
  "$bin" watch --interval 1 --nvml-lib "$lib" --listen off --db "$d/$k-$1.db" \
    "${extra[@]}" >/dev/null 2>"$d/$k-$1.log" &
  pids+=($!)
}
ms_a_tick() { awk -v a="$1" -v b="$2" -v s="$secs" 'BEGIN { printf "%.3f", (b - a) / s / 1e6 }'; }
declare -A total=([$a]=0 [$b]=0) count=([$a]=0 [$b]=0)
add() {
  total[$1]=$(awk -v t="${total[$1]}" -v x="$2" 'BEGIN { print t + x }')
  count[$1]=$((count[$1] + 1))
}
for ((k = 0; k < runs; k++)); do
  if ((k % 2 == 0)); then modes=("$a" "$b"); else modes=("$b" "$a"); fi
  [ "${BESIDE:-0}" = 1 ] || modes=("${modes[0]}")
  pids=()
  for m in "${modes[@]}"; do start "$m"; done
  sleep 8
  load0=$(cut -d' ' -f1 /proc/loadavg)
  before=()
  for i in "${!pids[@]}"; do
    before+=("$(cpu_ns "${pids[$i]}")")
    cpu_by_role "${pids[$i]}" >"$d/roles-before-$i"
  done
  sleep "$secs"
  line="run $((k + 1)):"
  roles=""
  for i in "${!pids[@]}"; do
    ms=$(ms_a_tick "${before[$i]}" "$(cpu_ns "${pids[$i]}")")
    cpu_by_role "${pids[$i]}" >"$d/roles-after-$i"
    add "${modes[$i]}" "$ms"
    line+=" ${modes[$i]} $ms ms a tick"
    roles+="  ${modes[$i]} by thread, ms a tick: $(roles_a_tick "$d/roles-before-$i" "$d/roles-after-$i")"$'\n'
  done
  kill -INT "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null
  pids=()
  echo "$line (load $load0 -> $(cut -d' ' -f1 /proc/loadavg))"
  printf '%s' "$roles"
done
awk -v o="${total[$a]}" -v no="${count[$a]}" -v a="${total[$b]}" -v na="${count[$b]}" \
  -v la="$a" -v lb="$b" 'BEGIN {
  if (no == 0 || na == 0) exit
  printf "mean: %s %.2f ms a tick (%d runs), %s %.2f ms a tick (%d runs): %.0f%% less\n",
         la, o / no, no, lb, a / na, na, 100 * (1 - (o / no) / (a / na)) }'
