#include "engine/sim/privacy_book.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/core/error.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {
namespace {

// Why who is online depends on the clients' labels, by the model's row; empty when it does not.
std::string label_dependence(const AvailabilityConfig& a) {
  const auto& row = availability_model(a.model);
  return row.label_dependence ? row.label_dependence(a.params) : "";
}

// Why who takes part may depend on the clients' data; empty when it does not.
std::string data_dependence(const Scenario& s) {
  if (const auto why = label_dependence(s.availability); !why.empty()) return why;
  for (const auto& g : s.groups) {
    if (const auto why = label_dependence(g.availability); !why.empty()) return "group " + g.name + ": " + why;
    if (g.rule == GroupRule::dominant_label || g.rule == GroupRule::label_set)
      return "group " + g.name + " is chosen by labels and has its own availability and speed";
  }
  for (const auto& name : used_sampler_names(s)) {  // the timeline's switches choose clients too
    const auto* sampler = find_sampler(name);
    if (sampler == nullptr || !sampler->reads)
      return "sampler " + name + " does not say what it reads of the clients' data, so it may choose by it";
    if (!sampler->reads->empty()) return "sampler " + name + " chooses by the clients' " + *sampler->reads;
  }
  return "";
}

SamplingDesign design_of(const Scenario& s) {
  const auto* sampler = find_sampler(s.sampler.name);
  return sampler != nullptr ? sampler->design : SamplingDesign::none;
}

// Why the sampler's design is not what happens; empty when it is.
std::string design_broken(const Scenario& s) {
  if (s.privacy.mode == PrivacyMode::local) return "local noise: the server sees who reported";
  if (s.simulation.mode != SimulationMode::sync) return name_of(s.simulation.mode) + " has no sampling design";
  if (design_of(s) == SamplingDesign::none)
    return "sampler " + s.sampler.name + " is neither Poisson nor uniform without replacement";
  if (s.simulation.late_updates == LateUpdates::stale)
    return "stale updates join later rounds, so inclusion is not one draw per round";
  if (design_of(s) == SamplingDesign::fixed_size && s.simulation.over_selection > 1.0)
    return "over-selection keeps the first finishers of a larger draw";
  for (const auto& e : s.timeline)
    if (e.action == TimelineAction::sampler || e.action == TimelineAction::fraction)
      return "timeline[" + std::to_string(e.index) + "] changes the sampler";
  return "";
}

}  // namespace

double expected_cohort(const Scenario& s) {
  if (s.simulation.mode == SimulationMode::sync && design_of(s) == SamplingDesign::poisson)
    return std::max(poisson_rate(s) * s.clients, 1e-12);
  return aggregated_per_round(s);
}

privacy::RunPrivacy assess_privacy(const Scenario& s) {
  privacy::RunPrivacy p;
  p.noise_multiplier = s.privacy.noise_multiplier;
  p.local = s.privacy.mode == PrivacyMode::local;
  p.delta = s.privacy.delta;
  p.replace_one = s.privacy.denominator == DpDenominator::actual;
  // The design the sampler executes; any other world gets the figure a naive accountant would
  // print, Poisson at the expected cohort over the population, flagged as not valid below.
  const bool sync = s.simulation.mode == SimulationMode::sync;
  if (sync && design_of(s) == SamplingDesign::fixed_size) {
    p.design = privacy::Sampling::FixedSize;
    p.rate = static_cast<double>(s.sampler.cohort_size(s.clients)) / s.clients;
  } else {
    p.design = privacy::Sampling::Poisson;
    p.rate = sync && design_of(s) == SamplingDesign::poisson ? poisson_rate(s)
                                                             : std::min(1.0, expected_cohort(s) / s.clients);
  }
  const auto dependence = data_dependence(s);
  p.participation_data_independent = dependence.empty();
  const auto broken = design_broken(s);
  p.amplification_valid = p.design != privacy::Sampling::None && dependence.empty() && broken.empty();
  p.why_not_amplified = !dependence.empty() ? dependence : broken;
  return p;
}

PrivacyBook::PrivacyBook(const Scenario& s)
    : target_(s.privacy.target_epsilon), epsilon_(assess_privacy(s)), participations_(s.clients, 0) {}

void PrivacyBook::record(RoundReport& r, const std::vector<std::uint32_t>& aggregated, bool released,
                         std::uint32_t clipped, double clip, double noise_std) {
  if (released) {
    ++releases_;
    for (auto c : aggregated)
      most_participations_ = std::max<std::uint64_t>(most_participations_, ++participations_.at(c));
  }
  r.dp = true;
  r.dp_clipped = clipped;
  r.dp_clip = clip;
  r.dp_noise_std = released ? noise_std : 0.0;
  r.dp_epsilon = epsilon_.guarantee(releases_, most_participations_);
  r.dp_epsilon_amplified = epsilon_.amplified(releases_);
  r.dp_epsilon_max_client = epsilon_.realised(most_participations_);
}

std::string PrivacyBook::budget_spent() const {
  if (target_ <= 0) return "";
  const double next = epsilon_.guarantee(releases_ + 1, most_participations_ + 1);
  if (next <= target_) return "";
  char text[200];
  std::snprintf(text, sizeof text,
                "privacy budget: one more aggregation could take epsilon to %.4g, past "
                "privacy.target_epsilon = %.4g",
                next, target_);
  return text;
}

void PrivacyBook::archive(StateArchive& ar) {
  ar.section("privacy");
  const auto clients = participations_.size();
  ar.values(participations_);
  ar.value(releases_);
  ar.value(most_participations_);
  if (participations_.size() != clients) throw DecodeError("a checkpoint's privacy ledger is for another population");
}

}  // namespace drift
