#include "engine/metrics/summary.hpp"

#include "engine/core/input_file.hpp"
#include "engine/metrics/summary_fields.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace drift {
namespace {

// Mean of the finite values; NaN when there are none.
class FiniteMean {
 public:
  void add(double v) {
    if (!std::isfinite(v)) return;
    sum_ += v;
    ++n_;
  }
  double value() const { return n_ ? sum_ / static_cast<double>(n_) : std::nan(""); }

 private:
  double sum_ = 0.0;
  std::size_t n_ = 0;
};

// A field's value from the aggregations' values at `index` of their facts.
double reduced(Reduce how, const std::vector<RoundFacts>& rounds, std::size_t index) {
  double total = 0.0, last = std::nan("");
  FiniteMean mean;
  for (const auto& r : rounds) {
    const double v = r.values.at(index);
    total += v;
    mean.add(v);
    if (!std::isnan(v)) last = v;
  }
  return how == Reduce::total ? total : how == Reduce::finite_mean ? mean.value() : last;
}

void add_evaluation(RunSummary& s, const RoundFacts& e) {
  ++s.evaluations;
  if (s.evaluations == 1 || e.accuracy > s.best_accuracy) {
    s.best_accuracy = e.accuracy;
    s.best_round = e.round;
  }
  for (auto& [target, first] : s.rounds_to)
    if (!first && e.accuracy >= target) first = e.round;
  for (auto& [target, first] : s.time_to)
    if (!first && e.accuracy >= target) first = e.time_end;
  for (auto& [budget, accuracy] : s.accuracy_at)
    if (e.time_end <= budget) accuracy = e.accuracy;
  s.final_accuracy = e.accuracy;
  s.final_loss = e.loss;
}

}  // namespace

RoundFacts facts_of(const RoundReport& r) {
  RoundFacts f;
  f.round = r.round;
  f.time_end = r.time_end;
  f.evaluated = r.evaluated;
  f.accuracy = r.test_accuracy;
  f.loss = r.test_loss;
  f.divergence = r.divergence;
  f.participation_bias = r.participation_bias;
  f.participation_bias_uniform = r.participation_bias_uniform;
  static const RunSummary shape;
  visit_summary_fields(shape, [&](const SummaryField& field, const auto&) {
    if (field.reduce != Reduce::computed) f.values.push_back(field.of(r));
  });
  return f;
}

RunSummary summarize(const std::vector<RoundFacts>& rounds, const SummaryTargets& targets) {
  RunSummary s;
  for (double t : targets.accuracies) {
    s.rounds_to.emplace_back(t, std::nullopt);
    s.time_to.emplace_back(t, std::nullopt);
  }
  for (double t : targets.times) s.accuracy_at.emplace_back(t, std::nullopt);
  std::vector<double> accuracies;
  for (const auto& r : rounds) {
    s.rounds = std::max(s.rounds, r.round);
    s.virtual_time = std::max(s.virtual_time, r.time_end);
    if (!r.divergence.empty() && !s.diverged_round) {
      s.diverged_round = r.round;
      s.divergence = r.divergence;
    }
    if (!r.evaluated) continue;
    add_evaluation(s, r);
    accuracies.push_back(r.accuracy);
  }
  std::size_t index = 0;
  visit_summary_fields(s, [&](const SummaryField& field, auto& member) {
    if (field.reduce == Reduce::computed) return;
    const double v = reduced(field.reduce, rounds, index++);
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(member)>>)
      member = static_cast<std::decay_t<decltype(member)>>(v);
  });
  if (!accuracies.empty()) {
    const std::size_t k = std::min<std::size_t>(5, accuracies.size());
    double sum = 0.0;
    for (std::size_t i = accuracies.size() - k; i < accuracies.size(); ++i) sum += accuracies[i];
    s.last5_mean_accuracy = sum / static_cast<double>(k);
  }
  return s;
}

namespace {

// {"0.5": value or null, ...}: JSON keys are strings, spelt as the number prints.
template <class T>
nlohmann::json keyed_by_number(const std::vector<std::pair<double, std::optional<T>>>& values) {
  auto out = nlohmann::json::object();
  for (const auto& [key, value] : values)
    out[nlohmann::json(key).dump()] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  return out;
}

template <class T>
nlohmann::json json_of(const T& value) {
  if constexpr (std::is_arithmetic_v<T>)
    return value;
  else
    return keyed_by_number(value);
}

}  // namespace

nlohmann::json summary_fields_json(const RunSummary& s) {
  auto out = nlohmann::json::object();
  visit_summary_fields(s, [&](const SummaryField& field, const auto& member) {
    if (field.kept == Kept::in_privacy_object) return;
    if (field.kept == Kept::with_secure_aggregation && s.secagg_rounds == 0) return;
    auto value = json_of(member);
    if (field.kept == Kept::when_finite && !(value.is_number() && std::isfinite(value.template get<double>()))) return;
    // A count kept in a double (so that NaN can say "not measured") reads as the whole number it is.
    if ((field.shown == Shown::count || field.shown == Shown::counts_in_group) && value.is_number_float())
      value = static_cast<std::int64_t>(value.template get<double>());
    const auto dot = field.key.find('.');
    if (dot == std::string_view::npos)
      out[std::string(field.key)] = std::move(value);
    else
      out[std::string(field.key.substr(0, dot))][std::string(field.key.substr(dot + 1))] = std::move(value);
  });
  if (s.diverged_round) out["diverged"] = {{"aggregation", *s.diverged_round}, {"reason", s.divergence}};
  return out;
}

std::optional<RunStatus> read_run_status(const std::filesystem::path& run_dir) {
  const auto text = read_own_file(run_dir / "summary.json");
  if (!text) return std::nullopt;
  const auto summary = nlohmann::json::parse(*text, nullptr, false);
  if (!summary.is_object() || !summary.contains("status") || !summary["status"].is_string()) return std::nullopt;
  return run_status_named(summary["status"].get<std::string>());
}

}  // namespace drift
