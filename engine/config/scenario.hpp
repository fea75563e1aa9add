#pragma once
// A validated scenario: every field has a value (defaults filled in), every name resolves in
// its registry, every number is in range. Built only by load_scenario() (engine/compose).
// A member's initialiser is its key's default: the key table (engine/compose/schema.cpp)
// reads it from here, so it is written nowhere else.
// Plain structs without LibTorch, so that any layer can read its configuration cheaply.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/choices.hpp"
#include "engine/config/hyper_params.hpp"
#include "engine/config/param_spec.hpp"

namespace drift {

// Training-time augmentation ([data.augment], docs/datasets.md): per sample, drawn from the
// ("augment", client, round, epoch, batch) stream, applied on the training device, never to
// the test set.
struct AugmentConfig {
  AugmentPreset preset = AugmentPreset::none;  // sets crop_padding, flip and scope (see the schema)
  std::int64_t crop_padding = 0;               // pad each side with black, crop back to the image's size at random
  bool flip = false;                           // mirror left-right with probability 1/2
  AugmentScope scope = AugmentScope::sample;   // batch: one draw for the whole batch (FedSKC's and FedSC's code)
  // Per-channel normalisation of pixels in [0, 1], train and test alike (it is not random), as
  // torchvision's Normalize; empty: the dataset's own scalar normalisation.
  std::vector<double> mean, std;
  bool enabled() const { return crop_padding > 0 || flip; }
};

struct DataConfig {
  std::string dataset = "fashion-mnist";
  std::string path;                    // directory of the dataset files; "" = the dataset's default location
  std::int64_t max_train_samples = 0;  // 0 = all; otherwise the first N (for quick runs)
  std::int64_t max_test_samples = 0;
  // > 0: family B (PFLlib). Train and test sets are merged into one pool before partitioning,
  // each client holds this fraction of its share out, and the held-out parts, in client order,
  // form the test set (so test accuracy is the sample-weighted accuracy over clients).
  double client_test_fraction = 0.0;
  AugmentConfig augment;
};

struct PartitionConfig {
  std::string scheme = "dirichlet";  // a row of partition_catalog()
  double long_tail = 1.0;            // rho: class c keeps n_max * rho^(-c/(C-1)) samples; 1 = no long tail
  // The scheme's own keys (alpha, shards_per_client, file, ...), read by its row's ParamTable.
  ParamSet params;
};

struct SamplerConfig {
  std::string name = "uniform";
  std::int64_t clients_per_round = 0;  // exactly one of these two is set
  double fraction = 0.0;
  // The samplers' own keys (power_of_choice's candidates, say), of the sampler named and of
  // those the timeline switches to: each reads its own through its row's ParamTable.
  ParamSet params;
  // The cohort size this gives for a population: round(fraction * clients), at least 1.
  std::uint32_t cohort_size(std::uint32_t clients) const;
};

struct EvaluationConfig {
  std::int64_t every = 1;  // evaluate the global model every N rounds (and after the last)
  std::int64_t batch_size = 500;
  std::int64_t chunk_size = 2000;  // test samples per evaluation job on the device pool
  // Every per_client-th evaluation (and the last round's) also scores each client's held-out
  // split; 0: never (docs/outputs.md#per-client-accuracy).
  std::int64_t per_client = 0;
  std::vector<double> targets{0.5, 0.7, 0.8};  // accuracies for rounds-to-X in summary.json
  std::vector<double> at_times;                // virtual-time budgets for accuracy-at-T in summary.json
};

// How fast a client computes and communicates. Group overrides replace single fields.
struct ProfileConfig {
  double speed = 1000.0;         // training samples per second (median when speed_sigma > 0)
  double speed_sigma = 0.0;      // lognormal spread of speed across clients; 0 = constant
  double up_bandwidth = 1.25e6;  // bytes per second
  double down_bandwidth = 1.25e7;
  double latency = 0.05;                           // seconds, each way
  std::string trace;                               // CSV client,speed,up_bandwidth,down_bandwidth,latency
  TraceMapping trace_clients = TraceMapping::ids;  // ids: trace client k is client k | seeded (docs/traces.md)
  std::string trace_digest;                        // the trace's bytes' hash, recorded when resolved
};

struct AvailabilityConfig {
  std::string model = "always";  // a row of availability_catalog(): always, markov, diurnal, trace, a process
  // The model's own keys (mean_online, period, trace, p, ...), read by its row's ParamTable. A
  // group's copy starts from the global one's and takes the group's overrides.
  ParamSet params;
};

// A named set of clients chosen by rule; profile and availability attach to groups.
struct GroupConfig {
  std::string name;
  GroupRule rule = GroupRule::dominant_label;
  std::vector<std::int64_t> labels;  // dominant_label, label_set
  std::int64_t from = 0, to = 0;     // id_range, inclusive
  double share = 0.0;                // proportion
  ProfileConfig profile;             // global profile with this group's overrides
  AvailabilityConfig availability;
};

struct SimulationConfig {
  SimulationMode mode = SimulationMode::sync;
  double deadline = 0.0;                            // sync: virtual seconds per round; 0 = none
  double over_selection = 1.0;                      // sync: select ceil(factor * cohort), keep the first finishers
  std::int64_t min_cohort = 1;                      // sync: fewer updates and the round aggregates nothing
  double dropout = 0.0;                             // per-task probability of dropping out mid-task
  LateUpdates late_updates = LateUpdates::discard;  // sync: stale folds them into the next round
  bool train_doomed = false;                        // sync: train updates that will certainly be discarded
  bool partial_work = false;                        // sync: a straggler trains the steps that fit before the deadline
  double stragglers = 0.0;                          // sync: share of each cohort doing 1..E epochs (FedProx)
  double max_virtual_time = 0.0;                    // stop when virtual time passes this; 0 = no limit
  std::int64_t drift_window = 10;                   // aggregations in the sliding drift window
  ClientStateStore client_state = ClientStateStore::memory;
  DivergencePolicy on_divergence = DivergencePolicy::stop;
  std::int64_t shadow_clients = 0;  // sync: unselected clients also trained to measure update drift
};

struct AsyncConfig {
  std::int64_t concurrency = 10;  // clients training at once
  double alpha = 0.6;             // FedAsync mixing weight
  StalenessKind staleness = StalenessKind::polynomial;
  double staleness_a = 0.5;
  double staleness_b = 4.0;
  std::int64_t buffer_size = 10;  // FedBuff K
  double server_lr = 1.0;         // FedBuff eta_g
};

// Something that happens at a round or a virtual time.
struct TimelineEntry {
  std::int64_t at_round = 0;  // one of at_round (>= 1) or at_time (>= 0) is set
  double at_time = -1.0;
  TimelineAction action = TimelineAction::offline;
  std::string group;      // group the action applies to (offline, online, speed, leave, join, move)
  std::string edge;       // or, for offline and online at_time, the edge ([hierarchy]: a name or number);
                          // move: where the group's clients go (a name, a number, or "home")
  double value = 0.0;     // speed factor, fraction, deadline
  std::string sampler;    // for action = sampler
  std::size_t index = 0;  // position in the file, for messages
};
// An edge's scripted outage (offline / online naming an edge), as opposed to a group's entry
// or a move, whose `edge` is the group's destination.
inline bool is_edge_outage(const TimelineEntry& e) { return !e.edge.empty() && e.action != TimelineAction::move; }
// Whether a timeline moves clients between edges (docs/hierarchy.md#moving-clients).
inline bool moves_clients(const std::vector<TimelineEntry>& timeline) {
  for (const auto& e : timeline)
    if (e.action == TimelineAction::move) return true;
  return false;
}

// User-level differential privacy of the shared model (docs/privacy.md).
struct PrivacyConfig {
  PrivacyMode mode = PrivacyMode::none;
  double clip = 1.0;  // C: L2 bound of one client's update (all floating-point tensors); adaptive: C_0
  DpClip clip_mode = DpClip::fixed;
  double target_quantile = 0.5;   // adaptive: the unclipped fraction C aims at (gamma)
  double clip_lr = 0.2;           // adaptive: geometric step (eta)
  double count_noise = 0.0;       // adaptive: std of the noisy count (sigma_b); 0 = expected cohort / 20
  double noise_multiplier = 1.0;  // z: noise standard deviation over C (central: on the sum; local: per client)
  DpDenominator denominator = DpDenominator::expected;
  double delta = 1e-5;
  double target_epsilon = 0.0;  // > 0: end the run before an aggregation would pass it
};

// Secure aggregation simulated in virtual time (docs/privacy.md#secure-aggregation): the
// protocol's stages, who drops in each, what they cost, and the integer arithmetic of the sum.
struct SecureAggregationConfig {
  SecAggProtocol protocol = SecAggProtocol::none;
  double shares = 0.5;             // secagg_plus: the neighbourhood (self included) as a fraction of the cohort
  double threshold = 0.0;          // fraction of the shares; 0: floor(s/2) + 1 (floor(2s/3) + 1 with the check)
  bool consistency_check = false;  // the active-adversary variant's stage S3
  SecAggEncoding encoding = SecAggEncoding::flower;
  SecAggRounding rounding = SecAggRounding::stochastic;
  double clip_range = 8.0;              // flower: c
  std::int64_t quantization_bits = 22;  // flower: Q = 2^bits
  std::int64_t modulus_bits = 32;       // flower: M = 2^bits
  double max_weight = 0.0;              // flower: W; 0 = the population's largest client
  double scale = 1e4;                   // flsim, signed_mod: fixed point scale s
  std::int64_t bits = 32;               // flsim, signed_mod: b
  double dropout = 0.0;                 // probability that a client stops in each stage
  double detection_delay = 1.0;         // seconds until the server notices a client stopped
  double stage_timeout = 0.0;           // seconds a stage waits at most; 0 = no timeout
  double key_bits = 256, share_bits = 256;
  double keygen_seconds = 100e-6, key_agreement_seconds = 100e-6, cipher_seconds_per_byte = 10e-9;
  double field_op_seconds = 50e-9, prg_seconds_per_element = 2e-9, add_seconds_per_element = 0.5e-9;
  double server_speed = 10.0;
  bool simulate_masks = false;  // add and cancel pairwise and self masks: proves they cancel
};

// One edge's link to the cloud and its availability: the [hierarchy] values, or those of its
// [hierarchy.edge.NAME] table, which starts from them (docs/hierarchy.md#named-edges).
struct EdgeProfile {
  std::string name;             // its [hierarchy.edge.NAME]; "" for a numbered edge
  double latency = 0.0;         // edge <-> cloud, seconds each way
  double up_bandwidth = 0.0;    // edge -> cloud bytes per second; 0 = no transfer time
  double down_bandwidth = 0.0;  // cloud -> edge
  EdgeAvailability availability = EdgeAvailability::always;
  double period = 86400.0;           // diurnal: seconds of one cycle
  double online_fraction = 0.5;      // diurnal: share of each cycle the edge is online
  double phase = -1.0;               // diurnal: its shift, a share of the period; < 0: e / edges
  std::string group;                 // assign = group: the group it holds; "": the group of its name
  double aggregation_seconds = 0.0;  // its server's time per update it aggregates
};

// A hierarchical federation (docs/hierarchy.md): clients report to edge aggregators, which
// run edge_rounds sync rounds of their own clients per cloud round; the cloud averages the
// models of the edges that reported, weighted by the samples they hold. edges = 0: flat.
struct HierarchyConfig {
  std::uint32_t edges = 0;
  std::int64_t edge_rounds = 1;  // kappa_2: edge rounds per cloud round
  EdgeAssignment assign = EdgeAssignment::uniform;
  std::string file;                  // assign = file: a CSV of client,edge (the edge's number or name)
  std::string file_digest;           // its bytes' hash, recorded when the scenario is resolved
  std::int64_t edges_per_round = 0;  // edges the cloud samples among the online ones; 0 = all
  double deadline = 0.0;             // an edge's model arrives within this of the cloud round's start; 0 = none
  bool keep_work = false;            // an edge that goes offline keeps its model and sends it once back online
  // cloud = fedbuff: each edge pulls the global model, runs edge_rounds, sends its model and pulls
  // again; the cloud steps by server_lr x the buffer's weighted deltas every `buffer` models.
  EdgeCloud cloud = EdgeCloud::sync;
  std::int64_t buffer = 2;
  double server_lr = 1.0;
  std::int64_t concurrency = 0;     // edges at work at once (FedBuff's C); 0 = every edge
  std::int64_t stall_loops = 1000;  // the run ends after this many loops without a step; 0 = never
  // Every edge's link and availability, unless it is named (its table starts from these).
  double latency = 0.0;
  double up_bandwidth = 0.0;
  double down_bandwidth = 0.0;
  EdgeAvailability availability = EdgeAvailability::always;
  double period = 86400.0;
  double online_fraction = 0.5;
  double aggregation_seconds = 0.0;
  std::vector<EdgeProfile> named;  // [hierarchy.edge.NAME] in name order: edge i is the i-th
  // The values above as an edge's profile: a numbered edge's, and where a named one starts.
  EdgeProfile shared_profile() const {
    EdgeProfile p;
    p.latency = latency;
    p.up_bandwidth = up_bandwidth;
    p.down_bandwidth = down_bandwidth;
    p.availability = availability;
    p.period = period;
    p.online_fraction = online_fraction;
    p.aggregation_seconds = aggregation_seconds;
    return p;
  }
  // availability = "model": [hierarchy.availability_model], a client availability model with
  // the edges in the clients' place (edge e is its client e).
  AvailabilityConfig availability_model;
  bool enabled() const { return edges > 0; }
};
// When a run saves a checkpoint (docs/checkpoints.md); a run also saves one when it ends and
// when it is interrupted.
struct CheckpointConfig {
  std::int64_t every = 0;  // aggregations between checkpoints; 0: by wall time only
  double minutes = 5.0;    // wall-clock minutes between checkpoints; 0: by count only
  bool at_end = true;      // also after the last aggregation (a finished run can be extended)
};

struct Scenario {
  std::string name;
  std::uint64_t seed = 1;
  std::string source;  // file it was loaded from
  DataConfig data;
  PartitionConfig partition;
  std::uint32_t clients = 10;
  std::uint32_t rounds = 10;
  // Clients that are never eligible, scored like the others by evaluation.per_client: a share of
  // the population drawn from the "held-out" stream, or the members of one group.
  double held_out = 0.0;
  std::string held_out_group;
  SamplerConfig sampler;
  std::string model = "small-cnn";  // the architecture (the first of model_group when a group is set)
  std::int64_t model_width = 0;     // base channels of the ResNets; 0 = the architecture's default
  // Heterogeneous models (private-model algorithms): client i trains
  // model_group[model_assignment[i]], or model_group[i mod size] without an assignment.
  std::vector<std::string> model_group;
  std::vector<std::uint32_t> model_assignment;
  std::int64_t feature_dim = 0;  // common feature width (AdaptiveAvgPool1d); 0 = the architecture's own
  // model "torchscript": the module file (absolute once resolved), the digest of its bytes that
  // the resolved scenario records, and where the initial weights come from.
  std::string model_file;
  std::string model_digest;
  ModelInit model_init = ModelInit::file;
  // [plugins]: the libraries whose algorithms, samplers, models and datasets the scenario may
  // name (absolute and comma-separated once resolved), and their digests (docs/plugins.md).
  std::string plugin_files;
  std::string plugin_digests;
  std::string algorithm = "fedavg";
  ParamSet algorithm_params;
  HyperParams training;
  EvaluationConfig evaluation;
  ProfileConfig profile;
  AvailabilityConfig availability;
  std::vector<GroupConfig> groups;  // in name order; a client joins the first group whose rule matches
  SimulationConfig simulation;
  AsyncConfig async;
  std::vector<TimelineEntry> timeline;     // sorted by (round or time, file order)
  std::int64_t cpu_slots = 0;              // trainer slots on the CPU; 0 = one per core
  std::string device_pool;                 // "cpu:2,cuda:0x4"; empty = cpu x cpu_slots
  std::uint32_t pack = 1;                  // clients of a sync round trained together as one packed model
  EvalLanes eval_lanes = EvalLanes::gpus;  // devices with a slot of their own for evaluation
  bool graphs = true;                      // GPU slots capture training steps as CUDA graphs where they can
  PrivacyConfig privacy;
  SecureAggregationConfig secure_aggregation;
  HierarchyConfig hierarchy;
  CheckpointConfig checkpoint;
  std::string runs_dir = "runs";
  double plot_minutes = 5.0;          // redraw index.html and the figures this often while running; 0 = at the end only
  bool log_eligible = true;           // write "eligible" rows to clients.csv (one per eligible client per round)
  std::string resolved_toml;          // the scenario with every default written out
  std::vector<std::string> warnings;  // keys that do nothing here (compose/consistency)
};

// The architecture client `client` trains: model_group by assignment or cycle, else model.
const std::string& client_architecture(const Scenario& s, std::uint32_t client);

// Updates per aggregation: the sync cohort, FedBuff's buffer, FedAsync's single update.
std::uint32_t aggregated_per_round(const Scenario& s);

}  // namespace drift
