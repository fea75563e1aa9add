#!/usr/bin/env bash
# Secure aggregation from the CLI (docs/privacy.md#secure-aggregation): a SecAgg run is
# byte-identical on 1 and 2 slots and across an interrupt and resume; simulated masks cancel bit
# for bit; dropouts in the protocol abort rounds, which leave the model as it was; FedAvg under
# SecAgg stays within the rounding of plain FedAvg; a modulus too small is counted as overflow;
# DP composes (noise on the decoded sum); the combinations it cannot cover are refused.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_lib.sh"

cat > "$work/sa.toml" <<TOML
seed = 4
[data]
max_train_samples = 1200
max_test_samples = 300
[federation]
clients = 12
rounds = 4
[sampler]
clients_per_round = 8
[evaluation]
chunk_size = 100
[secure_aggregation]
protocol = "secagg"
TOML
run() { "$drift" run "$work/sa.toml" --no-progress --no-plots "$@"; }

"$drift" validate "$work/sa.toml" | grep -q "secure aggregation: secagg over each round's accepted clients, threshold floor(1/2 s) + 1"
run --slots 1 --out "$work/one" 2> /dev/null
run --slots 2 --out "$work/two" 2> /dev/null
same "$work/one" "$work/two"
expect_code 130 run --slots 2 --out "$work/resumed" --stop-after 2
"$drift" resume "$work/resumed" --no-progress --no-plots --slots 1 2> /dev/null
same "$work/one" "$work/resumed"
run --slots 1 --out "$work/masks" --set secure_aggregation.simulate_masks=true 2> /dev/null
same "$work/one" "$work/masks"
run --slots 2 --out "$work/plus" --set secure_aggregation.protocol=secagg_plus --set secure_aggregation.shares=0.5 \
  --set secure_aggregation.simulate_masks=true 2> /dev/null
run --slots 2 --out "$work/plain" --set secure_aggregation.protocol=none 2> /dev/null
run --slots 2 --out "$work/drops" --set secure_aggregation.dropout=0.12 --set federation.rounds=6 2> /dev/null
run --slots 2 --out "$work/tight" --set secure_aggregation.modulus_bits=24 --set secure_aggregation.quantization_bits=22 2> /dev/null
run --slots 2 --out "$work/flsim" --set secure_aggregation.encoding=flsim --set secure_aggregation.bits=12 \
  --set secure_aggregation.scale=1e5 2> /dev/null
run --slots 2 --out "$work/dp" --set privacy.mode=central --set privacy.clip=0.5 --set privacy.noise_multiplier=0.1 \
  --set privacy.delta=1e-3 2> /dev/null
run --slots 2 --out "$work/distributed" --set privacy.mode=distributed --set privacy.clip=0.5 \
  --set privacy.noise_multiplier=0.1 --set privacy.delta=1e-3 2> /dev/null

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def lines(name):
    return [json.loads(l) for l in open(f"{work}/{name}/metrics.jsonl")]
def summary(name):
    return json.load(open(f"{work}/{name}/summary.json"))
one, plain = lines("one"), lines("plain")
for r in one:
    sa = r["secure_aggregation"]
    assert sa["survivors"] == [8, 8, 8, 8, 8] and sa["threshold"] == 5 and sa["shares"] == 8, sa
    assert not sa["aborted"] and sa["overflow_count"] == 0 and sa["clipped_coords"] == 0, sa
    assert sa["seconds"] > sa["extra_seconds"] > 0 and sa["bytes_up"] > 0 and sa["bytes_down"] > 0, sa
    assert 0 < sa["quantization_mse"] < 1e-10, sa
    assert r["num_updates"] == 8
# The protocol runs after training: each round ends later than without it.
assert all(a["time_end"] > b["time_end"] for a, b in zip(one, plain))
gap = max(abs(a["test_accuracy"] - b["test_accuracy"]) for a, b in zip(one, plain))
assert gap <= 0.02, gap
assert "secure_aggregation" not in plain[0]
s = summary("one")["secure_aggregation"]
assert s["rounds"] == 4 and s["aborted"] == 0 and s["overflow_count"] == 0, s
plus = lines("plus")
assert all(r["secure_aggregation"]["shares"] == 5 and r["secure_aggregation"]["threshold"] == 3 for r in plus), plus[0]
# Dropouts inside the protocol: the aborted rounds release nothing and keep the model.
drops = lines("drops")
aborted = [r for r in drops if r["secure_aggregation"]["aborted"]]
done = [r for r in drops if not r["secure_aggregation"]["aborted"]]
assert aborted and done, [r["secure_aggregation"]["survivors"] for r in drops]
for r in aborted:
    sa = r["secure_aggregation"]
    assert r["num_updates"] == 0 and r["aggregated"] == [] and sa["abort_stage"] and "below the threshold 5" in sa["abort_reason"], r
    assert sa["survivors"][-1] < 5 and len(sa["survivors"]) <= 5
    before = [p for p in drops if p["round"] == r["round"] - 1]
    if before:
        assert r["test_accuracy"] == before[0]["test_accuracy"] and r["model_version"] == before[0]["model_version"], r
for r in done:
    assert r["num_updates"] == r["secure_aggregation"]["survivors"][2] >= 5, r
assert summary("drops")["secure_aggregation"]["aborted"] == len(aborted)
# 8 clients of up to 2^22 each overflow a 2^24 modulus; FLSim's 12 bits wrap too.
assert all(r["secure_aggregation"]["overflow_count"] > 0 for r in lines("tight"))
assert all(r["secure_aggregation"]["overflow_count"] > 0 for r in lines("flsim"))
# DP on the decoded sum: the noise on the mean is z C / D, D the cohort of 8.
for r in lines("dp"):
    assert r["privacy"]["noise_std"] == 0.1 * 0.5 / 8 and not r["secure_aggregation"]["aborted"], r
# Distributed noise: 8 shares of variance (z C)^2 / 5 on the sum.
for r in lines("distributed"):
    assert abs(r["privacy"]["noise_std"] - 0.1 * 0.5 * (8 / 5) ** 0.5 / 8) < 1e-15, r["privacy"]
assert summary("distributed")["privacy"]["epsilon"] == summary("dp")["privacy"]["epsilon"]
PY

expect_code 2 "$drift" validate "$work/sa.toml" --set privacy.mode=distributed --set secure_aggregation.protocol=none
says "private only inside a secure sum"
expect_code 2 "$drift" validate "$work/sa.toml" --set simulation.mode=fedbuff
says "updates arrive one at a time"
expect_code 2 "$drift" validate "$work/sa.toml" --set algorithm.name=scaffold
says "reads more of an update than them"
expect_code 2 "$drift" validate "$work/sa.toml" --set simulation.late_updates=stale
says "never took part in"
"$drift" validate "$work/sa.toml" --set secure_aggregation.modulus_bits=30 --set federation.clients=300 --set data.max_train_samples=60000 2>&1 |
  grep -q "a cohort of 256 or more clients wraps the sum"
echo "secure aggregation: ok"
