#include "engine/core/isolated_check.hpp"

#include <mutex>
#include <set>
#include <tuple>

namespace drift {
namespace {

using CheckKey = std::tuple<int, std::string, std::string, std::vector<std::int64_t>, std::int64_t, bool>;

struct CheckerState {
  std::mutex mutex;
  IsolatedChecker checker;
  std::set<CheckKey> passed;
};

CheckerState& state() {
  static CheckerState s;
  return s;
}

}  // namespace

void set_isolated_checker(IsolatedChecker checker) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.checker = std::move(checker);
  s.passed.clear();
}

void run_isolated_check(const IsolatedCheck& check) {
  auto& s = state();
  // Held while the check runs: trainer slots building their first models wait for one check
  // instead of each starting its own.
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.checker) return;
  const CheckKey key{
      static_cast<int>(check.kind), check.path, check.digest, check.input_shape, check.num_classes, check.features};
  if (s.passed.count(key) != 0) return;
  s.checker(check);
  s.passed.insert(key);
}

}  // namespace drift
