#!/usr/bin/env bash
# drift run --slot-processes (docs/devices.md#slot-processes): each slot in a worker process the
# run starts on loopback and ends with it. The run writes what the single-process run writes,
# across a stop and a resume and with a hierarchy's edges kept by those processes; no worker
# outlives the run; a worker that dies before the run begins fails it with the reason; the flag
# is refused beside the flags it replaces.
source "$(dirname "$0")/cluster_lib.sh"
source "$(dirname "$0")/cli_lib.sh"
source "$(dirname "$0")/hierarchy_lib.sh"
unset DRIFT_JOIN_TOKEN  # the run makes its own
reference
run() { "$drift" run "$work/tiny.toml" --no-progress --no-plots --slot-processes "$@"; }

# workers_left DIR: the worker processes of run DIR still alive (their --connect names its port).
workers_left() {
  local port
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$1/log.txt" | tail -n 1)
  pgrep -f "worker --connect 127.0.0.1:$port " || true
}

run --slots 2 --out "$work/two" 2> /dev/null
same "$work/reference" "$work/two"
grep -q "devices: cpu x2, each slot in a worker process of its own" "$work/two/log.txt"
[[ $(grep -c "ready: 1 trainer slot(s) on cpu x1" "$work/two/workers.log") -eq 2 ]]
[[ -z "$(workers_left "$work/two")" ]] || { echo "a worker outlived its run"; exit 1; }

# Stopped after aggregation 2 (its workers let go), resumed with new ones: the same files.
expect_code 130 run --slots 2 --out "$work/resumed" --stop-after 2
[[ -z "$(workers_left "$work/resumed")" ]] || { echo "a worker outlived the stopped run"; exit 1; }
"$drift" resume "$work/resumed" --no-progress --no-plots --slots 3 --slot-processes 2> /dev/null
same "$work/reference" "$work/resumed"
[[ $(grep -c "ready: 1 trainer slot(s)" "$work/resumed/workers.log") -eq 5 ]]  # appended to

# A hierarchy whose edges the slot processes keep.
"$drift" run "$work/h.toml" --no-progress --no-plots --slots 1 --out "$work/h_one" 2> /dev/null
"$drift" run "$work/h.toml" --no-progress --no-plots --slots 2 --slot-processes --edges-on-workers \
  --out "$work/h_slots" 2> /dev/null
same "$work/h_one" "$work/h_slots"
grep -q "3 edge(s) kept by 2 worker(s)" "$work/h_slots/log.txt"

# A worker that dies before the run begins fails the run (exit 1) with the reason, at once
# rather than after --join-timeout.
timeout 120 "$drift" run "$work/tiny.toml" --no-progress --no-plots --slots 2 --slot-processes \
  --out "$work/lost" 2> "$work/lost.log" &
coordinator=$!
pids+=("$coordinator")
for _ in $(seq 1 3000); do
  victim=$(pgrep -f "worker --connect 127.0.0.1:[0-9]* --devices cpu:1 --name slot-2 " || true)
  [[ -n "$victim" ]] && break
  sleep 0.01
done
[[ -n "$victim" ]] || { echo "slot-2's worker never started"; exit 1; }
kill -9 "$victim"
expect_exit "$coordinator" 1 "$work/lost.log"
grep -q "the worker process of slot 2 (cpu:1) was killed by signal 9 before the run began; its output is in" \
  "$work/lost.log"
[[ -z "$(workers_left "$work/lost")" ]] || { echo "a worker outlived the failed run"; exit 1; }

# Refused before a run directory exists.
expect_code 2 run --out "$work/refused" --listen 127.0.0.1:0
says "cannot also --listen"
expect_code 2 run --out "$work/refused" --workers 1
says "drop --workers, --no-local, --tls and --token-file"
[[ ! -e "$work/refused" ]]
echo "slot processes: same files as one process, across resume and with edges; workers end with the run"
