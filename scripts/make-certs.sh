#!/usr/bin/env bash
# Makes a small private CA and the certificates Drip's mutual TLS needs, with the
# openssl command line: for a trial, the demo and tests. A fleet should issue these from
# its own PKI (docs/security.md says what each certificate must carry).
#
# Usage: scripts/make-certs.sh OUT_DIR [--collector NAME]... [--agent HOST]... [--user NAME]...
#   --collector NAME  a name clients dial the collector by (DNS name or IP address);
#                     default: localhost and 127.0.0.1
#   --agent HOST      an agent certificate whose SAN is HOST (the agent's `host`)
#   --user NAME       a dripctl principal's client certificate (SAN NAME)
# Writes OUT_DIR/ca.{crt,key}, collector.{crt,key}, agent-HOST.{crt,key}, user-NAME.{crt,key}.
set -euo pipefail
die() { echo "make-certs.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: make-certs.sh OUT_DIR [--collector NAME]... [--agent HOST]... [--user NAME]..."
out=$1; shift
collector_names=(); agents=(); users=()
while [ $# -gt 0 ]; do
  case "$1" in
    --collector) [ $# -ge 2 ] || die "--collector needs a name"; collector_names+=("$2"); shift 2 ;;
    --agent) [ $# -ge 2 ] || die "--agent needs a host"; agents+=("$2"); shift 2 ;;
    --user) [ $# -ge 2 ] || die "--user needs a name"; users+=("$2"); shift 2 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[ ${#collector_names[@]} -gt 0 ] || collector_names=(localhost 127.0.0.1)
command -v openssl >/dev/null || die "openssl is not installed (apt-get install openssl)"
mkdir -p "$out"
umask 077

key_opts=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
if [ ! -s "$out/ca.crt" ]; then
  openssl req -x509 "${key_opts[@]}" -days 825 -subj "/CN=drip-ca" \
    -keyout "$out/ca.key" -out "$out/ca.crt" 2>/dev/null
fi

# san_entry NAME: DNS:NAME, or IP:NAME for an address.
san_entry() { if [[ $1 =~ ^[0-9.]+$ || $1 == *:* ]]; then echo "IP:$1"; else echo "DNS:$1"; fi; }

issue() {  # issue FILE_BASE CN SAN_LIST
  local base=$1 cn=$2 san=$3
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n' \
    "$san" >"$base.ext"
  openssl req "${key_opts[@]}" -subj "/CN=$cn" -keyout "$base.key" -out "$base.csr" 2>/dev/null
  openssl x509 -req -in "$base.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
    -days 397 -extfile "$base.ext" -out "$base.crt" 2>/dev/null
  rm -f "$base.csr" "$base.ext"
}

san=""
for n in "${collector_names[@]}"; do san+="${san:+,}$(san_entry "$n")"; done
issue "$out/collector" "${collector_names[0]}" "$san"
for h in "${agents[@]}"; do issue "$out/agent-$h" "$h" "$(san_entry "$h")"; done
for u in "${users[@]}"; do issue "$out/user-$u" "$u" "$(san_entry "$u")"; done
chmod 644 "$out"/*.crt
echo "make-certs.sh: CA, collector (${collector_names[*]})${agents:+, agents (${agents[*]})}${users:+, users (${users[*]})} in $out"
