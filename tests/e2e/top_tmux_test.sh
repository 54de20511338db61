#!/usr/bin/env bash
# End-to-end: `gpudoctor top` in a real terminal (tmux), standalone on the fake NVML and fixture
# trees. Checks: 8 GPU rows, a thermal fault written into the scenario while top runs shows on
# GPU 3's row within a few seconds, `f` shows evidence, 80x24 keeps every row within 80 columns,
# NO_COLOR leaves no colour escapes, `q` quits with exit 0. Then --connect to the real
# `gpudoctor watch` with a token: a wrong token is an error line, a token file others can read is
# refused (exit 3), a fault written into the scenario while top runs shows on GPU 3's row, a
# stopped daemon is an error line while the last sample stays.
# Usage: top_tmux_test.sh SOURCE_DIR BUILD_DIR. Exit 77 (skipped) when tmux is missing.
set -euo pipefail
src=$1
build=$2
if ! command -v tmux >/dev/null; then
  echo "SKIP: tmux is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
session=top$$
tm() { tmux -S "$sock" "$@"; }
cleanup() {
  tm kill-server 2>/dev/null || true
  [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Without a terminal: exit 3 with one line (never a broken screen in a pipe).
rc=0
"$build/gpudoctor" top --connect http://127.0.0.1:9 </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 3 ] && grep -q "top needs a terminal" "$tmp/err" || {
  echo "FAIL: top without a terminal: rc $rc: $(cat "$tmp/err")"
  exit 1
}

host="$src/tests/fixtures/hosts/healthy"
echo "include=$src/tests/fixtures/nvml/h100_busy.scenario" >"$tmp/now.scenario"
# The pane command ends in `sleep 60` on purpose: the pane (and its "top exited N" line) stays
# on screen for wait_for after top quits; kill-session ends it.
run_top() {  # $1: extra environment
  tm new-session -d -s "$session" -x 120 -y 40 \
    "$1 FAKE_NVML_SCENARIO=$tmp/now.scenario TERM=xterm-256color '$build/gpudoctor' top \
      --interval 0.5 --probes nvml,cpu,memory,pressure,nic \
      --nvml-lib '$build/tests/fake_nvml/libnvidia-ml.so.1' --path.procfs '$host/proc' \
      --path.sysfs '$src/tests/fixtures/net/sysfs_t0' --path.rootfs '$host/root'; \
      echo \"top exited \$?\"; sleep 60"
}
screen() { tm capture-pane -p -t "$session" "$@"; }
# Waits until the screen matches the extended regex $1 (10 s), else fails with the screen.
wait_for() {
  for _ in $(seq 100); do
    if screen | grep -Eq -- "$1"; then return 0; fi
    sleep 0.1
  done
  echo "FAIL: screen never matched /$1/:"
  screen
  exit 1
}
# Waits until the screen no longer matches the extended regex $1 (10 s), else fails.
wait_gone() {
  for _ in $(seq 100); do
    if ! screen | grep -Eq -- "$1"; then return 0; fi
    sleep 0.1
  done
  echo "FAIL: screen still matches /$1/:"
  screen
  exit 1
}
fail() {
  echo "FAIL: $1"
  screen
  exit 1
}

run_top ""
wait_for '^  7 '
rows=$(screen | grep -Ec '^  [0-7]  98% ')
[ "$rows" -eq 8 ] || fail "expected 8 GPU rows, got $rows"
screen | grep -Eq '^  3 .* 62/87 .* ok' || fail "GPU 3 should start cool and ok"
screen | grep -q 'CRIT net.link' || fail "the eth2 link finding should be listed"
screen | grep -q -- '-> Check the cable' || fail "the first next step should follow the finding"

# A fault appears while top runs: the fake NVML re-reads its changed scenario.
printf 'gpu.3.temp=88\ngpu.3.reasons=0x40\n' >>"$tmp/now.scenario"
wait_for '^  3 .* 88/87 .*CRIT gpu.thermal \[hw_thermal\]'
screen | grep -Eq '^  2 .* 62/87 .* ok' || fail "GPU 2 must stay ok"
screen | grep -q 'hardware CRIT' || fail "the hardware layer should turn CRIT"

# f toggles the findings detail.
tm send-keys -t "$session" f
wait_for 'evidence: .*temp_c=88|temp_c=88'
wait_for 'f: short'
tm send-keys -t "$session" f
wait_for 'f: detail'

# ? shows the keys; s sorts the GPU table (util, then memory, temp: the hot GPU 3 first).
tm send-keys -t "$session" '?'
wait_for 'keys: q quit'
tm send-keys -t "$session" '?'
tm send-keys -t "$session" s s s
wait_for 'sort: temp, s'
screen | grep -A1 '^GPU UTIL' | tail -1 | grep -Eq '^  3 ' || fail "sorted by temperature, GPU 3 should lead"
tm send-keys -t "$session" s s
wait_for 'sort: index, s'

# A narrow terminal: nothing wider than 80 columns, the GPU rows still there.
tm resize-window -t "$session" -x 80 -y 24
# tmux cuts the old screen at once, so wait for top's own redraw: the help shown and hidden again
# by keys read after the resize (curses reports the resize first).
tm send-keys -t "$session" '?'
wait_for 'keys: q quit'
tm send-keys -t "$session" '?'
wait_gone 'keys: q quit'
wide=$(screen | awk 'length($0) > 80' | wc -l)
[ "$wide" -eq 0 ] || fail "lines wider than 80 columns"
screen | grep -Eq '^  3 .* 88/87 ' || fail "GPU 3 row lost at 80x24"
[ "$(screen | wc -l)" -le 24 ] || fail "more than 24 rows"

# Findings detail does not fit 80x24: it scrolls (space pages down, g back to the top).
tm send-keys -t "$session" f
wait_for 'more lines \(j/down to scroll'
tm send-keys -t "$session" Space
wait_for 'hot aisle containment'
screen | head -1 | grep -q '^gpudoctor top' || fail "the title should stay while scrolling"
tm send-keys -t "$session" g f
wait_for '^  0 '

# Colour is on by default in a 256-colour terminal...
screen -e | grep -q $'\e\\[[0-9;]*3[13]m' || fail "expected colour escapes without NO_COLOR"
tm send-keys -t "$session" q
wait_for '^top exited 0$'
tm kill-session -t "$session"

# ...and off with NO_COLOR (the severity stays in the text).
run_top "NO_COLOR=1"
wait_for 'CRIT gpu.thermal'
if screen -e | grep -q $'\e\\[[0-9;]*3[0-7]m'; then fail "colour escapes despite NO_COLOR"; fi
tm send-keys -t "$session" q
wait_for '^top exited 0$'
tm kill-session -t "$session"

# --connect to the real `gpudoctor watch` (fake NVML, a token file): the token is required, a
# fault written into the scenario while top runs shows up, a stopped daemon is an error line.
echo "include=$src/tests/fixtures/nvml/h100_busy.scenario" >"$tmp/now.scenario"
printf 'top-s3cret\n' >"$tmp/token"
chmod 600 "$tmp/token"
FAKE_NVML_SCENARIO="$tmp/now.scenario" "$build/gpudoctor" watch --listen 127.0.0.1:0 --interval 1 \
  --token-file "$tmp/token" --no-db --probes nvml,cpu,memory,pressure,nic \
  --nvml-lib "$build/tests/fake_nvml/libnvidia-ml.so.1" --path.procfs "$host/proc" \
  --path.sysfs "$src/tests/fixtures/net/sysfs_t0" --path.rootfs "$host/root" 2>"$tmp/watch.log" &
server=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*http: listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/watch.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: watch did not listen: $(cat "$tmp/watch.log")"; exit 1; }
url="http://127.0.0.1:$port"

# A token file others can read is refused before the screen opens (exit 3, why).
cp "$tmp/token" "$tmp/token-open"
chmod 644 "$tmp/token-open"
rc=0
"$build/gpudoctor" top --connect "$url" --token-file "$tmp/token-open" </dev/null >"$tmp/out" \
  2>"$tmp/err" || rc=$?
[ "$rc" -eq 3 ] && grep -q "readable by group or others; chmod 600" "$tmp/err" || {
  echo "FAIL: top with a 0644 token file: rc $rc: $(cat "$tmp/err")"
  exit 1
}

run_connect() {  # $1: environment, $2: extra flags
  tm new-session -d -s "$session" -x 120 -y 40 \
    "$1 TERM=xterm-256color '$build/gpudoctor' top --interval 0.5 --connect $url $2; \
      echo \"top exited \$?\"; sleep 60"
}
run_connect "GPUDOCTOR_TOKEN=wrong" ""
wait_for "^error: $url/api/v1/status: HTTP 401: the daemon refused the token"
tm send-keys -t "$session" q
wait_for '^top exited 0$'
tm kill-session -t "$session"

run_connect "" "--token-file '$tmp/token'"
wait_for '^  7 '
screen | grep -q "$url" || fail "the title should name the daemon"
screen | grep -Eq '^  3 .* 62/87 .* ok' || fail "GPU 3 should start cool and ok"
start=$(date +%s%N)
printf 'gpu.3.temp=88\ngpu.3.reasons=0x40\n' >>"$tmp/now.scenario"
wait_for '^  3 .* 88/87 .*CRIT gpu.thermal'
echo "fault on top's screen (via watch) after $((($(date +%s%N) - start) / 1000000)) ms"
screen | grep -Eq '^  2 .* 62/87 .* ok' || fail "GPU 2 must stay ok"
kill "$server"
wait "$server" 2>/dev/null || true
server=""
wait_for "^error: $url/api/v1/status: "
screen | grep -Eq '^  7 ' || fail "the last sample should stay on screen"
tm send-keys -t "$session" q
wait_for '^top exited 0$'
echo "PASS: top in tmux"
