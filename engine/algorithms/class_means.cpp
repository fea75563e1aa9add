#include "engine/algorithms/class_means.hpp"

#include <tuple>

namespace drift {

void ClassMeans::add(const torch::Tensor& device_values, const torch::Tensor& device_labels, std::int64_t classes) {
  if (classes > 0 && !device_values.device().is_cpu() && (!sums_.defined() || !sums_.device().is_cpu())) {
    if (device_labels.numel() == 0) return;  // as on the CPU: nothing seen, nothing defined
    // A one-hot product sums each class's rows in float64 on the device: no index bound to
    // check on the host, so no wait (an index_add_ with deterministic kernels reads its largest
    // index back).
    const auto on = device_values.options().dtype(torch::kFloat64);
    const auto one_hot = device_labels.unsqueeze(1).eq(torch::arange(classes, device_labels.options())).to(on);
    if (!sums_.defined()) {
      sums_ = torch::zeros({classes, device_values.size(1)}, on);
      counts_ = torch::zeros({classes}, on);
    }
    sums_.add_(one_hot.t().matmul(device_values.detach().to(torch::kFloat64)));
    counts_.add_(one_hot.sum(0));
    return;
  }
  if (sums_.defined() && !sums_.device().is_cpu()) std::tie(sums_, counts_) = on_host();
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

void ClassMeans::restart() {
  if (!sums_.defined() || sums_.device().is_cpu()) return clear();
  sums_.zero_();
  counts_.zero_();
}

std::pair<torch::Tensor, torch::Tensor> ClassMeans::on_host() const {
  if (sums_.device().is_cpu()) return {sums_, counts_};
  return {sums_.to(torch::kCPU), counts_.to(torch::kCPU)};
}

std::map<std::uint32_t, torch::Tensor> ClassMeans::means() const {
  std::map<std::uint32_t, torch::Tensor> out;
  if (empty()) return out;
  const auto [sums, counts] = on_host();
  for (std::int64_t c = 0; c < counts.size(0); ++c) {
    const double n = counts[c].item<double>();
    if (n > 0.0) out[static_cast<std::uint32_t>(c)] = (sums[c] / n).to(torch::kFloat32).unsqueeze(0);
  }
  return out;
}

std::map<std::uint32_t, std::int64_t> ClassMeans::counts() const {
  std::map<std::uint32_t, std::int64_t> out;
  if (empty()) return out;
  const auto counts = on_host().second;
  for (std::int64_t c = 0; c < counts.size(0); ++c)
    if (const auto n = static_cast<std::int64_t>(counts[c].item<double>()); n > 0)
      out[static_cast<std::uint32_t>(c)] = n;
  return out;
}

}  // namespace drift
