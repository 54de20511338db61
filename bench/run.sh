#!/usr/bin/env bash
# Runs every benchmark: Google Benchmark binaries built from bench/*_bench.cc, then the side-by-side
# scripts bench/*.sh. Usage: bench/run.sh [BUILD_DIR]. Figures go to stdout.
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
status=0
for b in "$build"/bench/*_bench; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b" --benchmark_min_time=0.2 || status=1
done
for s in "$here"/*.sh; do
  [ "$(basename "$s")" = run.sh ] && continue
  echo "== $(basename "$s")"
  bash "$s" "$build" || status=1
done
exit $status
