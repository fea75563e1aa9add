#pragma once
// The built-in samplers, one .cpp each with its class and its catalogue row (*_sampler_info());
// registry.cpp lists the rows (docs/development.md#adding-a-sampler).
#include <cstdint>
#include <vector>

#include "engine/core/rng.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/sampling/selection.hpp"

namespace drift {

// Strata for the cyclic sampler: the scenario's groups, dominant-label strata, or the groups
// if any are defined (`auto`).
std::vector<std::vector<std::uint32_t>> strata_of(const Population& population, CyclicStrata kind);
// Clients grouped by the most frequent label in their data (ties: lowest label).
std::vector<std::vector<std::uint32_t>> dominant_label_strata(const Population& population);

class UniformSampler final : public SeededSampler {
 public:
  UniformSampler(std::uint32_t population, std::uint64_t seed) : SeededSampler(seed), population_(population) {}
  std::vector<std::uint32_t> select(const SelectionContext& ctx) override;

 private:
  std::uint32_t population_;
};

// Poisson sampling: each client independently with probability `rate`, so the cohort's size
// varies from round to round. The sampling DP's amplification assumes (docs/privacy.md).
class PoissonSampler final : public SeededSampler {
 public:
  PoissonSampler(std::uint32_t population, double rate, std::uint64_t seed)
      : SeededSampler(seed, "poisson-sample"), population_(population), rate_(rate) {}
  std::vector<std::uint32_t> select(const SelectionContext& ctx) override;
  bool draws_cohort_size() const override { return true; }

 private:
  std::uint32_t population_;
  double rate_;
};

class AvailabilityAwareSampler final : public SeededSampler {
 public:
  AvailabilityAwareSampler(std::uint32_t population, std::uint64_t seed)
      : SeededSampler(seed), population_(population) {}
  std::vector<std::uint32_t> select(const SelectionContext& ctx) override;

 private:
  std::uint32_t population_;
};

class SizeWeightedSampler final : public SeededSampler {
 public:
  SizeWeightedSampler(const Population& population, std::uint64_t seed);
  std::vector<std::uint32_t> select(const SelectionContext& ctx) override;

 private:
  std::uint32_t population_;
  AliasTable alias_;
};

class RoundRobinSampler final : public Sampler {
 public:
  explicit RoundRobinSampler(std::uint32_t population) : population_(population) {}
  std::vector<std::uint32_t> select(const SelectionContext& ctx) override;
  void archive(StateArchive& ar) override;

 private:
  std::uint32_t population_;
  std::uint32_t cursor_ = 0;
};

class PowerOfChoiceSampler final : public SeededSampler {
 public:
  PowerOfChoiceSampler(const Population& population, std::uint64_t seed, double candidates);
  std::vector<std::uint32_t> select(const SelectionContext& ctx) override;

 private:
  std::uint32_t population_;
  double candidates_;
  AliasTable alias_;
};

class CyclicSampler final : public SeededSampler {
 public:
  CyclicSampler(const Population& population, std::uint64_t seed, CyclicStrata strata = CyclicStrata::automatic);
  std::vector<std::uint32_t> select(const SelectionContext& ctx) override;

 private:
  std::vector<std::vector<std::uint32_t>> strata_;
};

class StratifiedSampler final : public SeededSampler {
 public:
  StratifiedSampler(const Population& population, std::uint64_t seed);
  std::vector<std::uint32_t> select(const SelectionContext& ctx) override;

 private:
  std::vector<std::vector<std::uint32_t>> strata_;
  std::vector<double> weights_;
};

SamplerInfo uniform_sampler_info();
SamplerInfo poisson_sampler_info();
SamplerInfo availability_aware_sampler_info();
SamplerInfo size_weighted_sampler_info();
SamplerInfo round_robin_sampler_info();
SamplerInfo power_of_choice_sampler_info();
SamplerInfo cyclic_sampler_info();
SamplerInfo stratified_sampler_info();

}  // namespace drift
