# Sourced by the bench scripts that run `watch` binaries side by side (watch_syscalls.sh,
# watch_disk_writes.sh, watch_instructions.sh, watch_api_rss.sh), after they set $build (absolute)
# and $here: 8 fake GPUs (h100_busy) on the fake NVML without FieldValues, history on,
# reachability skipped; a private temporary directory $d, removed on exit with every process
# listed in $pids killed.
export FAKE_NVML_SCENARIO="$here/../tests/fixtures/nvml/h100_busy.scenario"
lib="$build/tests/fake_nvml/minimal/libnvidia-ml.so.1"
d=$(mktemp -d)
chmod 700 "$d"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$d"; }
trap cleanup EXIT
# watch_args N: WATCH_ARGS becomes the arguments of side N's `watch` (its files under $d/N).
watch_args() {
  mkdir -m 700 "$d/$1"
  WATCH_ARGS=(watch --interval 1 --db "$d/$1/h.db" --nvml-lib "$lib" --skip-probes reachability
    --listen off)
}
# start_watches BINARY...: starts `BINARY watch` for each, side N's stderr in $d/N.log, its pid
# appended to $pids (in the order given).
start_watches() {
  local i=0 bin
  for bin in "$@"; do
    watch_args "$i"
    "$bin" "${WATCH_ARGS[@]}" 2>"$d/$i.log" &
    pids+=($!)
    i=$((i + 1))
  done
}
