#!/usr/bin/env bash
# `watch`'s memory on a busy host, side by side: two gpudoctor binaries run `watch` (1 s ticks, 8
# fake GPUs on the fake NVML without FieldValues, h100_busy, history on), then NPROC processes
# start, each holding a loopback TCP connection (2 x NPROC sockets), for STORM_SECONDS (default
# 120). Prints VmHWM (peak), VmRSS and RssAnon of both, in MiB, every 30 s and after the storm.
# Issue 23: peak <= 12 MiB after 1 h. docs/cost.md "Eighth round".
# Usage: bench/watch_storm.sh BUILD_DIR [BASE_BINARY [NEW_BINARY [NPROC]]]   (NPROC default 2000;
# both binaries default to BUILD_DIR/gpudoctor: an A/A run, as bench/run.sh does)
set -u
build=$(cd "${1:?BUILD_DIR}" && pwd)
base=${2:-$build/gpudoctor}
new=${3:-$build/gpudoctor}
nproc=${4:-2000}
secs=${STORM_SECONDS:-120}
here=$(cd "$(dirname "$0")" && pwd)
export FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_busy.scenario"
lib="$build/tests/fake_nvml/minimal/libnvidia-ml.so.1"
d=$(mktemp -d)
chmod 700 "$d"
mkdir -m 700 "$d/a" "$d/b"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; pkill -P "$p" 2>/dev/null; done; rm -rf "$d"; }
trap cleanup EXIT
"$base" watch --interval 1 --db "$d/a/h.db" --nvml-lib "$lib" --skip-probes reachability --listen off 2>"$d/a.log" &
p1=$!
"$new" watch --interval 1 --db "$d/b/h.db" --nvml-lib "$lib" --skip-probes reachability --listen off 2>"$d/b.log" &
p2=$!
pids+=("$p1" "$p2")
show() {
  printf '%-12s' "$1"
  for p in $p1 $p2; do
    awk '/VmHWM/ {h=$2} /VmRSS/ {r=$2} /RssAnon/ {a=$2} END {printf " | peak %.1f RSS %.1f anon %.1f", h/1024, r/1024, a/1024}' "/proc/$p/status"
  done
  echo
}
echo "columns: base $base | new $new (MiB)"
sleep 40
show "quiet 40 s"
python3 - "$nproc" "$secs" <<'PY' &
import os, socket, sys, time
n, secs = int(sys.argv[1]), int(sys.argv[2])
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4096)
port = srv.getsockname()[1]
for _ in range(n):
    if os.fork() == 0:
        c = socket.create_connection(("127.0.0.1", port))
        time.sleep(secs + 30)
        os._exit(0)
conns = [srv.accept()[0] for _ in range(n)]
time.sleep(secs + 30)
PY
storm=$!
pids+=("$storm")
for ((t = 30; t <= secs; t += 30)); do
  sleep 30
  show "storm $t s"
done
kill "$storm"; pkill -P "$storm"
sleep 5
show "storm over"
