#!/usr/bin/env bash
# A coordinator and two worker processes on 127.0.0.1 give byte-identical metrics.jsonl and
# clients.csv to the single-process run of the same scenario and seed; so does a coordinator
# that trains on a local slot beside one worker.
source "$(dirname "$0")/cluster_lib.sh"
reference

start_coordinator two --workers 2 --no-local
coordinator=$coordinator_pid
start_worker w1
w1=$worker_pid
start_worker w2
w2=$worker_pid
expect_exit "$coordinator" 0 "$work/two.log"
expect_exit "$w1" 0 "$work/w1.log"
expect_exit "$w2" 0 "$work/w2.log"
cmp "$work/reference/metrics.jsonl" "$work/two/metrics.jsonl"
cmp "$work/reference/clients.csv" "$work/two/clients.csv"
grep -q "worker 'w1' joined" "$work/two.log"
grep -q "worker 'w2' joined" "$work/two.log"
grep -q "the coordinator finished the run" "$work/w1.log"
grep -q '"status": "completed"' "$work/two/summary.json"

start_coordinator mixed --workers 1
coordinator=$coordinator_pid
start_worker w3
expect_exit "$coordinator" 0 "$work/mixed.log"
expect_exit "$worker_pid" 0 "$work/w3.log"
cmp "$work/reference/metrics.jsonl" "$work/mixed/metrics.jsonl"
echo "cli cluster identical: 2 passed, 0 failed"
