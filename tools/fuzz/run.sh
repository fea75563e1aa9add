#!/usr/bin/env bash
# Runs every fuzz target of BUILD_DIR (or only the TARGETs named after SECONDS) for SECONDS each
# and prints, per target, the executions per second and the corpus size. Exits 1 when a target
# found something, whose input is kept in BUILD_DIR/findings/TARGET/.
set -euo pipefail
build="$1"
seconds="$2"
here="$(cd "$(dirname "$0")" && pwd)"
targets=(fuzz_task fuzz_update fuzz_evaluation fuzz_report fuzz_selection fuzz_handshake fuzz_scenario fuzz_traces fuzz_leaf fuzz_pack fuzz_checkpoint fuzz_torchscript fuzz_exported)
# A long session can be resumed target by target: make fuzz FUZZ_TARGETS="fuzz_pack fuzz_leaf".
if [ $# -gt 2 ]; then targets=("${@:3}"); fi
# Targets run side by side, one per core (each libFuzzer process uses one): CI's 13 targets take
# half the wall time on 2 cores. Each writes its line to a file; the lines print in target order.
parallel=$(nproc)
results="$build/fuzz-results"
rm -rf "$results"
mkdir -p "$results"
fuzz_one() {  # fuzz_one TARGET: its line in $results/TARGET, or a finding's in $results/TARGET.finding
  local t=$1 corpus="$build/corpus/$1" findings="$build/findings/$1" log="$build/fuzz-$1.log"
  mkdir -p "$corpus" "$findings"
  # Inputs up to 64 KiB; 4 GiB of memory at most; leaks are findings too.
  if ! "$build/tools/fuzz/$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$findings/" "$corpus" "$here/corpus/$t" > "$log" 2>&1; then
    { echo "$t: a finding (input in $findings/):"; grep -E "ERROR|SUMMARY|==[0-9]+==" "$log" | head -n 20; } \
      > "$results/$t.finding"
    return
  fi
  local runs secs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  printf '%-16s %10s %12s %10s\n' "$t" "${secs:-?}" "$(( runs / (secs > 0 ? secs : 1) ))" "$(ls "$corpus" | wc -l)" \
    > "$results/$t"
}
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  fuzz_one "$t" &
done
wait
printf '%-16s %10s %12s %10s\n' target seconds "execs/s" corpus
found=0
for t in "${targets[@]}"; do
  if [[ -e "$results/$t.finding" ]]; then
    cat "$results/$t.finding"
    found=1
  else
    cat "$results/$t"
  fi
done
((found == 0)) || exit 1
echo "fuzz: ${#targets[@]} targets, no finding"
