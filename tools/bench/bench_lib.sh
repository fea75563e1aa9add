# Helpers shared by the bench_*.sh scripts; source it.

# median_round RUN_DIR: the median wall seconds per aggregation over rounds 2..N of a run
# (timings.jsonl), leaving out the first round's start-up.
median_round() {
  python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1] + "/timings.jsonl")][1:]
print(statistics.median(r["round_seconds"] for r in rows))' "$1"
}
