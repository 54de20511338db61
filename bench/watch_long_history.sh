#!/usr/bin/env bash
# `gpudoctor watch` CPU per tick on a history database that already holds EPISODES resolved
# finding episodes (30 days of a flapping finding on a busy node: 20,000 is a few findings that
# open and close every 10 minutes), two binaries side by side in one run, each on its own copy
# of the same file. Both watch with `--probes cpu` only (the history's share of the tick, not the
# probes'). The history keeps resolved episodes 30 days; `watch` reads the open ones every 5 s to
# pick up acknowledgements and silences written by other processes.
# Usage: bench/watch_long_history.sh BUILD_DIR [BASE_BINARY|-] [EPISODES] [SECONDS]
#   e.g. cp /old/build/gpudoctor /tmp/gd_base; bench/watch_long_history.sh build /tmp/gd_base
#   Without BASE_BINARY (or with -) only BUILD_DIR's binary runs (bench/run.sh).
set -u
build=$(cd "${1:?BUILD_DIR}" && pwd)
base=${2:--}
episodes=${3:-20000}
secs=${4:-120}
hz=$(getconf CLK_TCK)
tmp=$(mktemp -d)
chmod 700 "$tmp"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT

# A history file of ours: one short watch creates it, then the episodes go in with SQLite.
"$build/gpudoctor" watch --ticks 2 --interval 0.2 --probes cpu --listen off --db "$tmp/seed.db" \
  2>/dev/null || { echo "seed watch failed"; exit 1; }
python3 - "$tmp/seed.db" "$episodes" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = int(sys.argv[2])
evidence = "[" + ",".join('{"name":"k%d","value":%d}' % (i, i) for i in range(30)) + "]"
rows = []
for i in range(n):
    first = 1_700_000_000_000 + i * 120_000
    rows.append((f"gpu.util.low|{i % 8}", first, "gpu.util.low", "info", "resources", i % 8,
                 f"GPU {i % 8} idle for 10 min while a job holds it", evidence, '["step"]',
                 "resolved", first, first + 60_000, first + 60_000))
db.executemany(
    "INSERT INTO findings(key, first_seen_ms, id, severity, layer, gpu_index, summary, "
    "evidence_json, next_steps_json, state, opened_ms, last_seen_ms, resolved_ms) "
    "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
db.commit()
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
EOF
echo "history: $episodes resolved episodes, $(du -k "$tmp/seed.db" | cut -f1) KiB"

pairs=("new:$build/gpudoctor")
[ "$base" != "-" ] && pairs=("base:$base" "new:$build/gpudoctor")
labels=()
for pair in "${pairs[@]}"; do
  label=${pair%%:*}
  bin=${pair#*:}
  labels+=("$label")
  cp "$tmp/seed.db" "$tmp/$label.db"
  "$bin" watch --interval 1 --probes cpu --listen off --db "$tmp/$label.db" 2>"$tmp/$label.log" &
  pids+=($!)
done
sleep 15  # past start-up (the new binary adds its index at open)
declare -a c0
for i in "${!pids[@]}"; do c0[$i]=$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat"); done
sleep "$secs"
for i in "${!pids[@]}"; do
  label=${labels[$i]}
  c=$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")
  awk -v c="$c" -v c0="${c0[$i]}" -v hz="$hz" -v s="$secs" -v l="$label" \
    'BEGIN {printf "%s: %.2f ms CPU per tick over %d s\n", l, 1000 * (c - c0) / hz / s, s}'
done
