#!/usr/bin/env bash
# Participation processes and the participation-robust algorithms from the CLI
# (docs/scenarios.md#participation-processes, docs/algorithms.md#participation): under FedAU's
# label-tied Bernoulli participation, every new algorithm is byte-identical started on 2 slots,
# interrupted after round 2 and resumed on 1, and run straight through on 1; population.csv
# records each client's p_i; the oracle without probabilities and a table above its memory
# budget are refused before the run, with the reason; an asynchronous run steps the process
# with virtual time, the same on 1 and 2 slots.
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

expect_code 2 "$drift" validate "$work/p.toml" --set algorithm.name=known-probability --set availability.model=always
says "client 0's availability model defines none"
expect_code 2 "$drift" run "$work/p.toml" --set algorithm.name=mifa --set algorithm.memory_budget_mb=0.01 --out "$work/big"
says "above algorithm.memory_budget_mb = 0.01;"
[[ ! -e "$work/big" ]] || { echo "a refused run left its directory"; exit 1; }
expect_code 2 "$drift" validate "$work/p.toml" --set algorithm.name=fedvarp --set simulation.mode=fedbuff
says "runs in sync rounds only"
expect_code 2 "$drift" validate "$work/p.toml" --set availability.model=cyclic --set availability.modulation=sine
says "availability.modulation"

# Asynchronous: the process steps every availability.step virtual seconds.
for slots in 1 2; do
  run --set simulation.mode=fedbuff --set availability.model=round_markov --set availability.step=5 \
    --set algorithm.name=fedavg-participants --slots $slots --out "$work/async-$slots" 2> /dev/null
done
same "$work/async-1" "$work/async-2"
echo "participation processes and algorithms: ok"
