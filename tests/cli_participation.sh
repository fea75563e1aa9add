#!/usr/bin/env bash
# Participation processes and the participation-robust algorithms from the CLI
# (docs/scenarios.md#participation-processes, docs/algorithms.md#participation): under FedAU's
# label-tied Bernoulli participation, every new algorithm is byte-identical started on 2 slots,
# interrupted after round 2 and resumed on 1, and run straight through on 1; population.csv
# records each client's p_i; the oracle without probabilities and FedAWE's models above their
# memory budget are refused before the run, with the reason; MIFA's table above its budget is
# kept on disk, and resumes from it; an asynchronous run steps the process
# with virtual time, the same on 1 and 2 slots. The participation bias and rates say how each
# method weighed the clients.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_lib.sh"
cat > "$work/p.toml" <<TOML
seed = 5
[data]
max_train_samples = 1200
max_test_samples = 300
[federation]
clients = 8
rounds = 5
[sampler]
fraction = 1.0
[evaluation]
chunk_size = 100
[availability]
model = "bernoulli"
probability = "label_dirichlet"
p = 0.3
[simulation]
min_cohort = 2
[async]
concurrency = 3
buffer_size = 2
TOML
run() { "$drift" run "$work/p.toml" --no-progress --no-plots "$@"; }

for variant in "fedau" "known-probability" "mifa" "fedvarp:empty_round=apply_ybar" \
  "amplified-fedavg:period=2:factor=2" "fedavg-all:server_lr=3" "fedavg-participants" "fedawe"; do
  IFS=: read -r algorithm params <<< "$variant:"
  sets=(--set algorithm.name=$algorithm)
  for p in ${params//:/ }; do sets+=(--set algorithm.$p); done
  run "${sets[@]}" --slots 1 --out "$work/$algorithm-full" 2> /dev/null
  expect_code 130 run "${sets[@]}" --slots 2 --out "$work/$algorithm" --stop-after 2
  "$drift" resume "$work/$algorithm" --no-progress --no-plots --slots 1 2> /dev/null
  same "$work/$algorithm-full" "$work/$algorithm"
done

python3 - "$work" <<'PY'
import csv, json, sys
work = sys.argv[1]
rows = list(csv.DictReader(open(f"{work}/mifa-full/population.csv")))
p = [float(r["participation_probability"]) for r in rows]
assert len(p) == 8 and all(0.02 <= v <= 1 for v in p) and len(set(p)) > 1, p
def rounds(name):
    return [json.loads(line) for line in open(f"{work}/{name}-full/metrics.jsonl")]
mifa, fedau = rounds("mifa"), rounds("fedau")
# Every algorithm saw the same participation: the process draws from the seed alone.
assert [m["aggregated"] for m in mifa] == [m["aggregated"] for m in fedau]
assert len({len(m["aggregated"]) for m in mifa}) > 1, "participation should vary between rounds"
empty = [m for m in mifa if m["num_updates"] == 0]
assert empty, "the scenario should have a round that aggregates nothing"
# MIFA moves the model in a round nobody took part in; FedAU does not.
versions = [m["model_version"] for m in mifa]
assert versions == list(range(1, len(mifa) + 1)), versions
assert [m["model_version"] for m in fedau][-1] < len(fedau)
known = rounds("known-probability")
assert all("participation_probability" in m["algorithm"] for m in known if m["num_updates"] > 0)
assert all("table_clients" in m["algorithm"] for m in mifa)
PY

# Participation bias (docs/outputs.md#participation-diagnostics) over a window of one round:
# MIFA's step weighs every client it remembers 1/N, so against 1/N its bias is 1 - coverage;
# FedAvg over the participants weighs the round's |S| alike: 1 - |S|/N.
for algorithm in mifa fedavg-participants; do
  run --set algorithm.name=$algorithm --set simulation.drift_window=1 --out "$work/$algorithm-w1" 2> /dev/null
done
"$drift" plot "$work/mifa-full" > /dev/null
python3 - "$work" "$(command -v gnuplot || true)" <<'PY'
import json, os, sys
work, gnuplot = sys.argv[1], sys.argv[2]
def rounds(name):
    return [json.loads(line) for line in open(f"{work}/{name}/metrics.jsonl")]
mifa, plain = rounds("mifa-w1"), rounds("fedavg-participants-w1")
assert all(abs(m["participation_bias_uniform"] - (1 - m["coverage"])) < 1e-12 for m in mifa), mifa
for m in plain:
    if m["num_updates"] == 0:
        assert m["participation_bias"] is None and m["participation_bias_uniform"] is None, m
    else:
        assert abs(m["participation_bias_uniform"] - (1 - m["num_updates"] / 8)) < 1e-12, m
summary = json.load(open(f"{work}/fedavg-participants-w1/summary.json"))
assert summary["mean_participation_bias_uniform"] > 0, summary
# The per-client rates: participation.csv's counts over the aggregations, beside p_i.
rows = [l.split() for l in open(f"{work}/mifa-full/figures/participation_rates.dat") if not l.startswith("#")]
counts = [int(l.split(",")[2]) for l in list(open(f"{work}/mifa-full/participation.csv"))[1:]]
assert len(rows) == 8 and [float(r[3]) for r in rows] == counts, (rows, counts)
assert all(abs(float(r[4]) - c / 5) < 1e-12 for r, c in zip(rows, counts))
if gnuplot:
    for f in ("participation_rates", "participation_bias"):
        assert os.path.getsize(f"{work}/mifa-full/figures/{f}.png") > 0, f
PY

expect_code 2 "$drift" validate "$work/p.toml" --set algorithm.name=known-probability --set availability.model=always
says "client 0's availability model defines none"
expect_code 2 "$drift" run "$work/p.toml" --set algorithm.name=fedawe --set algorithm.memory_budget_mb=0.01 --out "$work/big"
says "above algorithm.memory_budget_mb = 0.01;"
[[ ! -e "$work/big" ]] || { echo "a refused run left its directory"; exit 1; }

# A table above its budget is kept on disk in the run directory: the run is the one that kept it
# in memory, and an interrupted run resumes byte-identically from its checkpoint although the
# table file went on changing after it.
disk=(--set algorithm.name=mifa --set algorithm.memory_budget_mb=0.01)
run "${disk[@]}" --slots 1 --out "$work/mifa-disk-full" 2> /dev/null
expect_code 130 run "${disk[@]}" --slots 2 --out "$work/mifa-disk" --stop-after 2
"$drift" resume "$work/mifa-disk" --no-progress --no-plots --slots 1 2> /dev/null
same "$work/mifa-disk-full" "$work/mifa-disk"
[[ -s "$work/mifa-disk/mifa_table.bin" ]] || { echo "no table file in the run directory"; exit 1; }
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def rounds(name):
    return [json.loads(line) for line in open(f"{work}/{name}/metrics.jsonl")]
memory, disk = rounds("mifa-full"), rounds("mifa-disk-full")
assert all(m["algorithm"]["table_on_disk"] == 1 for m in disk)
for m, d in zip(memory, disk):
    del d["algorithm"]["table_on_disk"]
assert memory == disk, "a table on disk should change nothing but where it is kept"
PY
expect_code 2 "$drift" validate "$work/p.toml" --set algorithm.name=fedvarp --set simulation.mode=fedbuff
says "runs in sync rounds only"
# Only Bernoulli modulates its probability: under cyclic the key does nothing, and validate says so.
expect_code 0 "$drift" validate "$work/p.toml" --set availability.model=cyclic --set availability.modulation=sine
grep -q 'availability.modulation does nothing: availability.model = "cyclic" does not take it (bernoulli does)' \
  "$work/last.out"

# A cyclic client with p_i = 0 is never active, so the oracle never divides by 0: the run ends
# (no one can take part) instead of hanging with a dead server (issue 48).
timeout -s KILL 120 "$drift" run "$work/p.toml" --set availability.model=cyclic --set availability.cycle=2 \
  --set availability.probability=fixed --set availability.p=0 --set algorithm.name=known-probability \
  --slots 1 --no-plots --no-progress --out "$work/never" 2> /dev/null
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['status'] == 'ended', s['status']" \
  "$work/never/summary.json"

# Asynchronous: the process steps every availability.step virtual seconds.
for slots in 1 2; do
  run --set simulation.mode=fedbuff --set availability.model=round_markov --set availability.step=5 \
    --set algorithm.name=fedavg-participants --slots $slots --out "$work/async-$slots" 2> /dev/null
done
same "$work/async-1" "$work/async-2"
echo "participation processes and algorithms: ok"
