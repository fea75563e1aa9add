#!/usr/bin/env bash
# Workers with a wrong token, or that expect another scenario, are refused with a clear
# message on both sides; the run goes on unaffected with the worker that is welcome.
source "$(dirname "$0")/cluster_lib.sh"
reference

start_coordinator run --workers 1 --no-local
coordinator=$coordinator_pid

DRIFT_JOIN_TOKEN=ffffffffffffffffffffffffffffffff start_worker intruder
expect_exit "$worker_pid" 2 "$work/intruder.log"
grep -q "refused by the coordinator: wrong join token" "$work/intruder.log"
grep -q "refused worker 'intruder'.*wrong join token" "$work/run.log"

start_worker stranger --expect-scenario 0000000000000000
expect_exit "$worker_pid" 2 "$work/stranger.log"
grep -q "scenario hash mismatch: the worker expects 0000000000000000" "$work/stranger.log"
grep -q "refused worker 'stranger'" "$work/run.log"

# The token is never taken from the command line.
if "$drift" worker --connect "127.0.0.1:$port" --token x 2> "$work/flag.log"; then exit 1; fi

hash=$(sed -n 's/.*scenario hash \([0-9a-f]*\).*/\1/p' "$work/run.log" | head -n 1)
start_worker friend --expect-scenario "$hash"
expect_exit "$coordinator" 0 "$work/run.log"
expect_exit "$worker_pid" 0 "$work/friend.log"
cmp "$work/reference/metrics.jsonl" "$work/run/metrics.jsonl"
# A coordinator that listens insists on a token, and a short one is refused.
if DRIFT_JOIN_TOKEN= "$drift" run "$work/tiny.toml" --listen 127.0.0.1:0 2> "$work/notoken.log"; then exit 1; fi
grep -q "a join token needs at least 16" "$work/notoken.log"
echo "cli cluster refused: 3 passed, 0 failed"
