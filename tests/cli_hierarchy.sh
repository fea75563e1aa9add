#!/usr/bin/env bash
# [hierarchy] from the CLI (docs/hierarchy.md): one edge holding every client, one edge round per
# cloud round, writes the flat run's metrics and clients.csv; a run of label-skewed edges that go
# offline on a cycle, with MIFA's per-client memory at each edge, is the same on 1 and 2 slots,
# interrupted and resumed, and with its clients trained in a worker process on loopback; it
# writes edges.csv and the edge column of population.csv; named edges with their own links are
# the same on 1 and 2 slots; so are the buffered cloud and clients moving between edges; bad
# topologies are refused.
source "$(dirname "$0")/cluster_lib.sh"
source "$(dirname "$0")/cli_lib.sh"
source "$(dirname "$0")/hierarchy_lib.sh"
run() { "$drift" run "$work/h.toml" --no-progress --no-plots "$@"; }

# One edge, one edge round: the flat federation, with an "edges" object added to each line.
run --slots 2 --out "$work/flat" --set hierarchy.edges=0 --set algorithm.name=fedavg 2> /dev/null
run --slots 2 --out "$work/one_edge" --set hierarchy.edges=1 --set hierarchy.edge_rounds=1 \
  --set hierarchy.availability=always --set hierarchy.latency=0 --set algorithm.name=fedavg 2> /dev/null
cmp "$work/flat/clients.csv" "$work/one_edge/clients.csv"
python3 - "$work/flat/metrics.jsonl" "$work/one_edge/metrics.jsonl" <<'PY'
import json, sys
flat = [json.loads(l) for l in open(sys.argv[1])]
one = [json.loads(l) for l in open(sys.argv[2])]
for line in one:
    assert line.pop("edges")["reported"] == [0], line
assert flat == one, "one edge differs from the flat run"
PY

same_on_slots_and_resume run
python3 - "$work/one/metrics.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
fates = {fate for l in lines for fate in ("reported", "lost") if l["edges"][fate]}
assert fates == {"reported", "lost"}, "the cycle should make edges both report and get lost"
assert all(len(l["edges"]["updates"]) == 3 for l in lines)
PY
head -1 "$work/one/population.csv" | grep -q ",edge,participation_probability$"
[[ $(wc -l < "$work/one/edges.csv") -eq 4 ]]

# Clients trained in a worker process on loopback.
launch_coordinator worker "$work/worker.log" run "$work/h.toml" --out "$work/worker" --workers 1 --no-local --no-plots
coordinator=$coordinator_pid
start_worker w1
expect_exit "$coordinator" 0 "$work/worker.log"
expect_exit "$worker_pid" 0 "$work/w1.log"
same "$work/one" "$work/worker"

# Named edges, each with its own link and cycle, keeping their work through an outage: the same
# on 1 and 2 slots; edges.csv names them.
cp "$work/h.toml" "$work/named.toml"
sed -i 's/^latency = 0.1$/latency = 0.1\nkeep_work = true/' "$work/named.toml"
cat >> "$work/named.toml" <<TOML
[hierarchy.edge.hub]
availability = "always"
up_bandwidth = 1e6
[hierarchy.edge.farm]
latency = 1.0
phase = 0.5
[hierarchy.edge.port]
TOML
"$drift" run "$work/named.toml" --no-progress --no-plots --slots 1 --out "$work/named1" 2> /dev/null
"$drift" run "$work/named.toml" --no-progress --no-plots --slots 2 --out "$work/named2" 2> /dev/null
same "$work/named1" "$work/named2"
cut -d, -f2,10 "$work/named1/edges.csv" | tr '\n' ' ' | grep -q "^name,availability farm,diurnal hub,always port,diurnal $"
# Edges that come and go by a Markov model, each edge a client of it: same on 1/2 slots and resumed.
cp "$work/h.toml" "$work/markov.toml"
sed -i 's/^availability = "diurnal"$/availability = "model"/' "$work/markov.toml"
printf '[hierarchy.availability_model]\nmodel = "markov"\nmean_online = 3.0\nmean_offline = 1.0\n' >> "$work/markov.toml"
markov() { "$drift" run "$work/markov.toml" --no-progress --no-plots "$@"; }
rm -rf "$work/one" "$work/two" "$work/resumed"
same_on_slots_and_resume markov
cut -d, -f10 "$work/one/edges.csv" | sort -u | tr '\n' ' ' | grep -q "^availability markov $"
# All of it in a worker process: named edges keeping their work, one on a Markov model, the
# clients mapped by a file.
{ echo "client,edge"; for c in $(seq 0 11); do names=(farm hub port); echo "$c,${names[c % 3]}"; done; } \
  > "$work/edge_map.csv"
sed -e 's/^assign = "label"$/assign = "file"\nfile = "edge_map.csv"/' \
  -e 's/^\[hierarchy.edge.hub\]$/[hierarchy.edge.hub]\navailability = "model"/' \
  -e '/^availability = "always"$/d' "$work/named.toml" > "$work/combo.toml"
printf '[hierarchy.availability_model]\nmodel = "markov"\nmean_online = 3.0\nmean_offline = 1.0\n' >> "$work/combo.toml"
"$drift" run "$work/combo.toml" --no-progress --no-plots --slots 1 --out "$work/combo1" 2> /dev/null
grep -q "^1,hub,4," "$work/combo1/edges.csv"
launch_coordinator combo "$work/combo.log" run "$work/combo.toml" --out "$work/combo_worker" --workers 1 --no-local \
  --no-plots
coordinator=$coordinator_pid
start_worker w2
expect_exit "$coordinator" 0 "$work/combo.log"
expect_exit "$worker_pid" 0 "$work/w2.log"
same "$work/combo1" "$work/combo_worker"

# The buffered cloud (hierarchy.cloud = fedbuff): edges loop on their own clocks; the same on 1
# and 2 slots, resumed, and with the clients trained in a worker process.
buffered() { "$drift" run "$work/h.toml" --no-progress --no-plots --set hierarchy.cloud=fedbuff "$@"; }
rm -rf "$work/one" "$work/two" "$work/resumed"
same_on_slots_and_resume buffered
python3 - "$work/one/metrics.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert all(len(l["edges"]["reported"]) == 2 for l in lines), "a step takes the buffer's 2 models"
assert any(s and s > 0 for l in lines for s in l["edges"]["staleness"]), "some edge model should be stale"
PY
# Two of the three edges at work at once: the same on 1 and 2 slots.
buffered --slots 1 --set hierarchy.concurrency=2 --out "$work/capped1" 2> /dev/null
buffered --slots 2 --set hierarchy.concurrency=2 --out "$work/capped2" 2> /dev/null
same "$work/capped1" "$work/capped2"
if cmp -s "$work/one/metrics.jsonl" "$work/capped1/metrics.jsonl"; then echo "the cap changed nothing"; exit 1; fi
launch_coordinator buffered "$work/buffered.log" run "$work/h.toml" --set hierarchy.cloud=fedbuff --out \
  "$work/buffered_worker" --workers 1 --no-local --no-plots
coordinator=$coordinator_pid
start_worker w3
expect_exit "$coordinator" 0 "$work/buffered.log"
expect_exit "$worker_pid" 0 "$work/w3.log"
same "$work/one" "$work/buffered_worker"

# Clients moving between edges on the timeline and home again, MIFA's tables at the edges following
# them: the same on 1 and 2 slots and resumed; metrics.jsonl says each edge's clients.
cp "$work/h.toml" "$work/moves.toml"
cat >> "$work/moves.toml" <<TOML
[groups.movers]
rule = "id_range"
from = 0
to = 3
[[timeline]]
at_round = 2
action = "move"
group = "movers"
edge = "1"
[[timeline]]
at_time = 3.0
action = "move"
group = "movers"
edge = "home"
TOML
moves() { "$drift" run "$work/moves.toml" --no-progress --no-plots "$@"; }
rm -rf "$work/one" "$work/two" "$work/resumed"
same_on_slots_and_resume moves
python3 - "$work/one/metrics.jsonl" <<'PY'
import json, sys
sizes = [l["edges"]["clients"] for l in map(json.loads, open(sys.argv[1]))]
assert sizes[0] != sizes[1] and sizes[-1] == sizes[0] and sum(sizes[1]) == 12, sizes
PY
grep -q "moves: group 'movers' (4 clients) to edge 1" <<< "$("$drift" validate "$work/moves.toml")"
# The same with each edge's table on disk (above the budget, a row for every client), stopped
# and resumed: the run of the tables in memory, but for the tables saying where they are.
"$drift" validate "$work/moves.toml" --set algorithm.memory_budget_mb=0.001 |
  grep -q "memory: at the largest edge, mifa keeps the latest change of each of up to 12 clients: .* MB, on disk"
expect_code 130 moves --slots 2 --out "$work/disk" --set algorithm.memory_budget_mb=0.001 --stop-after 2
"$drift" resume "$work/disk" --no-progress --no-plots --slots 1 2> /dev/null
[[ -s "$work/disk/edge-0/mifa_table.bin" && -s "$work/disk/edge-2/mifa_table.bin" ]]
cmp "$work/one/clients.csv" "$work/disk/clients.csv"
python3 - "$work/one/metrics.jsonl" "$work/disk/metrics.jsonl" <<'PY'
import json, sys
memory = [json.loads(l) for l in open(sys.argv[1])]
disk = [json.loads(l) for l in open(sys.argv[2])]
for line in disk:
    assert all(v == 1 for v in line["edges"]["algorithm"].pop("table_on_disk") if v is not None), line
assert memory == disk, "the tables on disk changed the run"
PY
# validate lists an edge's scripted outages too.
cp "$work/moves.toml" "$work/outage.toml"
printf '[[timeline]]\nat_time = 5.0\naction = "offline"\nedge = "2"\n' >> "$work/outage.toml"
grep -q "scripted outages: edge 2 offline at 5 s$" <<< "$("$drift" validate "$work/outage.toml" --set algorithm.name=fedavg)"

# Edge loops longer than the cloud's deadline: validate and the run both warn (a buffered cloud
# might never step, and then ends after hierarchy.stall_loops loops).
"$drift" validate "$work/h.toml" --set hierarchy.deadline=0.01 --set hierarchy.cloud=fedbuff |
  grep -q "longer than hierarchy.deadline (.*): most edge models will arrive late, and the buffered cloud may never"
run --out "$work/late" --set hierarchy.deadline=0.01 --set federation.rounds=1 2> "$work/late.err" > /dev/null
grep -q "most edge models will arrive late" "$work/late.err"
# A buffered cloud in that world never steps: the run ends after hierarchy.stall_loops loops.
run --out "$work/stalled" --set hierarchy.deadline=0.01 --set hierarchy.cloud=fedbuff --set hierarchy.stall_loops=20 \
  2> /dev/null
grep -q '"status": "ended"' "$work/stalled/summary.json"
grep -q "finished 0 rounds: no aggregation took place" "$work/stalled/log.txt"
grep -q '"reason": "the cloud took no step in the last 2[0-9] edge loops' "$work/stalled/summary.json"

"$drift" validate "$work/named.toml" > "$work/validate.txt"
grep -q "^  edges: 3 holding 4 to 4 clients (label)" "$work/validate.txt"
grep -q "^  hub: 4 clients, 0.1 s latency, 1e+06 B/s up, instant down; always online$" "$work/validate.txt"
expect_code 2 "$drift" validate "$work/named.toml" --set hierarchy.edges=4
says "hierarchy.edges = 4 but 3 edges are named"

# Topologies that cannot run are refused before anything trains.
expect_code 2 "$drift" validate "$work/h.toml" --set algorithm.name=fedavgm
says "cannot run 'fedavgm' at the edge tier"
expect_code 2 "$drift" validate "$work/h.toml" --set hierarchy.edges=13
says "an edge would hold no client"
expect_code 2 "$drift" validate "$work/h.toml" --set hierarchy.edge_rounds=0
says "hierarchy.edge_rounds"
expect_code 2 "$drift" validate "$work/h.toml" --set simulation.mode=fedasync --set algorithm.name=fedavg
says "sync rounds at the edges"
# drift list marks the algorithms that run at the edges.
"$drift" list > "$work/list.txt"
grep -q "^  mifa .*\[edges\]" "$work/list.txt"
if grep -q "^  fedavgm .*\[edges\]" "$work/list.txt"; then echo "fedavgm is marked [edges]"; exit 1; fi
grep -q "^  fedavg .*\[edges\] \[moves\]" "$work/list.txt"
grep -q "^  mifa .*\[edges\] \[moves\]" "$work/list.txt"
echo "cli hierarchy: passed"
