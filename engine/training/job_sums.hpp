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

  struct Totals {
    std::vector<double> loss;             // sum of loss x batch size, in float64
    std::vector<std::int64_t> correct;    // training predictions that were right
    std::vector<std::int64_t> first_bad;  // the first step whose loss was not finite; -1: none
    std::vector<double> bad_value;        // that loss
  };
  Totals read() const;  // the one host synchronisation

 private:
  torch::Tensor loss_, correct_, first_bad_, bad_value_;
};

}  // namespace drift
