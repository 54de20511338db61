#!/usr/bin/env bash
# Every figure of the cost table (issue 23, docs/cost.md) in one run, side by side with
# prometheus-node-exporter and grep measured in the same run, on the fake NVML built with every
# symbol ("full") and without nvmlDeviceGetFieldValues ("minimal", tests/fake_nvml):
#   1. watch: CPU per 1 s tick with 8 GPUs, peak RSS, ratio to node_exporter's CPU per scrape
#      (bench/watch_bench.sh, WATCH_BENCH_SECONDS per variant, default 600: a 10-minute pack block)
#   2. NVML calls per GPU per watch tick and per check (the call-budget unit test's figures)
#   3. default `check`: wall and CPU, median of CHECK_RUNS (default 11), and CPU / node_exporter's
#      CPU per scrape (from step 1's run)
#   4. `logs` throughput / `grep -c 'NVRM: Xid'`: the usual mix (0.1% NVRM lines, 2% NIC link
#      lines) and an Xid storm (99% Xid lines), KMSG_MIB each (default 256)
#   5. fleet analysis, 100k GPUs x 60 samples x 10 metrics (bench/fleet_bench)
#   6. /metrics CPU per scrape vs node_exporter's, fault -> /metrics latency (bench/http_bench.py)
# Usage: bench/cost.sh [BUILD_DIR]. Needs: a Release build with the fleet_bench and http_load
# targets and the fake NVML, /usr/bin/time, prometheus-node-exporter (scripts/install-deps.sh).
set -u
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/gpudoctor"
full="$build/tests/fake_nvml/libnvidia-ml.so.1"
minimal="$build/tests/fake_nvml/minimal/libnvidia-ml.so.1"
for f in "$bin" "$full" "$minimal"; do
  [ -e "$f" ] || { echo "cost.sh: $f missing: build gpudoctor and the fake NVML first" >&2; exit 1; }
done
status=0
ne_scrape_ms=""

echo "== 1. watch, 8 fake GPUs (h100_busy), 1 s ticks, beside node_exporter scraped every 1 s"
for variant in full minimal; do
  lib=$full
  [ "$variant" = minimal ] && lib=$minimal
  out=$(NVML_LIB=$lib WATCH_BENCH_SECONDS=${WATCH_BENCH_SECONDS:-600} bash "$here/watch_bench.sh" "$build") || status=1
  echo "$out" | sed "s/^/[$variant] /"
  ms=$(echo "$out" | sed -n 's/.*= \([0-9.]*\) ms CPU per scrape.*/\1/p')
  [ -n "$ms" ] && ne_scrape_ms=$ms
done

echo "== 2. NVML calls per GPU (full and minimal fake NVML)"
if [ -x "$build/tests/unit_tests" ]; then
  "$build/tests/unit_tests" --gtest_filter='*NvmlCallBudget*' 2>&1 |
    grep -E 'calls on GPU|calls per GPU|PASSED|FAILED' || status=1
else
  echo "unit_tests not built: cmake --build $build --target unit_tests"
fi

echo "== 3. default check (median of ${CHECK_RUNS:-11})"
for variant in full minimal; do
  lib=$full
  [ "$variant" = minimal ] && lib=$minimal
  FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_healthy.scenario" \
    python3 - "$bin" "${CHECK_RUNS:-11}" "$variant" "${ne_scrape_ms:-0}" check --nvml-lib "$lib" <<'EOF' || status=1
import resource, statistics, subprocess, sys, time
binary, n, variant, ne_ms, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5:]
walls, cpus = [], []
for _ in range(n):
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    subprocess.run([binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t1, r1 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    walls.append(t1 - t0)
    cpus.append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
w, c = statistics.median(walls) * 1000, statistics.median(cpus)
ratio = f", {c / ne_ms:.1f}x node_exporter's CPU per scrape (target <= 2)" if ne_ms > 0 else ""
print(f"[{variant}] check wall {w:.0f} ms (target <= 900), CPU {c:.1f} ms{ratio}")
EOF
done

# Shared objects the default check maps over its whole run (the dynamic loader's own trace,
# needed and dlopened, plus the loader; tests/e2e/shared_objects_e2e_test.cc asserts <= 12).
objs=$(FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_healthy.scenario" LD_DEBUG=files \
  "$bin" check --nvml-lib "$minimal" 2>&1 >/dev/null |
  sed -n 's/^ *\([0-9]*\):[[:space:]]*file=\([^ ]*\) .*\(needed by\|dynamically loaded by\).*/\1 \2/p' |
  awk 'NR == 1 {pid = $1} $1 == pid {sub(".*/", "", $2); print $2}' | sort -u)
echo "check maps $(($(echo "$objs" | grep -c .) + 1)) shared objects (target <= 12): ld-linux $(echo $objs)"

echo "== 4. logs throughput vs grep -c 'NVRM: Xid' (target >= 1.5x on every mix)"
for mix in "0.02 0.001 usual" "0.0 0.99 xid-storm"; do
  set -- $mix
  echo "-- mix: $3 (link share $1, NVRM share $2)"
  bash "$here/kmsg_scan.sh" "$build" "${KMSG_MIB:-256}" "$1" "$2" || status=1
done

echo "== 5. fleet analysis (target <= 1 s, <= 1 GiB)"
if [ -x "$build/bench/fleet_bench" ]; then
  "$build/bench/fleet_bench" --nodes 0 || status=1
else
  echo "fleet_bench not built: cmake --build $build --target fleet_bench"
fi

echo "== 6. /metrics scrape CPU vs node_exporter (target <= 0.1x), fault -> /metrics (<= 2 s)"
python3 "$here/http_bench.py" "$build" --only latency,scrape --trials 3 || status=1
exit $status
