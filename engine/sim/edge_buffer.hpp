#pragma once
// The cloud's step under hierarchy.cloud = "fedbuff"
// (docs/hierarchy.md#asynchronous-edges-the-buffered-cloud): K edge models, each trained from the
// global model it pulled some cloud steps ago, move the global model by server_lr times their
// deltas, each weighted by its edge's samples among the buffer's and by FedBuff's
// 1 / sqrt(1 + staleness).
#include <cstdint>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/sim/edge_metrics.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

struct BufferedEdge {
  std::uint32_t edge = 0;
  std::uint64_t samples = 0;    // its clients' samples
  std::uint64_t staleness = 0;  // cloud steps since it pulled
  NamedTensors model, pulled;   // what it sends, and the global model it started from
  // For the report: when it arrived, the rounds of its loop, from the pull's arrival to its last
  // round's end, and the clients it aggregated with their summed shares.
  double arrival = 0.0;
  std::uint32_t rounds_run = 0;
  double busy_seconds = 0.0;
  std::vector<std::uint32_t> aggregated;
  ClientShares shares;
  EdgeMetrics metrics;  // what its server half reported in the loop
  // The edge host's answer with `model` that this entry awaits (0: the model is here). Not
  // archived: a checkpoint waits until every model is here.
  std::uint64_t model_request = 0;
  // Every field a checkpoint keeps, in its order (archive_buffered): beside the fields, so that
  // one added above is added here too.
  template <class Visit>
  void each_field(Visit&& visit) {
    visit(edge, samples, staleness, model, pulled, arrival, rounds_run, busy_seconds, aggregated, shares, metrics);
  }
};

// Each entry's weight in the step, in order: n_k / sum(n) / sqrt(1 + staleness_k).
std::vector<double> buffer_weights(const std::vector<BufferedEdge>& buffer);

// x + server_lr * sum_k w_k (model_k - pulled_k), in float64, entries in the given order;
// integer tensors (counters) from the last entry's model.
NamedTensors buffered_step(const NamedTensors& global, const std::vector<BufferedEdge>& buffer, double server_lr);

void archive_buffered(StateArchive& ar, std::vector<BufferedEdge>& buffer);
void archive_shares(StateArchive& ar, ClientShares& shares);
inline void archive_field(StateArchive& ar, ClientShares& shares) { archive_shares(ar, shares); }
inline void archive_field(StateArchive& ar, EdgeMetrics& metrics) { metrics.archive(ar); }

}  // namespace drift
