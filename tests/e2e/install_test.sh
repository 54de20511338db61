#!/usr/bin/env bash
# `make install` into a DESTDIR: binary and its fleet module (used from there), systemd unit (verified by systemd-analyze when present,
# pointing at the installed binary), default config that the binary itself accepts, and a second
# install that keeps an edited config.
set -euo pipefail
src=$1
build=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
make -C "$src" --no-print-directory install-files BUILD="$build" DESTDIR="$dest" PREFIX=/usr/local \
  >/dev/null
test -x "$dest/usr/local/bin/gpudoctor"
test -f "$dest/usr/local/lib/gpudoctor/gpudoctor_fleet_json.so"
# The installed binary finds its fleet module (../lib/gpudoctor), not the build tree's.
rc=0
out=$(cd / && "$dest/usr/local/bin/gpudoctor" fleet --json --reports "$src/tests/fixtures/fleet/cluster" \
  2>&1) || rc=$?
[ "$rc" -eq 2 ] && grep -q '"stragglers"' <<<"$out" ||
  { echo "installed fleet: exit $rc: ${out:0:2000}" >&2; exit 1; }
test -f "$dest/etc/systemd/system/gpudoctor.service"
test -d "$dest/var/lib/gpudoctor"
grep -q '^Type=notify' "$dest/etc/systemd/system/gpudoctor.service"
grep -q '^ExecStart=/usr/local/bin/gpudoctor watch' "$dest/etc/systemd/system/gpudoctor.service"
"$dest/usr/local/bin/gpudoctor" config --config "$dest/etc/gpudoctor/gpudoctor.toml" >/dev/null
if command -v systemd-analyze >/dev/null; then
  sed "s|/usr/local/bin/gpudoctor|$dest/usr/local/bin/gpudoctor|" \
    "$dest/etc/systemd/system/gpudoctor.service" >"$dest/gpudoctor.service"
  out=$(systemd-analyze verify "$dest/gpudoctor.service" 2>&1 || true)
  if [ -n "$out" ]; then
    echo "systemd-analyze verify: $out" >&2
    exit 1
  fi
else
  echo "install_test: systemd-analyze not found; unit not verified"
fi
echo "# edited" >>"$dest/etc/gpudoctor/gpudoctor.toml"
make -C "$src" --no-print-directory install-files BUILD="$build" DESTDIR="$dest" >/dev/null
grep -q '^# edited' "$dest/etc/gpudoctor/gpudoctor.toml"
echo "install_test: ok"
