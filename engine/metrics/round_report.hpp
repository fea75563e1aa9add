#pragma once
// What the server records about one aggregation; the metrics sink turns it into files.
#include <cstdint>
#include <string>
#include <vector>

namespace drift {

struct ClientRecord {
  std::uint32_t client_id = 0;
  std::string event;  // selected | finished | failed
  std::uint64_t num_samples = 0;
  double train_loss = 0.0;
  std::uint64_t bytes_down = 0;
  std::uint64_t bytes_up = 0;
  std::string detail;
};

struct RoundReport {
  std::uint32_t round = 0;
  std::uint32_t total_rounds = 0;
  std::uint64_t model_version = 0;
  std::vector<std::uint32_t> cohort;
  std::uint32_t num_updates = 0;
  std::uint64_t samples = 0;
  double train_loss = 0.0;
  double train_accuracy = 0.0;
  bool evaluated = false;
  double test_accuracy = 0.0;
  double test_loss = 0.0;
  std::vector<double> per_class_accuracy;
  std::uint64_t bytes_down = 0;
  std::uint64_t bytes_up = 0;
  std::vector<ClientRecord> clients;
  // Wall-clock seconds: reported in timings.jsonl only, so metrics.jsonl stays comparable.
  double wall_train_seconds = 0.0;
  double wall_eval_seconds = 0.0;
};

}  // namespace drift
