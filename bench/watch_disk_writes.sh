#!/usr/bin/env bash
# Bytes `watch` writes per tick (its history: the WAL, the checkpoints into the database), for one
# or more binaries side by side: /proc/PID/io write_bytes (what reached the block layer or the page
# cache as file writes) and wchar (bytes passed to write-like calls), counted over SECONDS_COUNTED
# (default 150) after 10 s of warm-up. 8 fake GPUs, fake NVML without FieldValues, h100_busy,
# history on (bench/watch_side_by_side.sh). Counts that do not depend on the machine's load; the
# history packs its raw ticks every 10 minutes, so SECONDS_COUNTED=600 includes one pack.
# Usage: bench/watch_disk_writes.sh BUILD_DIR [BINARY...]   (default: BUILD_DIR/gpudoctor)
set -u
build=$(cd "${1:?BUILD_DIR}" && pwd)
shift
[ $# -gt 0 ] || set -- "$build/gpudoctor"
secs=${SECONDS_COUNTED:-150}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/watch_side_by_side.sh"
start_watches "$@"
# io_of PID: "wchar write_bytes" of the process (every thread, ended ones included).
io_of() { awk '$1 == "wchar:" {w = $2} $1 == "write_bytes:" {b = $2} END {print w + 0, b + 0}' \
  "/proc/$1/io" 2>/dev/null || echo "0 0"; }
sleep 10
before=()
for p in "${pids[@]}"; do before+=("$(io_of "$p")"); done
sleep "$secs"
i=0
for bin in "$@"; do
  after=$(io_of "${pids[$i]}")
  echo "${before[$i]} $after" | awk -v s="$secs" -v b="$bin" '{
      printf "%s: write_bytes %.1f KiB a tick (%.0f MiB a day), wchar %.1f KiB a tick, over %d s\n",
        b, ($4 - $2) / 1024 / s, ($4 - $2) / s * 86400 / 1048576, ($3 - $1) / 1024 / s, s }'
  i=$((i + 1))
done
