#!/usr/bin/env bash
# devices.pack through the CLI and the actors: packs of 3 (and the lone job left over) give the
# same bits on 1 and 2 slots (with augmentation and shadow clients too), on a rerun, on a coordinator with a worker process, and when a
# run is extended by resume; a resume cannot change the pack; algorithms that do not pack are
# told so, and async modes are refused. Partial work (simulation.partial_work) likewise.
source "$(dirname "$0")/cluster_lib.sh"
run() {  # run NAME [flags...]
  local name="$1"
  shift
  "$drift" run "$work/tiny.toml" --out "$work/$name" --no-progress --no-plots "$@" 2> "$work/$name.log" ||
    { cat "$work/$name.log"; exit 1; }
}
same() { cmp "$work/$1/metrics.jsonl" "$work/$2/metrics.jsonl" && cmp "$work/$1/clients.csv" "$work/$2/clients.csv"; }

# 4 clients a round in packs of 3: a pack and a lone job, the same on 1 and 2 slots and again.
run pack1 --slots 1 --set devices.pack=3
run pack2 --slots 2 --set devices.pack=3
run pack2_again --slots 2 --set devices.pack=3
same pack1 pack2
same pack1 pack2_again
grep -q '"status": "completed"' "$work/pack1/summary.json"
grep -q '^pack = 3' "$work/pack1/scenario.toml"

# With augmentation and shadow clients beside the packs: the same on 1 and 2 slots.
extra=(--set devices.pack=3 --set data.augment.preset=cifar --set simulation.shadow_clients=2)
run aug1 --slots 1 "${extra[@]}"
run aug2 --slots 2 "${extra[@]}"
same aug1 aug2
grep -q '"update_drift"' "$work/aug1/metrics.jsonl"
if cmp -s "$work/aug1/metrics.jsonl" "$work/pack1/metrics.jsonl"; then
  echo "augmentation changed nothing in a packed run"
  exit 1
fi

# Unpacked training is the same up to rounding, so its bits differ (the lone job's do not).
run plain --slots 1
if cmp -s "$work/plain/metrics.jsonl" "$work/pack1/metrics.jsonl"; then
  echo "packed and unpacked training gave the same bits: nothing was packed"
  exit 1
fi

# A coordinator whose only slot is a worker process's packs the same clients the same way.
start_coordinator remote --workers 1 --no-local --set devices.pack=3
coordinator=$coordinator_pid
start_worker w1
expect_exit "$coordinator" 0 "$work/remote.log"
expect_exit "$worker_pid" 0 "$work/w1.log"
same pack1 remote

# Extended by resume: rounds 1-3, then 4-5, as one 5-round run.
run five --slots 1 --set devices.pack=3 --set federation.rounds=5
"$drift" resume "$work/pack1" --set federation.rounds=5 --no-progress --no-plots 2> "$work/resume.log" ||
  { cat "$work/resume.log"; exit 1; }
same five pack1
if "$drift" resume "$work/pack1" --set federation.rounds=6 --set devices.pack=2 2> "$work/repack.log"; then
  echo "a resume changed devices.pack"
  exit 1
fi
grep -q "devices.pack: a resumed run cannot change it" "$work/repack.log"

# Partial work: stragglers train the steps that fit before the deadline and FedNova normalises
# them; the same on 1 and 2 slots, in packs, on a worker, and extended by resume.
pw=(--set simulation.partial_work=true --set simulation.deadline=0.55 --set profile.speed_sigma=1
  --set algorithm.name=fednova)
run pw1 --slots 1 "${pw[@]}"
run pw2 --slots 2 "${pw[@]}"
same pw1 pw2
grep -q '"partial":[1-9]' "$work/pw1/metrics.jsonl"
grep -q '"tau_eff"' "$work/pw1/metrics.jsonl"
# clients.csv's steps: some finished update took fewer than the 4 steps of a whole round.
awk -F, '$3 == "finished" && $7 < 4 { cut = 1 } END { exit !cut }' "$work/pw1/clients.csv"
run pwpack1 --slots 1 "${pw[@]}" --set devices.pack=3
run pwpack2 --slots 2 "${pw[@]}" --set devices.pack=3
same pwpack1 pwpack2
start_coordinator pwremote --workers 1 --no-local "${pw[@]}"
coordinator=$coordinator_pid
start_worker pww
expect_exit "$coordinator" 0 "$work/pwremote.log"
expect_exit "$worker_pid" 0 "$work/pww.log"
same pw1 pwremote
run pwfive --slots 1 "${pw[@]}" --set federation.rounds=5
"$drift" resume "$work/pw1" --set federation.rounds=5 --no-progress --no-plots 2> "$work/pwresume.log" ||
  { cat "$work/pwresume.log"; exit 1; }
same pwfive pw1
# FedProx's stragglers (no deadline): half the cohort sets out to do 1..3 epochs; 1 = 2 slots.
st=(--set simulation.stragglers=0.5 --set training.local_epochs=3 --set algorithm.name=fedprox)
run st1 --slots 1 "${st[@]}"
run st2 --slots 2 "${st[@]}"
same st1 st2
awk -F, '$3 == "finished" && $2 == 2 && $1 == 1 && $7 == 6 { cut = 1 } END { exit !cut }' "$work/st1/clients.csv"
# Without a deadline, or under FedBuff, there is nothing to cut at: refused with the reason.
if "$drift" validate "$work/tiny.toml" --set simulation.partial_work=true 2> "$work/pwnone.log"; then
  echo "partial work without a deadline validated"
  exit 1
fi
grep -q "simulation.partial_work cuts a straggler's work at the round's deadline" "$work/pwnone.log"
if "$drift" validate "$work/tiny.toml" --set simulation.partial_work=true --set simulation.mode=fedbuff \
    2> "$work/pwasync.log"; then
  echo "partial work under fedbuff validated"
  exit 1
fi
grep -q "under fedbuff there is none" "$work/pwasync.log"

# An algorithm that does not pack runs one client at a time, and says so.
"$drift" validate "$work/tiny.toml" --set devices.pack=4 --set algorithm.name=fedskc > "$work/skc.txt" 2>&1
grep -q "devices.pack does nothing here: fedskc does not pack" "$work/skc.txt"
"$drift" list > "$work/list.txt"
grep -q "fedprox.*packs" "$work/list.txt"

# Async drivers start clients one at a time: refused before anything runs.
if "$drift" run "$work/tiny.toml" --out "$work/async" --set devices.pack=4 --set simulation.mode=fedbuff \
    2> "$work/async.log"; then
  echo "fedbuff with devices.pack ran"
  exit 1
fi
grep -q "devices.pack needs simulation.mode = sync" "$work/async.log"
[[ ! -e "$work/async" ]]
echo "cli pack: 10 passed, 0 failed"
