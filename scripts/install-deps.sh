#!/usr/bin/env bash
# Installs the Debian 12 packages gpudoctor needs to build, test and lint, when missing.
# Needs root (apt-get) only if something is missing. Idempotent and quiet when all is there.
set -euo pipefail
packages=(
  g++ cmake make pkg-config ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  libtomlplusplus-dev nlohmann-json3-dev libsimdjson-dev libsystemd-dev libsqlite3-dev
  clang libclang-rt-14-dev clang-format
  iproute2 procps time python3
  libcpp-httplib-dev libcurl4-openssl-dev zlib1g-dev liblz4-dev libssl-dev libbrotli-dev openssl
  prometheus prometheus-alertmanager prometheus-node-exporter
  libncurses-dev tmux chromium nodejs
  slurm-wlm munge
  gettext
  # lld: links gpudoctor in the order of cmake/layout.order (watch RSS); valgrind: profiles a
  # watch run for scripts/layout_profile.sh, which writes that order.
  lld valgrind
  # deploy/container and deploy/k8s tests: a Debian base root filesystem (mmdebstrap), the image
  # built and run with podman (runc: crun refuses hybrid cgroup hierarchies), manifests parsed.
  mmdebstrap podman runc python3-yaml
)
# kubectl (the manifests' client-side dry run): Debian's kubernetes-client unless a kubectl is
# already installed (another package, e.g. the upstream one, owns /usr/bin/kubectl then).
command -v kubectl >/dev/null || packages+=(kubernetes-client)
# nodejs brings npm (the NodeSource build does; on plain Debian also install npm). web/ needs
# Node >= 18 to build the dashboard; without it the binary embeds a "not built" page.
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
