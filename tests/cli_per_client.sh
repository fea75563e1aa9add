#!/usr/bin/env bash
# evaluation.per_client from the CLI (docs/outputs.md#per-client-accuracy): the global model
# scored on every client's held-out split at every second evaluation and the last round, the same
# bits on 1 and 2 slots, with an evaluation chunk that cuts clients' splits, and interrupted then
# resumed; the lines carry each client's accuracy and participations and the summary, which agrees
# with them; the figure loads in the run's page; held-out clients never take part and are
# summarised apart; an async run measures it too; scenarios that have no client splits or keep private
# models are refused with the reason.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_lib.sh"
cat > "$work/p.toml" <<TOML
seed = 3
[data]
max_train_samples = 1500
client_test_fraction = 0.25
[federation]
clients = 12
rounds = 5
[sampler]
clients_per_round = 4
[evaluation]
chunk_size = 70
per_client = 2
[availability]
model = "bernoulli"
probability = "label_dirichlet"
TOML
run() { "$drift" run "$work/p.toml" --no-progress --no-plots "$@"; }

same_on_slots_and_resume run

python3 - "$work/one/metrics.jsonl" <<'PY'
import json, math, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
measured = [l for l in lines if "client_accuracy_summary" in l]
# Every second evaluation (rounds 2 and 4) and the last round (5).
assert [l["round"] for l in measured] == [2, 4, 5], [l["round"] for l in measured]
taken = [0] * 12
for l in lines:
    for c in l["aggregated"]:
        taken[c] += 1
    if "client_accuracy_summary" not in l:
        assert "client_accuracy" not in l and "client_participations" not in l, l
        continue
    acc, s = l["client_accuracy"], l["client_accuracy_summary"]
    assert len(acc) == 12 and l["client_participations"] == taken, (l["client_participations"], taken)
    kept = [a for a in acc if a is not None]
    assert l["clients_evaluated"] == len(kept) == 12
    assert math.isclose(s["mean"], sum(kept) / len(kept)), s
    assert s["worst"] == min(kept) and s["worst"] <= s["p10"] <= s["mean"], s
    # The pooled test set is the clients' splits: the weighted mean is the test accuracy.
    assert math.isclose(s["weighted"], l["test_accuracy"]), (s, l["test_accuracy"])
    assert s["participation_correlation"] is None or -1 <= s["participation_correlation"] <= 1, s
PY

# FedBuff measures it at its aggregations too, the same on 1 and 2 slots.
async=(--set simulation.mode=fedbuff --set async.buffer_size=3 --set async.concurrency=4)
run "${async[@]}" --slots 1 --out "$work/async1" 2> /dev/null
run "${async[@]}" --slots 2 --out "$work/async2" 2> /dev/null
same "$work/async1" "$work/async2"
grep -q '"client_accuracy_summary"' "$work/async1/metrics.jsonl"

# The figure: drawn into the run's page, where a browser loads it.
"$drift" plot "$work/one" 2> /dev/null
[[ -s "$work/one/figures/client_accuracy.png" ]]
grep -q 'client_accuracy.png' "$work/one/index.html"
[[ $(grep -vc '^#' "$work/one/figures/client_accuracy.dat") -eq 12 ]]
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -n "$browser" ]]; then
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
    --virtual-time-budget=5000 --dump-dom "file://$work/one/index.html" > "$work/dom" 2> /dev/null
  grep -q 'data-broken-images="0"' "$work/dom" || { echo "the run page has a broken image"; exit 1; }
  grep -q 'client_accuracy.png' "$work/dom"
else
  echo "cli_per_client: the browser check is skipped: no chromium (tools/install-deps.sh installs it)"
fi

# Held-out clients never take part and are summarised apart; by group, too.
run --set federation.held_out=0.25 --out "$work/held" 2> /dev/null
python3 - "$work/held/metrics.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
held = lines[-1]["held_out_clients"]
assert len(held) == 3, held
for l in lines:
    assert not set(held) & set(l["cohort"]), (held, l["cohort"])
    if "client_accuracy_summary" in l:
        assert l["held_out_clients"] == held
        assert all(l["client_participations"][c] == 0 for c in held)
        values = [l["client_accuracy"][c] for c in held]
        assert abs(l["client_accuracy_summary"]["held_out"] - sum(values) / 3) < 1e-12, l
PY
expect_code 2 run --set federation.held_out_group=nowhere --out "$work/no-group"
says "names no group"
expect_code 2 run --set federation.held_out=0.99 --out "$work/all-held"
says "leaves no client to take part"

# Refused before anything runs, with the reason.
expect_code 2 run --set data.client_test_fraction=0 --out "$work/no-split"
says "set data.client_test_fraction"
expect_code 2 run --set algorithm.name=fedproto-ht --out "$work/private"
says "scored per client already"
[[ ! -e "$work/no-split" && ! -e "$work/private" ]]
echo "cli_per_client: ok"
