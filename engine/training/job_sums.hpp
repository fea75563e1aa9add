#pragma once
// What a training job sums for each of its clients while it trains, kept on the device and
// read once after the last step: reading per step would make the host wait for the device
// at every batch. Unpacked training is a job of one client.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace drift {

class JobSums {
 public:
  JobSums(std::int64_t clients, const torch::Device& device);

  // Clients `index` took local step `step` on batches of `size`, with these losses and hits.
  void add(const torch::Tensor& index, const torch::Tensor& loss, const torch::Tensor& hits, std::int64_t size,
           std::int64_t step);
  // Every client at once at the next local step (add_all's own count, a device tensor, so that
  // a captured call serves every step): client r's batch held sizes[r] samples (an int64 tensor
  // on the device); a client with 0 took no step and adds nothing.
  void add_all(const torch::Tensor& loss, const torch::Tensor& hits, const torch::Tensor& sizes);
  void reset();  // zero again, on the same tensors, for another job

  struct Totals {
    std::vector<double> loss;             // sum of loss x batch size, in float64
    std::vector<std::int64_t> correct;    // training predictions that were right
    std::vector<std::int64_t> first_bad;  // the first step whose loss was not finite; -1: none
    std::vector<double> bad_value;        // that loss
  };
  Totals read() const;  // the one host synchronisation
  // The sums as device tensors, to download with the weights in one wait, and totals_of them
  // once they are on the CPU.
  std::vector<torch::Tensor> tensors() const { return {loss_, correct_, first_bad_, bad_value_}; }
  static Totals totals_of(const std::vector<torch::Tensor>& host);

 private:
  torch::Tensor loss_, correct_, first_bad_, bad_value_;
  torch::Tensor step_;  // add_all's local step
};

}  // namespace drift
