# Peer tools for the heap benchmarks, sourced by bench/*.sh: bcc's memleak-bpfcc (with
# bpfcc-tools, kernel headers and the fixed wrapper) and heaptrack. Expects `root`, `out`,
# `use_memleak`, `use_heaptrack`, `allow_install` and `memleak_cmd` to be set; sets
# `memleak_cmd` and `memleak_reason` / `heaptrack_reason` (why a tool is out).
# shellcheck shell=bash

# --- memleak-bpfcc: bpfcc-tools, kernel headers, the fixed wrapper --------------------------
memleak_reason=""
nearest_headers_pkg() {  # the linux-headers-*-<arch> package nearest the running kernel
  local arch running candidates
  arch=$(dpkg --print-architecture)
  running=$(uname -r)
  candidates=$(apt-cache search --names-only "^linux-headers-[0-9].*-${arch}\$" 2>/dev/null |
    awk '{print $1}' | grep -v -e '-rt-' -e '-cloud-' || true)
  [ -n "$candidates" ] || return 1
  if grep -qx "linux-headers-$running" <<<"$candidates"; then echo "linux-headers-$running"; return 0; fi
  # Sorted by version with the running kernel among them: the nearest one below it, or
  # else the nearest one above it.
  printf '%s\n' $candidates "linux-headers-$running" | sort -V | awk -v r="linux-headers-$running" '
    $0 == r { found = 1; next }
    !found { below = $0 }
    found && above == "" { above = $0 }
    END { if (below != "") print below; else if (above != "") print above; else exit 1 }'
}
ensure_memleak() {  # idempotent; sets memleak_cmd, or memleak_reason when memleak is out
  local kbuild pkg kver
  if [ "$use_memleak" -eq 0 ]; then memleak_reason="--no-memleak"; return 1; fi
  if [ "$(id -u)" -ne 0 ]; then memleak_reason="not root"; return 1; fi
  if [ ! -x /usr/sbin/memleak-bpfcc ]; then
    if [ "$allow_install" -eq 1 ] && command -v apt-get >/dev/null; then
      echo "== installing bpfcc-tools (Debian) ==" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q bpfcc-tools >"$out/apt-bpfcc.log" 2>&1 || true
    fi
    [ -x /usr/sbin/memleak-bpfcc ] || { memleak_reason="bpfcc-tools is not installed"; return 1; }
  fi
  # bcc compiles its BPF programs against /lib/modules/$(uname -r)/{build,source}. This
  # kernel ships no headers: link those of the nearest Debian kernel (the BPF programs
  # memleak compiles only use stable uapi/ptrace definitions).
  kbuild=/lib/modules/$(uname -r)
  if [ ! -e "$kbuild/build/include/generated" ]; then
    pkg=$(nearest_headers_pkg || true)
    if [ -z "$pkg" ]; then memleak_reason="no linux-headers package found for $(uname -r)"; return 1; fi
    kver=${pkg#linux-headers-}
    if [ ! -d "/lib/modules/$kver/build/include" ]; then
      if [ "$allow_install" -eq 1 ]; then
        echo "== installing $pkg (nearest kernel headers to $(uname -r)) ==" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >"$out/apt-headers.log" 2>&1 || true
      fi
      [ -d "/lib/modules/$kver/build/include" ] || { memleak_reason="$pkg is not installed"; return 1; }
    fi
    mkdir -p "$kbuild"
    ln -sfn "$(readlink -f "/lib/modules/$kver/build")" "$kbuild/build"
    [ -e "/lib/modules/$kver/source" ] && ln -sfn "$(readlink -f "/lib/modules/$kver/source")" "$kbuild/source"
    echo "== linked $kbuild/build -> $(readlink "$kbuild/build") ==" >&2
  fi
  # Debian's python3-bpfcc passes a garbage uprobe ref_ctr_offset, which fails whenever
  # another tracer probes the same function; bench/tools/memleak-bpfcc-fixed passes 0.
  if [ -z "$memleak_cmd" ]; then memleak_cmd=$root/bench/tools/memleak-bpfcc-fixed; fi
  if ! "$memleak_cmd" --help >/dev/null 2>&1; then memleak_reason="$memleak_cmd --help fails"; return 1; fi
  return 0
}

heaptrack_reason=""
ensure_heaptrack() {
  if [ "$use_heaptrack" -eq 0 ]; then heaptrack_reason="--no-heaptrack"; return 1; fi
  command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null && return 0
  heaptrack_reason="heaptrack/heaptrack_print not installed"
  return 1
}
