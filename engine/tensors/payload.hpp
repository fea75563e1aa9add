#pragma once
// Everything an algorithm exchanges besides model weights. Ordered maps keep iteration
// (and therefore encoding and floating-point reduction order) deterministic.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>

namespace drift {

struct Payload {
  std::map<std::string, at::Tensor> tensors;  // torch::Tensor is this type
  // name -> class id -> [n, d] rows (one or more vectors per class).
  std::map<std::string, std::map<std::uint32_t, at::Tensor>> class_vectors;
  std::map<std::string, double> scalars;

  bool empty() const { return tensors.empty() && class_vectors.empty() && scalars.empty(); }
};

}  // namespace drift
