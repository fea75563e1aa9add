#include "engine/sim/private_aggregation.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/algorithms/algorithm.hpp"
#include "engine/privacy/adaptive_clip.hpp"
#include "engine/privacy/philox.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/sim/privacy_book.hpp"

namespace drift {
namespace {

using privacy::NoiseStream;
using privacy::NoiseTag;

// Scales `change` to norm at most `clip`; a non-finite change becomes zero. Returns whether it
// was clipped (true) and whether it was non-finite.
std::pair<bool, bool> clip_in_place(std::vector<double>& change, double clip) {
  double squares = 0.0;
  for (double x : change) squares += x * x;
  const double norm = std::sqrt(squares);
  if (!std::isfinite(norm)) {
    std::fill(change.begin(), change.end(), 0.0);
    return {false, true};
  }
  if (norm <= clip) return {false, false};
  const double factor = clip / norm;
  for (double& x : change) x *= factor;
  return {true, false};
}

void add_scaled_noise(std::vector<double>& v, const NoiseStream& stream, double std) {
  if (std == 0.0) return;
  std::vector<double> noise(v.size());
  stream.normals(noise.data(), noise.size());
  for (std::size_t k = 0; k < v.size(); ++k) v[k] += std * noise[k];
}

}  // namespace

std::vector<double> flat_floats(const NamedTensors& tensors) {
  std::vector<double> flat;
  for (const auto& t : tensors) {
    if (!t.value.is_floating_point()) continue;
    const auto values = t.value.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    const double* p = values.data_ptr<double>();
    flat.insert(flat.end(), p, p + values.numel());
  }
  return flat;
}

NamedTensors add_flat(const NamedTensors& base, const std::vector<double>& flat, double scale) {
  torch::NoGradGuard no_grad;
  NamedTensors out;
  std::size_t offset = 0;
  for (const auto& t : base) {
    if (!t.value.is_floating_point()) {
      out.push_back({t.name, t.value.clone()});
      continue;
    }
    auto values = t.value.detach().to(torch::kCPU, torch::kFloat64).contiguous().clone();
    double* p = values.data_ptr<double>();
    const auto n = static_cast<std::size_t>(values.numel());
    if (offset + n > flat.size()) throw std::logic_error("add_flat: the vector is shorter than the model");
    for (std::size_t k = 0; k < n; ++k) p[k] += scale * flat[offset + k];
    offset += n;
    out.push_back({t.name, values.to(t.value.device(), t.value.scalar_type())});
  }
  if (offset != flat.size()) throw std::logic_error("add_flat: the vector is longer than the model");
  return out;
}

DpMechanism::DpMechanism(const PrivacyConfig& config, std::uint64_t seed, double expected_cohort)
    : config_(config), seed_(seed), expected_cohort_(expected_cohort), clip_(config.clip) {}

double DpMechanism::count_std() const {
  return config_.count_noise > 0 ? config_.count_noise : expected_cohort_ / 20.0;
}

double DpMechanism::update_multiplier() const {
  if (config_.clip_mode == DpClip::fixed) return config_.noise_multiplier;
  return privacy::update_noise_multiplier(config_.noise_multiplier, count_std());
}

double DpMechanism::denominator(std::uint32_t summed) const {
  if (config_.denominator == DpDenominator::actual) return std::max<double>(summed, 1);
  return expected_cohort_;
}

double DpMechanism::noise_std_on_mean(std::uint32_t summed, double denominator) const {
  const double per_draw = update_multiplier() * clip_;
  double on_sum = per_draw;
  if (config_.mode == PrivacyMode::local) on_sum *= std::sqrt(static_cast<double>(summed));
  if (config_.mode == PrivacyMode::distributed) on_sum *= std::sqrt(static_cast<double>(summed) / threshold_);
  return on_sum / denominator;
}

void DpMechanism::accumulate(std::vector<double>& sum, const NamedTensors& local, const std::vector<double>& base,
                             double weight, std::uint32_t client, std::uint32_t round) {
  if (!(weight >= 0 && weight <= 1))
    throw std::logic_error("DpMechanism: a weight outside [0, 1] breaks the sensitivity");
  const auto change = clipped_change(local, base, client, round);
  if (sum.empty()) sum.assign(change.size(), 0.0);
  for (std::size_t k = 0; k < change.size(); ++k) sum[k] += weight * change[k];
}

std::vector<double> DpMechanism::clipped_change(const NamedTensors& local, const std::vector<double>& base,
                                                std::uint32_t client, std::uint32_t round) {
  auto change = flat_floats(local);
  if (change.size() != base.size()) throw std::logic_error("DpMechanism: an update of another shape");
  for (std::size_t k = 0; k < change.size(); ++k) change[k] -= base[k];
  const auto [clipped, nonfinite] = clip_in_place(change, clip_);
  stats_.clipped += clipped ? 1 : 0;
  stats_.nonfinite += nonfinite ? 1 : 0;
  unclipped_ += clipped || nonfinite ? 0 : 1;
  if (config_.mode == PrivacyMode::local)
    add_scaled_noise(change, NoiseStream(seed_, round, NoiseTag::LocalNoise, client), update_multiplier() * clip_);
  return change;
}

void DpMechanism::add_distributed_noise(std::vector<double>& change, std::uint32_t client, std::uint32_t round,
                                        std::uint32_t threshold) {
  threshold_ = std::max<std::uint32_t>(threshold, 1);
  add_scaled_noise(change, NoiseStream(seed_, round, NoiseTag::SecAggNoise, client),
                   update_multiplier() * clip_ / std::sqrt(static_cast<double>(threshold_)));
}

void DpMechanism::add_central_noise(std::vector<double>& sum, std::uint32_t round) {
  if (config_.mode != PrivacyMode::central) return;
  add_scaled_noise(sum, NoiseStream(seed_, round, NoiseTag::UpdateNoise), update_multiplier() * clip_);
}

void DpMechanism::finish(std::uint32_t summed, double denominator, std::uint32_t round) {
  stats_.clip = clip_;
  stats_.noise_std = noise_std_on_mean(summed, denominator);
  if (config_.clip_mode == DpClip::adaptive) {
    // The count is released with the sum; the clip it moves serves the next aggregation.
    const double noise = count_std() * NoiseStream(seed_, round, NoiseTag::CountNoise).normal(0);
    clip_ = privacy::next_clip(clip_, unclipped_, summed, noise, expected_cohort_, config_.target_quantile,
                               config_.clip_lr);
  }
  unclipped_ = 0;
}

void DpMechanism::archive(StateArchive& ar) {
  ar.section("dp mechanism");
  ar.value(clip_);
}

void DpMechanism::privatise(const NamedTensors& global, std::vector<ClientUpdate>& updates, std::uint32_t round) {
  const auto base = flat_floats(global);  // once for every update of the round
  std::vector<double> sum;
  for (const auto& u : updates) accumulate(sum, u.weights, base, 1.0, u.client_id, round);
  if (sum.empty()) sum.assign(base.size(), 0.0);
  add_central_noise(sum, round);
  const auto summed = static_cast<std::uint32_t>(updates.size());
  const auto model = add_flat(global, sum, 1.0 / denominator(summed));
  finish(summed, denominator(summed), round);
  for (auto& u : updates) u.weights = model;  // the tensors are shared, never written again
}

DpMechanism::Stats DpMechanism::take_stats() { return std::exchange(stats_, {}); }

std::string refused_privacy(const Scenario& s) {
  if (s.simulation.mode == SimulationMode::fedasync)
    return "fedasync mixes each single update into the model, so one client's update would be released alone; "
           "use fedbuff, whose buffer sums K clipped updates before the noise";
  if (s.privacy.mode == PrivacyMode::distributed && s.secure_aggregation.protocol == SecAggProtocol::none)
    return "each client adds only a share of the noise, which is private only inside a secure sum: set "
           "secure_aggregation.protocol";
  if (s.privacy.clip_mode == DpClip::adaptive) {
    if (s.privacy.mode == PrivacyMode::distributed)
      return "privacy.clip_mode = \"adaptive\" is not simulated with distributed noise";
    if (s.privacy.mode == PrivacyMode::local)
      return "privacy.clip_mode = \"adaptive\" moves the clip by a noisy count the server releases; local noise "
             "leaves the server no count to release";
    const double count_std = s.privacy.count_noise > 0 ? s.privacy.count_noise : expected_cohort(s) / 20.0;
    if (!(s.privacy.noise_multiplier < 2 * count_std))
      return "privacy.clip_mode = \"adaptive\" spends part of the budget on the unclipped count, which needs "
             "noise_multiplier < 2 count_noise; here " +
             std::to_string(s.privacy.noise_multiplier) + " against 2 x " + std::to_string(count_std) +
             " (count_noise defaults to the expected cohort / 20)";
  }
  const auto fixed_size = [](const std::string& name) {
    const auto* row = find_sampler(name);
    return row != nullptr && row->design == SamplingDesign::fixed_size;
  };
  const auto names = used_sampler_names(s);
  if (s.privacy.denominator == DpDenominator::actual &&
      (s.simulation.mode != SimulationMode::sync || !std::all_of(names.begin(), names.end(), fixed_size)))
    return "privacy.denominator = \"actual\" is sound only for fixed-size cohorts (sync rounds, a sampler whose "
           "design is fixed_size, as uniform): under add/remove neighbours the number summed changes with the "
           "client itself";
  return "";
}

}  // namespace drift
