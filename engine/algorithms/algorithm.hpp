#pragma once
// The algorithm interface. An algorithm is two halves that never share memory:
//  - the client half runs inside a trainer slot, once per local training task;
//  - the server half owns the global model update.
// Parameters come from the scenario's [algorithm] table, declared as ParamSpecs so that
// validation, defaults and `drift list` need no per-algorithm code outside its own file.
#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/catalog.hpp"
#include "engine/config/param_spec.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/data/dataset.hpp"
#include "engine/metrics/algorithm_metrics.hpp"
#include "engine/models/model.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

struct ClientContext {
  std::uint32_t client_id = 0;
  const TrainingTask& task;  // received weights, payload and hyper-parameters
  Payload& state;            // the client's private state, kept across its rounds
  Model& model;              // holds the received weights when begin() runs
  // The client's local training data, for passes outside SGD (knowledge, prototypes).
  const Dataset* data = nullptr;
  const std::vector<std::int64_t>* indices = nullptr;
  std::uint32_t epoch = 0;                // local epoch of the current batch, set by the training loop
  std::uint32_t last_epoch = 0;           // the epoch of the round's last batch, set by the training loop
  const torch::Tensor* inputs = nullptr;  // the current batch's images, set by the training loop
  torch::Device device = torch::kCPU;     // where the model, batches, payload and state are
  std::uint64_t seed = 0;                 // the scenario seed, for state every client derives alike
};

// One pass of the model over the client's local data in eval mode without gradients, in
// ascending index order (so sums do not depend on the shuffled batch order); the model is
// put back in train mode afterwards. `visit(out, labels)` sees each batch.
void for_each_local_batch(ClientContext& ctx,
                          const std::function<void(const ModelOutput&, const torch::Tensor&)>& visit);

// Whether the batch being trained belongs to the last local epoch (knowledge collected "during
// the last epoch", as the FedSKC, FedSC and FPL code do); under local_steps, or for partial
// work that stops early, the last pass begun.
inline bool in_last_local_epoch(const ClientContext& ctx) {
  if (ctx.task.hyper.local_steps > 0 || ctx.task.hyper.max_steps > 0) return ctx.epoch == ctx.last_epoch;
  return ctx.epoch + 1 == ctx.task.hyper.local_epochs;
}

class ClientAlgorithm {
 public:
  virtual ~ClientAlgorithm() = default;
  virtual void begin(ClientContext& ctx) {}
  // Loss of one batch; the default is mean cross-entropy on the logits.
  virtual torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx);
  // Tensors the local optimiser trains besides the model's parameters (a task head that lives
  // only for the round, say); asked once, after begin().
  virtual std::vector<torch::Tensor> extra_parameters() { return {}; }
  // Whether a GPU may capture this step as a CUDA graph and replay it in later jobs
  // (docs/performance.md#cuda-graphs): the key of what the step's kernels depend on besides the
  // batch and the model (host values a graph bakes in, shapes of the tensors loss() reads), or
  // nothing to run the step eagerly. An algorithm that gives keys reads in loss() only tensors it
  // keeps at fixed addresses from job to job (refilled in place by begin()), and makes no host
  // read there. Asked before every step, with ctx.epoch set.
  virtual std::optional<std::string> step_graph_key(const ClientContext&) const { return std::nullopt; }
  // After each local optimiser step (clipping, weight decay, momentum and the learning rate
  // applied), without gradients: a move of the parameters that the optimiser's state never sees,
  // as SCAFFOLD's correction is applied in its reference code (docs/algorithms.md#scaffold).
  // Runs after a replayed CUDA graph too, outside it. The default moves nothing.
  virtual void after_step(ClientContext& ctx) {}
  // After the last local step: fill what to upload besides the weights.
  virtual void end(ClientContext& ctx, ClientUpdate& update) {}
};

// What an aggregation knows about the updates it folds in, index for index with them.
struct AggregationInput {
  std::uint32_t round = 0;                      // the aggregation's number: sync round, or async aggregation
  std::vector<std::uint64_t> staleness{};       // model versions between the one pulled and the current one
  std::vector<std::uint64_t> pulled_version{};  // the model version each update trained from
};

// What an aggregation at an edge made of its edge round's updates (clients by their place at
// the edge): engine/sim/server_aggregation.hpp's aggregate_at, and the message an edge host answers with.
struct EdgeAggregated {
  bool moved = false;        // the model moved: the updates went in, or the server half moved it without any
  AlgorithmMetrics metrics;  // what the server half reported (when it moved)
  ClientShares shares;       // ... and each client's share of the step
};

// An edge's clients after a move (ServerAlgorithm::regroup): their population ids, ascending,
// and index for index each one's place among the edge's clients before (none: it joined).
struct ClientRegroup {
  std::vector<std::uint32_t> clients;
  std::vector<std::optional<std::uint32_t>> previous;
  std::uint32_t size() const { return static_cast<std::uint32_t>(clients.size()); }
};

// The server half answers *what* an aggregation makes of its updates; the round driver
// decides *when* (a sync round, every update, every K) and *how* weights are combined before
// the server step (docs/algorithms.md#aggregation).
class ServerAlgorithm {
 public:
  virtual ~ServerAlgorithm() = default;
  // Extras broadcast with the global weights in the next task (built once per model version).
  virtual Payload broadcast(std::uint32_t round) { return {}; }
  // The model client `client` trains from in the next sync round; null: the global model.
  // Only FedAWE's clients start from a model of their own (the last one they received).
  virtual const NamedTensors* start_model(std::uint32_t client) const { return nullptr; }
  // A synchronous round. `updates` are sorted by client id, so every floating-point sum has
  // one fixed order.
  virtual void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                         const AggregationInput& input) = 0;
  // A sync round that aggregated nothing (nobody's update arrived, or fewer than
  // simulation.min_cohort): the server half may still book it (FedAU counts the absence) or
  // move the model (MIFA steps along its remembered changes). Returns whether `global` changed.
  virtual bool aggregate_nothing(NamedTensors& global, const AggregationInput& input) { return false; }
  // An asynchronous aggregation. `mean` is the model the schedule made of the buffered
  // updates (FedAsync's staleness-discounted mix, FedBuff's staleness-weighted mean delta
  // step); `updates` (sorted by client id) keep their own payloads, and their weights have been
  // replaced by `mean`. The default runs aggregate() on them: an averaging algorithm then lands
  // on `mean` (up to rounding), a server optimiser steps along mean - global, and knowledge is
  // aggregated from each payload. Private models: `mean` and `global` are empty.
  virtual void aggregate_async(NamedTensors& global, NamedTensors mean, std::vector<ClientUpdate> updates,
                               const AggregationInput& input);
  // What the last aggregation reports; empty by default.
  virtual AlgorithmMetrics metrics() const { return {}; }
  // How much of the last aggregation's step came from each client's update, fresh or remembered:
  // its coefficient before the server learning rate (docs/outputs.md#participation-bias). Asked
  // after aggregate() with the same updates, and after an aggregate_nothing() that moved the model
  // with none. The default is FedAvg's: the aggregated updates' sample weights.
  virtual ClientShares shares(const std::vector<ClientUpdate>& updates) const;
  // At the edge tier, clients moved between edges (the timeline's moves): the edge's server half
  // now serves `regroup.clients`. What it keeps per client follows those who stayed to their new
  // places, is forgotten for those who left, and starts as for a client never seen for those who
  // joined; a divisor by the edge's clients takes the new count (docs/hierarchy.md#moving-clients).
  // Asked only of algorithms whose catalogue row says edge_moves; the default keeps nothing.
  virtual void regroup(const ClientRegroup& regroup) {}
  // Saves or restores everything a later aggregation or broadcast depends on (momentum,
  // control variates, prototypes, a generator's stream): docs/checkpoints.md. Every server half
  // says what it keeps, even when that is nothing.
  virtual void archive(StateArchive& ar) = 0;
};

// What a server half may need to know about the federation it serves.
struct FederationShape {
  std::uint32_t num_clients = 0;  // registered population (SCAFFOLD divides by it)
  // An edge's server half knows its clients by their place among them: these are their
  // population ids (empty: the whole population, in order). Participation probabilities and
  // other per-client lookups of this shape take population ids.
  std::vector<std::uint32_t> client_ids;
  // With [hierarchy] and clients moving between edges on the timeline: the most clients a server
  // half may come to serve, the population (a table's budget is checked against it); 0 otherwise.
  std::uint32_t most_clients = 0;
  std::int64_t num_classes = 0;
  std::uint32_t cohort = 0;                       // clients aggregated per round (sync) or buffer size (async)
  std::vector<std::int64_t> input_shape;          // {C, H, W} of the clients' data
  double pixel_mean = 0.0, pixel_std = 1.0;       // the data's normalisation: x = (p - mean) / std, p in [0, 1]
  std::vector<double> channel_mean, channel_std;  // per channel instead, when set (data.augment.mean, std)
  std::uint64_t seed = 0;                         // the scenario seed (server-made state shared with clients)
  std::uint64_t model_bytes = 0;                  // the shared model's floating-point bytes; 0 where not built yet
  // Client i's participation probability in a round, where its availability model defines one
  // (participation processes); unset where the population is not built yet.
  std::function<std::optional<double>(std::uint32_t client, std::uint32_t round)> participation_probability;
  // The clients' local learning rate in a round (training.lr_schedule); unset where not known.
  std::function<double(std::uint32_t round)> local_lr;
  double local_momentum = 0.0;  // training.momentum of the clients' SGD
  // Where a server half may keep files that checkpoints refer to (the run directory); empty
  // where there is none (validation, tests).
  std::string state_dir;
};

// Named parameter sets: choosing `preset = NAME` makes these values the defaults of the
// other keys, and explicit keys still win (so an ablation is one line on top of a preset).
struct Preset {
  std::string name;
  std::string description;
  std::map<std::string, ParamValue> values;
};

// How an algorithm's client half trains in a pack (devices.pack; docs/performance.md#packed-clients).
// The packed trainer computes the local loss itself, for all the clients of a pack at once:
// mean cross-entropy, plus FedProx's proximal term when proximal_mu > 0. An algorithm packs
// when that is its whole local objective and it keeps no per-client state.
struct PackedObjective {
  double proximal_mu = 0.0;
};

struct AlgorithmInfo {
  using ClientFactory = std::function<std::unique_ptr<ClientAlgorithm>(const ParamSet&)>;
  using ServerFactory = std::function<std::unique_ptr<ServerAlgorithm>(const ParamSet&, const FederationShape&)>;
  AlgorithmInfo() = default;
  // The five members every algorithm has; the optional ones are assigned afterwards.
  AlgorithmInfo(std::string name_, std::string description_, std::vector<ParamSpec> params_, ClientFactory client,
                ServerFactory server)
      : name(std::move(name_)),
        description(std::move(description_)),
        params(std::move(params_)),
        make_client(std::move(client)),
        make_server(std::move(server)) {}

  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  ClientFactory make_client;
  ServerFactory make_server;
  std::vector<Preset> presets;  // the first is the default; empty: no `preset` key
  // Checks that involve the federation (a neighbour count below the cohort, say); returns
  // an error message, empty when the parameters fit.
  std::function<std::string(const ParamSet&, const FederationShape&)> check;
  // What the server half keeps per client and where (memory or disk), for `drift validate`;
  // unset or empty: nothing worth saying.
  std::function<std::string(const ParamSet&, const FederationShape&)> memory;
  // The head and outputs the algorithm needs from the model (a projection, a cosine
  // classifier, per-stage features); empty: the plain model.
  std::function<ModelOptions(const ParamSet&)> model_options;
  // The clients keep private models that never leave them: no weights are broadcast or
  // aggregated, architectures may differ between clients ([model] group), and accuracy is
  // each client's own model on its held-out test split (data.client_test_fraction).
  bool private_models = false;
  // The server makes images of its own (FedKTL's generator): the data must be images.
  bool needs_images = false;
  // The algorithm reads the model's features, or exchanges or shapes its head: a model brought
  // as a TorchScript module must then expose features(x), and drift puts its own head on them.
  bool reads_features = false;
  // Why the algorithm runs in sync rounds only: validation refuses it under fedasync and
  // fedbuff with this reason. Empty: every mode.
  std::string sync_only;
  // The client half uploads its weights and nothing else, and the server half reads nothing of
  // an update but its weights: differential privacy ([privacy]) can then hand it the privatised
  // aggregate in place of every update (docs/privacy.md#which-algorithms).
  bool privatisable = false;
  // It runs at the edge tier of a hierarchical federation ([hierarchy], docs/hierarchy.md): one
  // server half per edge aggregates that edge's clients into a model the cloud averages. True
  // where the server half keeps no state or only per-client state (by the edge's own ids);
  // server optimisers, control variates and private or exchanged knowledge describe one
  // federation's model, and are refused.
  bool edge_tier = false;
  // At the edge tier, clients may move between edges on the timeline (docs/hierarchy.md): its
  // edge server half keeps nothing per client and never reads the edge's size, or follows the
  // edge's clients in regroup().
  bool edge_moves = false;
  // Set when the client half packs: its local objective as the packed trainer computes it.
  // Unset: clients train one at a time whatever devices.pack says.
  std::function<PackedObjective(const ParamSet&)> packed;
  // The parameters read into the algorithm's Options and written back (set by algorithm_info()
  // of param_table.hpp): the registry test proves each key fills a member of its own.
  std::function<ParamSet(const ParamSet&)> echo_params;
};

// The parameters of `info` with defaults taken from `preset` (empty: the default preset),
// and a leading `preset` key when the algorithm has presets. Throws UserError for an
// unknown preset.
std::vector<ParamSpec> algorithm_params(const AlgorithmInfo& info, const std::string& preset = "");

const Rows<AlgorithmInfo>& algorithm_catalog();
// A plugin's algorithm, after the built-in ones (docs/plugins.md); a taken name throws UserError.
void register_algorithm(AlgorithmInfo info);
const AlgorithmInfo* find_algorithm(const std::string& name);
std::vector<std::string> algorithm_names();

}  // namespace drift
