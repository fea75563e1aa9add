#!/usr/bin/env bash
# Multi-node runs between test hosts whose network fails (docs/devices.md#faults-across-hosts):
# a coordinator and workers in network namespaces of their own, joined by veth links with their
# own addresses, over TLS (drift refuses to listen off loopback without it). Each case breaks a
# link while a run goes and checks what the docs promise; the table at the end says, per case,
# how the run ended, what the user was told and how long the fault took to notice.
#   tests/net/check_network.sh DRIFT      (as root; `make check-network`; exit 77 without root)
set -euo pipefail
drift="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
[[ $(id -u) -eq 0 ]] || { echo "check-network: needs root (network namespaces, iptables)"; exit 77; }
for tool in ip iptables openssl python3; do
  command -v "$tool" > /dev/null || { echo "check-network: needs $tool"; exit 77; }
done
source "$here/netlib.sh"
work=$(mktemp -d)
pids=()
cleanup() {
  local code=$?
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null || true; done
  net_cleanup
  if [[ $code -ne 0 ]]; then
    for f in "$work"/*.log; do [[ -e "$f" ]] && { echo "==> $f"; tail -n 30 "$f"; }; done
    echo "kept $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
export DRIFT_JOIN_TOKEN=0123456789abcdef0123456789abcdef
started=$SECONDS

# A CA and a certificate for each side.
tls_dir="$work/tls"
mkdir -p "$tls_dir"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=drift net CA" -keyout "$tls_dir/ca.key" \
  -out "$tls_dir/ca.pem" 2> /dev/null
for side in coordinator worker; do
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$side" -keyout "$tls_dir/$side.key" -out "$tls_dir/$side.csr" 2> /dev/null
  openssl x509 -req -in "$tls_dir/$side.csr" -CA "$tls_dir/ca.pem" -CAkey "$tls_dir/ca.key" -CAcreateserial -days 2 \
    -out "$tls_dir/$side.pem" 2> /dev/null
done
tls() { echo --tls --cert "$tls_dir/$1.pem" --key "$tls_dir/$1.key" --ca "$tls_dir/ca.pem"; }

# Rounds long enough that a fault lands mid-run; a checkpoint after every aggregation.
cat > "$work/net.toml" <<TOML
seed = 5
[data]
max_train_samples = 6000
max_test_samples = 500
[federation]
clients = 8
rounds = 10
[sampler]
clients_per_round = 4
[evaluation]
chunk_size = 250
[checkpoint]
every = 1
TOML
heartbeat=2      # the coordinator lets a silent worker go after this
silence=5        # a worker gives up on a silent coordinator after this
port=4242        # each host has its own ports

# The single-process runs every deployment must reproduce, flat and with edges.
reference() {  # reference NAME --set...
  local name=$1
  shift
  "$drift" run "$work/net.toml" --out "$work/$name" --slots 1 --no-progress --no-plots "$@" 2> "$work/$name.log"
}
reference reference
edges=(--set hierarchy.edges=2 --set hierarchy.edge_rounds=1)
reference reference-edges "${edges[@]}"

start_coordinator() {  # start_coordinator NAME ARGS...: sets coordinator
  local name=$1
  shift
  in_coordinator timeout 600 "$drift" run "$work/net.toml" --out "$work/$name" --no-progress --no-plots \
    --listen "0.0.0.0:$port" $(tls coordinator) --heartbeat-timeout "$heartbeat" --join-timeout 120 "$@" \
    2> "$work/$name.log" &
  coordinator=$!
  pids+=("$coordinator")
}
resume_coordinator() {  # resume_coordinator NAME ARGS...
  local name=$1
  shift
  in_coordinator timeout 600 "$drift" resume "$work/$name" --no-progress --no-plots \
    --listen "0.0.0.0:$port" $(tls coordinator) --heartbeat-timeout "$heartbeat" --join-timeout 120 "$@" \
    2> "$work/$name-resume.log" &
  coordinator=$!
  pids+=("$coordinator")
}
start_worker() {  # start_worker K NAME [HOST:PORT]: on worker host K; sets worker
  local k=$1 name=$2 to=${3:-10.77.$1.1:$port}
  in_worker "$k" timeout 600 "$drift" worker --connect "$to" --name "$name" --devices cpu:1 $(tls worker) \
    --coordinator-timeout "$silence" --connect-timeout 60 2> "$work/$name.log" &
  worker=$!
  pids+=("$worker")
}
# wait_line LOG PATTERN [SECONDS]: until LOG has a line matching PATTERN; prints the seconds waited.
wait_line() {
  local from=$SECONDS limit=${3:-120}
  until grep -q "$2" "$1" 2> /dev/null; do
    ((SECONDS - from < limit)) || { echo "no '$2' in $1 within $limit s" >&2; exit 1; }
    sleep 0.1
  done
  echo $((SECONDS - from))
}
# ended PID...: waits for each; `codes` holds their exit codes, in order (not in a $(...):
# a subshell cannot wait for this shell's children).
ended() {
  codes=()
  local code
  for p in "$@"; do
    code=0
    wait "$p" || code=$?
    codes+=("$code")
  done
}
# ended_within SECONDS PID...: as `ended`, but a process still there after SECONDS fails the case:
# a process that stopped its run must also exit, whatever state its links are in.
ended_within() {
  local limit=$1 from=$SECONDS p
  shift
  for p in "$@"; do
    while kill -0 "$p" 2> /dev/null && ((SECONDS - from < limit)); do sleep 0.2; done
    kill -0 "$p" 2> /dev/null && { echo "process $p still runs $limit s after its fault" >&2; exit 1; }
  done
  ended "$@"
}
status_of() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['status'])" "$1/summary.json"; }
same_as() {  # same_as REFERENCE RUN: byte-identical metrics and client records
  cmp "$work/$1/metrics.jsonl" "$work/$2/metrics.jsonl" && cmp "$work/$1/clients.csv" "$work/$2/clients.csv"
}
table=()
row() { table+=("| $1 | $2 | $3 | $4 |"); }

net_hosts 2
# DRIFT_NET_CASES="1 5" runs only those cases (all by default).
want() { [[ -z "${DRIFT_NET_CASES:-}" || " $DRIFT_NET_CASES " == *" $1 "* ]]; }

if want 0; then
# 0. No fault: two workers on their own hosts give the single-process bits.
start_coordinator plain --workers 2 --no-local
c=$coordinator
start_worker 1 w1 && w1=$worker
start_worker 2 w2 && w2=$worker
ended "$c" "$w1" "$w2"
[[ "${codes[*]}" == "0 0 0" ]]
same_as reference plain
row "no fault" "completed, identical" "-" "-"
fi

if want 1; then
# 1. A partition: worker 1's link down past the heartbeat, then back. The coordinator lets it
# go and its jobs run on worker 2 (byte-identical: a let-go job is not a dropout); worker 1
# hears no heartbeat and gives up, whether or not its link came back.
start_coordinator partition --workers 2 --no-local
c=$coordinator
start_worker 1 w1 && w1=$worker
start_worker 2 w2 && w2=$worker
wait_line "$work/partition.log" "round 2/10" > /dev/null
link_down 1
noticed=$(wait_line "$work/partition.log" "worker 'w1' stopped answering" 30)
sleep "$silence"
link_up 1
ended "$c" "$w1" "$w2"
w1_code=${codes[1]}
[[ ${codes[0]} -eq 0 && ${codes[2]} -eq 0 ]]
same_as reference partition
[[ $(status_of "$work/partition") == completed ]]
grep -q '"workers_lost"' "$work/partition/summary.json"
grep -q "lost the coordinator (no heartbeat from the coordinator for" "$work/w1.log"
[[ $w1_code -eq 1 ]]
row "partition of one worker (${silence}+ s)" "completed, identical; summary.json lists w1" \
  "coordinator: ${noticed} s (heartbeat ${heartbeat} s)" "w1 exit 1: lost the coordinator (no heartbeat ...)"
fi

if want 2; then
# 2. A silent peer: worker 1's link drops every packet both ways from mid-run on (no reset).
start_coordinator silent --workers 2 --no-local
c=$coordinator
start_worker 1 w1 && w1=$worker
start_worker 2 w2 && w2=$worker
wait_line "$work/silent.log" "round 2/10" > /dev/null
silence 1
from=$SECONDS
noticed=$(wait_line "$work/silent.log" "worker 'w1' stopped answering" 30)
ended "$w1"
w1_code=${codes[0]}
gave_up=$((SECONDS - from))
ended "$c" "$w2"
[[ "${codes[*]}" == "0 0" ]]
unsilence 1
same_as reference silent
grep -q "lost the coordinator (no heartbeat from the coordinator for" "$work/w1.log"
[[ $w1_code -eq 1 ]]
row "silent peer (every packet dropped)" "completed, identical" "coordinator: ${noticed} s" \
  "w1 exit 1 after ${gave_up} s: no heartbeat"
fi

if want 3; then
# 3. The coordinator's links go down mid-run: both workers give up; the coordinator, its last
# slot gone, stops with the reason. Back up, drift resume with new workers finishes the run
# byte-identical to the undisturbed one (no job was lost: let-go jobs run again).
start_coordinator cut --workers 2 --no-local
c=$coordinator
start_worker 1 w1 && w1=$worker
start_worker 2 w2 && w2=$worker
wait_line "$work/cut.log" "round 2/10" > /dev/null
link_down 1
link_down 2
from=$SECONDS
ended_within 60 "$c"
c_code=${codes[0]}
stopped_after=$((SECONDS - from))
[[ $c_code -eq 1 ]]
[[ $(status_of "$work/cut") == stopped ]]
grep -q "no trainer slot remains" "$work/cut/summary.json"
ended "$w1" "$w2"
[[ "${codes[*]}" == "1 1" ]]
workers_after=$((SECONDS - from))
link_up 1
link_up 2
resume_coordinator cut --workers 2 --no-local
c=$coordinator
start_worker 1 w3 && w3=$worker
start_worker 2 w4 && w4=$worker
ended "$c" "$w3" "$w4"
[[ "${codes[*]}" == "0 0 0" ]]
same_as reference cut
row "coordinator's links down" "stopped (no trainer slot remains), exit 1; resumed: completed, identical" \
  "coordinator: ${stopped_after} s to stop" "both workers exit 1 within ${workers_after} s"
fi

if want 4; then
# 4. A slow link: worker 1 reaches the coordinator through a relay that delays every chunk by
# 20 ms and carries 2 MB/s. Only wall time grows.
in_worker 1 python3 "$here/relay.py" 5000 10.77.1.1 "$port" 0.02 2000000 > "$work/relay.log" 2>&1 &
pids+=($!)
disown $!  # killed at the end, without a job-control line
wait_line "$work/relay.log" "relay ready" 10 > /dev/null
start_coordinator slow --workers 2 --no-local
c=$coordinator
start_worker 1 w1 127.0.0.1:5000 && w1=$worker
start_worker 2 w2 && w2=$worker
from=$SECONDS
ended "$c" "$w1" "$w2"
[[ "${codes[*]}" == "0 0 0" ]]
same_as reference slow
row "slow link (20 ms a chunk, 2 MB/s)" "completed, identical" "-" "$((SECONDS - from)) s of wall time"
fi

if want 5; then
# 5. Edges kept by workers, under a partition: the worker that keeps edges is part of the run's
# state, so the run stops with the reason; drift resume with new workers finishes it identical.
start_coordinator edges --workers 2 --no-local --edges-on-workers "${edges[@]}"
c=$coordinator
start_worker 1 w1 && w1=$worker
start_worker 2 w2 && w2=$worker
wait_line "$work/edges.log" "round 2/10" > /dev/null
link_down 1
from=$SECONDS
ended_within 60 "$c"
c_code=${codes[0]}
stopped_after=$((SECONDS - from))
link_up 1
ended "$w1" "$w2"
[[ $c_code -eq 1 ]]
[[ $(status_of "$work/edges") == stopped ]]
grep -q "the host of edges" "$work/edges/summary.json"
resume_coordinator edges --workers 2 --no-local --edges-on-workers
c=$coordinator
start_worker 1 w3 && w3=$worker
start_worker 2 w4 && w4=$worker
ended "$c" "$w3" "$w4"
[[ "${codes[*]}" == "0 0 0" ]]
same_as reference-edges edges
row "--edges-on-workers, partition" "stopped (lost the host of edges), exit 1; resumed: completed, identical" \
  "coordinator: ${stopped_after} s to stop" "-"
fi

if want 6; then
# 6. Edges kept by workers, the coordinator's links down: the same stop, and the same resume.
start_coordinator edges-cut --workers 2 --no-local --edges-on-workers "${edges[@]}"
c=$coordinator
start_worker 1 w1 && w1=$worker
start_worker 2 w2 && w2=$worker
wait_line "$work/edges-cut.log" "round 2/10" > /dev/null
link_down 1
link_down 2
from=$SECONDS
ended_within 60 "$c"
c_code=${codes[0]}
stopped_after=$((SECONDS - from))
ended "$w1" "$w2"
[[ "${codes[*]}" == "1 1" ]]
workers_after=$((SECONDS - from))
link_up 1
link_up 2
[[ $c_code -eq 1 ]]
[[ $(status_of "$work/edges-cut") == stopped ]]
resume_coordinator edges-cut --workers 2 --no-local --edges-on-workers
c=$coordinator
start_worker 1 w3 && w3=$worker
start_worker 2 w4 && w4=$worker
ended "$c" "$w3" "$w4"
[[ "${codes[*]}" == "0 0 0" ]]
same_as reference-edges edges-cut
row "--edges-on-workers, coordinator's links down" "stopped, exit 1; resumed: completed, identical" \
  "coordinator: ${stopped_after} s to stop" "both workers exit 1 within ${workers_after} s"
fi

echo "Every run over TLS, heartbeat ${heartbeat} s, --coordinator-timeout ${silence} s."
echo "| case | outcome | time to notice | workers |"
echo "|---|---|---|---|"
printf '%s\n' "${table[@]}"
echo "check-network: ${#table[@]} cases passed in $((SECONDS - started)) s"
