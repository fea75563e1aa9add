#!/usr/bin/env bash
# An algorithm, a model, a sampler and a partition scheme from a plugin (docs/examples/plugin:
# FedProx written again outside drift's source, a perceptron, a highest-loss sampler, NIID-Bench's
# quantity skew), through the CLI: listed, run on
# 1 and 2 slots (the algorithm byte-identical to drift's own fedprox), resumed (also after the library moved), run by a
# study's children, by workers on a loopback cluster and by the workers of --slot-processes. A plugin built for another drift, a
# file that is no plugin and a changed library are refused with one line. Run by
# plugin_package.sh with the installed drift and the plugin built against it:
#   cli_plugins.sh DRIFT PLUGIN OTHER_VERSION_PLUGIN
source "$(dirname "$0")/cluster_lib.sh"
source "$(dirname "$0")/cli_lib.sh"
plugin="$2"
other="$3"
cp "$plugin" "$work/fedprox_plugin.so"
plugin="$work/fedprox_plugin.so"

expect_code 0 "$drift" list --plugin "$plugin"
grep -q "^  fedprox-plugin  *FedProx from a plugin" "$work/last.out"
grep -q "^  mlp-plugin  *a perceptron with one hidden layer" "$work/last.out"
grep -q "^  highest-loss  *the eligible clients with the highest last training loss" "$work/last.out"
grep -q "^ *untried_first: rank clients that never trained" "$work/last.out"
grep -q "^  quantity-skew  *NIID-Bench's quantity skew" "$work/last.out"
grep -q "^ *beta: Dirichlet concentration of the clients' sizes" "$work/last.out"
grep -q "^  office-hours  *online from open_hour to close_hour, Monday to Friday" "$work/last.out"
grep -q "^ *open_hour: hour of the day clients come online (number, default 9, in \[0, 24\])" "$work/last.out"
grep -q "^  $plugin  *digest [0-9a-f]\{16\}: algorithm fedprox-plugin, model mlp-plugin, sampler highest-loss, partition scheme quantity-skew, availability model office-hours" \
  "$work/last.out"

run() { "$drift" run "$work/tiny.toml" --no-progress --set algorithm.mu=0.05 "$@"; }
expect_code 0 run --out "$work/builtin" --slots 1 --set algorithm.name=fedprox
expect_code 0 run --out "$work/plugin" --slots 1 --set algorithm.name=fedprox-plugin --plugin "$plugin"
same "$work/builtin" "$work/plugin"
expect_code 0 run --out "$work/plugin2" --slots 2 --set algorithm.name=fedprox-plugin --plugin "$plugin"
same "$work/builtin" "$work/plugin2"
grep -q "^files = '$plugin'" "$work/plugin/scenario.toml"
# Its row says it runs at the edges of a hierarchy, not that its edge server halves follow clients
# that move between edges: a move is refused, naming the algorithms that take one.
cp "$work/tiny.toml" "$work/edges.toml"
printf '[hierarchy]\nedges = 2\n[groups.two]\nrule = "id_range"\nfrom = 0\nto = 1\n' >> "$work/edges.toml"
expect_code 0 "$drift" validate "$work/edges.toml" --plugin "$plugin" --set algorithm.name=fedprox-plugin
printf '[[timeline]]\nat_round = 2\naction = "move"\ngroup = "two"\nedge = "1"\n' >> "$work/edges.toml"
expect_code 2 "$drift" validate "$work/edges.toml" --plugin "$plugin" --set algorithm.name=fedprox-plugin
says "'fedprox-plugin' does not say how its edge server halves follow clients between edges"
grep -q "^digests = '[0-9a-f]\{16\}'" "$work/plugin/scenario.toml"

# The plugin's model: trained alike on 1 and 2 slots, and with drift's head for MOON.
expect_code 0 run --out "$work/mlp" --slots 1 --set model.name=mlp-plugin --set algorithm.name=fedprox-plugin \
  --plugin "$plugin"
expect_code 0 run --out "$work/mlp2" --slots 2 --set model.name=mlp-plugin --set algorithm.name=fedprox-plugin \
  --plugin "$plugin"
same "$work/mlp" "$work/mlp2"
expect_code 0 run --out "$work/mlp-moon" --slots 2 --set model.name=mlp-plugin --set algorithm.name=moon \
  --plugin "$plugin"
# The plugin's sampler, alike on 1 and 2 slots and across a resume.
sampler=(--set sampler.name=highest-loss --set algorithm.name=fedprox-plugin --plugin "$plugin")
expect_code 0 run --out "$work/loss" --slots 1 "${sampler[@]}"
expect_code 0 run --out "$work/loss2" --slots 2 "${sampler[@]}"
same "$work/loss" "$work/loss2"
expect_code 130 run --out "$work/loss-cut" --slots 2 "${sampler[@]}" --set checkpoint.every=1 --stop-after 1
expect_code 0 "$drift" resume "$work/loss-cut" --no-progress
same "$work/loss" "$work/loss-cut"
# Its parameter is a key of [sampler], read by its factory: untried clients last keeps the first
# cohort (clients 0-3) in round 2 where the default brings in 4 and 5. Bad values are refused;
# with another sampler the key does nothing, and validate says so.
expect_code 0 run --out "$work/loss-last" --slots 1 "${sampler[@]}" --set sampler.untried_first=false
grep -q "^untried_first = false" "$work/loss-last/scenario.toml"
python3 - "$work/loss" "$work/loss-last" <<'PY'
import csv, sys
def round_two(run):
    rows = csv.DictReader(open(run + "/clients.csv"))
    return sorted(int(r["client"]) for r in rows if r["round"] == "2" and r["event"] == "selected")
first, last = round_two(sys.argv[1]), round_two(sys.argv[2])
assert 4 in first and 5 in first, first
assert last == [0, 1, 2, 3], last
PY
expect_code 2 run --out "$work/loss-bad" "${sampler[@]}" --set sampler.untried_first=3
says "sampler.untried_first"
expect_code 0 "$drift" validate "$work/tiny.toml" --plugin "$plugin" --set sampler.untried_first=false
grep -q 'warning: sampler.untried_first does nothing: sampler.name = "uniform" does not take it (highest-loss does)' \
  "$work/last.out"
# It chooses by the clients' losses and says so in its row: a private run that uses it counts
# every aggregation for every client, as power_of_choice does (it claimed the busiest client's
# own participations, a bound only a data-independent choice earns; issue 47).
expect_code 0 "$drift" run "$work/tiny.toml" --no-progress --out "$work/loss-dp" --slots 1 --plugin "$plugin" \
  --set sampler.name=highest-loss --set algorithm.name=fedprox --set federation.rounds=3 \
  --set 'privacy.mode="central"' --set privacy.clip=1 --set privacy.noise_multiplier=1 --set privacy.delta=1e-3
python3 - "$work/loss-dp/summary.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["privacy"]
assert p["bound"] == "every_aggregation", p["bound"]
assert "training losses" in p["assumption"], p["assumption"]
PY

# The plugin's partition scheme and its keys: every sample held once, balanced labels, unequal
# sizes; a Dirichlet scheme's key does nothing with it, and validate names the schemes that take it.
expect_code 0 run --out "$work/quantity" --slots 1 --plugin "$plugin" --set algorithm.name=fedprox \
  --set partition.scheme=quantity-skew --set partition.beta=0.5
python3 - "$work/quantity/partition.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
sizes = [c["num_samples"] for c in p["clients"]]
assert p["scheme"] == "quantity-skew", p["scheme"]
assert sum(sizes) == 1200 and min(sizes) >= 10 and max(sizes) > 2 * min(sizes), sizes
PY
expect_code 0 "$drift" validate "$work/tiny.toml" --plugin "$plugin" --set partition.scheme=quantity-skew \
  --set partition.alpha=0.1
grep -q 'warning: partition.alpha does nothing: partition.scheme = "quantity-skew" does not take it (dirichlet,' \
  "$work/last.out"

# The plugin's availability model and its key: virtual time starts on a Monday at midnight, so
# with open_hour = 0 (not the default 9) every client is online for the first rounds, and they
# end before 17:00; population.csv names the model and has a column for each of its keys.
expect_code 0 run --out "$work/office" --slots 1 --plugin "$plugin" --set algorithm.name=fedprox \
  --set availability.model=office-hours --set availability.open_hour=0 --set sampler.name=availability_aware
python3 - "$work/office" <<'PY'
import csv, json, sys
rounds = [json.loads(line) for line in open(sys.argv[1] + "/metrics.jsonl")]
assert all(r["cohort"] and r["online"] == 6 for r in rounds), [r["online"] for r in rounds]
assert rounds[-1]["time_end"] < 17 * 3600, rounds[-1]["time_end"]
rows = list(csv.DictReader(open(sys.argv[1] + "/population.csv")))
assert {r["availability"] for r in rows} == {"office-hours"}, rows[0]
assert float(rows[0]["open_hour"]) == 0 and float(rows[0]["close_hour"]) == 17, rows[0]
assert "mean_online" not in rows[0] and "period" not in rows[0], rows[0]
PY

# The run's scenario.toml names the plugin, so resume loads it without being told.
expect_code 130 run --out "$work/cut" --slots 2 --set algorithm.name=fedprox-plugin --plugin "$plugin" \
  --set checkpoint.every=1 --stop-after 1
expect_code 0 "$drift" resume "$work/cut" --no-progress
same "$work/builtin" "$work/cut"

# A study passes --plugin to every child run.
expect_code 0 "$drift" study "$work/tiny.toml" --algorithms fedavg,fedprox-plugin --seeds 1 --jobs 2 --no-plots \
  --no-progress --plugin "$plugin" --out "$work/study"
grep -q "fedprox-plugin" "$work/study/study.md"

# A library moved since the run began: resume is told where it is now, and knows it by digest.
expect_code 130 run --out "$work/moved" --slots 1 --set algorithm.name=fedprox-plugin --plugin "$plugin" \
  --set checkpoint.every=1 --stop-after 1
mkdir "$work/elsewhere"
mv "$plugin" "$work/elsewhere/moved.so"
expect_code 2 "$drift" resume "$work/moved" --no-progress
says "plugin $plugin: no such file"
expect_code 0 "$drift" resume "$work/moved" --no-progress --plugin "$work/elsewhere/moved.so"
same "$work/builtin" "$work/moved"
mv "$work/elsewhere/moved.so" "$plugin"

# Refusals, before anything is written.
expect_code 2 run --out "$work/other" --set algorithm.name=fedprox-plugin --plugin "$other"
says "was built for drift 0.0.0-other, LibTorch"
says "rebuild the plugin against this drift"
echo "not a library" > "$work/junk.so"
# Not a library at all (issue 48): an empty path, a device, a directory, each with its reason.
expect_code 2 "$drift" list --plugin ""
says "needs the path of a shared library built with DRIFT_PLUGIN, not an empty string"
expect_code 2 "$drift" list --plugin /dev/zero
says "/dev/zero is not a regular file"
expect_code 2 "$drift" list --plugin "$work"
says "is a directory, not a shared library"
expect_code 2 "$drift" list --plugin "$work/junk.so"
says "plugin $work/junk.so: cannot be loaded"
expect_code 2 "$drift" validate "$work/tiny.toml" --set algorithm.name=fedprox-plugin
says "unknown algorithm 'fedprox-plugin'"
expect_code 2 "$drift" validate "$work/plugin/scenario.toml" --set plugins.digests=0123456789abcdef
says "but the scenario records 0123456789abcdef: the library changed since"
[[ ! -e "$work/other" ]] || { echo "a refused run left its directory"; exit 1; }

# A worker loads the plugin the coordinator's scenario names.
cat >> "$work/tiny.toml" <<TOML
[plugins]
files = "fedprox_plugin.so"
TOML
"$drift" run "$work/tiny.toml" --out "$work/single" --slots 1 --no-progress --set algorithm.name=fedprox-plugin \
  --set algorithm.mu=0.05 2> "$work/single.log"
same "$work/builtin" "$work/single"
start_coordinator cluster --workers 1 --no-local --set algorithm.name=fedprox-plugin --set algorithm.mu=0.05
coordinator=$coordinator_pid
# This worker's machine keeps the library elsewhere: without --plugin it cannot set up the run,
# with it the library is recognised by its digest.
mv "$plugin" "$work/elsewhere/moved.so"
start_worker lost
expect_exit "$worker_pid" 2 "$work/lost.log"
grep -q "plugin $plugin: no such file" "$work/lost.log"
start_worker w1 --plugin "$work/elsewhere/moved.so"
expect_exit "$coordinator" 0 "$work/cluster.log"
expect_exit "$worker_pid" 0 "$work/w1.log"
same "$work/builtin" "$work/cluster"
mv "$work/elsewhere/moved.so" "$plugin"
# The workers a run starts for its slots (--slot-processes) load it too.
"$drift" run "$work/tiny.toml" --out "$work/slot_processes" --slots 2 --slot-processes --no-progress \
  --set algorithm.name=fedprox-plugin --set algorithm.mu=0.05 2> "$work/slot_processes.log"
same "$work/builtin" "$work/slot_processes"
echo "cli plugins: passed"
