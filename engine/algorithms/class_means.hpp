#pragma once
// Per-class means of vectors seen batch by batch (features or logits): local prototypes,
// FedSKC's knowledge. Sums in float64, so the order of batches barely matters and the
// result of a fixed order is exact to the last bit.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "engine/config/choices.hpp"

namespace drift {

// When a client computes the class means it uploads: `after` training, in a separate eval-mode
// pass over its data (the papers), or running over the `last_epoch` in train mode (the
// authors' code).
enum class KnowledgePass { after, last_epoch };
template <>
struct ChoiceNames<KnowledgePass> {
  static constexpr std::array<std::string_view, 2> names{"after", "last_epoch"};
};

class ClassMeans {
 public:
  // [B, d], [B]; detached. Off the CPU, with the number of classes known (`classes` > 0), the
  // sums stay on the device and nothing waits for it until means() or counts() read them once;
  // otherwise (and always on the CPU) they are summed on the CPU in sample order.
  void add(const torch::Tensor& values, const torch::Tensor& labels, std::int64_t classes = 0);
  bool empty() const { return !sums_.defined(); }
  void clear() { sums_ = counts_ = torch::Tensor(); }
  // Starts over like clear(), but keeps sums on a device where they are, zeroed in place, so
  // that a step captured as a CUDA graph in an earlier job adds to the same memory (empty()
  // then stays false: read means() instead).
  void restart();
  // Class id -> [1, d] float32 mean, for every class seen.
  std::map<std::uint32_t, torch::Tensor> means() const;
  std::map<std::uint32_t, std::int64_t> counts() const;

 private:
  // The sums and counts on the CPU (copied from the device at each read).
  std::pair<torch::Tensor, torch::Tensor> on_host() const;
  // [K, d] float64, [K] float64; K grows with the largest label (on the device: `classes`).
  torch::Tensor sums_, counts_;
};

}  // namespace drift
