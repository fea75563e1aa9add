# Shared by the cli_cluster_* tests: a tiny scenario, a coordinator in the background on
# 127.0.0.1 (any free port) and workers. Everything stays on loopback.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
pids=()
cleanup() {
  local code=$?
  for p in "${pids[@]}"; do  # each pid is a `timeout` wrapper: its drift child goes first
    pkill -9 -P "$p" 2>/dev/null || true
    kill -9 "$p" 2>/dev/null || true
  done
  if [[ $code -ne 0 ]]; then  # every process's log, to see which side went wrong
    for f in "$work"/*.log; do
      [[ -e "$f" ]] && { echo "==> $f"; tail -n 40 "$f"; }
    done
  fi
  [[ -n "${KEEP_WORK:-}" ]] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
export DRIFT_JOIN_TOKEN=0123456789abcdef0123456789abcdef

cat > "$work/tiny.toml" <<TOML
seed = 11
[data]
max_train_samples = 1200
max_test_samples = 400
[federation]
clients = 6
rounds = 3
[sampler]
clients_per_round = 4
[evaluation]
chunk_size = 100
[output]
runs_dir = "$work/runs"
TOML

# The single-process run every deployment must reproduce.
reference() {
  "$drift" run "$work/tiny.toml" --out "$work/reference" --slots 1 --no-progress 2> "$work/reference.log"
}

# start_coordinator NAME ARGS...: runs `drift run` with --listen 127.0.0.1:0 in the background;
# sets coordinator_pid and port (read from its log, $work/NAME.log).
start_coordinator() {
  local name=$1
  shift
  launch_coordinator "$name" "$work/$name.log" run "$work/tiny.toml" --out "$work/$name" "$@"
}

# resume_coordinator NAME ARGS...: `drift resume` of the run directory NAME, listening the
# same way; its log is $work/NAME-resume.log.
resume_coordinator() {
  local name=$1
  shift
  launch_coordinator "$name" "$work/$name-resume.log" resume "$work/$name" "$@"
}

launch_coordinator() {
  local name=$1 log=$2
  shift 2
  # The log exists before the first read below: the background job's redirection may create it
  # later, and a sed that cannot read it fails the pipeline, which ends the script (set -e,
  # pipefail) before the coordinator has started.
  : > "$log"
  timeout 300 "$drift" "$@" --no-progress --listen 127.0.0.1:0 --join-timeout 120 2> "$log" &
  coordinator_pid=$!
  pids+=("$coordinator_pid")
  port=""
  for _ in $(seq 1 600); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -n 1)
    [[ -n "$port" ]] && return 0
    kill -0 "$coordinator_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "coordinator $name did not start listening:"
  cat "$log"
  exit 1
}

# start_worker NAME ARGS...: a worker in the background; sets worker_pid.
start_worker() {
  local name=$1
  shift
  timeout 300 "$drift" worker --connect "127.0.0.1:$port" --name "$name" --devices cpu:1 "$@" 2> "$work/$name.log" &
  worker_pid=$!
  pids+=("$worker_pid")
}

# wait_for_line LOG PATTERN: waits (up to 60 s) until LOG has a line matching PATTERN.
wait_for_line() {
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no line matching '$2' in $1 within 60 s"
  exit 1
}

# expect_exit PID CODE LOG: waits for PID and checks its exit code.
expect_exit() {
  local code=0
  wait "$1" || code=$?
  if [[ $code -ne $2 ]]; then
    echo "exit code $code, expected $2; log $3:"
    cat "$3"
    exit 1
  fi
}
