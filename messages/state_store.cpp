#include "messages/state_store.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include "engine/core/state_archive.hpp"

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

void MemoryStateStore::save_to(const std::filesystem::path& directory) {
  auto ar = StateArchive::writer();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ar.count(states_.size());
    for (const auto& [client, state] : states_) {
      auto id = client;
      ar.value(id);
      std::string bytes(state.data(), state.size());
      ar.text(bytes);
    }
  }
  const auto path = directory / "clients.bin";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(ar.bytes().data(), static_cast<std::streamsize>(ar.bytes().size()));
  out.flush();
  if (!out) throw std::runtime_error(path.string() + ": cannot write: " + std::strerror(errno));
}

void MemoryStateStore::restore_from(const std::filesystem::path& directory) {
  const auto path = directory / "clients.bin";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto ar = StateArchive::reader(std::move(bytes), path.string());
  std::map<std::uint32_t, Buffer> states;
  const auto n = ar.count(0, sizeof(std::uint32_t) + sizeof(std::uint64_t));
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint32_t client = 0;
    ar.value(client);
    std::string state;
    ar.text(state);
    states[client] = Buffer(std::vector<char>(state.begin(), state.end()));
  }
  ar.expect_end();
  std::lock_guard<std::mutex> lock(mutex_);
  states_ = std::move(states);
}

namespace {

// Links `from` as `to`, or copies it where the file system cannot link.
void link_or_copy(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code ec;
  std::filesystem::create_hard_link(from, to, ec);
  if (!ec) return;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) throw std::runtime_error("cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
}

bool is_state_file(const std::filesystem::directory_entry& e) {
  return e.is_regular_file() && e.path().extension() == ".state";
}

}  // namespace

void DiskStateStore::save_to(const std::filesystem::path& directory) {
  for (const auto& e : std::filesystem::directory_iterator(directory_))
    if (is_state_file(e)) link_or_copy(e.path(), directory / e.path().filename());
}

void DiskStateStore::restore_from(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> stale;
  for (const auto& e : std::filesystem::directory_iterator(directory_))
    if (e.is_regular_file()) stale.push_back(e.path());
  for (const auto& p : stale) std::filesystem::remove(p);
  for (const auto& e : std::filesystem::directory_iterator(directory))
    if (is_state_file(e)) link_or_copy(e.path(), directory_ / e.path().filename());
}

std::shared_ptr<StateStore> make_state_store(ClientStateStore kind, const std::filesystem::path& directory) {
  if (kind == ClientStateStore::disk) return std::make_shared<DiskStateStore>(directory);
  return std::make_shared<MemoryStateStore>();
}

}  // namespace drift::msg
