#!/usr/bin/env bash
# Makes a small private CA and the certificates Drip's mutual TLS needs, with the
# openssl command line: for a trial, the demo and tests. A fleet should issue these from
# its own PKI (docs/security.md says what each certificate must carry).
#
# Usage: scripts/make-certs.sh OUT_DIR [--collector NAME]... [--agent HOST]... [--user NAME]...
#                               [--etcd NAME]...
#   --collector NAME  a name clients dial the collector by (DNS name or IP address);
#                     default: localhost and 127.0.0.1
#   --agent HOST      an agent certificate whose SAN is HOST (the agent's `host`)
#   --user NAME       a dripctl principal's client certificate (SAN NAME)
#   --etcd NAME       a name the collectors dial etcd by: makes etcd's own CA (no agent or
#                     user certificate chains to it, so only collectors reach etcd), etcd's
#                     server and peer certificate, and the collectors' client certificate
# Writes OUT_DIR/ca.{crt,key}, collector.{crt,key}, agent-HOST.{crt,key}, user-NAME.{crt,key},
# and with --etcd OUT_DIR/etcd/{ca,server,collector}.{crt,key}.
#
# Key usage keeps each certificate to its role (docs/security.md): the collector's serves
# and, in a cluster, is its client certificate towards the other members (serverAuth,
# clientAuth); an agent's or a user's is a client's only (clientAuth), so it cannot pose
# as a collector that agents would be redirected to.
set -euo pipefail
die() { echo "make-certs.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: make-certs.sh OUT_DIR [--collector NAME]... [--agent HOST]... [--user NAME]... [--etcd NAME]..."
out=$1; shift
collector_names=(); agents=(); users=(); etcd_names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --collector) [ $# -ge 2 ] || die "--collector needs a name"; collector_names+=("$2"); shift 2 ;;
    --agent) [ $# -ge 2 ] || die "--agent needs a host"; agents+=("$2"); shift 2 ;;
    --user) [ $# -ge 2 ] || die "--user needs a name"; users+=("$2"); shift 2 ;;
    --etcd) [ $# -ge 2 ] || die "--etcd needs a name"; etcd_names+=("$2"); shift 2 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[ ${#collector_names[@]} -gt 0 ] || collector_names=(localhost 127.0.0.1)
command -v openssl >/dev/null || die "openssl is not installed (apt-get install openssl)"
mkdir -p "$out"
umask 077

key_opts=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
make_ca() {  # make_ca DIR CN: DIR/ca.{crt,key}, unless there already
  if [ ! -s "$1/ca.crt" ]; then
    openssl req -x509 "${key_opts[@]}" -days 825 -subj "/CN=$2" \
      -keyout "$1/ca.key" -out "$1/ca.crt" 2>/dev/null
  fi
}
make_ca "$out" drip-ca

# san_entry NAME: DNS:NAME, or IP:NAME for an address.
san_entry() { if [[ $1 =~ ^[0-9.]+$ || $1 == *:* ]]; then echo "IP:$1"; else echo "DNS:$1"; fi; }

issue() {  # issue CA_DIR FILE_BASE CN SAN_LIST EXTENDED_KEY_USAGE
  local ca=$1 base=$2 cn=$3 san=$4 usage=$5
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=%s\nsubjectAltName=%s\n' \
    "$usage" "$san" >"$base.ext"
  openssl req "${key_opts[@]}" -subj "/CN=$cn" -keyout "$base.key" -out "$base.csr" 2>/dev/null
  openssl x509 -req -in "$base.csr" -CA "$ca/ca.crt" -CAkey "$ca/ca.key" -CAcreateserial \
    -days 397 -extfile "$base.ext" -out "$base.crt" 2>/dev/null
  rm -f "$base.csr" "$base.ext"
}

san=""
for n in "${collector_names[@]}"; do san+="${san:+,}$(san_entry "$n")"; done
issue "$out" "$out/collector" "${collector_names[0]}" "$san" serverAuth,clientAuth
for h in "${agents[@]}"; do issue "$out" "$out/agent-$h" "$h" "$(san_entry "$h")" clientAuth; done
for u in "${users[@]}"; do issue "$out" "$out/user-$u" "$u" "$(san_entry "$u")" clientAuth; done
chmod 644 "$out"/*.crt
if [ ${#etcd_names[@]} -gt 0 ]; then
  mkdir -p "$out/etcd"
  make_ca "$out/etcd" drip-etcd-ca
  san=""
  for n in "${etcd_names[@]}"; do san+="${san:+,}$(san_entry "$n")"; done
  # etcd members use one certificate as server to clients and to each other, and as client
  # towards each other.
  issue "$out/etcd" "$out/etcd/server" "${etcd_names[0]}" "$san" serverAuth,clientAuth
  issue "$out/etcd" "$out/etcd/collector" drip-collector "DNS:drip-collector" clientAuth
  chmod 644 "$out"/etcd/*.crt
fi
echo "make-certs.sh: CA, collector (${collector_names[*]})${agents:+, agents (${agents[*]})}${users:+, users (${users[*]})}${etcd_names:+, etcd CA (${etcd_names[*]})} in $out"
