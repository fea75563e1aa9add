// The scenario's key table (docs/scenarios.md): one row per key, bound to its member.
#include "engine/compose/schema.hpp"
#include "engine/compose/schema_hierarchy.hpp"
#include "engine/compose/schema_privacy.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/algorithms/algorithm.hpp"
#include "engine/config/suggest.hpp"
#include "engine/config/time_bounds.hpp"
#include "engine/core/error.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {
namespace {

using S = Scenario;

// Why a key of one mode does nothing in another; "" where it acts.
std::string sync_only(const S& s) {
  const auto mode = s.simulation.mode;
  return mode == SimulationMode::sync ? "" : "under " + name_of(mode) + " (sync rounds only)";
}
std::string steps_only(const S& s) {
  return s.training.local_steps == 0 ? "without training.local_steps (every job trains whole passes of its own)" : "";
}

std::string epochs_only(const S& s) {
  return s.training.local_steps > 0 ? "with training.local_steps (steps take full batches from reshuffled passes)" : "";
}
std::string async_only(const S& s) {
  return s.simulation.mode == SimulationMode::sync ? "under sync rounds (simulation.mode = fedasync or fedbuff)" : "";
}
std::string fedasync_only(const S& s) {
  if (s.simulation.mode == SimulationMode::fedbuff)
    return "under fedbuff (FedAsync's; FedBuff weighs an update by 1/sqrt(1 + staleness))";
  return async_only(s);
}
std::string fedbuff_only(const S& s) {
  return s.simulation.mode == SimulationMode::fedasync ? "under fedasync (FedBuff's)" : async_only(s);
}

std::string for_model_file(const S& s) {
  return uses_torchscript(s) ? "" : "without a model read from a file (\"torchscript\", \"exported\")";
}

// [model] group: "resnet8, resnet10" into the names, each a known model.
void store_model_group(S& s, const ParamValue& v) {
  const auto& text = std::get<std::string>(v);
  std::istringstream in(text);
  std::string item;
  s.model_group.clear();
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t"), last = item.find_last_not_of(" \t");
    if (first == std::string::npos) throw UserError("model.group: empty architecture name in '" + text + "'");
    const auto name = item.substr(first, last - first + 1);
    const auto names = model_names();
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw UserError("model.group: unknown model '" + name + "'" + did_you_mean(name, names) +
                      "; the models are: " + join(names));
    s.model_group.push_back(name);
  }
}

ParamValue load_model_group(const S& s) {
  std::string text;
  for (const auto& name : s.model_group) text += (text.empty() ? "" : ",") + name;
  return text;
}

// [model] assignment: one index into the group per client ([federation] is read before).
void store_model_assignment(S& s, const ParamValue& v) {
  const auto& list = std::get<std::vector<double>>(v);
  if (s.model_group.empty()) throw UserError("model.assignment needs model.group");
  if (list.size() != s.clients)
    throw UserError("model.assignment has " + std::to_string(list.size()) + " entries for " +
                    std::to_string(s.clients) + " clients (one architecture index per client)");
  s.model_assignment.clear();
  for (double index : list) {
    if (index != std::floor(index) || index >= static_cast<double>(s.model_group.size()))
      throw UserError("model.assignment: " + std::to_string(index) + " is not an index into model.group (0.." +
                      std::to_string(s.model_group.size() - 1) + ")");
    s.model_assignment.push_back(static_cast<std::uint32_t>(index));
  }
}

// [data.augment] preset: its crop and flip, which the keys after it may override.
void store_augment_preset(S& s, const ParamValue& v) {
  auto& a = s.data.augment;
  a.preset = choice_from<AugmentPreset>(std::get<std::string>(v));
  if (a.preset != AugmentPreset::none) a.crop_padding = 4, a.flip = true;
  a.scope = a.preset == AugmentPreset::cifar_batch ? AugmentScope::batch : AugmentScope::sample;
}

std::vector<ScenarioSection> make_sections() {
  using A = AugmentConfig;
  using D = DataConfig;
  using P = PartitionConfig;
  using Sm = SamplerConfig;
  using E = EvaluationConfig;
  using H = HyperParams;
  using Sim = SimulationConfig;
  using As = AsyncConfig;
  using C = CheckpointConfig;
  // One row per key reads better than clang-format's layout of the table.
  // clang-format off
  std::vector<ScenarioSection> sections = {
      {"", "top level",
       {bind_key<S>("name", "run name; defaults to the file name", &S::name).optional(),
        bind_key<S>("seed", "root of every random stream", &S::seed).range(0.0, 9.2e18)}},
      {"data", "dataset",
       {bind_key<S>("dataset", "dataset name (drift list)", &S::data, &D::dataset).choices(dataset_names),
        bind_key<S>("path", "directory of the dataset files; empty = the package's location", &S::data, &D::path),
        bind_key<S>("max_train_samples", "use only the first N training samples; 0 = all", &S::data, &D::max_train_samples).range(0.0, {}),
        bind_key<S>("max_test_samples", "use only the first N test samples; 0 = all", &S::data, &D::max_test_samples).range(0.0, {}),
        bind_key<S>("client_test_fraction", "> 0: merge train and test, hold out this share of every client as its test split (PFLlib: 0.25)",
                &S::data, &D::client_test_fraction).range(0.0, 0.9)}},
      {"data.augment", "training-time augmentation of images, per sample and seeded; never applied to the test set",
       {bind_custom_key<S>("preset", "none | cifar (random crop with padding 4 + horizontal flip, per sample) | cifar-batch (the same, one draw per batch, as FedSKC's and FedSC's code)",
                       ParamKind::string, std::string("none"), store_augment_preset,
                       [](const S& s) -> ParamValue { return name_of(s.data.augment.preset); }).choices(choice_names<AugmentPreset>),
        bind_key<S>("crop_padding", "pad each side with this many black pixels, then crop back to the image's size at a random offset; 0 = off (default: the preset's)",
                &S::data, &D::augment, &A::crop_padding).optional().range(0.0, 64.0),
        bind_key<S>("flip", "mirror each image left-right with probability 1/2 (default: the preset's)", &S::data, &D::augment, &A::flip).optional(),
        bind_custom_key<S>("scope", "sample: every image draws its own crop and flip | batch: one draw for the whole batch (default: the preset's)",
                       ParamKind::string, std::nullopt,
                       [](S& s, const ParamValue& v) { s.data.augment.scope = choice_from<AugmentScope>(std::get<std::string>(v)); },
                       [](const S& s) -> ParamValue { return name_of(s.data.augment.scope); })
            .choices(choice_names<AugmentScope>),
        bind_key<S>("mean", "per-channel normalisation of pixels in [0, 1], train and test alike (with std); unset: the dataset's own",
                &S::data, &D::augment, &A::mean).optional().range(0.0, 1.0),
        bind_key<S>("std", "per-channel standard deviations, one per channel (with mean)", &S::data, &D::augment, &A::std)
            .optional().range(0.0, {}, true)}},
      {"partition", "how training data is split across clients; the scheme's own keys: drift list",
       {bind_key<S>("scheme", "how the training data is split (natural: LEAF writers' own clients)",
                &S::partition, &P::scheme).choices(partition_scheme_names),
        bind_key<S>("long_tail", "rho: class c keeps n_max * rho^(-c/(C-1)) training samples before partitioning; 1 = off",
                &S::partition, &P::long_tail).range(1.0, 1e6)}},
      {"federation", "population and length",
       {bind_key<S>("clients", "number of clients", &S::clients).range(1.0, 1e7),
        bind_key<S>("rounds", "aggregation rounds", &S::rounds).range(1.0, 1e9).may_change_on_resume(),
        bind_key<S>("held_out", "share of the clients (drawn by the seed) that never take part; evaluation.per_client scores them", &S::held_out).range(0.0, 1.0),
        bind_key<S>("held_out_group", "a group whose clients never take part (instead of held_out); \"\" = none", &S::held_out_group)}},
      {"sampler", "who takes part in a round: set clients_per_round or fraction; the sampler's own keys: drift list",
       {bind_key<S>("name", "selection policy (drift list)", &S::sampler, &Sm::name).choices(sampler_names),
        bind_key<S>("clients_per_round", "cohort size", &S::sampler, &Sm::clients_per_round).optional().range(1.0, {}),
        bind_key<S>("fraction", "cohort size as a fraction of the clients (default 0.1)", &S::sampler, &Sm::fraction).optional().range(0.0, 1.0, true)}},
      {"model", "architecture",
       {bind_key<S>("name", "model name (drift list)", &S::model).choices(model_names),
        bind_key<S>("width", "base channels of resnet8/resnet10 (0 = the papers' 64; 16 suits 2 cores)", &S::model_width).range(0.0, 4096.0),
        bind_custom_key<S>("group", "heterogeneous models (private-model algorithms): comma-separated architectures; client i gets the (i mod N)-th, overriding name",
                       ParamKind::string, std::string(""), store_model_group, load_model_group),
        bind_custom_key<S>("assignment", "group: the architecture index of every client (one per client), instead of i mod N",
                       ParamKind::number_list, std::nullopt, store_model_assignment,
                       [](const S& s) -> ParamValue { return std::vector<double>(s.model_assignment.begin(), s.model_assignment.end()); })
            .range(0.0, {}),
        bind_key<S>("feature_dim", "common feature width (AdaptiveAvgPool1d); 0 = the architecture's own, 512 for a group of several",
                &S::feature_dim).range(0.0, 65536.0),
        input_path(bind_key<S>("file", "torchscript, exported: the file torch.jit.save or torch.export.save wrote, relative to the scenario (docs/models.md)",
                &S::model_file)).idle_when(for_model_file),
        bind_key<S>("init", "torchscript, exported: initial weights from the file, or drawn from the seed as drift's own layers are",
                &S::model_init).idle_when(for_model_file),
        bind_key<S>("digest", "torchscript, exported: the file's digest; written when the scenario is resolved, and a file whose bytes differ is refused",
                &S::model_digest).idle_when(for_model_file)}},
      {"plugins", "shared libraries that add algorithms, samplers, models and datasets (docs/plugins.md)",
       {bind_key<S>("files", "comma-separated plugin libraries, relative to the scenario; --plugin adds more", &S::plugin_files),
        bind_key<S>("digests", "the libraries' digests; written when the scenario is resolved, and a library whose bytes differ is refused",
                &S::plugin_digests)}},
      {"algorithm", "federated algorithm; further keys are the algorithm's parameters",
       {bind_key<S>("name", "algorithm name (drift list)", &S::algorithm).choices(algorithm_names)}},
      {"training", "local training on each client",
       {bind_key<S>("local_epochs", "passes over the local data per round", &S::training, &H::local_epochs)
            .range(1.0, 1e6).idle_when(epochs_only),
        bind_key<S>("local_steps", "mini-batch steps per round instead of local_epochs passes; 0 = passes", &S::training,
                &H::local_steps).range(0.0, 1e6),
        bind_key<S>("local_steps_pass", "local_steps: each job starts a new shuffled pass (fresh), or a client's pass runs on from where its last job left it (persistent, FedAU's loader)",
                &S::training, &H::steps_pass).idle_when(steps_only),
        bind_key<S>("batch_size", "mini-batch size", &S::training, &H::batch_size).range(1.0, 1e7),
        bind_key<S>("lr", "SGD learning rate", &S::training, &H::learning_rate).range(0.0, {}, true),
        bind_key<S>("momentum", "SGD momentum (buffers reset every round)", &S::training, &H::momentum).range(0.0, 1.0),
        bind_key<S>("weight_decay", "L2 penalty", &S::training, &H::weight_decay).range(0.0, {}),
        bind_key<S>("drop_last", "skip the last partial batch", &S::training, &H::drop_last).idle_when(epochs_only),
        bind_key<S>("grad_clip", "clip each step's global gradient norm to this; 0 = off", &S::training, &H::grad_clip).range(0.0, {}),
        bind_key<S>("lr_decay", "exponential: learning rate of round r is lr * lr_decay^(r-1)", &S::training, &H::lr_decay).range(0.0, 1.0, true),
        bind_key<S>("lr_schedule", "exponential (lr_decay), inverse (lr / r) or inverse_sqrt (lr / sqrt((r-1)/10 + 1))", &S::training, &H::lr_schedule)}},
      {"evaluation", "global model on the test set",
       {bind_key<S>("every", "evaluate every N rounds (and after the last)", &S::evaluation, &E::every).range(1.0, {}),
        bind_key<S>("batch_size", "evaluation batch size", &S::evaluation, &E::batch_size).range(1.0, {}),
        bind_key<S>("chunk_size", "test samples per evaluation job", &S::evaluation, &E::chunk_size).range(1.0, {}),
        bind_key<S>("per_client", "every Nth evaluation (and the last round's) also scores the global model on each client's held-out split (data.client_test_fraction); 0 = never",
                    &S::evaluation, &E::per_client).range(0.0, {}),
        bind_key<S>("targets", "accuracies for rounds-to-X and time-to-X in summary.json", &S::evaluation, &E::targets).range(0.0, 1.0).may_change_on_resume(),
        bind_key<S>("at_times", "virtual seconds at which summary.json gives the accuracy reached", &S::evaluation, &E::at_times)
            .range(0.0, kMaxVirtualSeconds).may_change_on_resume()}},
      {"profile", "client system profile: compute speed and network (groups may override)", {}},
      {"availability", "when clients are online (groups may override)", {}},
      {"simulation", "virtual time: round driver, deadlines, dropouts",
       {bind_key<S>("mode", "round driver: sync rounds, FedAsync or FedBuff", &S::simulation, &Sim::mode),
        bind_key<S>("deadline", "sync: virtual seconds per round; 0 = none", &S::simulation, &Sim::deadline)
            .range(0.0, kMaxVirtualSeconds).idle_when(sync_only),
        bind_key<S>("over_selection", "sync: select ceil(factor * cohort), keep the first finishers", &S::simulation, &Sim::over_selection)
            .range(1.0, 100.0).idle_when(sync_only),
        bind_key<S>("min_cohort", "sync: fewer updates and the round aggregates nothing", &S::simulation, &Sim::min_cohort)
            .range(1.0, {}).idle_when(sync_only),
        bind_key<S>("dropout", "per-task probability of dropping out mid-task", &S::simulation, &Sim::dropout).range(0.0, 1.0),
        bind_key<S>("late_updates", "sync: what becomes of an update that arrives after the deadline (stale: folded into the next round)", &S::simulation, &Sim::late_updates).idle_when(sync_only),
        bind_key<S>("train_doomed", "sync: train updates certain to be discarded (to measure wasted work)", &S::simulation, &Sim::train_doomed)
            .idle_when(sync_only),
        bind_key<S>("partial_work", "sync: a client whose whole local work would miss the deadline trains the steps that fit and sends them",
                &S::simulation, &Sim::partial_work),
        bind_key<S>("stragglers", "sync: this share of each round's cohort sets out to do 1..E epochs, uniform (FedProx's systems heterogeneity)",
                &S::simulation, &Sim::stragglers).range(0.0, 1.0),
        bind_key<S>("max_virtual_time", "stop when virtual time passes this; 0 = no limit", &S::simulation, &Sim::max_virtual_time)
            .range(0.0, kMaxVirtualSeconds).may_change_on_resume(),
        bind_key<S>("drift_window", "aggregations in the sliding drift window", &S::simulation, &Sim::drift_window).range(1.0, {}),
        bind_key<S>("client_state", "where idle clients' private state (private models) waits (disk: the run directory)",
                &S::simulation, &Sim::client_state),
        bind_key<S>("on_divergence", "what a round whose every update failed, or a non-finite model, does: stop (status diverged) or continue",
                &S::simulation, &Sim::on_divergence),
        bind_key<S>("shadow_clients", "sync: also train this many seeded clients that were not selected, never aggregated, to measure the cohort's update against the population's (update_drift)",
                &S::simulation, &Sim::shadow_clients).range(0.0, 1e6)}},
      {"async", "asynchronous drivers (simulation.mode = fedasync or fedbuff)",
       {bind_key<S>("concurrency", "clients training at once", &S::async, &As::concurrency).range(1.0, 1e6).idle_when(async_only),
        bind_key<S>("alpha", "FedAsync mixing weight", &S::async, &As::alpha).range(0.0, 1.0, true).idle_when(fedasync_only),
        bind_key<S>("staleness", "FedAsync: how the mixing weight falls with an update's staleness", &S::async, &As::staleness).idle_when(fedasync_only),
        bind_key<S>("staleness_a", "polynomial exponent a, or hinge slope a", &S::async, &As::staleness_a).range(0.0, {}).idle_when(fedasync_only),
        bind_key<S>("staleness_b", "hinge: staleness tolerated at full weight", &S::async, &As::staleness_b).range(0.0, {}).idle_when(fedasync_only),
        bind_key<S>("buffer_size", "FedBuff: updates per aggregation", &S::async, &As::buffer_size).range(1.0, 1e6).idle_when(fedbuff_only),
        bind_key<S>("server_lr", "FedBuff: server learning rate", &S::async, &As::server_lr).range(0.0, {}, true).idle_when(fedbuff_only)}},
      {"devices", "where training runs (does not change results; pack changes them by float rounding)",
       {bind_key<S>("cpu_slots", "CPU trainer slots, one thread each; 0 = one per core", &S::cpu_slots).range(0.0, 4096.0).may_change_on_resume(),
        bind_key<S>("pool", "devices and their slots, e.g. \"cpu:2,cuda:0x4\"; empty = cpu_slots CPU slots", &S::device_pool).may_change_on_resume(),
        bind_key<S>("pack", "sync rounds: train this many clients of a round (in cohort order) as one packed model; results equal unpacked ones up to float rounding (docs/performance.md)",
                &S::pack).range(1.0, 4096.0),
        bind_key<S>("eval_lanes", "devices of the run's own process that get one more slot, for evaluation only, so a round's evaluation overlaps the next round's training (all: the CPU too); does not change results (docs/devices.md#evaluation-lanes)",
                &S::eval_lanes).may_change_on_resume(),
        bind_key<S>("graphs", "GPU slots capture a step of the algorithms that pack as a CUDA graph, once per batch shape, and replay it; the same bits as without (docs/performance.md#cuda-graphs)",
                &S::graphs).may_change_on_resume()}},
      privacy_section(),
      secure_aggregation_section(),
      hierarchy_section(),
      {"checkpoint", "when a run saves the state `drift resume` continues from (docs/checkpoints.md)",
       {bind_key<S>("every", "aggregations between checkpoints; 0 = by wall time only", &S::checkpoint, &C::every).range(0.0, 1e9).may_change_on_resume(),
        bind_key<S>("minutes", "wall-clock minutes between checkpoints; 0 = by count only", &S::checkpoint, &C::minutes).range(0.0, {}).may_change_on_resume(),
        bind_key<S>("at_end", "also after the last aggregation, so drift resume --set federation.rounds=N can extend the run; false saves its disk space",
                &S::checkpoint, &C::at_end).may_change_on_resume()}},
      {"output", "run directory",
       {bind_key<S>("runs_dir", "parent directory of run directories", &S::runs_dir),
        bind_key<S>("log_eligible", "write an 'eligible' row per eligible client and round to clients.csv", &S::log_eligible),
        bind_key<S>("plot_minutes", "wall-clock minutes between redrawings of index.html and the figures while the run or study runs; 0 = at the end only",
                &S::plot_minutes).range(0.0, {}).may_change_on_resume()}},
  };
  // clang-format on
  for (auto& section : sections) {
    if (section.name == "profile")
      for (const auto& k : profile_keys()) section.keys.push_back(lift(k, &S::profile));
    if (section.name == "availability")
      for (const auto& k : availability_keys()) section.keys.push_back(lift(k, &S::availability));
  }
  return sections;
}

}  // namespace

const std::vector<KeyBinding<ProfileConfig>>& profile_keys() {
  using P = ProfileConfig;
  // clang-format off
  static const std::vector<KeyBinding<P>> keys = {
      bind_key<P>("speed", "training samples per second (median if speed_sigma > 0)", &P::speed).range(kMinRate, kMaxRate),
      bind_key<P>("speed_sigma", "lognormal sigma of speed across clients; 0 = constant", &P::speed_sigma).range(0.0, 10.0),
      bind_key<P>("up_bandwidth", "upload bytes per second", &P::up_bandwidth).range(kMinRate, kMaxRate),
      bind_key<P>("down_bandwidth", "download bytes per second", &P::down_bandwidth).range(kMinRate, kMaxRate),
      bind_key<P>("latency", "seconds each way", &P::latency).range(0.0, kMaxVirtualSeconds),
      input_file(bind_key<P>("trace", "CSV client,speed,up_bandwidth,down_bandwidth,latency", &P::trace), "trace_digest"),
      bind_key<P>("trace_clients", "ids: trace client k is client k | seeded: a seeded draw of the trace's clients, one per client",
              &P::trace_clients),
      bind_key<P>("trace_digest", "the trace's digest; written when the scenario is resolved, and a trace whose bytes differ is refused",
              &P::trace_digest),
  };
  // clang-format on
  return keys;
}

const std::vector<KeyBinding<AvailabilityConfig>>& availability_keys() {
  using A = AvailabilityConfig;
  // The model's own keys come from its row (member_keys.cpp); validation adds them.
  static const std::vector<KeyBinding<A>> keys = {
      bind_key<A>("model", "how clients come and go; the model's own keys: drift list", &A::model)
          .choices(availability_model_names)};
  return keys;
}

const std::vector<KeyBinding<GroupConfig>>& group_keys() {
  using G = GroupConfig;
  // clang-format off
  static const std::vector<KeyBinding<G>> keys = {
      bind_key<G>("rule", "how the group's clients are chosen", &G::rule).optional(),
      bind_key<G>("labels", "dominant_label: the client's most frequent label is one of these; label_set: the client holds only these labels",
              &G::labels).optional().range(0.0, {}),
      bind_key<G>("from", "id_range: first client id", &G::from).optional().range(0.0, {}),
      bind_key<G>("to", "id_range: last client id (inclusive)", &G::to).optional().range(0.0, {}),
      bind_key<G>("share", "proportion: chance that a client not yet grouped joins", &G::share).optional().range(0.0, 1.0, true),
  };
  // clang-format on
  return keys;
}

const std::vector<KeyBinding<TimelineEntry>>& timeline_keys() {
  using T = TimelineEntry;
  // clang-format off
  static const std::vector<KeyBinding<T>> keys = {
      bind_key<T>("at_round", "round at whose start the entry fires", &T::at_round).optional().range(1.0, {}),
      bind_key<T>("at_time", "virtual time at which the entry fires", &T::at_time).optional().range(0.0, kMaxVirtualSeconds),
      bind_key<T>("action", "what happens", &T::action).optional(),
      bind_key<T>("group", "group the action applies to", &T::group).optional(),
      bind_key<T>("edge", "offline / online at_time: the edge the action applies to ([hierarchy]: its name or number), instead of a group; move: the edge the group's clients move to (name, number, or home: each client's assigned edge)", &T::edge).optional().or_number(),
      bind_key<T>("value", "speed factor, fraction or deadline", &T::value).optional().range(0.0, kMaxVirtualSeconds),
      bind_key<T>("sampler", "sampler name (action = sampler)", &T::sampler).optional(),
  };
  // clang-format on
  return keys;
}

const std::vector<ScenarioSection>& scenario_sections() {
  static const std::vector<ScenarioSection> sections = make_sections();
  return sections;
}

const std::vector<SectionSpec>& scenario_schema() {
  static const std::vector<SectionSpec> schema = [] {
    std::vector<SectionSpec> out;
    for (const auto& s : scenario_sections()) out.push_back({s.name, s.help, specs_of(s.keys)});
    return out;
  }();
  return schema;
}

const std::vector<ParamSpec>& group_schema() {
  static const std::vector<ParamSpec> specs = specs_of(group_keys());
  return specs;
}

const std::vector<ParamSpec>& timeline_schema() {
  static const std::vector<ParamSpec> specs = specs_of(timeline_keys());
  return specs;
}

std::vector<std::string> idle_key_warnings(const Scenario& s) {
  std::vector<std::string> out;
  for (const auto& section : scenario_sections())
    for (const auto& k : section.keys) {
      if (!k.idle || !k.spec.default_value || k.load(s) == *k.spec.default_value) continue;
      if (const auto why = k.idle(s); !why.empty())
        out.push_back((section.name.empty() ? "" : section.name + ".") + k.spec.key + " does nothing " + why);
    }
  return out;
}

std::vector<std::string> resumable_keys() {
  std::vector<std::string> out;
  for (const auto& section : scenario_sections())
    for (const auto& k : section.keys)
      if (k.resumable) out.push_back(section.name + "." + k.spec.key);
  return out;
}

}  // namespace drift
