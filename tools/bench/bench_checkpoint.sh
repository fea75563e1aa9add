#!/usr/bin/env bash
# What checkpoints cost a real run: the quickstart (20 clients, small CNN, 8 per round) for 10
# rounds with a checkpoint after every round, through the actors, as `drift run` does it. Each
# checkpoint's milliseconds and megabytes come from log.txt; the ratio compares a checkpoint
# with the run's mean round (training and evaluation), and the last column is the share of run
# time at the default cadence (one checkpoint per 5 minutes).
set -euo pipefail
drift="${1:-build/tools/drift}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
here=$(cd "$(dirname "$0")/../.." && pwd)
"$drift" run "$here/scenarios/quickstart.toml" --set federation.rounds=10 --set checkpoint.every=1 --no-plots \
  --no-progress --out "$work/run" 2> /dev/null
python3 - "$work/run" <<'PY'
import json, re, sys
run = sys.argv[1]
costs = [(float(mb), float(ms)) for mb, ms in re.findall(r"checkpoint after aggregation \d+: ([\d.]+) MB in ([\d.]+) ms",
                                                        open(f"{run}/log.txt").read())]
rounds = [json.loads(l) for l in open(f"{run}/timings.jsonl")]
round_ms = 1000 * sum(r["train_seconds"] + r["eval_seconds"] for r in rounds) / len(rounds)
mb = sum(c[0] for c in costs) / len(costs)
ms = sum(c[1] for c in costs) / len(costs)
print("checkpoints of the quickstart through the actors (drift run, checkpoint.every = 1):")
print(f"  {'checkpoints':>11} {'MB each':>8} {'ms each':>8} {'round ms':>9} {'ratio':>7} {'at 5 min cadence':>17}")
print(f"  {len(costs):>11} {mb:>8.2f} {ms:>8.1f} {round_ms:>9.0f} {ms / round_ms:>7.3f} {100 * ms / 300000:>16.4f}%")
PY
