#include "messages/tensor_codec.hpp"

#include <cstdint>
#include <cstring>
#include <set>

#include "engine/core/error.hpp"

namespace drift::msg {
namespace {

wire::DType to_wire(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat32:
      return wire::DType::FLOAT32;
    case torch::kFloat64:
      return wire::DType::FLOAT64;
    case torch::kInt64:
      return wire::DType::INT64;
    case torch::kInt32:
      return wire::DType::INT32;
    case torch::kUInt8:
      return wire::DType::UINT8;
    default:
      throw std::invalid_argument(std::string("cannot encode tensors of dtype ") + c10::toString(t));
  }
}

torch::ScalarType from_wire(wire::DType t, const std::string& what) {
  switch (t) {
    case wire::DType::FLOAT32:
      return torch::kFloat32;
    case wire::DType::FLOAT64:
      return torch::kFloat64;
    case wire::DType::INT64:
      return torch::kInt64;
    case wire::DType::INT32:
      return torch::kInt32;
    case wire::DType::UINT8:
      return torch::kUInt8;
  }
  throw DecodeError(what + ": unknown dtype code " + std::to_string(static_cast<unsigned>(t)));
}

}  // namespace

void TensorWriter::write(wire::Tensor::Builder out, const std::string& name, const torch::Tensor& value) {
  torch::Tensor t = value.detach().to(torch::kCPU).contiguous();
  // capnp references external data only at word alignment; torch allocations are 64-byte
  // aligned, so only an offset view needs the copy.
  if (reinterpret_cast<std::uintptr_t>(t.data_ptr()) % sizeof(capnp::word) != 0) t = t.clone();
  out.setName(name);
  out.setDtype(to_wire(t.scalar_type()));
  auto shape = out.initShape(static_cast<unsigned>(t.dim()));
  for (int64_t i = 0; i < t.dim(); ++i) shape.set(static_cast<unsigned>(i), t.size(i));
  const auto nbytes = static_cast<std::size_t>(t.numel()) * t.element_size();
  if (nbytes > 0) {
    // capnp writes external data in whole words: the tail of a size that is not a multiple of
    // 8 bytes would be read (and sent) from past the tensor's end. Such a tensor goes through a
    // zero-padded copy, so the padding on the wire is zeros, not stray memory.
    if (nbytes % sizeof(capnp::word) != 0) {
      const auto words = (nbytes + sizeof(capnp::word) - 1) / sizeof(capnp::word);
      auto padded = torch::zeros({static_cast<std::int64_t>(words * sizeof(capnp::word))}, torch::kUInt8);
      std::memcpy(padded.data_ptr(), t.data_ptr(), nbytes);
      t = std::move(padded);
    }
    auto bytes = kj::arrayPtr(static_cast<const kj::byte*>(t.data_ptr()), nbytes);
    out.adoptData(message_.getOrphanage().referenceExternalData(capnp::Data::Reader(bytes)));
    keep_alive_.push_back(std::move(t));
  } else {
    out.initData(0);
  }
}

void TensorWriter::write_bundle(wire::TensorBundle::Builder out, const NamedTensors& tensors) {
  auto list = out.initTensors(static_cast<unsigned>(tensors.size()));
  for (unsigned i = 0; i < tensors.size(); ++i) write(list[i], tensors[i].name, tensors[i].value);
}

torch::Tensor read_tensor(wire::Tensor::Reader in, const BufferOwner& owner, const std::string& what) {
  const auto dtype = from_wire(in.getDtype(), what);
  const auto shape_list = in.getShape();
  if (shape_list.size() > 16)
    throw DecodeError(what + ": " + std::to_string(shape_list.size()) + " dimensions (at most 16)");
  std::vector<int64_t> shape;
  std::uint64_t numel = 1;
  for (unsigned i = 0; i < shape_list.size(); ++i) {
    const int64_t d = shape_list[i];
    if (d < 0) throw DecodeError(what + ": negative dimension " + std::to_string(d));
    if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel))
      throw DecodeError(what + ": shape overflows");
    shape.push_back(d);
  }
  const auto data = in.getData();
  const std::uint64_t elem = c10::elementSize(dtype);
  std::uint64_t expected = 0;
  if (__builtin_mul_overflow(numel, elem, &expected) || expected != data.size()) {
    throw DecodeError(what + ": shape and dtype need " + std::to_string(numel) + " x " + std::to_string(elem) +
                      " bytes but the message holds " + std::to_string(data.size()));
  }
  auto options = torch::TensorOptions().dtype(dtype);
  if (numel == 0) return torch::empty(shape, options);
  void* ptr = const_cast<kj::byte*>(data.begin());
  if (reinterpret_cast<std::uintptr_t>(ptr) % elem != 0)
    return torch::from_blob(ptr, shape, options).clone();  // misaligned: copy instead of alias
  return torch::from_blob(
      ptr, shape, [owner](void*) {}, options);
}

NamedTensors read_bundle(wire::TensorBundle::Reader in, const BufferOwner& owner) {
  NamedTensors out;
  std::set<std::string> seen;
  const auto list = in.getTensors();
  out.reserve(list.size());
  for (unsigned i = 0; i < list.size(); ++i) {
    std::string name = list[i].getName();
    if (name.empty()) throw DecodeError("tensor #" + std::to_string(i) + " has no name");
    if (!seen.insert(name).second) throw DecodeError("tensor '" + name + "' appears twice");
    auto value = read_tensor(list[i], owner, "tensor '" + name + "'");
    out.push_back({std::move(name), std::move(value)});
  }
  return out;
}

}  // namespace drift::msg
