#include "engine/tensors/update_check.hpp"

#include <torch/torch.h>

#include <string>

#include "engine/core/error.hpp"

namespace drift {
namespace {

void check_personal_evaluation(const ClientUpdate& u, const PersonalSplit& split) {
  if (!u.personal) throw DecodeError("a private-model update carries no evaluation");
  std::uint64_t counted = 0;
  for (auto n : u.personal->count) counted += n;
  if (u.personal->begin != split.begin || u.personal->end != split.end || counted != split.end - split.begin ||
      u.personal->count.size() != split.classes)
    throw DecodeError("the evaluation does not cover the client's test split");
  for (std::size_t c = 0; c < u.personal->count.size(); ++c)
    if (u.personal->correct[c] > u.personal->count[c])
      throw DecodeError("the evaluation counts more hits than samples");
}

}  // namespace

void check_update(const ClientUpdate& update, std::uint32_t client_id, const NamedTensors& reference,
                  const std::optional<PersonalSplit>& split) {
  if (update.client_id != client_id)
    throw DecodeError("update claims to come from client " + std::to_string(update.client_id));
  check_compatible(reference, update.weights);
  if (split) check_personal_evaluation(update, *split);
  for (const auto& t : update.weights)
    if (t.value.is_floating_point() && !torch::isfinite(t.value).all().item<bool>())
      throw DecodeError("tensor '" + t.name + "' holds nan or infinite values");
}

}  // namespace drift
