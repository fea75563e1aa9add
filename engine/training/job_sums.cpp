#include "engine/training/job_sums.hpp"

namespace drift {
namespace {

template <class T>
std::vector<T> to_vector(const torch::Tensor& t) {
  const auto cpu = t.to(torch::kCPU).contiguous();
  const auto* p = cpu.data_ptr<T>();
  return std::vector<T>(p, p + cpu.numel());
}

}  // namespace

JobSums::JobSums(std::int64_t clients, const torch::Device& device) {
  const auto on = torch::TensorOptions().device(device);
  loss_ = torch::zeros({clients}, on.dtype(torch::kFloat64));
  correct_ = torch::zeros({clients}, on.dtype(torch::kInt64));
  first_bad_ = torch::full({clients}, -1, on.dtype(torch::kInt64));
  bad_value_ = torch::zeros({clients}, on.dtype(torch::kFloat64));
  step_ = torch::zeros({}, on.dtype(torch::kInt64));
}

void JobSums::reset() {
  torch::NoGradGuard no_grad;
  loss_.zero_();
  correct_.zero_();
  first_bad_.fill_(-1);
  bad_value_.zero_();
  step_.zero_();
}

void JobSums::add(const torch::Tensor& index, const torch::Tensor& loss, const torch::Tensor& hits, std::int64_t size,
                  std::int64_t step) {
  torch::NoGradGuard no_grad;
  // The float loss widened, times the batch size, added in order: the arithmetic the host
  // did when it read every step, so the sums keep their bits.
  const auto value = loss.detach().to(torch::kFloat64);
  loss_.index_add_(0, index, value * static_cast<double>(size));
  correct_.index_add_(0, index, hits);
  const auto before = first_bad_.index_select(0, index);
  const auto bad = torch::logical_and(before.lt(0), torch::logical_not(torch::isfinite(value)));
  first_bad_.index_copy_(0, index, torch::where(bad, torch::full_like(before, step), before));
  bad_value_.index_copy_(0, index, torch::where(bad, value, bad_value_.index_select(0, index)));
}

void JobSums::add_all(const torch::Tensor& loss, const torch::Tensor& hits, const torch::Tensor& sizes) {
  torch::NoGradGuard no_grad;
  const auto value = loss.detach().to(torch::kFloat64);
  const auto stepped = sizes.gt(0);
  // A resting client's loss is 0, or not finite once it has failed: it adds nothing either way.
  loss_.add_(torch::where(stepped, value * sizes.to(torch::kFloat64), torch::zeros_like(value)));
  correct_.add_(hits);
  const auto bad = stepped.logical_and(first_bad_.lt(0)).logical_and(torch::logical_not(torch::isfinite(value)));
  first_bad_.copy_(torch::where(bad, step_, first_bad_));
  bad_value_.copy_(torch::where(bad, value, bad_value_));
  step_.add_(1);
}

JobSums::Totals JobSums::read() const { return totals_of(tensors()); }

JobSums::Totals JobSums::totals_of(const std::vector<torch::Tensor>& host) {
  return {to_vector<double>(host.at(0)), to_vector<std::int64_t>(host.at(1)), to_vector<std::int64_t>(host.at(2)),
          to_vector<double>(host.at(3))};
}

}  // namespace drift
