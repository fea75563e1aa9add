#!/usr/bin/env bash
# The same federation over TLS (CAF's OpenSSL module), with a CA and two certificates made
# here: metrics identical to the single-process run. Peers with a certificate from another CA,
# or without TLS, never get in.
source "$(dirname "$0")/cluster_lib.sh"
reference

tls="$work/tls"
mkdir -p "$tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=drift test CA" \
  -keyout "$tls/ca.key" -out "$tls/ca.pem" 2> /dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" \
  -keyout "$tls/other.key" -out "$tls/other.pem" 2> /dev/null
for side in coordinator:ca worker:ca rogue:other; do
  name=${side%%:*} ca=${side##*:}
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$tls/$name.key" -out "$tls/$name.csr" 2> /dev/null
  openssl x509 -req -in "$tls/$name.csr" -CA "$tls/$ca.pem" -CAkey "$tls/$ca.key" -CAcreateserial -days 2 \
    -out "$tls/$name.pem" 2> /dev/null
done

start_coordinator secure --workers 1 --no-local --tls --cert "$tls/coordinator.pem" --key "$tls/coordinator.key" \
  --ca "$tls/ca.pem"
coordinator=$coordinator_pid
grep -q "listening on 127.0.0.1:$port (TLS)" "$work/secure.log"
# A certificate from another CA, and no TLS at all: refused in the TLS handshake, before any
# message; the worker gives up after --connect-timeout and the run is unaffected.
start_worker rogue --tls --cert "$tls/rogue.pem" --key "$tls/rogue.key" --ca "$tls/ca.pem" --connect-timeout 2
expect_exit "$worker_pid" 1 "$work/rogue.log"
grep -q "cannot reach the coordinator" "$work/rogue.log"
start_worker plain --connect-timeout 2
expect_exit "$worker_pid" 1 "$work/plain.log"
grep -q "cannot reach the coordinator" "$work/plain.log"
start_worker w1 --tls --cert "$tls/worker.pem" --key "$tls/worker.key" --ca "$tls/ca.pem"
expect_exit "$coordinator" 0 "$work/secure.log"
expect_exit "$worker_pid" 0 "$work/w1.log"
cmp "$work/reference/metrics.jsonl" "$work/secure/metrics.jsonl"

# --tls without its files is refused before anything starts.
if "$drift" worker --connect "127.0.0.1:1" --tls 2> "$work/nocert.log"; then exit 1; fi
grep -q -- "--tls needs --cert" "$work/nocert.log"
echo "cli cluster tls: 3 passed, 0 failed"
