#!/usr/bin/env bash
# A worker that stops answering (SIGSTOP: the process is alive, its connection open) no longer
# stalls the run: after a missed heartbeat the coordinator runs its jobs on the other worker and
# lets it go. Results are byte-identical to the single-process run: a job's result does not
# depend on where it ran.
source "$(dirname "$0")/cluster_lib.sh"
reference

start_coordinator stalled --workers 2 --no-local --heartbeat-timeout 2 --set federation.rounds=3
coordinator=$coordinator_pid
start_worker awake
awake=$worker_pid
start_worker sleepy
sleepy=$worker_pid
wait_for_line "$work/stalled.log" "worker 'sleepy' joined"
wait_for_line "$work/stalled.log" "worker 'awake' joined"
pkill -STOP -P "$sleepy"
started=$SECONDS
expect_exit "$coordinator" 0 "$work/stalled.log"
pkill -CONT -P "$sleepy" || true
expect_exit "$awake" 0 "$work/awake.log"
grep -q "worker 'sleepy' stopped answering (no answer to a heartbeat within 2 s)" "$work/stalled.log"
grep -q '"status": "completed"' "$work/stalled/summary.json"
cmp "$work/reference/metrics.jsonl" "$work/stalled/metrics.jsonl"
cmp "$work/reference/clients.csv" "$work/stalled/clients.csv"
(( SECONDS - started < 120 )) || { echo "the run took $((SECONDS - started)) s after the stop"; exit 1; }
# The woken worker was told to go: it ends without hanging.
wait "$sleepy" || true
echo "cli cluster stalled: 1 passed, 0 failed"
