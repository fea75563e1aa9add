#include "engine/models/model.hpp"

#include "engine/models/simplex_etf.hpp"

namespace drift {
namespace F = torch::nn::functional;

void Model::build_head(std::int64_t backbone_dim, std::int64_t num_classes, const ModelOptions& options) {
  levels_ = options.feature_levels;
  feature_dim_ = backbone_dim;
  if (options.feature_dim > 0 && options.feature_dim != backbone_dim) feature_dim_ = pooled_dim_ = options.feature_dim;
  if (options.projection_dim > 0) {
    const auto d = feature_dim_;
    projection_ = register_module("projection", torch::nn::Sequential(torch::nn::Linear(d, d), torch::nn::ReLU(),
                                                                      torch::nn::Linear(d, options.projection_dim)));
    feature_dim_ = options.projection_dim;
  }
  if (options.head == HeadKind::linear) {
    linear_head_ = register_module("head", torch::nn::Linear(feature_dim_, num_classes));
    return;
  }
  if (options.head == HeadKind::etf) {
    const auto k = options.etf_dim > 0 ? options.etf_dim : num_classes;
    linear_head_ = register_module("head", torch::nn::Linear(feature_dim_, k));
    Rng rng = make_stream(options.shared_seed, "etf");
    etf_ = linear_head_->register_buffer("etf", simplex_etf(k, num_classes, rng));
    return;
  }
  // A parameter-only module, so the prototypes travel as "head.weight" like a linear head's.
  cosine_head_ = register_module("head", std::make_shared<torch::nn::Module>("CosineHead"));
  prototypes_ = cosine_head_->register_parameter("weight", torch::zeros({num_classes, feature_dim_}));
  scale_ = cosine_head_->register_parameter("scale", torch::ones({1}));
}

torch::Tensor adaptive_pool_matrix(std::int64_t in, std::int64_t out) {
  auto matrix = torch::zeros({in, out});
  auto m = matrix.accessor<float, 2>();
  for (std::int64_t i = 0; i < out; ++i) {
    // LibTorch's window: [floor(i in / out), ceil((i + 1) in / out)).
    const auto start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (auto j = start; j < end; ++j) m[j][i] = 1.0F / static_cast<float>(end - start);
  }
  return matrix;
}

torch::Tensor Model::pool_features(const torch::Tensor& features) {
  // On the CPU, LibTorch's pooling: the recorded results are its bits. Its CUDA backward adds
  // with atomics, in an order that changes from run to run; the product with the averaging
  // matrix is the same pooling with a deterministic backward (docs/devices.md#determinism).
  if (!features.is_cuda()) return torch::adaptive_avg_pool1d(features.unsqueeze(1), {pooled_dim_}).squeeze(1);
  if (!pool_matrix_.defined() || pool_matrix_.device() != features.device())
    pool_matrix_ = adaptive_pool_matrix(features.size(1), pooled_dim_).to(features.options());
  return features.matmul(pool_matrix_);
}

ModelOutput Model::forward(const torch::Tensor& x) {
  auto extracted = extract(x, levels_);
  ModelOutput out;
  out.levels = std::move(extracted.levels);
  auto features = extracted.features;
  if (pooled_dim_ > 0) features = pool_features(features);
  out.features = projection_ ? projection_->forward(features) : features;
  if (etf_.defined()) {
    out.embedding = linear_head_->forward(out.features);
    out.logits = F::normalize(out.embedding, F::NormalizeFuncOptions().dim(1)).matmul(etf_);
  } else if (linear_head_) {
    out.logits = linear_head_->forward(out.features);
  } else {
    const auto unit = F::normalize(out.features, F::NormalizeFuncOptions().dim(1));
    const auto rows = F::normalize(prototypes_, F::NormalizeFuncOptions().dim(1));
    out.logits = scale_ * F::linear(unit, rows);
  }
  return out;
}

}  // namespace drift
