#include "engine/metrics/metrics_file.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <type_traits>

#include "engine/core/error.hpp"

namespace drift {
namespace {

using nlohmann::json;

// `field` from `line[key]`, read as the field's own type, so a count cannot be read narrower
// than it was written (discarded_samples is 64-bit). A missing key leaves `fallback`; a null
// number was written from a NaN.
template <class T>
void read(const json& line, const char* key, T& field, T fallback = T{}) {
  const auto it = line.find(key);
  field = fallback;
  if (it == line.end()) return;
  if constexpr (std::is_floating_point_v<T>) {
    field = it->is_number() ? it->get<T>() : std::numeric_limits<T>::quiet_NaN();
  } else {
    static_assert(std::is_unsigned_v<T>, "counts in metrics.jsonl are unsigned");
    if (it->is_number_unsigned() && it->get<std::uint64_t>() <= std::numeric_limits<T>::max()) field = it->get<T>();
  }
}

RoundFacts facts_from(const json& m) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  RoundFacts f;
  read(m, "round", f.round);
  read(m, "time_end", f.time_end);
  read(m, "num_updates", f.num_updates);
  read(m, "finished", f.finished);
  read(m, "late", f.late);
  read(m, "dropped", f.dropped);
  read(m, "failed", f.failed);
  read(m, "discarded_samples", f.discarded_samples);
  read(m, "wasted_compute_seconds", f.wasted_compute_seconds);
  read(m, "cohort_tv", f.cohort_tv, nan);
  read(m, "cohort_js", f.cohort_js, nan);
  read(m, "change_tv", f.change_tv, nan);
  read(m, "change_js", f.change_js, nan);
  f.update_drift = nan;
  if (m.contains("update_drift")) read(m["update_drift"], "relative_l2", f.update_drift, nan);
  f.evaluated = m.contains("test_accuracy");
  if (f.evaluated) {
    read(m, "test_accuracy", f.accuracy);
    read(m, "test_loss", f.loss);
  }
  if (m.contains("divergence") && m["divergence"].is_string()) f.divergence = m["divergence"].get<std::string>();
  return f;
}

}  // namespace

std::vector<RoundFacts> read_metrics_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UserError(path.string() + ": cannot read (not a run directory, or the run never started)");
  std::vector<RoundFacts> out;
  std::size_t number_of_line = 0;
  for (std::string line; std::getline(in, line);) {
    ++number_of_line;
    if (line.empty()) continue;
    const auto m = json::parse(line, nullptr, false);
    if (m.is_discarded() || !m.is_object()) {
      if (in.eof()) break;  // the last line, without its newline: cut short by a kill
      throw UserError(path.string() + ":" + std::to_string(number_of_line) + ": not a JSON object");
    }
    out.push_back(facts_from(m));
  }
  return out;
}

}  // namespace drift
