#include "engine/compose/privacy_summary.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/sim/privacy_book.hpp"

namespace drift {

std::shared_ptr<const privacy::RunEpsilon> run_epsilon(const Scenario& scenario) {
  if (scenario.privacy.mode == PrivacyMode::none) return nullptr;
  return std::make_shared<privacy::RunEpsilon>(assess_privacy(scenario));
}

std::string privacy_description(const Scenario& scenario) {
  const auto epsilon = run_epsilon(scenario);
  if (!epsilon) return "";
  const auto& p = scenario.privacy;
  char text[160];
  std::snprintf(text, sizeof text, "privacy: %s DP, updates clipped to %g, noise multiplier %g, delta %g",
                name_of(p.mode).c_str(), p.clip, p.noise_multiplier, p.delta);
  std::string line = text;
  if (p.target_epsilon > 0) line += ", ends before epsilon passes " + std::to_string(p.target_epsilon);
  return line + "; epsilon is " + epsilon->assumption();
}

std::string secure_aggregation_description(const Scenario& scenario) {
  const auto& sa = scenario.secure_aggregation;
  if (sa.protocol == SecAggProtocol::none) return "";
  char threshold[80], encoding[120], text[360];
  if (sa.threshold > 0)
    std::snprintf(threshold, sizeof threshold, "threshold %g of the neighbourhood", sa.threshold);
  else
    std::snprintf(threshold, sizeof threshold, "threshold floor(%ss) + 1", sa.consistency_check ? "2/3 " : "1/2 ");
  if (sa.encoding == SecAggEncoding::flower)
    std::snprintf(encoding, sizeof encoding, "inputs clipped to +-%g, 2^%lld levels, summed mod 2^%lld", sa.clip_range,
                  static_cast<long long>(sa.quantization_bits), static_cast<long long>(sa.modulus_bits));
  else
    std::snprintf(encoding, sizeof encoding, "%s fixed point at scale %g in %lld bits", name_of(sa.encoding).c_str(),
                  sa.scale, static_cast<long long>(sa.bits));
  std::snprintf(text, sizeof text,
                "secure aggregation: %s over each round's accepted clients, %s; %s; dropout %g per stage",
                name_of(sa.protocol).c_str(), threshold, encoding, sa.dropout);
  return text;
}

namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// Epsilon at the q-quantile of the participating clients (nearest rank).
double quantile(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

const char* headline_name(privacy::Headline h) {
  switch (h) {
    case privacy::Headline::Amplified:
      return "amplified";
    case privacy::Headline::Realised:
      return "realised";
    case privacy::Headline::EveryRelease:
      return "every_aggregation";
  }
  return "";
}

}  // namespace

nlohmann::json privacy_summary(const privacy::RunEpsilon& epsilon, const RunSummary& summary,
                               const std::vector<std::uint64_t>& aggregated) {
  const auto& p = epsilon.privacy();
  nlohmann::json out = {{"epsilon", number_or_null(summary.epsilon)},
                        {"delta", p.delta},
                        {"bound", headline_name(epsilon.headline())},
                        {"assumption", epsilon.assumption()},
                        {"epsilon_amplified", number_or_null(summary.epsilon_amplified)},
                        {"amplification_valid", epsilon.headline() == privacy::Headline::Amplified},
                        {"noise_multiplier", p.noise_multiplier}};
  std::map<std::uint64_t, double> by_count;  // few distinct counts: one conversion each
  std::vector<double> clients;
  std::uint64_t never = 0;
  for (auto n : aggregated) {
    if (n == 0) {
      ++never;
      continue;
    }
    auto it = by_count.find(n);
    if (it == by_count.end()) it = by_count.emplace(n, epsilon.realised(n)).first;
    clients.push_back(it->second);
  }
  std::sort(clients.begin(), clients.end());
  nlohmann::json per_client = {{"never_aggregated", never}};
  if (!clients.empty()) {
    per_client["min"] = clients.front();
    per_client["median"] = quantile(clients, 0.5);
    per_client["p99"] = quantile(clients, 0.99);
    per_client["max"] = clients.back();
  }
  out["per_client"] = per_client;
  return out;
}

}  // namespace drift
