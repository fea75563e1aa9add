#include "engine/algorithms/class_means.hpp"

namespace drift {

void ClassMeans::add(const torch::Tensor& device_values, const torch::Tensor& device_labels) {
  // Sums live on the CPU in float64 whatever device trains: exact, and uploads are CPU-side.
  const auto values = device_values.detach().to(torch::kCPU);
  const auto labels = device_labels.to(torch::kCPU);
  if (labels.numel() == 0) return;
  const auto needed = labels.max().item<std::int64_t>() + 1;
  if (!sums_.defined()) {
    sums_ = torch::zeros({needed, values.size(1)}, torch::kFloat64);
    counts_ = torch::zeros({needed}, torch::kFloat64);
  } else if (needed > sums_.size(0)) {
    sums_ = torch::cat({sums_, torch::zeros({needed - sums_.size(0), sums_.size(1)}, torch::kFloat64)});
    counts_ = torch::cat({counts_, torch::zeros({needed - counts_.size(0)}, torch::kFloat64)});
  }
  sums_.index_add_(0, labels, values.detach().to(torch::kFloat64));
  counts_.index_add_(0, labels, torch::ones({labels.size(0)}, torch::kFloat64));
}

std::map<std::uint32_t, torch::Tensor> ClassMeans::means() const {
  std::map<std::uint32_t, torch::Tensor> out;
  if (empty()) return out;
  for (std::int64_t c = 0; c < counts_.size(0); ++c) {
    const double n = counts_[c].item<double>();
    if (n > 0.0) out[static_cast<std::uint32_t>(c)] = (sums_[c] / n).to(torch::kFloat32).unsqueeze(0);
  }
  return out;
}

std::map<std::uint32_t, std::int64_t> ClassMeans::counts() const {
  std::map<std::uint32_t, std::int64_t> out;
  if (empty()) return out;
  for (std::int64_t c = 0; c < counts_.size(0); ++c)
    if (const auto n = static_cast<std::int64_t>(counts_[c].item<double>()); n > 0)
      out[static_cast<std::uint32_t>(c)] = n;
  return out;
}

}  // namespace drift
