#!/usr/bin/env bash
# A coordinator with two loopback workers, stopped at a checkpoint after aggregation 2, is
# restarted with drift resume: it accepts workers again (new processes) and finishes with
# metrics.jsonl and clients.csv byte-identical to the single-process run.
source "$(dirname "$0")/cluster_lib.sh"
reference

start_coordinator cut --workers 2 --no-local --stop-after 2
coordinator=$coordinator_pid
start_worker w1
w1=$worker_pid
start_worker w2
w2=$worker_pid
expect_exit "$coordinator" 130 "$work/cut.log"
expect_exit "$w1" 0 "$work/w1.log"
expect_exit "$w2" 0 "$work/w2.log"
grep -q '"status": "interrupted"' "$work/cut/summary.json"

resume_coordinator cut --workers 2 --no-local
coordinator=$coordinator_pid
start_worker w3
w3=$worker_pid
start_worker w4
w4=$worker_pid
expect_exit "$coordinator" 0 "$work/cut-resume.log"
expect_exit "$w3" 0 "$work/w3.log"
expect_exit "$w4" 0 "$work/w4.log"
grep -q "resuming .* after aggregation 2" "$work/cut-resume.log"
grep -q "worker 'w3' joined" "$work/cut-resume.log"
cmp "$work/reference/metrics.jsonl" "$work/cut/metrics.jsonl"
cmp "$work/reference/clients.csv" "$work/cut/clients.csv"
grep -q '"status": "completed"' "$work/cut/summary.json"
echo "cli cluster resume: 1 passed, 0 failed"
