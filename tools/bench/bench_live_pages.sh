#!/usr/bin/env bash
# Live pages (docs/outputs.md#live-pages): what redrawing a run's page while it trains costs the
# training. The quickstart for ROUNDS rounds on SLOTS slots, REPS times without live pages
# (output.plot_minutes = 0) and REPS times asking for a drawing every LIVE minutes (0.05:
# every 3 s, a hundred times the default; the 2 % rule of docs/outputs.md#live-pages then
# spaces them), alternating so that both see the same machine. Per run the median wall seconds
# per round over rounds 2..N (timings.jsonl); reports the medians over runs and their ratio,
# checks that the metrics are byte-identical, and times one drawing of the finished run (drift
# plot: wall and CPU seconds), from which the cost at any period follows.
#   bench_live_pages.sh DRIFT      (REPS=3, ROUNDS=8, SLOTS=2, LIVE=0.05 by default)
set -euo pipefail
drift="${1:-build/tools/drift}"
here="$(cd "$(dirname "$0")" && pwd)"
reps="${REPS:-3}" rounds="${ROUNDS:-8}" slots="${SLOTS:-2}" live="${LIVE:-0.05}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source "$here/bench_lib.sh"

declare -A per_run=([off]="" [live]="")
for rep in $(seq "$reps"); do
  for mode in off live; do
    minutes=0
    [[ $mode == live ]] && minutes="$live"
    out="$work/$mode-$rep"
    "$drift" run "$here/../../scenarios/quickstart.toml" --out "$out" --no-progress --quiet \
      --set federation.rounds="$rounds" --set devices.cpu_slots="$slots" --set output.plot_minutes="$minutes"
    per_run[$mode]+="$(median_round "$out") "
    cmp "$work/off-1/metrics.jsonl" "$out/metrics.jsonl" || { echo "live pages changed the metrics"; exit 1; }
  done
done
python3 - "${per_run[off]}" "${per_run[live]}" "$live" << 'PY'
import statistics, sys
off = [float(x) for x in sys.argv[1].split()]
live = [float(x) for x in sys.argv[2].split()]
print(f"no live pages:        median {statistics.median(off):.3f} s/round (runs {', '.join(f'{x:.3f}' for x in off)})")
print(f"asking a drawing every {float(sys.argv[3]) * 60:.0f} s: median {statistics.median(live):.3f} s/round (runs {', '.join(f'{x:.3f}' for x in live)})")
print(f"ratio live / off: {statistics.median(live) / statistics.median(off):.3f}")
PY
# One drawing of a finished run, as a live page draws it (gnuplot included).
/usr/bin/time -f "one drawing of a $rounds-round run: %e s wall, %U s user + %S s system CPU" \
  "$drift" plot "$work/off-1" 2>&1 | grep "one drawing"
echo "metrics.jsonl identical in all $((2 * reps)) runs"
