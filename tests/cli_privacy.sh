#!/usr/bin/env bash
# Differential privacy from the CLI (docs/privacy.md): `drift epsilon` prints the accountant's
# published values and calibrates the noise; a DP-FedAvg run is byte-identical on 1 and 2 slots
# and across an interrupt and resume, noise included; FedBuff runs private on its buffer; the
# amplified figure is the guarantee under Poisson sampling and is labelled invalid when
# participation is tied to the labels; privacy.target_epsilon ends the run before the budget is
# passed; the combinations DP cannot cover are refused before anything runs.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_lib.sh"

# The accountant: Opacus's published 7.329 (its orders and series), dp_accounting's 7.3293, the
# calibration of Opacus's test, and fixed-size cohorts (replace-one: z / 2 to the accountant).
"$drift" epsilon --noise 1.5 --rate 0.04 --steps 2250 --delta 1e-5 --opacus > "$work/o1.txt"
grep -q "^epsilon = 7.32911 at delta = 1e-05 (order 3.9)" "$work/o1.txt" || { cat "$work/o1.txt"; exit 1; }
"$drift" epsilon --noise 1.5 --rate 0.04 --steps 2250 --delta 1e-5 | grep -q "^epsilon = 7.32933 "
"$drift" epsilon --epsilon 8 --rate 0.04 --steps 2250 --delta 1e-5 --opacus | grep -q "^noise multiplier 1.41602 "
"$drift" epsilon --noise 2 --rate 0.01 --steps 1000 --delta 1e-5 --sampling fixed | grep -q "^epsilon = 3.57611 "
"$drift" epsilon --noise 1 --steps 10 --delta 1e-5 --sampling none | grep -q "^epsilon = 19.0536 "
expect_code 2 "$drift" epsilon --noise 1 --rate 1.5 --steps 10 --delta 1e-5
says "rate must be in (0, 1]"
expect_code 2 "$drift" epsilon --rate 0.1 --steps 10 --delta 1e-5
says "give --noise"
# Hostile counts and targets: refused, not wrapped or clamped; a huge target answers at once
# (the bisection used to chase a tolerance finer than the doubles' spacing there, forever).
for steps in -1 0 18446744073709551616 1e3 2.5; do
  expect_code 2 "$drift" epsilon --noise 1 --rate 0.01 --steps $steps --delta 1e-5
  says "a whole number from 1 to 1000000000000, not $steps"
done
expect_code 2 "$drift" epsilon --epsilon inf --rate 0.01 --steps 10 --delta 1e-5
says "finite number"
for target in 1e20 1e300; do
  timeout 5 "$drift" epsilon --epsilon $target --rate 0.01 --steps 100 --delta 1e-5 > "$work/huge.txt"
  grep -q "^noise multiplier .* keeps epsilon within" "$work/huge.txt" || { cat "$work/huge.txt"; exit 1; }
done

cat > "$work/dp.toml" <<TOML
seed = 3
[data]
max_train_samples = 1200
max_test_samples = 300
[federation]
clients = 20
rounds = 4
[sampler]
name = "poisson"
fraction = 0.3
[evaluation]
chunk_size = 100
[privacy]
mode = "central"
clip = 0.5
noise_multiplier = 0.8
delta = 1e-3
[async]
concurrency = 4
buffer_size = 3
TOML
run() { "$drift" run "$work/dp.toml" --no-progress --no-plots "$@"; }
same_on_slots_and_resume run
run --slots 1 --out "$work/buff" --set simulation.mode=fedbuff --set sampler.name=uniform 2> /dev/null
run --slots 2 --out "$work/buff2" --set simulation.mode=fedbuff --set sampler.name=uniform 2> /dev/null
same "$work/buff" "$work/buff2"
# Adaptive clipping: the clip moves with the noisy count, the same on 2 slots and across resume.
run --slots 1 --out "$work/adaptive" --set privacy.clip_mode=adaptive --set privacy.count_noise=1 2> /dev/null
expect_code 130 run --slots 2 --out "$work/adaptive2" --set privacy.clip_mode=adaptive --set privacy.count_noise=1 --stop-after 2
"$drift" resume "$work/adaptive2" --no-progress --no-plots --slots 2 2> /dev/null
same "$work/adaptive" "$work/adaptive2"
run --slots 1 --out "$work/labels" --set availability.model=bernoulli --set availability.probability=label_dirichlet 2> /dev/null
run --slots 1 --out "$work/budget" --set privacy.target_epsilon=8 --set federation.rounds=50 2> /dev/null

python3 - "$work" "$drift" <<'PY'
import csv, json, subprocess, sys
work, drift = sys.argv[1], sys.argv[2]
def lines(name): return [json.loads(l) for l in open(f"{work}/{name}/metrics.jsonl")]
def summary(name): return json.load(open(f"{work}/{name}/summary.json"))
one = lines("one")
eps = [r["privacy"]["epsilon"] for r in one]
assert all(a < b for a, b in zip(eps, eps[1:])), eps            # every release spends more
for r in one:
    p = r["privacy"]
    assert p["epsilon"] == p["epsilon_amplified"] < p["epsilon_max_client"], p   # amplification counts
    assert p["noise_std"] == 0.8 * 0.5 / 6 and p["clipped"] <= r["num_updates"], p
sizes = {len(r["aggregated"]) for r in one}
assert len(sizes) > 1, sizes                                    # Poisson cohorts vary in size
# The final epsilon is what `drift epsilon` says of 4 releases at rate 0.3.
out = subprocess.run([drift, "epsilon", "--noise", "0.8", "--rate", "0.3", "--steps", "4", "--delta", "1e-3"],
                     capture_output=True, text=True, check=True).stdout
assert out.startswith("epsilon = %.6g " % eps[-1]), (out, eps[-1])
s = summary("one")["privacy"]
assert s["bound"] == "amplified" and s["amplification_valid"] and s["epsilon"] == eps[-1], s
rows = list(csv.DictReader(open(f"{work}/one/participation.csv")))
worst = max(float(r["epsilon"]) for r in rows)
assert abs(worst - s["per_client"]["max"]) < 1e-12 and worst == one[-1]["privacy"]["epsilon_max_client"]
assert s["per_client"]["never_aggregated"] == sum(1 for r in rows if r["aggregated"] == "0")
buff = lines("buff")
assert all(r["privacy"]["noise_std"] == 0.8 * 0.5 / 3 for r in buff)
# No sampling design under FedBuff: the naive figure (Poisson at K / N) is reported, not claimed.
b = summary("buff")["privacy"]
assert b["bound"] == "realised" and not b["amplification_valid"], b
out = subprocess.run([drift, "epsilon", "--noise", "0.8", "--rate", "0.15", "--steps", "4", "--delta", "1e-3"],
                     capture_output=True, text=True, check=True).stdout
assert out.startswith("epsilon = %.6g " % b["epsilon_amplified"]), (out, b)
clips = [r["privacy"]["clip"] for r in lines("adaptive")]
assert clips[0] == 0.5 and len(set(clips)) == len(clips), clips   # C_0 = privacy.clip, then it moves
assert all(r["privacy"]["clip"] == 0.5 for r in one)
labels = summary("labels")["privacy"]
assert labels["bound"] == "every_aggregation" and not labels["amplification_valid"], labels
assert "labels" in labels["assumption"], labels
budget, b = summary("budget"), lines("budget")
assert budget["status"] == "ended" and "target_epsilon" in budget["reason"], budget
assert b[-1]["privacy"]["epsilon"] <= 8 and len(b) < 50, (len(b), b[-1]["privacy"])
assert "test_accuracy" in b[-1]                                   # the last aggregation is evaluated
PY

# What DP cannot cover is refused before a run directory exists.
expect_code 2 "$drift" validate "$work/dp.toml" --set algorithm.name=scaffold
says "uploads more than its weights"
expect_code 2 "$drift" validate "$work/dp.toml" --set simulation.mode=fedasync --set sampler.name=uniform
says "fedasync mixes each single update"
expect_code 2 "$drift" validate "$work/dp.toml" --set privacy.clip_mode=adaptive
says "noise_multiplier < 2 count_noise"
expect_code 2 "$drift" validate "$work/dp.toml" --set privacy.denominator=actual
says "fixed-size cohorts"
expect_code 2 "$drift" validate "$work/dp.toml" --set simulation.mode=fedbuff
says "sampler \"poisson\" (a Poisson design) draws a sync round's cohort"
"$drift" validate "$work/dp.toml" | grep -q "epsilon is amplified by Poisson sampling"
"$drift" list > "$work/list"  # whole: grep -q stopping early would break the pipe
grep -q "^  poisson " "$work/list"
