#!/usr/bin/env bash
# Steady speed (docs/performance.md#the-allocator): drift on the allocator it is linked with against
# the same program on glibc's malloc (drift-system-malloc), measured in this run, alternating so
# that both see the same machine. For each of two scenarios, REPS runs per allocator; per run
# the median wall seconds per round over rounds 2..N (round 1 pays the start), the kernel's share
# of CPU time and the minor page faults per round (timings.jsonl). Reports median, min and max
# of the per-run medians, the spread (max / min), and the speed-up of the medians; checks that
# every run's metrics.jsonl is byte-identical. Then the bare LibTorch loop on either allocator.
#   bench_allocator.sh BUILD_DIR      (REPS=5, QS_ROUNDS=6, SKC_ROUNDS=4, SLOTS=2 by default)
set -euo pipefail
build="${1:-build}"
here="$(cd "$(dirname "$0")" && pwd)"
scenarios="$here/../../scenarios"
reps="${REPS:-5}"
slots="${SLOTS:-2}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A binary=([linked]="$build/tools/drift" [glibc]="$build/tools/drift-system-malloc")

# One run's median s/round (rounds 2..N), system share of CPU, minor faults per round.
run_stats() {
  python3 - "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1] + "/timings.jsonl")][1:]
user = sum(r["user_seconds"] for r in rows)
system = sum(r["system_seconds"] for r in rows)
print(statistics.median(r["round_seconds"] for r in rows), system / user if user else 0.0,
      sum(r["minor_faults"] for r in rows) / len(rows))
PY
}

# name, scenario, extra args...: REPS runs per allocator, alternating; prints the table rows.
measure() {
  local name=$1 scenario=$2
  shift 2
  : > "$work/$name.stats"
  for ((i = 1; i <= reps; i++)); do
    for alloc in linked glibc; do
      local out="$work/$name-$alloc-$i"
      "${binary[$alloc]}" run "$scenario" --out "$out" --slots "$slots" --no-progress --no-plots "$@" 2> "$out.log" ||
        { cat "$out.log"; exit 1; }
      cmp -s "$out/metrics.jsonl" "$work/$name-linked-1/metrics.jsonl" ||
        { echo "$name: $alloc run $i: metrics.jsonl differs from the first run" >&2; exit 1; }
      echo "$alloc $(run_stats "$out")" >> "$work/$name.stats"
    done
  done
  python3 - "$name" "$work/$name.stats" <<'PY'
import statistics, sys
name, path = sys.argv[1], sys.argv[2]
runs = {}
for line in open(path):
    alloc, s, share, faults = line.split()
    runs.setdefault(alloc, []).append((float(s), float(share), float(faults)))
med = {}
for alloc in ("linked", "glibc"):
    r = runs[alloc]
    s = [x[0] for x in r]
    med[alloc] = statistics.median(s)
    print(f"{name:<10} {alloc:<7} {med[alloc]:9.2f} {min(s):7.2f} {max(s):7.2f} {max(s) / min(s):7.2f} "
          f"{100 * statistics.median(x[1] for x in r):8.1f}% {statistics.median(x[2] for x in r):12.0f}")
print(f"{name:<10} speed-up of the median, linked against glibc: {med['glibc'] / med['linked']:.2f}x")
PY
}

echo "drift on its linked allocator against glibc's malloc, $reps runs each, $slots slots, alternating"
printf '%-10s %-7s %9s %7s %7s %7s %9s %12s\n' scenario malloc "s/round" min max spread system faults/round
measure quickstart "$scenarios/quickstart.toml" --set federation.rounds="${QS_ROUNDS:-6}"
measure fedskc "$scenarios/paper/fedskc_fmnist_dir02.toml" --set algorithm.preset=reference \
  --set model.name=resnet8 --set model.width=16 --set federation.rounds="${SKC_ROUNDS:-4}"
echo
echo "the bare LibTorch loop (one thread, batch 64), linked allocator:"
"$build/tools/bench/drift_bench_bare_loop" "${STEPS:-100}"
echo "the same loop on glibc's malloc:"
"$build/tools/bench/drift_bench_bare_loop_system" "${STEPS:-100}"
