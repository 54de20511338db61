#!/usr/bin/env bash
# Kernel-log scan throughput, side by side with grep in the same run (issue 4 §7): a 1 GiB
# generated dmesg-shaped log (~0.1% NVRM lines) in /tmp, page cache warmed, then
#   grep -c 'NVRM: Xid' FILE            (counts lines, no parsing)
#   gpudoctor logs --json FILE          (parses, classifies, aggregates, runs the rules)
# Reports MB/s of both, the ratio (target >= 1.5) and gpudoctor's peak RSS (independent of size:
# also measured on a 64 MiB file). Usage: bench/kmsg_scan.sh [BUILD_DIR] [SIZE_MIB]
set -eu
build=${1:-build}
size_mib=${2:-1024}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/gpudoctor"
[ -x "$bin" ] || { echo "kmsg_scan: build $bin first" >&2; exit 1; }
big=/tmp/gpudoctor_kmsg_bench_${size_mib}m.log
small=/tmp/gpudoctor_kmsg_bench_64m.log
[ -s "$big" ] || python3 "$here/kmsg_gen.py" "$big" $((size_mib << 20))
[ -s "$small" ] || python3 "$here/kmsg_gen.py" "$small" $((64 << 20))
bytes=$(stat -c %s "$big")
cat "$big" > /dev/null  # warm the page cache for both tools

out=$(mktemp); trap 'rm -f "$out"' EXIT
now() { date +%s.%N; }
best() {  # best of 3 wall times of "$@"
  local b=""
  for _ in 1 2 3; do
    local t0 t1 d
    # Output to a file, not /dev/null: GNU grep stops at the first match when it sees /dev/null.
    t0=$(now); "$@" > "$out"; t1=$(now)
    d=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$b" ] || [ "$(echo "$d < $b" | bc -l)" = 1 ]; then b=$d; fi
  done
  echo "$b"
}
grep_s=$(best grep -c 'NVRM: Xid' "$big" || true)
ours_s=$(best "$bin" logs --json "$big" || true)
rss_kb() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1
  else
    echo "?"
  fi
}
rss_big=$(rss_kb "$bin" logs --json "$big")
rss_small=$(rss_kb "$bin" logs --json "$small")
xids_grep=$(grep -c 'NVRM: Xid' "$big" || true)
xids_ours=$("$bin" logs --json "$big" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(sum(f["evidence"]["count"] for f in j["findings"] if f["id"]=="gpu.xid"))' || true)
mbs() { echo "scale=1; $bytes / 1048576 / $1" | bc -l; }
echo "file: $big ($bytes bytes)"
echo "grep -c 'NVRM: Xid': ${grep_s}s  $(mbs "$grep_s") MB/s  ($xids_grep lines)"
echo "gpudoctor logs:      ${ours_s}s  $(mbs "$ours_s") MB/s  ($xids_ours Xid lines aggregated)"
echo "ratio (gpudoctor/grep throughput): $(echo "scale=2; $grep_s / $ours_s" | bc -l)  (target >= 1.5)"
echo "peak RSS: ${rss_big} KiB on ${size_mib} MiB, ${rss_small} KiB on 64 MiB"
