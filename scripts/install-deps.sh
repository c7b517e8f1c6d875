#!/usr/bin/env bash
# Installs every Debian 12 package Drip needs to build, test and run.
# Idempotent and non-interactive; starts from a minimal Debian 12 (no compiler).
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then exec sudo -E bash "$0" "$@"; fi
  echo "install-deps.sh: must run as root (or with sudo available)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git ca-certificates
  clang llvm lld clang-format clang-tidy libclang-rt-dev
  # RPC and storage
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  librocksdb-dev libssl-dev
  # eBPF
  libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev systemtap-sdt-dev
  # libraries
  libabsl-dev prometheus-cpp-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev
  libsystemd-dev nlohmann-json3-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  prometheus systemd procps iproute2 openssl python3 curl
  # other allocators the preload shim must keep working (runtime libraries only)
  libjemalloc2 libtcmalloc-minimal4
  # a real jemalloc-linked service and its real client, diagnosed through the collector
  redis-server redis-tools
  # a real tcmalloc-linked program (SWI-Prolog links libtcmalloc_minimal), diagnosed the same way
  swi-prolog-core
  # several collectors share a fleet through etcd (docs/cluster.md): the server for the
  # cluster tests, and the v3 API's .proto files with the ones they import, from which the
  # C++ client is generated at build time
  etcd-server golang-etcd-server-dev golang-github-gogo-protobuf-dev
  golang-github-grpc-ecosystem-grpc-gateway-dev
  # pprof's profile.proto, from which `dripctl diagnose --pprof`'s writer is generated, and
  # Go, whose `go tool pprof` reads what it writes in the tests
  golang-github-google-pprof-dev golang-go
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps.sh: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "install-deps.sh: installing ${#missing[@]} packages: ${missing[*]}"
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
# The prometheus, redis and etcd packages start servers (:9090, :6379, :2379) where an init system
# runs; Drip's tests start their own on ephemeral ports or sockets, so stop the packaged ones.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl disable --now prometheus prometheus-node-exporter redis-server etcd >/dev/null 2>&1 || true
fi
echo "install-deps.sh: done"
