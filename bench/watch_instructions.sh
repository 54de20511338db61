#!/usr/bin/env bash
# User-space instructions per `watch` tick (callgrind), for one or more binaries at once: a count
# that does not depend on the machine's load, where whole-process CPU on a small VM does not
# resolve 15% (docs/cost.md "Eighth round", "Ninth round"). 8 fake GPUs, fake NVML without
# FieldValues, h100_busy, history on, reachability skipped (as bench/watch_syscalls.sh).
# Instrumentation starts after WARMUP_SECONDS (default 40: start-up, the first slow round) and
# covers SECONDS_COUNTED (default 600: ten whole minutes, so each binary packs its history as
# often as it does in an hour (every minute before the tenth round, every 10 minutes since) and
# polls acknowledgements as often); the figure is the total divided by the ticks counted in it.
# Each binary runs under valgrind at about 1/50 speed, so a tick still fits its second.
# Usage: bench/watch_instructions.sh BUILD_DIR [BINARY...]   (default: BUILD_DIR/gpudoctor)
set -u
build=$(cd "${1:?BUILD_DIR}" && pwd)
shift
[ $# -gt 0 ] || set -- "$build/gpudoctor"
warmup=${WARMUP_SECONDS:-40}
secs=${SECONDS_COUNTED:-600}
here=$(cd "$(dirname "$0")" && pwd)
for tool in valgrind callgrind_control callgrind_annotate; do
  command -v "$tool" >/dev/null || { echo "watch_instructions: needs $tool (valgrind)" >&2; exit 1; }
done
. "$here/watch_side_by_side.sh"
i=0
for bin in "$@"; do
  bin=$(readlink -f "$bin")  # each runs in its own directory (callgrind writes files there)
  watch_args "$i"
  (cd "$d/$i" && exec valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$d/$i/cg.out" "$bin" "${WATCH_ARGS[@]}" >/dev/null 2>&1) &
  pids+=($!)
  i=$((i + 1))
done
sleep "$warmup"
for p in "${pids[@]}"; do callgrind_control -i on "$p" >/dev/null 2>&1 || echo "pid $p: no callgrind" >&2; done
sleep "$secs"
for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
pids=()
i=0
for bin in "$@"; do
  total=$(callgrind_annotate "$d/$i/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  ticks=$(callgrind_annotate --tree=calling --inclusive=yes "$d/$i/cg.out" 2>/dev/null |
    grep -m1 '> *???:gpudoctor::WatchDaemon::Tick()' | grep -o '([0-9,]*x)' | tr -d '(x,)')
  if [ -z "$total" ] || [ -z "$ticks" ] || [ "$ticks" -eq 0 ]; then
    echo "$bin: no ticks counted (valgrind output in $d/$i?)"
  else
    awk -v b="$bin" -v t="$total" -v n="$ticks" \
      'BEGIN { printf "%s: %.2f M instructions a tick (%d ticks, %.0f M in all)\n", b, t / n / 1e6, n, t / 1e6 }'
  fi
  i=$((i + 1))
done
