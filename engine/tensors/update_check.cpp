#include "engine/tensors/update_check.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <cstring>
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

// Whether every value is finite. Float32 and float64 tensors (every update drift writes) are read
// in place, as bits: a value is not finite when its exponent bits are all ones. The loop has no
// branch and no float arithmetic, so it runs at memory speed, where isfinite(t).all() allocates
// a mask and dispatches two operators per tensor; the server checks every update it receives.
template <class Float, class Bits, Bits kExponent>
bool all_finite_bits(const torch::Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data_ptr());
  const auto n = static_cast<std::size_t>(t.numel());
  Bits bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Bits bits;
    std::memcpy(&bits, p + i * sizeof(Float), sizeof(Float));
    bad |= static_cast<Bits>((bits & kExponent) == kExponent);
  }
  return bad == 0;
}

bool all_finite(const torch::Tensor& t) {
  if (!t.is_contiguous() || !t.device().is_cpu()) return torch::isfinite(t).all().item<bool>();
  if (t.scalar_type() == torch::kFloat32) return all_finite_bits<float, std::uint32_t, 0x7f800000u>(t);
  if (t.scalar_type() == torch::kFloat64) return all_finite_bits<double, std::uint64_t, 0x7ff0000000000000ull>(t);
  return torch::isfinite(t).all().item<bool>();
}

}  // namespace

void check_update(const ClientUpdate& update, std::uint32_t client_id, const NamedTensors& reference,
                  const std::optional<PersonalSplit>& split) {
  if (update.client_id != client_id)
    throw DecodeError("update claims to come from client " + std::to_string(update.client_id));
  check_compatible(reference, update.weights);
  if (split) check_personal_evaluation(update, *split);
  for (const auto& t : update.weights)
    if (t.value.is_floating_point() && !all_finite(t.value))
      throw DecodeError("tensor '" + t.name + "' holds nan or infinite values");
}

}  // namespace drift
