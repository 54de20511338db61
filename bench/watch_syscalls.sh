#!/usr/bin/env bash
# System calls per `watch` tick, by call (strace -c -f), for one or more binaries at once: counts
# that do not depend on the machine's load, where whole-process CPU on a small VM does not
# resolve a few percent (docs/cost.md "Eighth round"). 8 fake GPUs, fake NVML without
# FieldValues, h100_busy, history on; SECONDS_TRACED (default 30) after 12 s of warm-up.
# Usage: bench/watch_syscalls.sh BUILD_DIR [BINARY...]   (default: BUILD_DIR/gpudoctor)
set -u
build=$(cd "${1:?BUILD_DIR}" && pwd)
shift
[ $# -gt 0 ] || set -- "$build/gpudoctor"
secs=${SECONDS_TRACED:-30}
here=$(cd "$(dirname "$0")" && pwd)
command -v strace >/dev/null || { echo "watch_syscalls: needs strace" >&2; exit 1; }
. "$here/watch_side_by_side.sh"
start_watches "$@"
sleep 12
i=0
for p in "${pids[@]}"; do
  timeout "$secs" strace -c -f -p "$p" -o "$d/$i.sc" >/dev/null 2>&1 &
  i=$((i + 1))
done
sleep $((secs + 2))
i=0
for bin in "$@"; do
  echo "== $bin: per tick over $secs s"
  awk -v s="$secs" '$1 ~ /^[0-9.]+$/ && NF >= 5 {
      name = $NF; calls = $4; errs = (NF == 6) ? $5 : 0
      if (name == "total") { printf "total %.1f (failing %.1f)\n", calls / s, errs / s; next }
      if (calls / s >= 1) printf "  %-16s %7.1f (failing %.1f)\n", name, calls / s, errs / s }' "$d/$i.sc"
  i=$((i + 1))
done
