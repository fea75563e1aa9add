#include "wall_estimate.hpp"

#include <algorithm>
#include <chrono>

#include "engine/population/availability.hpp"
#include "engine/population/topology.hpp"
#include "engine/sim/privacy_book.hpp"
#include "engine/training/devices.hpp"

namespace drift::cli {

std::uint64_t bytes_of(const NamedTensors& state) {
  std::uint64_t bytes = 0;
  for (const auto& t : state) bytes += t.value.numel() * t.value.element_size();
  return bytes;
}
namespace {

// The median of a few SGD steps on the first batch of the training data, on the one thread
// every drift process computes with (as a CPU slot runs them).
double step_seconds(const FederationData& data, Model& model, std::int64_t batch) {
  const auto& train = *data.data.train;
  const auto n = std::min<std::int64_t>(batch, train.size());
  const auto x = train.images.slice(0, 0, n), y = train.labels.slice(0, 0, n);
  model.train();
  torch::optim::SGD sgd(model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  std::vector<double> times;
  for (int i = 0; i < 6; ++i) {
    const auto start = std::chrono::steady_clock::now();
    sgd.zero_grad();
    torch::nn::functional::cross_entropy(model.forward(x).logits, y).backward();
    sgd.step();
    if (i >= 2) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Local steps of a task, averaged over the clients.
double mean_steps(const Scenario& s, const FederationData& data) {
  const auto& hp = s.training;
  if (hp.local_steps > 0) return hp.local_steps;
  double total = 0;
  for (const auto& c : data.partition.indices) {
    const auto n = static_cast<double>(c.size()), b = static_cast<double>(hp.batch_size);
    total += hp.local_epochs * (hp.drop_last ? std::floor(n / b) : std::ceil(n / b));
  }
  return data.partition.indices.empty() ? 0.0 : total / static_cast<double>(data.partition.indices.size());
}

// Clients online at the start of a round, averaged over the run's first rounds (at most 50):
// participation processes and availability cycles leave most of a large population idle.
double mean_online(const Scenario& s, const FederationData& data, double round_seconds) {
  ClientAvailability availability(s, *data.population);
  const auto rounds = std::min<std::uint32_t>(s.rounds, 50);
  double total = 0;
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    availability.set_round(r);
    const double t = (r - 1) * round_seconds;
    for (std::uint32_t c = 0; c < data.population->size(); ++c) total += availability.online(c, t) ? 1 : 0;
  }
  return rounds > 0 ? total / rounds : 0.0;
}

}  // namespace

WallEstimate estimate_wall_time(const Scenario& s, const FederationData& data, Model& model, double round_seconds) {
  WallEstimate e;
  const auto pool = parse_device_pool(s.device_pool.empty() ? "cpu" : s.device_pool);
  for (const auto& d : pool) {
    if (d.device.is_cuda()) {
      e.not_estimated = "not estimated for GPU slots";
      return e;
    }
    e.slots += d.slots;
  }
  if (s.device_pool.empty() && s.cpu_slots > 0) e.slots = static_cast<std::uint32_t>(s.cpu_slots);
  if (e.slots == 0) e.slots = usable_cores();
  e.step_seconds = step_seconds(data, model, s.training.batch_size);
  // Jobs spread over the slots; a sync round waits for its last one. Under [hierarchy] a cloud
  // round runs edge_rounds waves, each of every running edge's round side by side.
  double waves = 0.0;
  if (const auto& h = s.hierarchy; h.enabled()) {
    const double per_edge = s.sampler.cohort_size(std::max(1u, s.clients / h.edges));
    double edges = std::max(1.0, std::round(expected_online_edges(h)));
    if (h.edges_per_round > 0) edges = std::min(edges, static_cast<double>(h.edges_per_round));
    if (h.cloud == EdgeCloud::fedbuff && h.concurrency > 0) edges = std::min(edges, static_cast<double>(h.concurrency));
    waves = static_cast<double>(h.edge_rounds) * std::ceil(edges * per_edge / e.slots);
    // fedbuff: a cloud step takes `buffer` of the edges' loops, not every online edge's.
    if (h.cloud == EdgeCloud::fedbuff) waves *= static_cast<double>(h.buffer) / edges;
  } else {
    const double jobs = std::max(1.0, std::min(expected_cohort(s), mean_online(s, data, round_seconds)));
    waves = std::ceil(jobs / e.slots);
  }
  e.seconds = static_cast<double>(s.rounds) * waves * mean_steps(s, data) * e.step_seconds;
  return e;
}

}  // namespace drift::cli
