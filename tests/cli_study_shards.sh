#!/usr/bin/env bash
# Shards of a study on one directory (docs/studies.md#shards): three shards run a 2 x 2 grid
# of 2 seeds at once, one of them SIGKILLed in the middle of its first run; every run is
# finished exactly once, the killed shard's runs are taken over by the others, and the tables
# and every run's metrics equal a one-process study's. --collect draws from what finished and
# says what is missing; the Slurm scripts say what they should, and the shell script runs the
# study to the same tables; a shard of another study and a malformed --shard are refused.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
pids=()
trap 'kill -9 "${pids[@]}" 2> /dev/null || true; rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_lib.sh"

cat > "$work/s.toml" <<TOML
seed = 1
[data]
max_train_samples = 600
max_test_samples = 200
[federation]
clients = 6
rounds = 8
[sampler]
clients_per_round = 3
[evaluation]
chunk_size = 100
TOML
study=(study "$work/s.toml" --grid training.lr=0.05,0.1 --grid sampler.clients_per_round=2,3 --seeds 2 --slots 1
  --jobs 1 --no-plots --no-progress)

# --collect reads a study that exists: a mistyped --out is refused, not created. Once the
# directory holds the study (here written by --emit) and nothing has run yet, --collect draws
# empty tables and counts the missing runs.
expect_code 2 "$drift" "${study[@]}" --out "$work/sharded" --collect
says "holds no study (no study.json)"
[[ ! -e "$work/sharded" ]] || { echo "--collect created $work/sharded"; exit 1; }
"$drift" "${study[@]}" --out "$work/sharded" --emit shell --shards 3 > /dev/null
"$drift" "${study[@]}" --out "$work/sharded" --collect > /dev/null 2> "$work/collect0"
grep -q "8 of 8 runs are not finished yet" "$work/collect0" || { cat "$work/collect0"; exit 1; }

"$drift" "${study[@]}" --out "$work/single" > /dev/null 2>&1

for i in 1 2 3; do
  "$drift" "${study[@]}" --out "$work/sharded" --shard "$i/3" > "$work/shard$i.out" 2> "$work/shard$i.err" &
  pids+=($!)
done
# Shard 1 starts with the first run: kill it once that run has written an aggregation.
first="$work/sharded/training.lr=0.05+sampler.clients_per_round=2/seed-1"
for _ in $(seq 1 600); do
  [[ -s "$first/metrics.jsonl" ]] && break
  sleep 0.1
done
[[ -s "$first/metrics.jsonl" ]] || { echo "the first run never started"; cat "$work"/shard*.err; exit 1; }
kill -9 "${pids[0]}"
wait "${pids[0]}" 2> /dev/null || true
# Killed in the middle: the run is not finished, and its claim is free for the others.
! grep -qs '"completed"' "$first/summary.json"
wait "${pids[1]}"
wait "${pids[2]}"

runs=0
while read -r summary; do
  run=$(dirname "$summary")
  relative=${run#"$work/sharded/"}
  runs=$((runs + 1))
  same "$work/single/$relative" "$run"
  # Finished once: a taken-over run resumes (its log goes on) or starts over, never twice to the end.
  [[ $(grep -c "finished .* rounds in" "$run/log.txt") == 1 ]] || { echo "$relative finished twice"; exit 1; }
done < <(find "$work/sharded" -name summary.json -path "*seed-*")
[[ $runs == 8 ]] || { echo "$runs runs finished, not 8"; exit 1; }
grep -q "finished" "$first/log.txt"

"$drift" "${study[@]}" --out "$work/sharded" --collect > /dev/null 2> "$work/collect"
! grep -q "not finished" "$work/collect"
cmp "$work/single/study.md" "$work/sharded/study.md"

# The scripts for a scheduler: Slurm's text, and the shell script run here to the same tables.
"$drift" "${study[@]}" --out "$work/slurm" --emit slurm --shards 4 > "$work/emitted" 2> /dev/null
grep -q "/slurm/submit.sh$" "$work/emitted"
grep -q "^#SBATCH --array=1-4$" "$work/slurm/slurm/shard.sbatch"
grep -q "^#SBATCH --cpus-per-task=1$" "$work/slurm/slurm/shard.sbatch"
grep -q -- "--shard \"\$SLURM_ARRAY_TASK_ID/4\"$" "$work/slurm/slurm/shard.sbatch"
grep -q -- "--collect$" "$work/slurm/slurm/collect.sbatch"
grep -q "sbatch --dependency=afterany:" "$work/slurm/slurm/submit.sh"
for f in "$work"/slurm/slurm/*; do bash -n "$f"; done
# A GPU pool: the shards ask Slurm for the GPUs it names and a core per slot of each run at
# once; this build need not have CUDA, since the scripts run elsewhere.
"$drift" study "$work/s.toml" --grid training.lr=0.05,0.1 --devices cuda:1x2 --jobs 3 --out "$work/gpus" --emit slurm --shards 2 \
  > /dev/null 2>&1
grep -q "^#SBATCH --gres=gpu:2$" "$work/gpus/slurm/shard.sbatch"
grep -q "^#SBATCH --cpus-per-task=6$" "$work/gpus/slurm/shard.sbatch"
grep -q -- "'--devices' 'cuda:1x2'" "$work/gpus/slurm/shard.sbatch"
! grep -q -- "--gres" "$work/slurm/slurm/shard.sbatch"
# Inside a container image the scripts start drift through the image (docs/install.md).
"$drift" "${study[@]}" --out "$work/sif" --emit slurm --shards 2 --launcher "apptainer run /shared/drift.sif" \
  > /dev/null 2>&1
grep -q "^exec 'apptainer' 'run' '/shared/drift.sif' 'study' " "$work/sif/slurm/shard.sbatch"
grep -q "^exec 'apptainer' 'run' '/shared/drift.sif' 'study' .* --collect$" "$work/sif/slurm/collect.sbatch"
# A directory with a space and a % (issue 48): the #SBATCH file names are quoted and their %
# doubled (Slurm would expand it), and the printed command is quoted.
odd="$work/my study%d"
"$drift" "${study[@]}" --out "$odd" --emit slurm --shards 2 > /dev/null 2> "$work/emit.err"
grep -qF "#SBATCH --output=\"$work/my study%%d/slurm/shard-%a.log\"" "$odd/slurm/shard.sbatch"
grep -qF "#SBATCH --output=\"$work/my study%%d/slurm/collect.log\"" "$odd/slurm/collect.sbatch"
grep -qF "run bash '$work/my study%d/slurm/submit.sh'" "$work/emit.err"
"$drift" "${study[@]}" --out "$work/shell" --emit shell --shards 2 > /dev/null 2>&1
"$work/shell/shell/run.sh" > /dev/null 2>&1
cmp "$work/single/study.md" "$work/shell/study.md"

expect_code 2 "$drift" "${study[@]}" --out "$work/sharded" --shard 1/2 --set training.batch_size=16
says "holds a different study"
expect_code 2 "$drift" "${study[@]}" --out "$work/other" --shard 0/3
says "give I/N with 1 <= I <= N"
echo "study shards: ok"
