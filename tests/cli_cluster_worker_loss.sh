#!/usr/bin/env bash
# A worker killed mid-round: the run finishes on the other one, its running client is a
# dropout in clients.csv, and every selected client has exactly one outcome (nothing counted
# twice, nothing lost silently). A worker that joins mid-run gets jobs. When the last worker
# dies, the run stops with a clear message and a complete run directory. A worker whose
# coordinator dies exits with code 1 and says why.
source "$(dirname "$0")/cluster_lib.sh"

start_coordinator loss --workers 2 --no-local
coordinator=$coordinator_pid
start_worker steady
steady=$worker_pid
start_worker fragile --crash-after-jobs 2
fragile=$worker_pid
expect_exit "$coordinator" 0 "$work/loss.log"
expect_exit "$steady" 0 "$work/steady.log"
wait "$fragile" || true
run="$work/loss"
grep -q "worker 'fragile' lost" "$work/loss.log"
grep -q '"status": "completed"' "$run/summary.json"
# The run completed, and says what it lost on the way.
grep -q "\"workers_lost\": \[" "$run/summary.json"
grep -q "\"worker 'fragile' lost (.*); 1 running job(s) lost\"" "$run/summary.json"
[[ $(wc -l < "$run/metrics.jsonl") -eq 3 ]]
lost=$(grep -c ",dropped,.*worker 'fragile' lost" "$run/clients.csv" || true)
[[ $lost -eq 1 ]] || { echo "expected 1 lost client, found $lost"; cat "$run/clients.csv"; exit 1; }
python3 - "$run" <<'PY'
import csv, json, sys, collections
run = sys.argv[1]
rows = list(csv.DictReader(open(f"{run}/clients.csv")))
for line in open(f"{run}/metrics.jsonl"):
    m = json.loads(line)
    r = str(m["round"])
    selected = [x["client"] for x in rows if x["round"] == r and x["event"] == "selected"]
    outcomes = collections.Counter(x["client"] for x in rows
                                   if x["round"] == r and x["event"] in ("finished", "late", "dropped", "failed"))
    assert sorted(outcomes) == sorted(selected) and all(n == 1 for n in outcomes.values()), (r, selected, outcomes)
    finished = sum(1 for x in rows if x["round"] == r and x["event"] == "finished")
    assert m["num_updates"] == finished, (r, m["num_updates"], finished)
print("every selected client has exactly one outcome")
PY

# A worker that dies is replaced by one that joins mid-run; the newcomer gets jobs from then on.
start_coordinator rejoin --workers 2 --no-local --set federation.rounds=40
coordinator=$coordinator_pid
start_worker keeper
keeper=$worker_pid
start_worker dying --crash-after-jobs 2
wait_for_line "$work/rejoin.log" "worker 'dying' lost"
start_worker newcomer
newcomer=$worker_pid
expect_exit "$coordinator" 0 "$work/rejoin.log"
expect_exit "$newcomer" 0 "$work/newcomer.log"
expect_exit "$keeper" 0 "$work/keeper.log"
grep -q "worker 'newcomer' joined" "$work/rejoin.log"
trained=$(sed -n 's/.*this worker ran \([0-9]*\) training.*/\1/p' "$work/newcomer.log")
[[ ${trained:-0} -ge 1 ]] || { echo "the newcomer trained ${trained:-0} jobs"; cat "$work/newcomer.log"; exit 1; }
[[ $(grep -c ",dropped,.*worker 'dying' lost" "$work/rejoin/clients.csv") -eq 1 ]]

start_coordinator last --workers 1 --no-local
coordinator=$coordinator_pid
start_worker only --crash-after-jobs 2
expect_exit "$coordinator" 1 "$work/last.log"
grep -q "no trainer slot remains: worker 'only' lost" "$work/last.log"
grep -q '"status": "stopped"' "$work/last/summary.json"
grep -q '"reason": "no trainer slot remains' "$work/last/summary.json"
for f in scenario.toml partition.json metrics.jsonl clients.csv participation.csv; do
  [[ -e "$work/last/$f" ]] || { echo "missing $f"; exit 1; }
done
# The only worker dies before the run starts; the two that join next run it to the end.
start_coordinator early --workers 2 --no-local
coordinator=$coordinator_pid
start_worker first
first=$worker_pid
wait_for_line "$work/early.log" "worker 'first' joined"
pkill -9 -P "$first"
wait_for_line "$work/early.log" "worker 'first' lost"
start_worker second
second=$worker_pid
start_worker third
expect_exit "$coordinator" 0 "$work/early.log"
expect_exit "$second" 0 "$work/second.log"
expect_exit "$worker_pid" 0 "$work/third.log"
grep -q '"status": "completed"' "$work/early/summary.json"

# The coordinator dies: its worker notices, says so and exits with code 1.
start_coordinator doomed --workers 1 --no-local --set federation.rounds=500
coordinator=$coordinator_pid
start_worker orphan
wait_for_line "$work/doomed.log" "round 2/"
pkill -9 -P "$coordinator"  # the drift under its `timeout` wrapper
expect_exit "$worker_pid" 1 "$work/orphan.log"
grep -q "lost the coordinator (connection lost) before the run ended" "$work/orphan.log"
echo "cli cluster worker loss: 5 passed, 0 failed"
