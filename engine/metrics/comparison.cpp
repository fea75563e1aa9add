#include "engine/metrics/comparison.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace drift {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string percent_label(double target) { return fixed(target * 100.0, 0) + "%"; }

struct Reached {
  MeanStd rounds;
  std::size_t count = 0;
};

Reached reached(const ComparisonRow& row, std::size_t target) {
  std::vector<double> rounds;
  for (const auto& s : row.seeds)
    if (target < s.rounds_to.size() && s.rounds_to[target]) rounds.push_back(*s.rounds_to[target]);
  return {mean_std(rounds), rounds.size()};
}

template <class Field>
MeanStd over_seeds(const ComparisonRow& row, Field field) {
  std::vector<double> values;
  for (const auto& s : row.seeds) values.push_back(field(s));
  return mean_std(values);
}

}  // namespace

MeanStd mean_std(const std::vector<double>& values) {
  if (values.empty()) return {};
  double sum = 0.0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  if (values.size() == 1) return {mean, 0.0};
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return {mean, std::sqrt(squares / static_cast<double>(values.size() - 1))};
}

std::string comparison_markdown(const std::vector<ComparisonRow>& rows, const std::vector<double>& targets) {
  std::ostringstream out;
  out << "| algorithm | seeds | best accuracy (%) | last-5 accuracy (%) |";
  for (double t : targets) out << " rounds to " << percent_label(t) << " |";
  out << " MB per round |\n|---|---|---|---|";
  for (std::size_t i = 0; i < targets.size(); ++i) out << "---|";
  out << "---|\n";
  for (const auto& row : rows) {
    const auto best = over_seeds(row, [](const SeedResult& s) { return s.best_accuracy * 100.0; });
    const auto last5 = over_seeds(row, [](const SeedResult& s) { return s.last5_accuracy * 100.0; });
    const auto bytes = over_seeds(row, [](const SeedResult& s) { return s.bytes_per_round / 1e6; });
    out << "| " << row.label << " | " << row.seeds.size() << " | " << fixed(best.mean, 2) << " ± " << fixed(best.std, 2)
        << " | " << fixed(last5.mean, 2) << " ± " << fixed(last5.std, 2) << " |";
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const auto r = reached(row, t);
      if (r.count == 0) out << " – |";
      else if (r.count == row.seeds.size()) out << " " << fixed(r.rounds.mean, 1) << " |";
      else out << " " << fixed(r.rounds.mean, 1) << " (" << r.count << "/" << row.seeds.size() << ") |";
    }
    out << " " << fixed(bytes.mean, 3) << " |\n";
  }
  return out.str();
}

std::string comparison_csv(const std::vector<ComparisonRow>& rows, const std::vector<double>& targets) {
  std::ostringstream out;
  out << "algorithm,seeds,best_mean,best_std,last5_mean,last5_std";
  for (double t : targets) {
    const auto p = fixed(t * 100.0, 0);
    out << ",rounds_to_" << p << ",reached_" << p;
  }
  out << ",bytes_per_round\n";
  for (const auto& row : rows) {
    const auto best = over_seeds(row, [](const SeedResult& s) { return s.best_accuracy; });
    const auto last5 = over_seeds(row, [](const SeedResult& s) { return s.last5_accuracy; });
    const auto bytes = over_seeds(row, [](const SeedResult& s) { return s.bytes_per_round; });
    out << '"' << row.label << "\"," << row.seeds.size() << ',' << fixed(best.mean, 6) << ',' << fixed(best.std, 6)
        << ',' << fixed(last5.mean, 6) << ',' << fixed(last5.std, 6);
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const auto r = reached(row, t);
      out << ',' << (r.count ? fixed(r.rounds.mean, 3) : "") << ',' << r.count;
    }
    out << ',' << fixed(bytes.mean, 1) << '\n';
  }
  return out.str();
}

}  // namespace drift
