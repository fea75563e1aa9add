// The next `count` eligible clients in id order after the last one selected, wrapping around:
// every client gets its turn, in a fixed order.
#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

std::vector<std::uint32_t> RoundRobinSampler::select(const SelectionContext& ctx) {
  std::vector<std::uint32_t> chosen;
  for (std::uint32_t i = 0; i < population_ && chosen.size() < ctx.count; ++i) {
    const auto c = (cursor_ + i) % population_;
    if (ctx.eligible(c)) chosen.push_back(c);
  }
  if (!chosen.empty()) cursor_ = (chosen.back() + 1) % population_;
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

void RoundRobinSampler::archive(StateArchive& ar) { ar.value(cursor_); }

SamplerInfo round_robin_sampler_info() {
  return {"round_robin", "the next clients in id order, wrapping around",
          [](const Scenario&, const Population& p) { return std::make_unique<RoundRobinSampler>(p.size()); },
          SamplingDesign::none, ""};
}

}  // namespace drift
