#include "engine/core/state_archive.hpp"

#include <stdexcept>

namespace drift {

void StateArchive::splice(const std::string& bytes) {
  if (loading_) throw std::logic_error("StateArchive::splice on an archive that reads");
  bytes_.append(bytes);
}

void StateArchive::raw(void* data, std::size_t n) {
  if (!loading_) {
    bytes_.append(static_cast<const char*>(data), n);
    return;
  }
  if (bytes_.size() - read_ < n) corrupt("it ends early");
  std::memcpy(data, bytes_.data() + read_, n);
  read_ += n;
}

void StateArchive::check_count(std::uint64_t n, std::size_t min_bytes_each) const {
  // A corrupt count must not allocate more than the bytes that are left could fill.
  if (min_bytes_each > 0 && n > (bytes_.size() - read_) / min_bytes_each) corrupt("a count exceeds its data");
}

void StateArchive::text(std::string& s) {
  if (!loading_) {
    text_prefix(s);
    bytes_.append(s);
    return;
  }
  std::uint64_t n = 0;
  value(n);
  check_count(n, 1);
  s.assign(bytes_.data() + read_, static_cast<std::size_t>(n));
  read_ += static_cast<std::size_t>(n);
}

void StateArchive::section(std::string_view name) {
  std::string found(name);
  text(found);
  if (loading_ && found != name) corrupt("expected part '" + std::string(name) + "', found '" + found + "'");
}

void StateArchive::expect_end() const {
  if (loading_ && read_ != bytes_.size()) corrupt("it holds more than this version of drift reads");
}

void StateArchive::corrupt(const std::string& why) const {
  throw DecodeError((what_.empty() ? std::string("a checkpoint") : what_) + " cannot be read: " + why +
                    " (written by a different version of drift, or damaged)");
}

}  // namespace drift
