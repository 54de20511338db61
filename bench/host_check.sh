#!/usr/bin/env bash
# Host-layer check on this machine: wall time of `gpudoctor check` for the host probes with the
# sampling window set to 0 (so the figure is our own work, not the window), and peak RSS.
# Target (issue 2): < 50 ms and < 8 MiB. Usage: bench/host_check.sh [BUILD_DIR]
set -u
build=${1:-build}
bin="$build/gpudoctor"
probes=cpu,memory,pressure,disk,processes
runs=20
avail=$("$bin" probes 2>/dev/null | awk '{print $1}' | tr '\n' ',')
sel=""
for p in ${probes//,/ }; do case ",$avail" in *",$p,"*) sel="$sel,$p";; esac; done
sel=${sel#,}
times=()
for _ in $(seq $runs); do
  s=$(date +%s%N)
  "$bin" check --json --sample-ms 0 --probes "$sel" >/dev/null
  e=$(date +%s%N)
  times+=($(( (e - s) / 1000 )))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
rss=$(/usr/bin/time -f %M "$bin" check --json --sample-ms 0 --probes "$sel" 2>&1 >/dev/null | tail -1)
awk -v sel="$sel" -v us="$median" -v runs="$runs" -v kb="$rss" 'BEGIN {
  printf "host check (%s): median wall %.1f ms over %d runs (target < 50 ms); peak RSS %.1f MiB (target < 8 MiB)\n",
    sel, us / 1000, runs, kb / 1024 }'
