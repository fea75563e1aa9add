#include "engine/algorithms/client_change_table.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "engine/core/error.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {

bool ClientChangeTable::has_entry(std::uint32_t client) const {
  return disk_ ? disk_->has(client) : entries_.at(client).defined();
}

torch::Tensor ClientChangeTable::read(std::uint32_t client) const {
  if (!disk_) return entries_.at(client);
  auto e = torch::empty({values_}, torch::TensorOptions().dtype(storage_));
  disk_->read(client, e.data_ptr());
  return e;
}

torch::Tensor ClientChangeTable::entry(std::uint32_t client, std::int64_t values) const {
  return has_entry(client) ? read(client).to(torch::kFloat64) : torch::zeros({values}, torch::kFloat64);
}

torch::Tensor ClientChangeTable::sum(std::int64_t values) const {
  return sum_.defined() ? sum_ : torch::zeros({values}, torch::kFloat64);
}

void ClientChangeTable::store(std::uint32_t client, const torch::Tensor& change, torch::ScalarType storage) {
  torch::NoGradGuard no_grad;
  auto stored = change.to(storage).contiguous();
  const auto entry_bytes = static_cast<std::uint64_t>(stored.numel() * stored.element_size());
  if (!sum_.defined()) sum_ = torch::zeros({change.numel()}, torch::kFloat64);
  if (has_entry(client)) {
    sum_ -= read(client).to(torch::kFloat64);
    bytes_ -= entry_bytes;
  } else {
    ++filled_;
  }
  sum_ += stored.to(torch::kFloat64);
  bytes_ += entry_bytes;
  storage_ = storage;
  values_ = stored.numel();
  if (disk_)
    disk_->write(client, stored.data_ptr(), entry_bytes);
  else
    entries_.at(client) = std::move(stored);
}

void ClientChangeTable::regroup(const std::vector<std::optional<std::uint32_t>>& previous) {
  if (disk_) throw std::logic_error("a client change table on disk cannot follow clients between edges");
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> entries(previous.size());
  for (std::size_t i = 0; i < previous.size(); ++i)
    if (previous[i]) entries[i] = std::move(entries_.at(*previous[i]));
  const bool forgot = std::any_of(entries_.begin(), entries_.end(), [](const torch::Tensor& e) { return e.defined(); });
  entries_ = std::move(entries);
  clients_ = static_cast<std::uint32_t>(previous.size());
  filled_ = 0;
  bytes_ = 0;
  for (const auto& e : entries_) {
    if (!e.defined()) continue;
    ++filled_;
    bytes_ += static_cast<std::uint64_t>(e.numel() * e.element_size());
  }
  if (!forgot) return;  // only newcomers: their zero entries leave the sum as it is
  sum_ = filled_ == 0 ? torch::Tensor() : torch::zeros({values_}, torch::kFloat64);
  for (const auto& e : entries_)
    if (e.defined()) sum_ += e.to(torch::kFloat64);
}

ClientShares ClientChangeTable::filled_shares(double coefficient) const {
  ClientShares shares;
  shares.reserve(filled_);
  for (std::uint32_t c = 0; c < clients(); ++c)
    if (has_entry(c)) shares.emplace_back(c, coefficient);
  return shares;
}

ClientChangeTable::ClientChangeTable(std::uint32_t clients, const std::filesystem::path& file)
    : clients_(clients), disk_(std::make_unique<DiskSlots>(file, clients)) {}

void ClientChangeTable::require_client(const std::string& algorithm, std::uint32_t client) const {
  if (client >= clients_)
    throw std::logic_error(algorithm + ": client " + std::to_string(client) + " beyond the registered " +
                           std::to_string(clients_));
}

AlgorithmMetrics ClientChangeTable::metrics() const {
  AlgorithmMetrics m;
  m.scalars["table_clients"] = filled_;
  m.scalars["table_mb"] = static_cast<double>(bytes_) / (1024.0 * 1024.0);
  if (disk_) m.scalars["table_on_disk"] = 1.0;
  return m;
}

// A table in memory archives its entries; one on disk which slot holds each (DiskSlots).
void ClientChangeTable::archive(StateArchive& ar) {
  std::uint64_t clients = clients_;
  ar.value(clients);
  if (ar.loading() && clients != clients_)
    throw DecodeError("a checkpoint's table of " + std::to_string(clients) + " clients for a federation of " +
                      std::to_string(clients_));
  bool on_disk = disk_ != nullptr;
  ar.value(on_disk);
  if (on_disk != (disk_ != nullptr))
    throw DecodeError(std::string("a checkpoint's table kept ") + (on_disk ? "on disk" : "in memory") +
                      " for a run that keeps it " + (disk_ ? "on disk" : "in memory"));
  auto dtype = static_cast<std::int32_t>(storage_);
  ar.value(dtype);
  storage_ = static_cast<torch::ScalarType>(dtype);
  ar.value(values_);
  if (disk_)
    disk_->archive(ar);
  else {
    ar.reserve(bytes_ + std::size_t{64} * entries_.size());  // each entry's data and its few header bytes
    for (auto& e : entries_) archive_tensor(ar, e);
  }
  archive_tensor(ar, sum_);  // kept, not summed again: its float64 rounding is the run's
  if (!ar.loading()) return;
  filled_ = 0;
  for (std::uint32_t c = 0; c < clients_; ++c) filled_ += has_entry(c) ? 1 : 0;
  bytes_ = static_cast<std::uint64_t>(filled_) * static_cast<std::uint64_t>(values_) *
           static_cast<std::uint64_t>(torch::elementSize(storage_));
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

std::string moving_table_refusal(const std::string& algorithm, const std::string& what, const FederationShape& shape,
                                 double budget_mb) {
  if (shape.most_clients == 0) return {};
  const auto refusal = table_budget_refusal(algorithm, what, shape.most_clients, shape.model_bytes, budget_mb);
  if (refusal.empty()) return {};
  return refusal +
         ". The timeline moves clients between edges, so one edge's table may come to hold every client, and a "
         "table kept on disk cannot follow the moves";
}

ClientChangeTable make_change_table(const std::string& algorithm, const std::string& what, const FederationShape& shape,
                                    double budget_mb) {
  const auto clients = std::max<std::uint32_t>(shape.num_clients, 1);
  if (shape.most_clients > 0) {
    if (const auto refusal = moving_table_refusal(algorithm, what, shape, budget_mb); !refusal.empty())
      throw UserError(refusal);
    return ClientChangeTable(clients);
  }
  const auto refusal = table_budget_refusal(algorithm, what, clients, shape.model_bytes, budget_mb);
  if (refusal.empty()) return ClientChangeTable(clients);
  if (shape.state_dir.empty()) throw UserError(refusal + ", or run it with a run directory to keep it on disk");
  const auto file = std::filesystem::path(shape.state_dir) / (algorithm + "_table.bin");
  std::filesystem::create_directories(shape.state_dir);  // an edge's own directory ([hierarchy]) is made on first use
  // Two slots per client (DiskSlots): the most the file can grow to.
  const auto need = 2 * static_cast<std::uint64_t>(clients) * shape.model_bytes;
  std::error_code ec;
  const auto space = std::filesystem::space(shape.state_dir, ec);
  if (!ec && space.available < need && !std::filesystem::exists(file))
    throw UserError(algorithm + "'s table is above algorithm.memory_budget_mb and would be kept in " + file.string() +
                    ", which may grow to " + std::to_string(need / (1024 * 1024)) + " MB, but the disk has " +
                    std::to_string(space.available / (1024 * 1024)) + " MB free");
  return ClientChangeTable(clients, file);
}

}  // namespace drift
