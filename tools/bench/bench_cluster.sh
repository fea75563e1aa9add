#!/usr/bin/env bash
# Client updates per second on 1 local slot, 2 local slots, and 2 worker processes with one
# slot each on loopback (coordinator with --no-local), and 2 slots each in a worker process the
# run starts itself (--slot-processes), as ratios against the 1-slot run measured here. Also the message round-trip cost per update: the extra training-phase
# seconds of the 2-worker run over the 2-slot run, per update and slot, which is what
# encoding, BASP over TCP and decoding add to a job. Training-phase time comes from
# timings.jsonl, so process start-up and the data rebuild on the workers are left out.
# Last, the same federation split over two edges ([hierarchy]) on the two workers, with the edges'
# aggregators in the coordinator and then kept by the workers (--edges-on-workers): the ratio is
# what keeping the edges in the workers costs or saves.
set -euo pipefail
drift="${1:-build/tools/drift}"
rounds="${ROUNDS:-20}"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
export DRIFT_JOIN_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')

cat > "$work/bench.toml" <<TOML
seed = 1
[data]
max_train_samples = 12000
max_test_samples = 2000
[federation]
clients = 40
rounds = $rounds
[sampler]
clients_per_round = 10
[output]
runs_dir = "$work/runs"
log_eligible = false
TOML

# updates trained, training seconds
measure() {
  python3 - "$1" <<'PY'
import csv, json, sys
run = sys.argv[1]
jobs = sum(1 for r in csv.DictReader(open(f"{run}/clients.csv")) if r["event"] in ("finished", "late"))
train = sum(json.loads(l)["train_seconds"] for l in open(f"{run}/timings.jsonl"))
print(jobs, train)
PY
}

"$drift" run "$work/bench.toml" --out "$work/one" --slots 1 --no-progress 2> /dev/null
"$drift" run "$work/bench.toml" --out "$work/two" --slots 2 --no-progress 2> /dev/null
# on_workers NAME ARGS...: the scenario on two loopback workers of one slot each.
on_workers() {
  local name=$1
  shift
  "$drift" run "$work/bench.toml" --out "$work/$name" --no-progress --listen 127.0.0.1:0 --workers 2 --no-local "$@" \
    2> "$work/$name.log" &
  local coordinator=$!
  pids+=("$coordinator")
  local port=""
  for _ in $(seq 1 600); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/$name.log" | head -n 1)
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  for w in 1 2; do
    "$drift" worker --connect "127.0.0.1:$port" --devices cpu:1 --name "bench$w" 2> /dev/null &
    pids+=("$!")
  done
  wait "$coordinator"
}
on_workers workers
cmp "$work/one/metrics.jsonl" "$work/workers/metrics.jsonl"  # the same numbers, however deployed
"$drift" run "$work/bench.toml" --out "$work/processes" --slots 2 --slot-processes --no-progress 2> /dev/null
cmp "$work/one/metrics.jsonl" "$work/processes/metrics.jsonl"

read -r jobs1 t1 < <(measure "$work/one")
read -r jobs2 t2 < <(measure "$work/two")
read -r jobsw tw < <(measure "$work/workers")
read -r jobsp tp < <(measure "$work/processes")
python3 - "$jobs1" "$t1" "$jobs2" "$t2" "$jobsw" "$tw" "$jobsp" "$tp" "$(nproc)" <<'PY'
import sys
j1, t1, j2, t2, jw, tw, jp, tp, cores = (float(x) for x in sys.argv[1:])
base = j1 / t1
print(f"cluster bench ({int(j1)} client updates per run, {int(cores)} cores; metrics identical in all four)")
print(f"{'setup':<28}{'updates/s':>10}{'ratio':>8}")
for name, j, t in (("1 local slot", j1, t1), ("2 local slots", j2, t2), ("2 workers x 1 slot (TCP)", jw, tw),
                   ("2 slots, --slot-processes", jp, tp)):
    print(f"{name:<28}{j / t:>10.2f}{(j / t) / base:>8.2f}")
rtt = (tw - t2) * 2 / jw
print(f"round-trip cost per update: {1000 * rtt:.1f} ms ({rtt / (t1 / j1):.3f} of a 1-slot update)")
PY

hierarchy=(--set hierarchy.edges=2 --set hierarchy.assign=uniform)
on_workers edges_here "${hierarchy[@]}"
on_workers edges_there "${hierarchy[@]}" --edges-on-workers
cmp "$work/edges_here/metrics.jsonl" "$work/edges_there/metrics.jsonl"
read -r jobsh th < <(measure "$work/edges_here")
read -r jobst tt < <(measure "$work/edges_there")
python3 - "$jobsh" "$th" "$jobst" "$tt" <<'PY'
import sys
jh, th, jt, tt = (float(x) for x in sys.argv[1:])
print(f"two edges on 2 workers x 1 slot: {jh / th:.2f} updates/s with the edges in the coordinator, "
      f"{jt / tt:.2f} kept by the workers (ratio {(jt / tt) / (jh / th):.2f}; metrics identical)")
PY
