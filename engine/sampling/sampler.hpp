#pragma once
// Client selection policies. A sampler sees the population and the round, and draws from
// its own ("sample", round) stream so the cohort is a pure function of (seed, round).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/scenario/scenario.hpp"

namespace drift {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Ascending client ids of the cohort for `round`.
  virtual std::vector<std::uint32_t> select(std::uint32_t round) = 0;
};

struct SamplerInfo {
  std::string name;
  std::string description;
};
const std::vector<SamplerInfo>& sampler_catalog();
std::vector<std::string> sampler_names();

std::unique_ptr<Sampler> make_sampler(const Scenario& scenario);

// Uniform without replacement: a partial Fisher-Yates shuffle of the population.
class UniformSampler final : public Sampler {
 public:
  UniformSampler(std::uint32_t population, std::uint32_t cohort, std::uint64_t seed);
  std::vector<std::uint32_t> select(std::uint32_t round) override;

 private:
  std::uint32_t population_;
  std::uint32_t cohort_;
  std::uint64_t seed_;
};

}  // namespace drift
