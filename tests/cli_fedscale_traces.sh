#!/usr/bin/env bash
# tools/traces/fedscale_traces.py: FedScale's availability and device-capacity pickles, written
# here in FedScale's layout, convert to drift's CSV traces that drive a run (the client that is
# never active in the trace never trains); the mapping onto drift's ids is seeded; a pickle that
# would run code is refused before it runs anything.
set -euo pipefail
drift="$1"
convert="$(dirname "$0")/../tools/traces/fedscale_traces.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import pickle, sys
work = sys.argv[1]
# FedScale numbers clients from 1. Client 5 is never active; the others are online for
# [0, 300) and [500, 800) of every 1,000 s.
behave = {c: {"active": [] if c == 5 else [0, 500], "inactive": [] if c == 5 else [300, 800],
              "finish_time": 1000, "duration": 1000} for c in range(1, 9)}
capacity = {c: {"computation": 2.0 + c, "communication": 5000.0 + 100 * c} for c in range(1, 9)}
pickle.dump(behave, open(f"{work}/client_behave_trace", "wb"))
pickle.dump(capacity, open(f"{work}/client_device_capacity", "wb"))
class Evil:
    def __reduce__(self):
        import os
        return (os.system, (f"touch {work}/pwned",))
pickle.dump({1: Evil()}, open(f"{work}/evil", "wb"))
PY
python3 "$convert" availability "$work/client_behave_trace" "$work/availability.csv" --horizon 3000 --seed 3
python3 "$convert" devices "$work/client_device_capacity" "$work/devices.csv" --seed 3
head -1 "$work/availability.csv" | grep -qx "client,start,end"
# 7 active clients x 2 intervals x 3 periods.
[[ $(($(wc -l < "$work/availability.csv") - 1)) -eq 42 ]]
grep -q "^[0-7],2500.0,2800.0$" "$work/availability.csv"
[[ $(($(wc -l < "$work/devices.csv") - 1)) -eq 8 ]]
# The same seed maps the same way; another seed differently.
python3 "$convert" availability "$work/client_behave_trace" "$work/again.csv" --horizon 3000 --seed 3 > /dev/null
cmp "$work/availability.csv" "$work/again.csv"
python3 "$convert" devices "$work/client_device_capacity" "$work/other.csv" --seed 4 > /dev/null
if cmp -s "$work/devices.csv" "$work/other.csv"; then echo "another seed mapped the clients the same way"; exit 1; fi

# The drift client mapped onto FedScale's client 5 has no interval: it never trains.
never=$(python3 -c "import sys; seen={l.split(',')[0] for l in open(sys.argv[1]).read().split()[1:]}; print([c for c in map(str, range(8)) if c not in seen][0])" "$work/availability.csv")
cat > "$work/traced.toml" <<TOML
[data]
max_train_samples = 800
max_test_samples = 200
[federation]
clients = 8
rounds = 6
[sampler]
name = "availability_aware"
clients_per_round = 3
[availability]
model = "trace"
trace = "$work/availability.csv"
[profile]
trace = "$work/devices.csv"
TOML
"$drift" run "$work/traced.toml" --out "$work/run" --no-progress --no-plots 2> "$work/run.log"
grep -q '"status": "completed"' "$work/run/summary.json"
if grep -q "^[0-9]*,$never,finished," "$work/run/clients.csv"; then echo "client $never trained while offline"; exit 1; fi
grep -q ",finished," "$work/run/clients.csv"

# drift-side mapping: 5 clients drawn from the trace's 8 by the scenario seed, device and
# availability rows paired (both traces hold the same ids); the same seed draws the same.
seeded() {  # seeded NAME SEED
  "$drift" run "$work/traced.toml" --out "$work/$1" --no-progress --no-plots --set seed="$2" --set federation.clients=5 \
    --set sampler.clients_per_round=2 --set federation.rounds=2 --set availability.trace_clients=seeded \
    --set profile.trace_clients=seeded 2> "$work/$1.log" || { cat "$work/$1.log"; exit 1; }
}
seeded seeded_a 1
seeded seeded_b 1
seeded seeded_c 2
cmp "$work/seeded_a/population.csv" "$work/seeded_b/population.csv"
if cmp -s "$work/seeded_a/population.csv" "$work/seeded_c/population.csv"; then echo "another seed drew the same trace clients"; exit 1; fi
python3 - "$work/seeded_a/population.csv" "$work/devices.csv" <<'PY'
import csv, sys
drawn = [float(r["speed"]) for r in csv.DictReader(open(sys.argv[1]))]
trace = sorted(float(r["speed"]) for r in csv.DictReader(open(sys.argv[2])))
assert len(drawn) == 5 and len(set(drawn)) == 5 and all(s in trace for s in drawn), (drawn, trace)
PY
# With ids, a trace client past the population is refused, pointing at the seeded mapping.
if "$drift" validate "$work/traced.toml" --set federation.clients=5 --set sampler.clients_per_round=2 2> "$work/ids.err"; then
  echo "a trace naming client 7 of 5 was accepted"; exit 1
fi
grep -q 'is not a client id below 5 (trace_clients = "seeded" draws the clients from a larger trace)' "$work/ids.err"

# drift trace-info says what each trace holds.
"$drift" trace-info "$work/availability.csv" > "$work/info.txt"
grep -q "clients    7 (ids 0 to 7), 42 intervals, 6.0 per client" "$work/info.txt"
grep -q "span       0 s to 2800 s" "$work/info.txt"
grep -q "online     64.3 % of client-time over the span; at most 7 clients at once" "$work/info.txt"
grep -q "00:00  64.3 %" "$work/info.txt"
grep -q "01:00   -" "$work/info.txt"
grep -q "clients    8 (ids 0 to 7)" <<< "$("$drift" trace-info "$work/devices.csv")"
if "$drift" trace-info "$work/traced.toml" 2> "$work/info.err"; then echo "trace-info read a scenario as a trace"; exit 1; fi
grep -q "neither an availability trace" "$work/info.err"

# A pickle that would run code is refused, and nothing ran.
if python3 "$convert" availability "$work/evil" "$work/evil.csv" 2> "$work/evil.err"; then
  echo "the converter accepted a pickle that runs code"; exit 1
fi
grep -q "asks for posix.system; only dicts, lists and numbers are accepted" "$work/evil.err"
[[ ! -e "$work/pwned" && ! -e "$work/evil.csv" ]]
echo "cli fedscale traces: 1 passed, 0 failed"
