#!/usr/bin/env bash
# The quickstart's round time with and without packing (devices.pack): four rounds of 8 clients
# on 1 and 2 CPU slots, packs of 1 (unpacked), 4 and 8. Reports the mean training seconds per
# round (timings.jsonl) as a ratio against the unpacked run on the same slots, measured in this
# run, and the final accuracy (packed training equals unpacked up to float rounding).
set -euo pipefail
drift="${1:-build/tools/drift}"
scenario="$(dirname "$0")/../../scenarios/quickstart.toml"
rounds="${ROUNDS:-4}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "quickstart, $rounds rounds of 8 clients: training seconds per round"
printf '%-6s %-5s %10s %8s %10s\n' slots pack "s/round" ratio accuracy
for slots in 1 2; do
  base=""
  for pack in 1 4 8; do
    out="$work/s$slots-p$pack"
    "$drift" run "$scenario" --out "$out" --slots "$slots" --set federation.rounds="$rounds" \
      --set devices.pack="$pack" --no-progress --no-plots 2> "$out.log" || { cat "$out.log"; exit 1; }
    read -r per_round accuracy < <(python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1] + "/timings.jsonl")]
summary = json.load(open(sys.argv[1] + "/summary.json"))
print(sum(r["train_seconds"] for r in rows) / len(rows), summary["final_accuracy"])
PY
)
    [[ -z "$base" ]] && base=$per_round
    printf '%-6s %-5s %10.2f %8.3f %10.4f\n' "$slots" "$pack" "$per_round" "$(awk "BEGIN { print $per_round / $base }")" "$accuracy"
  done
done
