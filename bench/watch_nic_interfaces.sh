#!/usr/bin/env bash
# The NIC probe's cost a `watch` tick on a node with many interfaces (a Kubernetes node has one
# host-side veth per pod), side by side: BUILD's and BASE's `watch --probes nic --no-db`, one after
# the other, each for NIC_BENCH_SECONDS (default 30) at a 0.2-s interval, inside a network namespace
# this script creates with NIC_BENCH_PAIRS veth pairs (default 60: 121 interfaces with lo), all up,
# nothing else running there. Prints ms of CPU (task-clock) a tick. Needs root (unshare -n) and
# iproute2. Usage: bench/watch_nic_interfaces.sh BUILD_DIR BASE_DIR   (BASE_DIR defaults to
# BUILD_DIR: an A/A run)
set -eu
build=$(cd "${1:-build}" && pwd)
base=$(cd "${2:-${1:-build}}" && pwd)
secs=${NIC_BENCH_SECONDS:-30}
pairs=${NIC_BENCH_PAIRS:-60}
if [ "$(id -u)" != 0 ]; then
  echo "watch_nic_interfaces.sh: needs root for a network namespace" >&2
  exit 2
fi
exec unshare -n bash -s "$build" "$base" "$secs" "$pairs" <<'EOF'
set -eu
build=$1 base=$2 secs=$3 pairs=$4
ip link set lo up
for i in $(seq "$pairs"); do
  ip link add "gdveth$i" type veth peer name "gdpeer$i"
  ip link set "gdveth$i" up
done
echo "interfaces: $(ip -o link | wc -l), ${secs} s each at 0.2 s a tick"
ticks=$((secs * 5))
for who in new base; do
  bin=$build/gpudoctor
  [ "$who" = base ] && bin=$base/gpudoctor
  "$bin" watch --interval 0.2 --no-db --probes nic --listen off >/dev/null 2>&1 &
  pid=$!
  sleep 3
  perf stat -e task-clock -p "$pid" -- sleep "$secs" 2>&1 |
    awk -v who="$who" -v t="$ticks" '/task-clock/ {printf "%-4s %.3f ms a tick\n", who, $1 / t}'
  kill "$pid"
  wait "$pid" 2>/dev/null || true
done
EOF
