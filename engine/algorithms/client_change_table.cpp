#include "engine/algorithms/client_change_table.hpp"

#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "engine/core/error.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {

torch::Tensor ClientChangeTable::entry(std::uint32_t client, std::int64_t values) const {
  const auto& e = entries_.at(client);
  return e.defined() ? e.to(torch::kFloat64) : torch::zeros({values}, torch::kFloat64);
}

torch::Tensor ClientChangeTable::sum(std::int64_t values) const {
  return sum_.defined() ? sum_ : torch::zeros({values}, torch::kFloat64);
}

void ClientChangeTable::store(std::uint32_t client, const torch::Tensor& change, torch::ScalarType storage) {
  torch::NoGradGuard no_grad;
  auto& e = entries_.at(client);
  auto stored = change.to(storage).contiguous();
  if (!sum_.defined()) sum_ = torch::zeros({change.numel()}, torch::kFloat64);
  if (e.defined()) {
    sum_ -= e.to(torch::kFloat64);
    bytes_ -= static_cast<std::uint64_t>(e.numel() * e.element_size());
  } else {
    ++filled_;
  }
  sum_ += stored.to(torch::kFloat64);
  bytes_ += static_cast<std::uint64_t>(stored.numel() * stored.element_size());
  e = std::move(stored);
}

void ClientChangeTable::require_client(const std::string& algorithm, std::uint32_t client) const {
  if (client >= entries_.size())
    throw std::logic_error(algorithm + ": client " + std::to_string(client) + " beyond the registered " +
                           std::to_string(entries_.size()));
}

AlgorithmMetrics ClientChangeTable::metrics() const {
  AlgorithmMetrics m;
  m.scalars["table_clients"] = filled_;
  m.scalars["table_mb"] = static_cast<double>(bytes_) / (1024.0 * 1024.0);
  return m;
}

void ClientChangeTable::archive(StateArchive& ar) {
  std::uint64_t clients = entries_.size();
  ar.value(clients);
  if (ar.loading() && clients != entries_.size())
    throw DecodeError("a checkpoint's table of " + std::to_string(clients) + " clients for a federation of " +
                      std::to_string(entries_.size()));
  for (auto& e : entries_) archive_tensor(ar, e);
  archive_tensor(ar, sum_);  // kept, not summed again: its float64 rounding is the run's
  if (!ar.loading()) return;
  filled_ = 0;
  bytes_ = 0;
  for (const auto& e : entries_)
    if (e.defined()) {
      ++filled_;
      bytes_ += static_cast<std::uint64_t>(e.numel() * e.element_size());
    }
}

torch::ScalarType storage_dtype(const NamedTensors& model) {
  for (const auto& t : model)
    if (t.value.is_floating_point()) return t.value.scalar_type();
  return torch::kFloat32;
}

std::string table_budget_refusal(const std::string& algorithm, const std::string& what, std::uint32_t clients,
                                 std::uint64_t entry_bytes, double budget_mb) {
  if (entry_bytes == 0) return {};
  const double need_mb = static_cast<double>(clients) * static_cast<double>(entry_bytes) / (1024.0 * 1024.0);
  if (need_mb <= budget_mb) return {};
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << algorithm << " keeps, for each of the " << clients << " clients, "
      << what << ": " << clients << " x " << static_cast<double>(entry_bytes) / (1024.0 * 1024.0) << " MB = " << need_mb
      << " MB, above algorithm.memory_budget_mb = " << std::defaultfloat << std::setprecision(6) << budget_mb
      << "; raise the budget if the machine has the memory, or use fewer clients";
  return out.str();
}

}  // namespace drift
