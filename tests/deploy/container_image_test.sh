#!/usr/bin/env bash
# The container image as shipped (deploy/container/Containerfile), built and run the way the
# DaemonSet (deploy/k8s/gpudoctor.yaml) runs it:
#   1. a debian:bookworm-slim-like base root filesystem from Debian packages (mmdebstrap, variant
#      minbase; the tarball is cached in BUILD/deploy-cache between runs),
#   2. imported into podman as debian:bookworm-slim (no registry is reachable) and the image built
#      FROM it with the Containerfile unchanged (its RUN apt-get reaches Debian's mirror),
#   3. `check --npd` and `watch` run inside it with hostPID/hostNetwork, the fake NVML mounted where
#      the NVIDIA container toolkit puts libnvidia-ml.so.1, a fixture host root, /proc and sysfs
#      read-only at /host/{root,proc,sys} and a kernel-log file at /host/root/dev/kmsg, and NPD's
#      rules (`check --npd --connect`) asking that watch from a second container.
# When podman cannot run containers on this machine the test says so and runs the same commands
# in a chroot of a root filesystem made by mmdebstrap from the Containerfile's own package list
# (the binary's ldd closure satisfied there, nothing copied from the host but the binary and the
# fake NVML). GPUDOCTOR_CONTAINER_TEST_MODE=chroot forces that path. Never skips.
# Usage: container_image_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
bin=$build/gpudoctor
module=$build/gpudoctor_fleet_json.so
fake=$build/tests/fake_nvml/libnvidia-ml.so.1
containerfile=$src/deploy/container/Containerfile
cache=$build/deploy-cache
mirror=${GPUDOCTOR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "container_image_test [$(date +%T)]: $*"; }

[ -x "$bin" ] || fail "$bin not built"
[ -f "$module" ] || fail "$module not built (target gpudoctor_fleet_json)"
[ -f "$fake" ] || fail "$fake not built (target fake_nvml)"
command -v mmdebstrap >/dev/null || fail "mmdebstrap is not installed (scripts/install-deps.sh)"
[ "$(id -u)" -eq 0 ] || fail "needs root (mmdebstrap --mode=root, podman rootful, chroot)"
mkdir -p "$cache"
work=$(mktemp -d "$build/container-test.XXXXXX")
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  [ -n "${watch_id:-}" ] && $podman rm -f "$watch_id" >/dev/null 2>&1 || true
  [ -n "${watch_pid:-}" ] && kill "$watch_pid" 2>/dev/null || true
  rm -rf "$work"
  return 0
}
trap cleanup EXIT

# The runtime packages, from the Containerfile itself (one source of truth).
packages=$(sed -n 's/^ARG GPUDOCTOR_RUNTIME_PACKAGES="\(.*\)"$/\1/p' "$containerfile")
[ -n "$packages" ] || fail "no ARG GPUDOCTOR_RUNTIME_PACKAGES=\"...\" line in $containerfile"

# A cached tarball younger than a week, else a fresh one (mmdebstrap, about a minute).
tarball() {  # tarball NAME [mmdebstrap options...]
  local out=$cache/$1.tar
  shift
  if [ -s "$out" ] && [ -n "$(find "$out" -mtime -7)" ]; then
    echo "$out"
    return
  fi
  note "mmdebstrap $* bookworm -> $out" >&2
  timeout 600 mmdebstrap --quiet --mode=root --variant=minbase --format=tar "$@" bookworm \
    "$out.tmp" "$mirror" >&2 || fail "mmdebstrap failed (is $mirror reachable?)"
  mv "$out.tmp" "$out"
  echo "$out"
}
base=$(tarball bookworm-minbase)

# The host the DaemonSet sees, as fixtures: a host root with a kernel log (a NIC transmit
# timeout: a warn in the network layer; Xid 149: a crit in the hardware one), the host's procfs
# shape and an 8-GPU sysfs; the fake NVML has GPU 1 with uncorrectable ECC errors.
fx=$src/tests/fixtures
mkdir -p "$work/host"
cp -r "$fx/hosts/healthy/root" "$work/host/root"
cp -r "$fx/hosts/healthy/proc" "$work/host/proc"
cp -r "$fx/sysfs/hgx_h100" "$work/host/sys"
mkdir -p "$work/host/sys/class/net"  # a node without NICs in sysfs, not a failed probe
mkdir -p "$work/host/root/dev"
cp "$fx/kmsg/kmsg_raw_r570_b200.log" "$work/host/root/dev/kmsg"
cp -r "$fx/nvml" "$work/host/nvml"  # ecc_dbe.scenario includes h100_busy.scenario
cp -r "$fx/fleet/cluster" "$work/host/reports"  # fleet's reports (its module parses them)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# The DaemonSet's arguments (deploy/k8s/gpudoctor.yaml), with the test's listen port.
paths=(--path.procfs /host/proc --path.sysfs /host/sys --path.rootfs /host/root --kmsg-source kmsg)
connect=http://127.0.0.1:$port

# expect NAME WANT_RC WANT_GLOB RC OUT
expect() {
  [ "$4" -eq "$2" ] || fail "$1: exit $4, want $2; output: $5"
  # shellcheck disable=SC2254
  case "$5" in $3) ;; *) fail "$1: output '$5' does not match '$3'" ;; esac
  note "ok: $1 -> exit $4: $5"
}

# The same checks in either runtime; run_in CMD... runs gpudoctor in the image/chroot,
# start_watch starts the daemon in the background.
checks() {
  local out rc
  rc=0; out=$(run_in check --npd --npd-layer hardware "${paths[@]}") || rc=$?
  expect "check --npd (hardware)" 1 'gpu.ecc.dbe GPU1 \[drain_reset\]: *' "$rc" "$out"
  rc=0; out=$(run_in check --npd --npd-layer network "${paths[@]}") || rc=$?
  expect "check --npd (network)" 0 'ok (warn: *net.link*)' "$rc" "$out"
  start_watch watch --listen "127.0.0.1:$port" --interval 1 --no-db "${paths[@]}"
  local i
  for i in $(seq 1 60); do
    rc=0; out=$(run_in check --npd --npd-layer hardware --connect "$connect" --deadline 5) || rc=$?
    [ "$rc" -ne 2 ] && break
    sleep 1
  done
  expect "check --npd --connect (hardware)" 1 'gpu.ecc.dbe GPU1 \[drain_reset\]: *' "$rc" "$out"
  rc=0; out=$(run_in check --npd --npd-warnings --npd-layer network --connect "$connect") || rc=$?
  expect "check --npd --npd-warnings --connect (network)" 1 'net.link \[watch\]: *' "$rc" "$out"
  rc=0; out=$(run_in check --npd --npd-warnings --npd-layer software --connect "$connect") || rc=$?
  expect "check --npd --npd-warnings --connect (software)" 0 "no warnings" "$rc" "$out"
  # The liveness probe's path and the ServiceMonitor's.
  rc=0; out=$(run_in_curl "$connect/healthz") || rc=$?
  expect "GET /healthz" 0 '{"tick":*"status":"ok"*' "$rc" "$out"
  local metrics
  metrics=$(run_in_curl "$connect/metrics") || fail "GET /metrics failed"
  rc=0; out=$(grep -m1 '^gpudoctor_finding_active{id="gpu.ecc.dbe"' <<<"$metrics") ||
    { rc=$?; out=$(grep '^gpudoctor_finding_active' <<<"$metrics"); }
  expect "GET /metrics (the fake NVML's ECC fault)" 0 'gpudoctor_finding_active{id="gpu.ecc.dbe"*' "$rc" "$out"
  stop_watch
  # No watch: unknown (exit 2) with the reason, within the deadline.
  local t0=$SECONDS
  rc=0; out=$(run_in check --npd --npd-layer hardware --connect "$connect" --deadline 3) || rc=$?
  expect "check --npd --connect (watch gone)" 2 "unknown: gpudoctor could not run: *127.0.0.1:$port*" "$rc" "$out"
  [ $((SECONDS - t0)) -le 10 ] || fail "unreachable watch took $((SECONDS - t0)) s"
  # fleet loads its report parser module (gpudoctor_fleet_json.so, libsimdjson) from the image.
  rc=0; out=$(run_in fleet --reports /host/reports 2>&1) || rc=$?
  expect "fleet (the report parser module; node02 has a crit)" 2 '*node02*' "$rc" "${out:0:300}"
}

# An HTTP GET through the binary on the host side (the image has no curl): python3.
run_in_curl() {
  python3 - "$1" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
    sys.stdout.write(r.read().decode())
PY
}

mode=${GPUDOCTOR_CONTAINER_TEST_MODE:-auto}
podman=""
if [ "$mode" = chroot ]; then
  note "GPUDOCTOR_CONTAINER_TEST_MODE=chroot: a chroot of the image's root filesystem, not podman"
  why_chroot="forced by GPUDOCTOR_CONTAINER_TEST_MODE=chroot"
else
  why_chroot="podman could not run here"
  if ! command -v podman >/dev/null; then
    note "podman is not installed: falling back to a chroot of the image's root filesystem"
  else
    # cgroupfs works inside containers and VMs without systemd; runc copes with hybrid cgroup hierarchies that crun refuses. Limits are set no higher
    # than this shell's (raising them needs CAP_SYS_RESOURCE).
    runtime=()
    command -v runc >/dev/null && runtime=(--runtime=runc)
    # overlay where the kernel allows it here (vfs copies the whole root filesystem for every
    # layer and every container: minutes), else vfs.
    driver=vfs
    mkdir -p "$work/ov/l" "$work/ov/u" "$work/ov/w" "$work/ov/m"
    if mount -t overlay overlay -o "lowerdir=$work/ov/l,upperdir=$work/ov/u,workdir=$work/ov/w" \
      "$work/ov/m" 2>/dev/null; then
      umount "$work/ov/m"
      driver=overlay
    fi
    # podman refuses a runroot longer than 50 characters and remembers it with the storage: a
    # short fixed path per cache directory and driver.
    runroot=/tmp/gd-podman-$(echo "$cache/$driver" | md5sum | cut -c1-8)
    podman="podman --root $cache/podman-$driver --runroot $runroot --storage-driver=$driver
      --cgroup-manager=cgroupfs --events-backend=file ${runtime[*]}"
    limits=(--ulimit "nofile=$(ulimit -Sn):$(ulimit -Sn)" --ulimit nproc=4096:4096)
    # Imported once per tarball, so the image's apt-get layer stays cached between runs. Any
    # failure here (storage, runtime, namespaces) is a reason to fall back, said below.
    base_tag=localhost/gpudoctor-test-base:$(stat -c %Y "$base")
    if ! why=$({ $podman image exists "$base_tag" ||
      $podman import --quiet "$base" "$base_tag" >/dev/null; } 2>&1 &&
      $podman tag "$base_tag" docker.io/library/debian:bookworm-slim 2>&1 &&
      $podman run --rm "${limits[@]}" --network=host docker.io/library/debian:bookworm-slim \
        true 2>&1); then
      note "podman cannot run containers here ($why): falling back to a chroot of the image's root filesystem"
      podman=""
    fi
  fi
fi

if [ -n "$podman" ]; then
  note "podman ($driver storage): building the image from $containerfile"
  mkdir -p "$work/ctx/build"
  cp "$bin" "$work/ctx/build/gpudoctor"
  cp "$module" "$work/ctx/build/gpudoctor_fleet_json.so"
  timeout 600 $podman build --quiet --pull=never --network=host "${limits[@]}" -f "$containerfile" \
    -t localhost/gpudoctor:test "$work/ctx" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; fail "podman build failed"; }
  image_run=($podman run --rm "${limits[@]}" --network=host --pid=host
    -v "$fake:/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1:ro"
    -v "$work/host/root:/host/root:ro" -v "$work/host/proc:/host/proc:ro"
    -v "$work/host/sys:/host/sys:ro" -v "$work/host/root/dev/kmsg:/host/root/dev/kmsg:ro"
    -v "$work/host/nvml:/etc/fake-nvml:ro" -v "$work/host/reports:/host/reports:ro"
    -e FAKE_NVML_SCENARIO=/etc/fake-nvml/ecc_dbe.scenario)
  run_in() { "${image_run[@]}" localhost/gpudoctor:test "$@"; }
  start_watch() {
    watch_id=$("${image_run[@]}" -d --name "gpudoctor-watch-$$" localhost/gpudoctor:test "$@")
  }
  stop_watch() { $podman rm -f "$watch_id" >/dev/null; watch_id=""; }
  # The image holds the binary's whole ldd closure.
  closure=$($podman run --rm "${limits[@]}" --entrypoint ldd localhost/gpudoctor:test \
    /usr/local/bin/gpudoctor) || fail "ldd in the image failed"
  ! grep -q "not found" <<<"$closure" || fail "libraries missing in the image: $closure"
  # And the fleet module's (libsimdjson, libstdc++), where the binary looks for it.
  closure=$($podman run --rm "${limits[@]}" --entrypoint ldd localhost/gpudoctor:test \
    /usr/local/lib/gpudoctor/gpudoctor_fleet_json.so) || fail "ldd of the fleet module in the image failed"
  ! grep -q "not found" <<<"$closure" || fail "libraries of the fleet module missing in the image: $closure"
  checks
  note "PASS (podman image localhost/gpudoctor:test)"
  exit 0
fi

# chroot fallback: the image's root filesystem from the Containerfile's packages.
root=$work/rootfs
mkdir -p "$root"
key=$(echo "$packages" | md5sum | cut -c1-12)
# shellcheck disable=SC2086
rootfs_tar=$(tarball "bookworm-gpudoctor-runtime-$key" --include="$(echo $packages | tr ' ' ',')")
tar -xf "$rootfs_tar" -C "$root"
install -m 0755 "$bin" "$root/usr/local/bin/gpudoctor"
install -D -m 0644 "$module" "$root/usr/local/lib/gpudoctor/gpudoctor_fleet_json.so"
install -m 0644 "$fake" "$root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
mkdir -p "$root/host"
cp -r "$work/host/root" "$work/host/proc" "$work/host/sys" "$work/host/reports" "$root/host/"
cp -r "$work/host/nvml" "$root/etc/fake-nvml"
# What the loader needs inside: /proc for /proc/self, /dev/null.
for m in proc dev; do
  mount --rbind "/$m" "$root/$m"
  mount --make-rslave "$root/$m"
  mounts+=("$root/$m")
done
closure=$(chroot "$root" ldd /usr/local/bin/gpudoctor) || fail "ldd in the chroot failed"
! grep -q "not found" <<<"$closure" || fail "libraries missing from the packages: $closure"
closure=$(chroot "$root" ldd /usr/local/lib/gpudoctor/gpudoctor_fleet_json.so) ||
  fail "ldd of the fleet module in the chroot failed"
! grep -q "not found" <<<"$closure" || fail "libraries of the fleet module missing from the packages: $closure"
run_in() { FAKE_NVML_SCENARIO=/etc/fake-nvml/ecc_dbe.scenario chroot "$root" /usr/local/bin/gpudoctor "$@"; }
start_watch() {
  FAKE_NVML_SCENARIO=/etc/fake-nvml/ecc_dbe.scenario chroot "$root" /usr/local/bin/gpudoctor "$@" \
    >"$work/watch.log" 2>&1 &
  watch_pid=$!
}
stop_watch() { kill "$watch_pid"; wait "$watch_pid" 2>/dev/null || true; watch_pid=""; }
checks
note "PASS (chroot of the image's packages; $why_chroot)"
