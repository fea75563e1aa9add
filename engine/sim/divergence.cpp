#include "engine/sim/divergence.hpp"

#include <torch/torch.h>

#include <cmath>

#include "engine/tensors/named_tensors.hpp"

namespace drift {
namespace {

std::string first_failure(const RoundReport& r) {
  for (const auto& c : r.clients)
    if (c.event == ClientEvent::failed) return " (client " + std::to_string(c.client_id) + ": " + c.detail + ")";
  return "";
}

}  // namespace

std::string divergence_of(const RoundReport& r, const NamedTensors* global) {
  if (r.failed > 0 && r.finished == 0 && r.late == 0 && r.num_updates == 0)
    return "every update of aggregation " + std::to_string(r.round) + " failed" + first_failure(r);
  if (r.samples > 0 && !std::isfinite(r.train_loss))
    return "the aggregated training loss of aggregation " + std::to_string(r.round) + " is not finite";
  if (global != nullptr)
    for (const auto& t : *global)
      if (t.value.is_floating_point() && !torch::isfinite(t.value).all().item<bool>())
        return "the global model holds a non-finite value in " + t.name + " after aggregation " +
               std::to_string(r.round);
  return "";
}

std::string evaluation_divergence(const RoundReport& r) {
  if (!r.evaluated || std::isfinite(r.test_loss)) return "";
  return "the test loss of aggregation " + std::to_string(r.round) + " is not finite";
}

std::string failed_streak_divergence(std::uint32_t failed_in_a_row, std::uint32_t needed) {
  if (failed_in_a_row < needed || needed == 0) return "";
  return std::to_string(failed_in_a_row) + " updates failed in a row and none finished (an aggregation needs " +
         std::to_string(needed) + ")";
}

}  // namespace drift
