#pragma once
// One archive for saving and restoring the state of a run (docs/checkpoints.md). A stateful
// class writes a single `archive(StateArchive&)` that names its members in order; the same
// code saves (the archive is writing) and restores (it is reading), so the two can never
// disagree about the layout. Values are stored in the machine's byte order: a checkpoint
// resumes on the kind of machine that wrote it. Sections carry their name, so a checkpoint
// that does not fit the code reading it fails with a clear error instead of a garbage state.
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/core/error.hpp"

namespace drift {

class StateArchive {
 public:
  // An archive that writes into bytes().
  static StateArchive writer() { return StateArchive(false, {}); }
  // An archive that reads `bytes`; `what` names them in errors (a file, say).
  static StateArchive reader(std::string bytes, std::string what) {
    StateArchive a(true, std::move(bytes));
    a.what_ = std::move(what);
    return a;
  }

  bool loading() const { return loading_; }
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }
  // Writing: room for `more` bytes after those written, from a part that knows its size. A
  // large state (a table of every client's change) is then not copied as the bytes grow.
  void reserve(std::size_t more) {
    if (!loading_) bytes_.reserve(bytes_.size() + more);
  }
  // Reading: throws DecodeError unless every byte was read.
  void expect_end() const;
  // Writing: bytes another writer made, as they are (a part of the state that another process
  // keeps and archived there: an edge's server half, docs/hierarchy.md#where-edges-run).
  void splice(const std::string& bytes);

  // Starts a named part: written, or checked against what was written.
  void section(std::string_view name);

  template <class T>
  void value(T& v) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "StateArchive::value takes numbers and enums");
    raw(&v, sizeof(T));
  }
  void value(bool& v) {
    std::uint8_t b = v ? 1 : 0;
    raw(&b, 1);
    v = b != 0;
  }
  void text(std::string& s);
  // Writing: what text(s) puts before the characters of s. A writer that sends the characters
  // elsewhere (straight to a file, without copying them) keeps the layout text() reads back.
  void text_prefix(const std::string& s) {
    std::uint64_t n = s.size();
    value(n);
  }

  template <class T>
  void values(std::vector<T>& v) {
    std::uint64_t n = v.size();
    value(n);
    if (loading_) {
      check_count(n, sizeof(T));
      v.resize(static_cast<std::size_t>(n));
    }
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        bool b = v[i];
        value(b);
        v[i] = b;
      }
    } else {
      static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "values() takes vectors of numbers");
      if (n > 0) raw(v.data(), static_cast<std::size_t>(n) * sizeof(T));
    }
  }

  // A container's size: written, or read (and checked against what is left to read).
  std::uint64_t count(std::uint64_t n, std::size_t min_bytes_each = 1) {
    value(n);
    if (loading_) check_count(n, min_bytes_each);
    return n;
  }

  template <class T, class F>
  void optional(std::optional<T>& v, F&& each) {
    bool has = v.has_value();
    value(has);
    if (loading_) v = has ? std::optional<T>(T{}) : std::nullopt;
    if (has) each(*v);
  }

  template <class T, class F>
  void vector(std::vector<T>& v, F&& each) {
    const auto n = count(v.size());
    if (loading_) v.assign(static_cast<std::size_t>(n), T{});
    for (auto& x : v) each(x);
  }

  // Maps whose keys are numbers or strings.
  template <class K, class V, class F>
  void map(std::map<K, V>& m, F&& each) {
    const auto n = count(m.size());
    if (!loading_) {
      for (auto& [k, v] : m) {
        K key = k;
        key_of(key);
        each(v);
      }
      return;
    }
    m.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      K key{};
      key_of(key);
      each(m[key]);
    }
  }

  template <class K>
  void set(std::set<K>& s) {
    std::vector<K> v(s.begin(), s.end());
    values(v);
    if (loading_) s = std::set<K>(v.begin(), v.end());
  }

 private:
  StateArchive(bool loading, std::string bytes) : loading_(loading), bytes_(std::move(bytes)) {}
  void raw(void* data, std::size_t n);
  void check_count(std::uint64_t n, std::size_t min_bytes_each) const;
  [[noreturn]] void corrupt(const std::string& why) const;
  template <class K>
  void key_of(K& k) {
    if constexpr (std::is_same_v<K, std::string>)
      text(k);
    else
      value(k);
  }

  bool loading_;
  std::string bytes_;
  std::size_t read_ = 0;
  std::string what_;
};

}  // namespace drift
