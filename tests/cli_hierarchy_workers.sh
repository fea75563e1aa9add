#!/usr/bin/env bash
# [hierarchy] edges kept in worker processes (drift run --edges-on-workers,
# docs/hierarchy.md#where-edges-run): a run whose edges' aggregators live in one loopback worker,
# or spread over two, writes what the single-process run writes, with a sync and a buffered
# cloud; stopped with its edges in a worker and resumed with them here (and the other way
# round) it still does; a worker that keeps edges and dies stops the run with the reason; the
# flag is refused where it cannot work.
source "$(dirname "$0")/cluster_lib.sh"
source "$(dirname "$0")/cli_lib.sh"
source "$(dirname "$0")/hierarchy_lib.sh"
run() { "$drift" run "$work/h.toml" --no-progress --no-plots "$@"; }
run --slots 1 --out "$work/one" 2> /dev/null
run --slots 1 --out "$work/buffered" --set hierarchy.cloud=fedbuff 2> /dev/null

# edges_on CODE NAME WORKERS COMMAND ARGS...: `drift COMMAND` (run, or resume of $work/NAME) with
# the edges kept by WORKERS loopback workers; it must exit with CODE.
edges_on() {
  local code=$1 name=$2 workers=$3 command=$4
  shift 4
  if [[ $command == run ]]; then
    launch_coordinator "$name" "$work/$name.log" run "$work/h.toml" --out "$work/$name" --workers "$workers" \
      --edges-on-workers --no-plots "$@"
  else
    resume_coordinator "$name" --workers "$workers" --edges-on-workers --no-plots "$@"
  fi
  local coordinator=$coordinator_pid started=()
  for w in $(seq 1 "$workers"); do
    start_worker "$name-$command-w$w"
    started+=("$worker_pid")
  done
  expect_exit "$coordinator" "$code" "$work/$name.log"
  for p in "${started[@]}"; do expect_exit "$p" 0 "$work/$name-$command-w1.log"; done
}

edges_on 0 one_worker 1 run --no-local
same "$work/one" "$work/one_worker"
grep -q "3 edge(s) kept by 1 worker(s)" "$work/one_worker.log"
grep -q "keeping 3 of the 3 edges for the coordinator: 0, 1, 2" "$work/one_worker-run-w1.log"
edges_on 0 two_workers 2 run
same "$work/one" "$work/two_workers"
grep -q "3 edge(s) kept by 2 worker(s)" "$work/two_workers.log"
grep -q "keeping 1 of the 3 edges for the coordinator: 1$" "$work"/two_workers-run-w*.log
edges_on 0 buffered_worker 1 run --set hierarchy.cloud=fedbuff
same "$work/buffered" "$work/buffered_worker"

# Checkpoints hold the edges' state wherever the edges are: stopped after aggregation 2 with the
# edges in workers and resumed in one process, stopped in one process and resumed with them in
# workers, and both with the buffered cloud (a running loop's model is in the checkpoint).
edges_on 130 stopped 2 run --stop-after 2
"$drift" resume "$work/stopped" --no-progress --no-plots --slots 1 2> /dev/null
same "$work/one" "$work/stopped"
expect_code 130 run --slots 2 --out "$work/here" --stop-after 2
edges_on 0 here 1 resume
same "$work/one" "$work/here"
edges_on 130 buffered_stopped 1 run --set hierarchy.cloud=fedbuff --stop-after 2
edges_on 0 buffered_stopped 2 resume
same "$work/buffered" "$work/buffered_stopped"

# A worker that keeps edges and dies stops the run with the reason (its clients' jobs alone
# could run elsewhere; its edges' models and tables cannot): summary.json says so.
launch_coordinator lost "$work/lost.log" run "$work/h.toml" --out "$work/lost" --workers 1 --edges-on-workers \
  --no-plots --slots 1
coordinator=$coordinator_pid
start_worker fragile --crash-after-jobs 3
expect_exit "$coordinator" 1 "$work/lost.log"
wait "$worker_pid" || true
grep -q "lost the host of edges 0, 1, 2 (connection lost); the run stops" "$work/lost.log"
grep -q '"status": "stopped"' "$work/lost/summary.json"

# Refused where it cannot work, before anything runs.
expect_code 2 run --out "$work/x" --edges-on-workers
says "need --listen HOST:PORT"
expect_code 2 run --out "$work/x" --edges-on-workers --listen 127.0.0.1:0
says "--edges-on-workers needs --workers N"
expect_code 2 run --out "$work/x" --edges-on-workers --listen 127.0.0.1:0 --workers 1 --set hierarchy.edges=0
says "a flat federation has no edges to keep"
expect_code 2 run --out "$work/x" --edges-on-workers --listen 127.0.0.1:0 --workers 1 --set algorithm.memory_budget_mb=0.001
says "a worker keeps edge 0's server half in memory, having no run directory, but mifa keeps"
[[ ! -e "$work/x" ]]

echo "cli hierarchy workers: passed"
