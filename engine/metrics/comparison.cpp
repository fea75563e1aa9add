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
    if (!s.diverged && target < s.rounds_to.size() && s.rounds_to[target]) rounds.push_back(*s.rounds_to[target]);
  return {mean_std(rounds), rounds.size()};
}

template <class Field>
MeanStd over_seeds(const ComparisonRow& row, Field field) {
  std::vector<double> values;
  for (const auto& s : row.seeds)
    if (!s.diverged) values.push_back(field(s));
  return mean_std(values);
}

std::size_t diverged_seeds(const ComparisonRow& row) {
  std::size_t n = 0;
  for (const auto& s : row.seeds) n += s.diverged ? 1 : 0;
  return n;
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

namespace {

// Mean +- std over seeds of domain d's last-5 accuracy (d = size: the mean over domains).
MeanStd domain_over_seeds(const ComparisonRow& row, std::size_t d) {
  return over_seeds(row, [d](const SeedResult& s) {
    if (s.domain_last5.empty()) return 0.0;
    if (d < s.domain_last5.size()) return s.domain_last5[d];
    double sum = 0.0;
    for (double a : s.domain_last5) sum += a;
    return sum / static_cast<double>(s.domain_last5.size());
  });
}

}  // namespace

std::string comparison_markdown(const std::vector<ComparisonRow>& rows, const std::vector<double>& targets,
                                const std::vector<std::string>& domains) {
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
    const auto diverged = diverged_seeds(row);
    const auto counted = row.seeds.size() - diverged;
    out << "| " << row.label << " | " << row.seeds.size();
    if (diverged) out << " (" << diverged << " diverged)";
    if (counted == 0) {
      out << " | diverged | diverged |";
      for (std::size_t t = 0; t < targets.size(); ++t) out << " – |";
      out << " " << fixed(bytes.mean, 3) << " |\n";
      continue;
    }
    out << " | " << fixed(best.mean, 2) << " ± " << fixed(best.std, 2) << " | " << fixed(last5.mean, 2) << " ± "
        << fixed(last5.std, 2) << " |";
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const auto r = reached(row, t);
      if (r.count == 0)
        out << " – |";
      else if (r.count == counted)
        out << " " << fixed(r.rounds.mean, 1) << " |";
      else
        out << " " << fixed(r.rounds.mean, 1) << " (" << r.count << "/" << counted << ") |";
    }
    out << " " << fixed(bytes.mean, 3) << " |\n";
  }
  if (domains.empty()) return out.str();
  out << "\nLast-5 accuracy per domain (%):\n\n| algorithm |";
  for (const auto& d : domains) out << " " << d << " |";
  out << " mean |\n|---|";
  for (std::size_t d = 0; d <= domains.size(); ++d) out << "---|";
  out << "\n";
  for (const auto& row : rows) {
    out << "| " << row.label << " |";
    for (std::size_t d = 0; d <= domains.size(); ++d) {
      const auto a = domain_over_seeds(row, d);
      out << " " << fixed(a.mean * 100.0, 2) << " ± " << fixed(a.std * 100.0, 2) << " |";
    }
    out << "\n";
  }
  return out.str();
}

std::string comparison_csv(const std::vector<ComparisonRow>& rows, const std::vector<double>& targets,
                           const std::vector<std::string>& domains) {
  std::ostringstream out;
  out << "algorithm,seeds,best_mean,best_std,last5_mean,last5_std";
  for (double t : targets) {
    const auto p = fixed(t * 100.0, 0);
    out << ",rounds_to_" << p << ",reached_" << p;
  }
  out << ",bytes_per_round";
  for (const auto& d : domains) out << ",last5_" << d << "_mean,last5_" << d << "_std";
  if (!domains.empty()) out << ",last5_domain_mean_mean,last5_domain_mean_std";
  out << ",diverged\n";
  for (const auto& row : rows) {
    const auto best = over_seeds(row, [](const SeedResult& s) { return s.best_accuracy; });
    const auto last5 = over_seeds(row, [](const SeedResult& s) { return s.last5_accuracy; });
    const auto bytes = over_seeds(row, [](const SeedResult& s) { return s.bytes_per_round; });
    // A variant whose every seed diverged has no accuracy: empty fields, not zeros.
    const bool none = diverged_seeds(row) == row.seeds.size();
    out << '"' << row.label << "\"," << row.seeds.size() << ',' << (none ? "" : fixed(best.mean, 6)) << ','
        << (none ? "" : fixed(best.std, 6)) << ',' << (none ? "" : fixed(last5.mean, 6)) << ','
        << (none ? "" : fixed(last5.std, 6));
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const auto r = reached(row, t);
      out << ',' << (r.count ? fixed(r.rounds.mean, 3) : "") << ',' << r.count;
    }
    out << ',' << fixed(bytes.mean, 1);
    for (std::size_t d = 0; !domains.empty() && d <= domains.size(); ++d) {
      const auto a = domain_over_seeds(row, d);
      out << ',' << fixed(a.mean, 6) << ',' << fixed(a.std, 6);
    }
    out << ',' << diverged_seeds(row) << '\n';
  }
  return out.str();
}

}  // namespace drift
