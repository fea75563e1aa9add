#pragma once
// Tensors and the values made of them in a StateArchive (docs/checkpoints.md): a tensor is its
// dtype, shape and raw bytes, restored on the CPU, so the bits a run resumes from are exactly
// the bits it saved.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

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

// One field of a record that lists its fields once (`each_field`), archived as its type is; a
// field of a type without an overload here or beside its type does not compile.
template <class T>
std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>> archive_field(StateArchive& ar, T& value) {
  ar.value(value);
}
inline void archive_field(StateArchive& ar, std::string& text) { ar.text(text); }
inline void archive_field(StateArchive& ar, std::vector<std::uint32_t>& ids) { ar.values(ids); }
inline void archive_field(StateArchive& ar, NamedTensors& tensors) { archive_named(ar, tensors); }
inline void archive_field(StateArchive& ar, ClientUpdate& update) { archive_update(ar, update); }

// Every field `record.each_field` lists, in its order: a record's checkpoint layout is that list.
template <class Record>
void archive_fields(StateArchive& ar, Record& record) {
  record.each_field([&ar](auto&... field) { (archive_field(ar, field), ...); });
}

template <class K>
void archive_tensor_map(StateArchive& ar, std::map<K, at::Tensor>& m) {
  ar.map(m, [&](at::Tensor& t) { archive_tensor(ar, t); });
}

}  // namespace drift
