#include "engine/privacy/run_epsilon.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace drift::privacy {

RunEpsilon::RunEpsilon(RunPrivacy privacy, AccountantOptions options)
    : privacy_(std::move(privacy)), options_(std::move(options)) {
  const double z = privacy_.noise_multiplier;
  // A local report may be any vector of norm C, so two of them differ by up to 2C; dividing by
  // the count means neighbours replace one client by another, whose clipped updates differ by
  // up to 2C too. Either way the multiplier the accountant sees is halved.
  const double realised_z = privacy_.local || privacy_.replace_one ? z / 2 : z;
  realised_release_ = release_curve(options_, Sampling::None, 1.0, realised_z);
  if (privacy_.design == Sampling::Poisson)
    amplified_release_ = release_curve(options_, Sampling::Poisson, privacy_.rate, z, Adjacency::AddRemove);
  else if (privacy_.design == Sampling::FixedSize)
    amplified_release_ = release_curve(options_, Sampling::FixedSize, privacy_.rate, z / 2, Adjacency::ReplaceOne);
}

namespace {
std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}
}  // namespace

double RunEpsilon::epsilon_of(const std::vector<double>& per_release, std::uint64_t count) const {
  std::vector<double> curve(per_release.size(), 0.0);
  for (std::size_t j = 0; j < curve.size(); ++j)
    if (count > 0 && per_release[j] != 0) curve[j] = static_cast<double>(count) * per_release[j];
  return epsilon_from_rdp(options_.orders, curve, privacy_.delta, options_.conversion).epsilon;
}

double RunEpsilon::amplified(std::uint64_t releases) const {
  if (amplified_release_.empty()) return std::numeric_limits<double>::quiet_NaN();
  return epsilon_of(amplified_release_, releases);
}

double RunEpsilon::realised(std::uint64_t participations) const {
  return epsilon_of(realised_release_, participations);
}

Headline RunEpsilon::headline() const {
  if (privacy_.amplification_valid && !amplified_release_.empty()) return Headline::Amplified;
  return privacy_.participation_data_independent ? Headline::Realised : Headline::EveryRelease;
}

double RunEpsilon::guarantee(std::uint64_t releases, std::uint64_t max_participations) const {
  switch (headline()) {
    case Headline::Amplified:
      return amplified(releases);
    case Headline::Realised:
      return realised(max_participations);
    case Headline::EveryRelease:
      return realised(releases);
  }
  return realised(releases);
}

std::string RunEpsilon::assumption() const {
  switch (headline()) {
    case Headline::Amplified:
      return privacy_.design == Sampling::Poisson
                 ? "amplified by Poisson sampling at rate " + number(privacy_.rate) +
                       " (add/remove neighbours): the sampler draws each client independently of its data"
                 : "amplified by fixed-size cohorts drawn without replacement, a fraction " + number(privacy_.rate) +
                       " of the clients (replace-one neighbours)";
    case Headline::Realised:
      return "the busiest client's own participations, without amplification (" + privacy_.why_not_amplified + ")";
    case Headline::EveryRelease:
      return "every aggregation counted for every client: who takes part depends on the clients' data (" +
             privacy_.why_not_amplified + ")";
  }
  return {};
}

}  // namespace drift::privacy
