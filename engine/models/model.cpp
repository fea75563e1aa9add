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

ModelOutput Model::forward(const torch::Tensor& x) {
  auto extracted = extract(x, levels_);
  ModelOutput out;
  out.levels = std::move(extracted.levels);
  auto features = extracted.features;
  if (pooled_dim_ > 0) features = torch::adaptive_avg_pool1d(features.unsqueeze(1), {pooled_dim_}).squeeze(1);
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
