# Shared by the cli_hierarchy* tests: $work/h.toml, a small hierarchy of three label-skewed
# edges that go offline on a cycle, with MIFA's per-client memory at each edge.
cat > "$work/h.toml" <<TOML
seed = 3
[data]
max_train_samples = 1200
max_test_samples = 400
[federation]
clients = 12
rounds = 4
[sampler]
clients_per_round = 2
[algorithm]
name = "mifa"
[training]
local_steps = 2
batch_size = 16
[evaluation]
chunk_size = 100
[hierarchy]
edges = 3
edge_rounds = 2
assign = "label"
availability = "diurnal"
period = 3.0
online_fraction = 0.7
latency = 0.1
TOML
