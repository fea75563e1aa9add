#include "engine/compose/schema.hpp"
#include "engine/config/time_bounds.hpp"

#include "engine/config/choices.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {
namespace {

ParamSpec key(std::string name, ParamKind kind, std::optional<ParamValue> def, std::string help) {
  return make_param(std::move(name), kind, std::move(def), std::move(help));
}

ParamSpec ranged(ParamSpec s, std::optional<double> min, std::optional<double> max, bool min_exclusive = false) {
  s.min = min;
  s.max = max;
  s.min_exclusive = min_exclusive;
  return s;
}

ParamSpec named(ParamSpec s, std::function<std::vector<std::string>()> choices) {
  s.choices = std::move(choices);
  return s;
}

using K = ParamKind;

std::vector<std::string> trace_mappings() { return {"ids", "seeded"}; }
std::vector<std::string> augment_presets() { return {"none", "cifar", "cifar-batch"}; }
std::vector<std::string> augment_scopes() { return {"sample", "batch"}; }
std::vector<std::string> cyclic_strata() { return {"auto", "groups", "labels"}; }
std::vector<std::string> availability_models() { return {"always", "markov", "diurnal", "trace"}; }
std::vector<std::string> simulation_modes() { return choice_names<SimulationMode>(); }
std::vector<std::string> client_state_stores() { return choice_names<ClientStateStore>(); }
std::vector<std::string> late_update_policies() { return choice_names<LateUpdates>(); }
std::vector<std::string> divergence_policies() { return choice_names<DivergencePolicy>(); }
std::vector<std::string> staleness_functions() { return choice_names<StalenessKind>(); }
std::vector<std::string> group_rules() { return {"dominant_label", "label_set", "id_range", "proportion"}; }
std::vector<std::string> timeline_actions() { return choice_names<TimelineAction>(); }

}  // namespace

const std::vector<ParamSpec>& group_schema() {
  static const std::vector<ParamSpec> keys = {
      named(key("rule", K::string, std::nullopt, "dominant_label | label_set | id_range | proportion"), group_rules),
      ranged(key("labels", K::number_list, std::nullopt, "dominant_label: the client's most frequent label is one of these; label_set: the client holds only these labels"), 0.0, std::nullopt),
      ranged(key("from", K::integer, std::nullopt, "id_range: first client id"), 0.0, std::nullopt),
      ranged(key("to", K::integer, std::nullopt, "id_range: last client id (inclusive)"), 0.0, std::nullopt),
      ranged(key("share", K::number, std::nullopt, "proportion: chance that a client not yet grouped joins"), 0.0, 1.0, true),
  };
  return keys;
}

const std::vector<ParamSpec>& timeline_schema() {
  static const std::vector<ParamSpec> keys = {
      ranged(key("at_round", K::integer, std::nullopt, "round at whose start the entry fires"), 1.0, std::nullopt),
      ranged(key("at_time", K::number, std::nullopt, "virtual time at which the entry fires"), 0.0, kMaxVirtualSeconds),
      named(key("action", K::string, std::nullopt, "offline | online | speed | sampler | fraction | deadline | leave | join"), timeline_actions),
      key("group", K::string, std::nullopt, "group the action applies to"),
      ranged(key("value", K::number, std::nullopt, "speed factor, fraction or deadline"), 0.0, kMaxVirtualSeconds),
      key("sampler", K::string, std::nullopt, "sampler name (action = sampler)"),
  };
  return keys;
}

const std::vector<SectionSpec>& scenario_schema() {
  static const std::vector<SectionSpec> schema = {
      {"", "top level",
       {key("name", K::string, std::nullopt, "run name; defaults to the file name"),
        ranged(key("seed", K::integer, std::int64_t{1}, "root of every random stream"), 0.0, 9.2e18)}},
      {"data", "dataset",
       {named(key("dataset", K::string, std::string("fashion-mnist"), "dataset name (drift list)"), dataset_names),
        key("path", K::string, std::string(""), "directory of the dataset files; empty = the package's location"),
        ranged(key("max_train_samples", K::integer, std::int64_t{0}, "use only the first N training samples; 0 = all"), 0.0, std::nullopt),
        ranged(key("max_test_samples", K::integer, std::int64_t{0}, "use only the first N test samples; 0 = all"), 0.0, std::nullopt),
        ranged(key("client_test_fraction", K::number, 0.0, "> 0: merge train and test, hold out this share of every client as its test split (PFLlib: 0.25)"), 0.0, 0.9)}},
      {"data.augment", "training-time augmentation of images, per sample and seeded; never applied to the test set",
       {named(key("preset", K::string, std::string("none"), "none | cifar (random crop with padding 4 + horizontal flip, per sample) | cifar-batch (the same, one draw per batch, as FedSKC's and FedSC's code)"), augment_presets),
        ranged(key("crop_padding", K::integer, std::nullopt, "pad each side with this many black pixels, then crop back to the image's size at a random offset; 0 = off (default: the preset's)"), 0.0, 64.0),
        key("flip", K::boolean, std::nullopt, "mirror each image left-right with probability 1/2 (default: the preset's)"),
        named(key("scope", K::string, std::nullopt, "sample: every image draws its own crop and flip | batch: one draw for the whole batch (default: the preset's)"), augment_scopes),
        ranged(key("mean", K::number_list, std::nullopt, "per-channel normalisation of pixels in [0, 1], train and test alike (with std); unset: the dataset's own"), 0.0, 1.0),
        ranged(key("std", K::number_list, std::nullopt, "per-channel standard deviations, one per channel (with mean)"), 0.0, std::nullopt, true)}},
      {"partition", "how training data is split across clients",
       {named(key("scheme", K::string, std::string("dirichlet"), "iid | dirichlet | dirichlet_creff | shards | file | domains | domains_dirichlet | natural (LEAF writers)"), partition_scheme_names),
        ranged(key("alpha", K::number, 0.5, "Dirichlet concentration; small = more skewed"), 0.0, std::nullopt, true),
        ranged(key("shards_per_client", K::integer, std::int64_t{2}, "label shards per client (scheme = shards)"), 1.0, std::nullopt),
        ranged(key("min_client_samples", K::integer, std::int64_t{10}, "Dirichlet redraws until every client has this many"), 1.0, std::nullopt),
        ranged(key("max_attempts", K::integer, std::int64_t{1000}, "Dirichlet redraws before giving up"), 1.0, std::nullopt),
        ranged(key("long_tail", K::number, 1.0, "rho: class c keeps n_max * rho^(-c/(C-1)) training samples before partitioning; 1 = off"), 1.0, 1e6),
        key("file", K::string, std::string(""), "scheme = file: JSON per-client lists of training-sample indices, relative to the scenario")}},
      {"federation", "population and length",
       {ranged(key("clients", K::integer, std::int64_t{10}, "number of clients"), 1.0, 1e7),
        ranged(key("rounds", K::integer, std::int64_t{10}, "aggregation rounds"), 1.0, 1e9)}},
      {"sampler", "who takes part in a round: set clients_per_round or fraction",
       {named(key("name", K::string, std::string("uniform"), "selection policy (drift list)"), sampler_names),
        ranged(key("clients_per_round", K::integer, std::nullopt, "cohort size"), 1.0, std::nullopt),
        ranged(key("fraction", K::number, std::nullopt, "cohort size as a fraction of the clients (default 0.1)"), 0.0, 1.0, true),
        ranged(key("candidates", K::number, 2.0, "power_of_choice: candidates drawn per seat"), 1.0, 1000.0),
        named(key("strata", K::string, std::string("auto"), "cyclic: rotate through groups | labels (dominant label) | auto"), cyclic_strata)}},
      {"model", "architecture",
       {named(key("name", K::string, std::string("small-cnn"), "model name (drift list)"), model_names),
        ranged(key("width", K::integer, std::int64_t{0}, "base channels of resnet8/resnet10 (0 = the papers' 64; 16 suits 2 cores)"), 0.0, 4096.0),
        key("group", K::string, std::string(""), "heterogeneous models (private-model algorithms): comma-separated architectures; client i gets the (i mod N)-th, overriding name"),
        ranged(key("assignment", K::number_list, std::nullopt, "group: the architecture index of every client (one per client), instead of i mod N"), 0.0, std::nullopt),
        ranged(key("feature_dim", K::integer, std::int64_t{0}, "common feature width (AdaptiveAvgPool1d); 0 = the architecture's own, 512 for a group of several"), 0.0, 65536.0)}},
      {"algorithm", "federated algorithm; further keys are the algorithm's parameters",
       {named(key("name", K::string, std::string("fedavg"), "algorithm name (drift list)"), algorithm_names)}},
      {"training", "local training on each client",
       {ranged(key("local_epochs", K::integer, std::int64_t{1}, "passes over the local data per round"), 1.0, 1e6),
        ranged(key("batch_size", K::integer, std::int64_t{64}, "mini-batch size"), 1.0, 1e7),
        ranged(key("lr", K::number, 0.05, "SGD learning rate"), 0.0, std::nullopt, true),
        ranged(key("momentum", K::number, 0.0, "SGD momentum (buffers reset every round)"), 0.0, 1.0),
        ranged(key("weight_decay", K::number, 0.0, "L2 penalty"), 0.0, std::nullopt),
        key("drop_last", K::boolean, false, "skip the last partial batch"),
        ranged(key("grad_clip", K::number, 0.0, "clip each step's global gradient norm to this; 0 = off"), 0.0, std::nullopt),
        ranged(key("lr_decay", K::number, 1.0, "learning rate of round r is lr * lr_decay^(r-1)"), 0.0, 1.0, true)}},
      {"evaluation", "global model on the test set",
       {ranged(key("every", K::integer, std::int64_t{1}, "evaluate every N rounds (and after the last)"), 1.0, std::nullopt),
        ranged(key("batch_size", K::integer, std::int64_t{500}, "evaluation batch size"), 1.0, std::nullopt),
        ranged(key("chunk_size", K::integer, std::int64_t{2000}, "test samples per evaluation job"), 1.0, std::nullopt),
        ranged(key("targets", K::number_list, std::vector<double>{0.5, 0.7, 0.8}, "accuracies for rounds-to-X and time-to-X in summary.json"), 0.0, 1.0),
        ranged(key("at_times", K::number_list, std::vector<double>{}, "virtual seconds at which summary.json gives the accuracy reached"), 0.0, kMaxVirtualSeconds)}},
      {"profile", "client system profile: compute speed and network (groups may override)",
       {ranged(key("speed", K::number, 1000.0, "training samples per second (median if speed_sigma > 0)"), kMinRate, kMaxRate),
        ranged(key("speed_sigma", K::number, 0.0, "lognormal sigma of speed across clients; 0 = constant"), 0.0, 10.0),
        ranged(key("up_bandwidth", K::number, 1.25e6, "upload bytes per second"), kMinRate, kMaxRate),
        ranged(key("down_bandwidth", K::number, 1.25e7, "download bytes per second"), kMinRate, kMaxRate),
        ranged(key("latency", K::number, 0.05, "seconds each way"), 0.0, kMaxVirtualSeconds),
        key("trace", K::string, std::string(""), "CSV client,speed,up_bandwidth,down_bandwidth,latency"),
        named(key("trace_clients", K::string, std::string("ids"), "ids: trace client k is client k | seeded: a seeded draw of the trace's clients, one per client"), trace_mappings)}},
      {"availability", "when clients are online (groups may override)",
       {named(key("model", K::string, std::string("always"), "always | markov | diurnal | trace"), availability_models),
        ranged(key("mean_online", K::number, 3600.0, "markov: mean online period, seconds"), 0.0, kMaxVirtualSeconds, true),
        ranged(key("mean_offline", K::number, 3600.0, "markov: mean offline period, seconds"), 0.0, kMaxVirtualSeconds, true),
        ranged(key("period", K::number, 86400.0, "diurnal: cycle length, seconds"), 0.0, kMaxVirtualSeconds, true),
        ranged(key("duty", K::number, 0.5, "diurnal: online fraction of each cycle"), 0.0, 1.0),
        ranged(key("phase", K::number, 0.0, "diurnal: seconds by which the cycle is advanced"), -kMaxVirtualSeconds, kMaxVirtualSeconds),
        key("trace", K::string, std::string(""), "trace: CSV client,start,end online intervals"),
        named(key("trace_clients", K::string, std::string("ids"), "ids: trace client k is client k | seeded: a seeded draw of the trace's clients, one per client"), trace_mappings)}},
      {"simulation", "virtual time: round driver, deadlines, dropouts",
       {named(key("mode", K::string, std::string("sync"), "sync | fedasync | fedbuff"), simulation_modes),
        ranged(key("deadline", K::number, 0.0, "sync: virtual seconds per round; 0 = none"), 0.0, kMaxVirtualSeconds),
        ranged(key("over_selection", K::number, 1.0, "sync: select ceil(factor * cohort), keep the first finishers"), 1.0, 100.0),
        ranged(key("min_cohort", K::integer, std::int64_t{1}, "sync: fewer updates and the round aggregates nothing"), 1.0, std::nullopt),
        ranged(key("dropout", K::number, 0.0, "per-task probability of dropping out mid-task"), 0.0, 1.0),
        named(key("late_updates", K::string, std::string("discard"), "sync: discard | stale"), late_update_policies),
        key("train_doomed", K::boolean, false, "sync: train updates certain to be discarded (to measure wasted work)"),
        ranged(key("max_virtual_time", K::number, 0.0, "stop when virtual time passes this; 0 = no limit"), 0.0, kMaxVirtualSeconds),
        ranged(key("drift_window", K::integer, std::int64_t{10}, "aggregations in the sliding drift window"), 1.0, std::nullopt),
        named(key("client_state", K::string, std::string("memory"), "where idle clients' private state (private models) waits: memory | disk (the run directory)"), client_state_stores),
        named(key("on_divergence", K::string, std::string("stop"), "a round whose every update failed, or a non-finite model: stop (status diverged) | continue"), divergence_policies),
        ranged(key("shadow_clients", K::integer, std::int64_t{0}, "sync: also train this many seeded clients that were not selected, never aggregated, to measure the cohort's update against the population's (update_drift)"), 0.0, 1e6)}},
      {"async", "asynchronous drivers (simulation.mode = fedasync or fedbuff)",
       {ranged(key("concurrency", K::integer, std::int64_t{10}, "clients training at once"), 1.0, 1e6),
        ranged(key("alpha", K::number, 0.6, "FedAsync mixing weight"), 0.0, 1.0, true),
        named(key("staleness", K::string, std::string("polynomial"), "constant | polynomial | hinge"), staleness_functions),
        ranged(key("staleness_a", K::number, 0.5, "polynomial exponent a, or hinge slope a"), 0.0, std::nullopt),
        ranged(key("staleness_b", K::number, 4.0, "hinge: staleness tolerated at full weight"), 0.0, std::nullopt),
        ranged(key("buffer_size", K::integer, std::int64_t{10}, "FedBuff: updates per aggregation"), 1.0, 1e6),
        ranged(key("server_lr", K::number, 1.0, "FedBuff: server learning rate"), 0.0, std::nullopt, true)}},
      {"devices", "where training runs (does not change results; pack changes them by float rounding)",
       {ranged(key("cpu_slots", K::integer, std::int64_t{0}, "CPU trainer slots, one thread each; 0 = one per core"), 0.0, 4096.0),
        key("pool", K::string, std::string(""), "devices and their slots, e.g. \"cpu:2,cuda:0x4\"; empty = cpu_slots CPU slots"),
        ranged(key("pack", K::integer, std::int64_t{1}, "sync rounds: train this many clients of a round (in cohort order) as one packed model; results equal unpacked ones up to float rounding (docs/performance.md)"), 1.0, 4096.0)}},
      {"checkpoint", "when a run saves the state `drift resume` continues from (docs/checkpoints.md)",
       {ranged(key("every", K::integer, std::int64_t{0}, "aggregations between checkpoints; 0 = by wall time only"), 0.0, 1e9),
        ranged(key("minutes", K::number, 5.0, "wall-clock minutes between checkpoints; 0 = by count only"), 0.0, std::nullopt),
        key("at_end", K::boolean, true, "also after the last aggregation, so drift resume --set federation.rounds=N can extend the run; false saves its disk space")}},
      {"output", "run directory",
       {key("runs_dir", K::string, std::string("runs"), "parent directory of run directories"),
        key("log_eligible", K::boolean, true, "write an 'eligible' row per eligible client and round to clients.csv")}},
  };
  return schema;
}

}  // namespace drift
