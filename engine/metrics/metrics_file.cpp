#include "engine/metrics/metrics_file.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "engine/core/error.hpp"

namespace drift {
namespace {

using nlohmann::json;

double number(const json& line, const char* key, double fallback = 0.0) {
  const auto it = line.find(key);
  if (it == line.end()) return fallback;
  return it->is_number() ? it->get<double>() : std::nan("");  // null: written from a NaN
}

std::uint32_t count(const json& line, const char* key) {
  const auto it = line.find(key);
  return it != line.end() && it->is_number_unsigned() ? it->get<std::uint32_t>() : 0;
}

RoundFacts facts_from(const json& m) {
  RoundFacts f;
  f.round = count(m, "round");
  f.time_end = number(m, "time_end");
  f.num_updates = count(m, "num_updates");
  f.finished = count(m, "finished");
  f.late = count(m, "late");
  f.dropped = count(m, "dropped");
  f.failed = count(m, "failed");
  f.discarded_samples = count(m, "discarded_samples");
  f.wasted_compute_seconds = number(m, "wasted_compute_seconds");
  f.cohort_tv = number(m, "cohort_tv", std::nan(""));
  f.cohort_js = number(m, "cohort_js", std::nan(""));
  f.change_tv = number(m, "change_tv", std::nan(""));
  f.change_js = number(m, "change_js", std::nan(""));
  f.update_drift = m.contains("update_drift") ? number(m["update_drift"], "relative_l2", std::nan("")) : std::nan("");
  f.evaluated = m.contains("test_accuracy");
  if (f.evaluated) {
    f.accuracy = number(m, "test_accuracy");
    f.loss = number(m, "test_loss");
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
