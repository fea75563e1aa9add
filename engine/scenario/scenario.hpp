#pragma once
// A validated scenario: every field has a value (defaults filled in), every name resolves in
// its registry, every number is in range. Built only by load_scenario().
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/federated_types.hpp"
#include "engine/scenario/param_spec.hpp"

namespace drift {

struct DataConfig {
  std::string dataset;
  std::string path;  // directory of the dataset files; "" = the dataset's default location
  std::int64_t max_train_samples = 0;  // 0 = all; otherwise the first N (for quick runs)
  std::int64_t max_test_samples = 0;
};

struct PartitionConfig {
  std::string scheme;  // iid | dirichlet | shards
  double alpha = 0.5;
  std::int64_t shards_per_client = 2;
  std::int64_t min_client_samples = 10;
  std::int64_t max_attempts = 1000;
};

struct SamplerConfig {
  std::string name;
  std::int64_t clients_per_round = 0;  // exactly one of these two is set
  double fraction = 0.0;
  // The cohort size this gives for a population: round(fraction * clients), at least 1.
  std::uint32_t cohort_size(std::uint32_t clients) const;
};

struct EvaluationConfig {
  std::int64_t every = 1;  // evaluate the global model every N rounds (and after the last)
  std::int64_t batch_size = 500;
  std::int64_t chunk_size = 2000;  // test samples per evaluation job on the device pool
  std::vector<double> targets;     // accuracies for rounds-to-X in summary.json
};

struct Scenario {
  std::string name;
  std::uint64_t seed = 0;
  std::string source;  // file it was loaded from
  DataConfig data;
  PartitionConfig partition;
  std::uint32_t clients = 0;
  std::uint32_t rounds = 0;
  SamplerConfig sampler;
  std::string model;
  std::string algorithm;
  ParamSet algorithm_params;
  HyperParams training;
  EvaluationConfig evaluation;
  std::int64_t cpu_slots = 0;  // trainer slots on the CPU; 0 = one per core
  std::string runs_dir;
  std::string resolved_toml;  // the scenario with every default written out
};

// "key=value" as given to --set; value is TOML (1, 0.5, true, "x", [1, 2]) or a bare string.
struct Override {
  std::string key;
  std::string value;
};

// Loads, applies overrides, validates and resolves. Throws UserError with one line naming
// file:line:column (or the --set flag), the key, what was expected, and a suggestion.
Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {});
Scenario parse_scenario(const std::string& toml_text, const std::string& source_name,
                        const std::vector<Override>& overrides = {});

Override parse_override(const std::string& flag);  // "a.b=c"

}  // namespace drift
