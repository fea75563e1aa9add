#include "engine/compose/consistency.hpp"

#include "engine/compose/packing.hpp"

namespace drift {
namespace {

struct Unused {
  const char* key;
  bool set;  // differs from its default, so the user set it
};

void warn_unused(std::vector<std::string>& out, const std::vector<Unused>& keys, const std::string& why) {
  for (const auto& k : keys)
    if (k.set) out.push_back(std::string(k.key) + " does nothing " + why);
}

}  // namespace

std::vector<std::string> consistency_warnings(const Scenario& s) {
  const SimulationConfig sim_default;
  const AsyncConfig async_default;
  const SamplerConfig sampler_default;
  std::vector<std::string> out;
  const auto& sim = s.simulation;
  const auto mode = name_of(sim.mode);
  if (sim.mode != SimulationMode::sync)
    warn_unused(out,
                {{"simulation.deadline", sim.deadline != sim_default.deadline},
                 {"simulation.over_selection", sim.over_selection != sim_default.over_selection},
                 {"simulation.min_cohort", sim.min_cohort != sim_default.min_cohort},
                 {"simulation.late_updates", sim.late_updates != sim_default.late_updates},
                 {"simulation.train_doomed", sim.train_doomed != sim_default.train_doomed}},
                "under " + mode + " (sync rounds only)");
  if (sim.mode == SimulationMode::sync)
    warn_unused(out,
                {{"async.concurrency", s.async.concurrency != async_default.concurrency},
                 {"async.alpha", s.async.alpha != async_default.alpha},
                 {"async.buffer_size", s.async.buffer_size != async_default.buffer_size},
                 {"async.server_lr", s.async.server_lr != async_default.server_lr},
                 {"async.staleness", s.async.staleness != async_default.staleness}},
                "under sync rounds (simulation.mode = fedasync or fedbuff)");
  if (sim.mode == SimulationMode::fedasync)
    warn_unused(out,
                {{"async.buffer_size", s.async.buffer_size != async_default.buffer_size},
                 {"async.server_lr", s.async.server_lr != async_default.server_lr}},
                "under fedasync (FedBuff's)");
  if (sim.mode == SimulationMode::fedbuff)
    warn_unused(out, {{"async.alpha", s.async.alpha != async_default.alpha}}, "under fedbuff (FedAsync's)");
  if (s.sampler.name != "cyclic")
    warn_unused(out, {{"sampler.strata", s.sampler.strata != sampler_default.strata}},
                "for the " + s.sampler.name + " sampler (only cyclic takes strata; stratified forms its own)");
  if (s.sampler.name != "power_of_choice")
    warn_unused(out, {{"sampler.candidates", s.sampler.candidates != sampler_default.candidates}},
                "for the " + s.sampler.name + " sampler (power_of_choice's)");
  if (s.pack > 1)
    if (const auto why = pack_refusal(s); !why.empty())
      out.push_back("devices.pack does nothing here: " + why + "; clients train one at a time");
  return out;
}

}  // namespace drift
