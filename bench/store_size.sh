#!/usr/bin/env bash
# History store size for 8 GPUs at 1 s (issue 9 target: < 200 MiB at steady state) and the write
# cost per tick. Usage: bench/store_size.sh [BUILD_DIR] [HOURS=25]
set -eu
build=${1:-build}
hours=${2:-25}
bin="$build/bench/store_size"
[ -x "$bin" ] || { echo "store_size: build $bin first (cmake --build $build --target store_size)" >&2; exit 1; }
db=$(mktemp -d /tmp/gpudoctor_store_bench.XXXXXX)/history.db
"$bin" "$db" "$hours"
rm -rf "$(dirname "$db")"
