#include "engine/algorithms/disk_slots.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/core/error.hpp"
#include "engine/core/stream_hash.hpp"

namespace drift {
namespace {

std::uint64_t hash_of(const void* data, std::uint64_t bytes) {
  StreamHash h;
  h.add(static_cast<const char*>(data), bytes);
  return h.value();
}

}  // namespace

DiskSlots::DiskSlots(std::filesystem::path file, std::uint32_t clients)
    : file_(std::move(file)), current_(clients, -1), committed_(clients, -1), hash_(clients, 0) {
  fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw WriteError("cannot open " + file_.string() + ": " + std::strerror(errno));
}

DiskSlots::~DiskSlots() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t DiskSlots::offset(std::uint32_t client, int slot) const {
  return (2 * static_cast<std::uint64_t>(client) + static_cast<std::uint64_t>(slot)) * entry_bytes_;
}

void DiskSlots::read(std::uint32_t client, void* out) const {
  const int slot = current_.at(client);
  if (slot < 0) throw std::logic_error("DiskSlots: client " + std::to_string(client) + " has no entry");
  auto* bytes = static_cast<char*>(out);
  for (std::uint64_t done = 0; done < entry_bytes_;) {
    const auto n = ::pread(fd_, bytes + done, entry_bytes_ - done, static_cast<off_t>(offset(client, slot) + done));
    if (n <= 0) throw DecodeError(file_.string() + ": cannot read client " + std::to_string(client) + "'s entry");
    done += static_cast<std::uint64_t>(n);
  }
  if (hash_of(out, entry_bytes_) != hash_[client])
    throw DecodeError(file_.string() + ": client " + std::to_string(client) +
                      "'s entry is not the one written (changed on disk?)");
}

void DiskSlots::write(std::uint32_t client, const void* data, std::uint64_t bytes) {
  if (entry_bytes_ == 0) entry_bytes_ = bytes;
  if (bytes != entry_bytes_)
    throw std::logic_error("DiskSlots: an entry of " + std::to_string(bytes) + " bytes, not " +
                           std::to_string(entry_bytes_));
  // The committed slot belongs to the last checkpoint: write beside it.
  const int committed = committed_.at(client);
  const int slot = committed < 0 ? 0 : 1 - committed;
  const auto* from = static_cast<const char*>(data);
  for (std::uint64_t done = 0; done < bytes;) {
    const auto n = ::pwrite(fd_, from + done, bytes - done, static_cast<off_t>(offset(client, slot) + done));
    if (n <= 0) throw WriteError("cannot write " + file_.string() + ": " + std::strerror(errno));
    done += static_cast<std::uint64_t>(n);
  }
  current_[client] = static_cast<std::int8_t>(slot);
  hash_[client] = hash_of(data, bytes);
}

void DiskSlots::archive(StateArchive& ar) {
  std::uint64_t clients = current_.size();
  ar.value(clients);
  if (ar.loading() && clients != current_.size())
    throw DecodeError("a checkpoint's table on disk of " + std::to_string(clients) + " clients for a federation of " +
                      std::to_string(current_.size()));
  ar.value(entry_bytes_);
  ar.values(current_);
  ar.values(hash_);
  if (current_.size() != clients || hash_.size() != clients)
    throw DecodeError("a checkpoint's table on disk lists another number of clients");
  if (!ar.loading()) {
    // What is recorded must be on the disk before the checkpoint counts.
    if (::fsync(fd_) != 0) throw WriteError("cannot flush " + file_.string() + ": " + std::strerror(errno));
  } else {
    struct stat info {};
    std::uint64_t needed = 0;
    for (std::uint32_t c = 0; c < clients; ++c)
      if (current_[c] >= 0) needed = std::max(needed, offset(c, current_[c]) + entry_bytes_);
    if (::fstat(fd_, &info) != 0 || static_cast<std::uint64_t>(info.st_size) < needed)
      throw DecodeError(file_.string() + " is shorter than the table the checkpoint records");
  }
  committed_ = current_;
}

}  // namespace drift
