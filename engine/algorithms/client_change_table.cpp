#include "engine/algorithms/client_change_table.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "engine/core/error.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {

bool ClientChangeTable::has_entry(std::uint32_t client) const {
  return disk_ ? disk_->has(rows_.at(client)) : entries_.at(client).defined();
}

torch::Tensor ClientChangeTable::read(std::uint32_t client) const {
  if (!disk_) return entries_.at(client);
  auto e = torch::empty({values_}, torch::TensorOptions().dtype(storage_));
  disk_->read(rows_.at(client), e.data_ptr());
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
    disk_->write(rows_.at(client), stored.data_ptr(), entry_bytes);
  else
    entries_.at(client) = std::move(stored);
}

void ClientChangeTable::regroup(const std::vector<std::optional<std::uint32_t>>& previous) {
  std::vector<bool> kept(clients_, false);
  for (const auto& p : previous)
    if (p) kept.at(*p) = true;
  bool forgot = false;  // a client who left had an entry
  for (std::uint32_t c = 0; c < clients_; ++c) forgot = forgot || (!kept[c] && has_entry(c));
  if (disk_) {
    regroup_rows(previous);
  } else {
    std::vector<torch::Tensor> entries(previous.size());
    for (std::size_t i = 0; i < previous.size(); ++i)
      if (previous[i]) entries[i] = std::move(entries_.at(*previous[i]));
    entries_ = std::move(entries);
  }
  clients_ = static_cast<std::uint32_t>(previous.size());
  count_filled();
  if (forgot) sum_again();  // only newcomers: their zero entries leave the sum as it is
}

// Those who stay keep their rows; the rows of those who left are forgotten; newcomers take the
// lowest rows free.
void ClientChangeTable::regroup_rows(const std::vector<std::optional<std::uint32_t>>& previous) {
  if (previous.size() > disk_->rows())
    throw std::logic_error("a client change table on disk of " + std::to_string(disk_->rows()) + " rows for " +
                           std::to_string(previous.size()) + " clients");
  std::vector<bool> taken(disk_->rows(), false);
  std::vector<std::uint32_t> rows(previous.size(), 0);
  for (std::size_t i = 0; i < previous.size(); ++i)
    if (previous[i]) taken.at(rows[i] = rows_.at(*previous[i])) = true;
  for (const auto row : rows_)
    if (!taken[row]) disk_->forget(row);
  std::uint32_t free = 0;
  for (std::size_t i = 0; i < previous.size(); ++i) {
    if (previous[i]) continue;
    while (taken[free]) ++free;
    taken[free] = true;
    rows[i] = free;
  }
  rows_ = std::move(rows);
}

void ClientChangeTable::sum_again() {
  torch::NoGradGuard no_grad;
  sum_ = filled_ == 0 ? torch::Tensor() : torch::zeros({values_}, torch::kFloat64);
  for (std::uint32_t c = 0; c < clients_; ++c)
    if (has_entry(c)) sum_ += read(c).to(torch::kFloat64);
}

ClientShares ClientChangeTable::filled_shares(double coefficient) const {
  ClientShares shares;
  shares.reserve(filled_);
  for (std::uint32_t c = 0; c < clients(); ++c)
    if (has_entry(c)) shares.emplace_back(c, coefficient);
  return shares;
}

ClientChangeTable::ClientChangeTable(std::uint32_t clients, const std::filesystem::path& file, std::uint32_t rows)
    : clients_(clients), disk_(std::make_unique<DiskSlots>(file, std::max(rows, clients))), follows_moves_(rows > 0) {
  rows_.resize(clients);
  for (std::uint32_t c = 0; c < clients; ++c) rows_[c] = c;
}

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
  if (disk_) {
    disk_->archive(ar);
    if (follows_moves_) {
      ar.values(rows_);
      for (const auto row : rows_)
        if (row >= disk_->rows()) throw DecodeError("a checkpoint's table on disk maps a client beyond its rows");
    }
  } else {
    ar.reserve(bytes_ + std::size_t{64} * entries_.size());  // each entry's data and its few header bytes
    for (auto& e : entries_) archive_tensor(ar, e);
  }
  archive_tensor(ar, sum_);  // kept, not summed again: its float64 rounding is the run's
  if (!ar.loading()) return;
  if (disk_ && rows_.size() != clients_)
    throw DecodeError("a checkpoint's table on disk maps another number of clients");
  count_filled();
}

void ClientChangeTable::count_filled() {
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

std::string change_table_placement(const std::string& algorithm, const std::string& what, const FederationShape& shape,
                                   double budget_mb) {
  if (shape.model_bytes == 0) return {};
  const auto clients = std::max<std::uint32_t>(shape.num_clients, 1);
  const auto most = std::max(clients, shape.most_clients);
  const double mb = static_cast<double>(most) * static_cast<double>(shape.model_bytes) / (1024.0 * 1024.0);
  std::ostringstream out;
  out << algorithm << " keeps " << what << " of each of " << (most > clients ? "up to " : "") << most
      << " clients: " << std::fixed << std::setprecision(1) << mb << " MB, ";
  out << std::defaultfloat << std::setprecision(6);
  if (table_budget_refusal(algorithm, what, most, shape.model_bytes, budget_mb).empty())
    out << "in memory (within algorithm.memory_budget_mb = " << budget_mb << ")";
  else
    out << "on disk in the run directory (above algorithm.memory_budget_mb = " << budget_mb << ")";
  return out.str();
}

ClientChangeTable make_change_table(const std::string& algorithm, const std::string& what, const FederationShape& shape,
                                    double budget_mb) {
  const auto clients = std::max<std::uint32_t>(shape.num_clients, 1);
  const auto most = std::max(clients, shape.most_clients);  // one edge may come to hold them all
  const auto refusal = table_budget_refusal(algorithm, what, most, shape.model_bytes, budget_mb);
  if (refusal.empty()) return ClientChangeTable(clients);
  if (shape.state_dir.empty()) throw UserError(refusal + ", or run it with a run directory to keep it on disk");
  const auto file = std::filesystem::path(shape.state_dir) / (algorithm + "_table.bin");
  std::filesystem::create_directories(shape.state_dir);  // an edge's own directory ([hierarchy]) is made on first use
  // Two slots per row (DiskSlots): the most the file can grow to.
  const auto need = 2 * static_cast<std::uint64_t>(most) * shape.model_bytes;
  std::error_code ec;
  const auto space = std::filesystem::space(shape.state_dir, ec);
  if (!ec && space.available < need && !std::filesystem::exists(file))
    throw UserError(algorithm + "'s table is above algorithm.memory_budget_mb and would be kept in " + file.string() +
                    ", which may grow to " + std::to_string(need / (1024 * 1024)) + " MB, but the disk has " +
                    std::to_string(space.available / (1024 * 1024)) + " MB free");
  return ClientChangeTable(clients, file, shape.most_clients);
}

}  // namespace drift
