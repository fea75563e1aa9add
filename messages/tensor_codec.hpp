#pragma once
// Tensors <-> capnp. Writing references the tensor's memory from the message builder, so
// serialisation copies each byte exactly once; reading aliases the buffer (no copy).
#include <capnp/message.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/tensors/named_tensors.hpp"
#include "messages/tensor.capnp.h"

namespace drift::msg {

// Owns the tensors whose memory a MessageBuilder references until the message is written.
class TensorWriter {
 public:
  explicit TensorWriter(capnp::MessageBuilder& message) : message_(message) {}
  void write(wire::Tensor::Builder out, const std::string& name, const torch::Tensor& value);
  void write_bundle(wire::TensorBundle::Builder out, const NamedTensors& tensors);

 private:
  capnp::MessageBuilder& message_;
  std::vector<torch::Tensor> keep_alive_;
};

using BufferOwner = std::shared_ptr<const std::vector<char>>;

// Validates dtype, shape and byte count, then returns a CPU tensor aliasing the message.
// `what` names the field in error messages.
torch::Tensor read_tensor(wire::Tensor::Reader in, const BufferOwner& owner, const std::string& what);
NamedTensors read_bundle(wire::TensorBundle::Reader in, const BufferOwner& owner);

}  // namespace drift::msg
