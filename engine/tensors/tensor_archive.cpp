#include "engine/tensors/tensor_archive.hpp"

#include <torch/torch.h>

namespace drift {

void archive_tensor(StateArchive& ar, at::Tensor& t) {
  bool defined = t.defined();
  ar.value(defined);
  if (!defined) {
    if (ar.loading()) t = at::Tensor();
    return;
  }
  std::int8_t dtype = ar.loading() ? 0 : static_cast<std::int8_t>(t.scalar_type());
  ar.value(dtype);
  std::vector<std::int64_t> sizes = ar.loading() ? std::vector<std::int64_t>{} : t.sizes().vec();
  ar.values(sizes);
  std::string data;
  if (!ar.loading()) {
    const auto cpu = t.detach().to(torch::kCPU).contiguous();
    data.assign(static_cast<const char*>(cpu.data_ptr()), cpu.numel() * cpu.element_size());
  }
  ar.text(data);
  bool grad = !ar.loading() && t.requires_grad();
  ar.value(grad);
  if (!ar.loading()) return;
  if (dtype < 0 || dtype >= static_cast<std::int8_t>(c10::ScalarType::NumOptions))
    throw DecodeError("a checkpoint's tensor has an unknown dtype");
  for (auto s : sizes)
    if (s < 0) throw DecodeError("a checkpoint's tensor has a negative size");
  auto out = torch::empty(sizes, torch::TensorOptions().dtype(static_cast<c10::ScalarType>(dtype)));
  if (static_cast<std::size_t>(out.numel() * out.element_size()) != data.size())
    throw DecodeError("a checkpoint's tensor holds the wrong number of bytes for its shape");
  if (!data.empty()) std::memcpy(out.data_ptr(), data.data(), data.size());
  t = grad ? out.requires_grad_(true) : out;
}

void archive_module(StateArchive& ar, torch::nn::Module& module) {
  auto state = ar.loading() ? NamedTensors{} : state_of(module);
  archive_named(ar, state);
  if (ar.loading()) load_state(module, state);
}

void archive_tensors(StateArchive& ar, std::vector<at::Tensor>& ts) {
  ar.vector(ts, [&](at::Tensor& t) { archive_tensor(ar, t); });
}

void archive_named(StateArchive& ar, NamedTensors& ts) {
  ar.vector(ts, [&](NamedTensor& t) {
    ar.text(t.name);
    archive_tensor(ar, t.value);
  });
}

void archive_payload(StateArchive& ar, Payload& p) {
  archive_tensor_map(ar, p.tensors);
  ar.map(p.class_vectors, [&](std::map<std::uint32_t, at::Tensor>& m) { archive_tensor_map(ar, m); });
  ar.map(p.scalars, [&](double& v) { ar.value(v); });
}

void archive_eval_result(StateArchive& ar, EvalResult& r) {
  ar.value(r.begin);
  ar.value(r.end);
  ar.value(r.loss_sum);
  ar.values(r.correct);
  ar.values(r.count);
}

void archive_update(StateArchive& ar, ClientUpdate& u) {
  ar.value(u.client_id);
  ar.value(u.round);
  ar.value(u.model_version);
  ar.value(u.num_samples);
  archive_named(ar, u.weights);
  archive_payload(ar, u.payload);
  ar.value(u.metrics.loss);
  ar.value(u.metrics.accuracy);
  ar.value(u.metrics.steps);
  ar.value(u.metrics.samples_seen);
  ar.optional(u.personal, [&](EvalResult& r) { archive_eval_result(ar, r); });
}

}  // namespace drift
