#include "messages/state_store.hpp"

#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace drift::msg {

std::optional<Buffer> MemoryStateStore::load(std::uint32_t client) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = states_.find(client);
  if (it == states_.end()) return std::nullopt;
  return it->second;
}

void MemoryStateStore::save(std::uint32_t client, const Buffer& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  states_[client] = state;
}

DiskStateStore::DiskStateStore(std::filesystem::path directory) : directory_(std::move(directory)) {
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) throw std::runtime_error("cannot create " + directory_.string() + ": " + ec.message());
}

std::filesystem::path DiskStateStore::file_of(std::uint32_t client) const {
  return directory_ / (std::to_string(client) + ".state");
}

std::optional<Buffer> DiskStateStore::load(std::uint32_t client) {
  const auto path = file_of(client);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read " + path.string());
  return Buffer(std::move(bytes));
}

void DiskStateStore::save(std::uint32_t client, const Buffer& state) {
  const auto path = file_of(client);
  auto partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(state.data(), static_cast<std::streamsize>(state.size()));
    if (!out) throw std::runtime_error("cannot write " + partial.string());
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) throw std::runtime_error("cannot rename " + partial.string() + ": " + ec.message());
}

std::shared_ptr<StateStore> make_state_store(ClientStateStore kind, const std::filesystem::path& directory) {
  if (kind == ClientStateStore::disk) return std::make_shared<DiskStateStore>(directory);
  return std::make_shared<MemoryStateStore>();
}

}  // namespace drift::msg
