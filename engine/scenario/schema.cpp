#include "engine/scenario/schema.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {
namespace {

ParamSpec key(std::string name, ParamKind kind, std::optional<ParamValue> def, std::string help) {
  ParamSpec s;
  s.key = std::move(name);
  s.kind = kind;
  s.default_value = std::move(def);
  s.help = std::move(help);
  return s;
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

}  // namespace

const std::vector<SectionSpec>& scenario_schema() {
  static const std::vector<SectionSpec> schema = {
      {"", "top level",
       {key("name", K::string, std::nullopt, "run name; defaults to the file name"),
        ranged(key("seed", K::integer, std::int64_t{1}, "root of every random stream"), 0.0, std::nullopt)}},
      {"data", "dataset",
       {named(key("dataset", K::string, std::string("fashion-mnist"), "dataset name (drift list)"), dataset_names),
        key("path", K::string, std::string(""), "directory of the dataset files; empty = the package's location"),
        ranged(key("max_train_samples", K::integer, std::int64_t{0}, "use only the first N training samples; 0 = all"), 0.0, std::nullopt),
        ranged(key("max_test_samples", K::integer, std::int64_t{0}, "use only the first N test samples; 0 = all"), 0.0, std::nullopt)}},
      {"partition", "how training data is split across clients",
       {named(key("scheme", K::string, std::string("dirichlet"), "iid | dirichlet | shards"), partition_scheme_names),
        ranged(key("alpha", K::number, 0.5, "Dirichlet concentration; small = more skewed"), 0.0, std::nullopt, true),
        ranged(key("shards_per_client", K::integer, std::int64_t{2}, "label shards per client (scheme = shards)"), 1.0, std::nullopt),
        ranged(key("min_client_samples", K::integer, std::int64_t{10}, "Dirichlet redraws until every client has this many"), 1.0, std::nullopt),
        ranged(key("max_attempts", K::integer, std::int64_t{1000}, "Dirichlet redraws before giving up"), 1.0, std::nullopt)}},
      {"federation", "population and length",
       {ranged(key("clients", K::integer, std::int64_t{10}, "number of clients"), 1.0, 1e7),
        ranged(key("rounds", K::integer, std::int64_t{10}, "aggregation rounds"), 1.0, 1e9)}},
      {"sampler", "who takes part in a round: set clients_per_round or fraction",
       {named(key("name", K::string, std::string("uniform"), "selection policy (drift list)"), sampler_names),
        ranged(key("clients_per_round", K::integer, std::nullopt, "cohort size"), 1.0, std::nullopt),
        ranged(key("fraction", K::number, std::nullopt, "cohort size as a fraction of the clients (default 0.1)"), 0.0, 1.0, true)}},
      {"model", "architecture",
       {named(key("name", K::string, std::string("small-cnn"), "model name (drift list)"), model_names)}},
      {"algorithm", "federated algorithm; further keys are the algorithm's parameters",
       {named(key("name", K::string, std::string("fedavg"), "algorithm name (drift list)"), algorithm_names)}},
      {"training", "local training on each client",
       {ranged(key("local_epochs", K::integer, std::int64_t{1}, "passes over the local data per round"), 1.0, 1e6),
        ranged(key("batch_size", K::integer, std::int64_t{64}, "mini-batch size"), 1.0, 1e7),
        ranged(key("lr", K::number, 0.05, "SGD learning rate"), 0.0, std::nullopt, true),
        ranged(key("momentum", K::number, 0.0, "SGD momentum (buffers reset every round)"), 0.0, 1.0),
        ranged(key("weight_decay", K::number, 0.0, "L2 penalty"), 0.0, std::nullopt),
        key("drop_last", K::boolean, false, "skip the last partial batch")}},
      {"evaluation", "global model on the test set",
       {ranged(key("every", K::integer, std::int64_t{1}, "evaluate every N rounds (and after the last)"), 1.0, std::nullopt),
        ranged(key("batch_size", K::integer, std::int64_t{500}, "evaluation batch size"), 1.0, std::nullopt),
        ranged(key("chunk_size", K::integer, std::int64_t{2000}, "test samples per evaluation job"), 1.0, std::nullopt),
        ranged(key("targets", K::number_list, std::vector<double>{0.5, 0.7, 0.8}, "accuracies for rounds-to-X in summary.json"), 0.0, 1.0)}},
      {"devices", "where training runs (does not change results)",
       {ranged(key("cpu_slots", K::integer, std::int64_t{0}, "CPU trainer slots, one thread each; 0 = one per core"), 0.0, 4096.0)}},
      {"output", "run directory",
       {key("runs_dir", K::string, std::string("runs"), "parent directory of run directories")}},
  };
  return schema;
}

}  // namespace drift
