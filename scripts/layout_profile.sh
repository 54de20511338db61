#!/usr/bin/env bash
# Profiles one `gpudoctor watch` run under callgrind and writes cmake/layout.order, the function
# order lld links gpudoctor in (CMakeLists.txt, GPUDOCTOR_LAYOUT; docs/cost.md "watch RSS").
# Run it after changes that rename or add much of what watch runs every tick; a stale order
# only costs resident memory, never correctness. Needs valgrind (scripts/install-deps.sh).
# Usage: scripts/layout_profile.sh BUILD_DIR [STEADY_SECONDS]   (default 150: five slow rounds)
# The run: 8 fake GPUs (h100_busy on the fake NVML without FieldValues, as bench/watch_rss.sh),
# a history database, the HTTP server scraped every 10 s (/metrics, /healthz, /api/v1/status:
# what a Prometheus and a liveness check ask), all probes but reachability (as the bench: at
# ddd8353 `watch` crashes in RunReachabilityProbe on its first tick).
set -euo pipefail
build=$(cd "${1:?BUILD_DIR}" && pwd)
steady=${2:-150}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../cmake/layout.order
command -v valgrind >/dev/null || { echo "layout_profile: valgrind missing (scripts/install-deps.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# A copy, so that the profiled object is known by its path (callgrind names objects by path).
cp "$build/gpudoctor" "$tmp/gpudoctor-profiled"
export FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_busy.scenario"
port=$((19950 + RANDOM % 40))
valgrind --tool=callgrind --demangle=no --dump-instr=no --callgrind-out-file="$tmp/cg.out" \
  "$tmp/gpudoctor-profiled" watch --interval 1 --db "$tmp/history.db" --listen "127.0.0.1:$port" \
  --nvml-lib "$build/tests/fake_nvml/minimal/libnvidia-ml.so.1" --skip-probes reachability >/dev/null 2>"$tmp/watch.log" &
pid=$!
for _ in $(seq 120); do
  grep -q "started:" "$tmp/watch.log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/watch.log" >&2; exit 1; }
  sleep 1
done
grep -q "started:" "$tmp/watch.log" || { echo "layout_profile: watch did not start" >&2; exit 1; }
sleep 10  # the first ticks (one-off reads) belong to start-up
callgrind_control --dump=startup "$pid" >/dev/null
t0=$SECONDS
while [ $((SECONDS - t0)) -lt "$steady" ]; do
  sleep 10
  curl -s -m 30 "http://127.0.0.1:$port/metrics" >/dev/null || true
  curl -s -m 30 "http://127.0.0.1:$port/healthz" >/dev/null || true
  curl -s -m 30 "http://127.0.0.1:$port/api/v1/status" >/dev/null || true
done
callgrind_control --dump=steady "$pid" >/dev/null
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
dumps=$(ls "$tmp"/cg.out.* | sort -t. -k3 -n)
python3 "$here/layout_order.py" --object /gpudoctor-profiled --binary "$tmp/gpudoctor-profiled" \
  --startup $(echo "$dumps" | head -1) \
  --steady $(echo "$dumps" | sed -n 2p) --out "$out"
