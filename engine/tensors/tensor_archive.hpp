#pragma once
// Tensors and the values made of them in a StateArchive (docs/checkpoints.md): a tensor is its
// dtype, shape and raw bytes, restored on the CPU, so the bits a run resumes from are exactly
// the bits it saved.
#include <ATen/core/Tensor.h>

#include "engine/core/state_archive.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

// An undefined tensor is kept as undefined.
void archive_tensor(StateArchive& ar, at::Tensor& t);
// A module's parameters and buffers, in registration order, into the module it already is.
void archive_module(StateArchive& ar, torch::nn::Module& module);
void archive_tensors(StateArchive& ar, std::vector<at::Tensor>& ts);
void archive_named(StateArchive& ar, NamedTensors& ts);
void archive_payload(StateArchive& ar, Payload& p);
void archive_eval_result(StateArchive& ar, EvalResult& r);
void archive_update(StateArchive& ar, ClientUpdate& u);

template <class K>
void archive_tensor_map(StateArchive& ar, std::map<K, at::Tensor>& m) {
  ar.map(m, [&](at::Tensor& t) { archive_tensor(ar, t); });
}

}  // namespace drift
