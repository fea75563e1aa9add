// FedKTL (docs/algorithms.md#fedktl).
//  - Client (5.1): loss = ArcFace(cos to the ETF, s, m) + mu * MSE(h'(f(I)), Q) over one batch of
//    generated pairs per step (cycling through a seeded shuffle); h' = Linear(d, H) is rebuilt
//    from the shared seed every round and trained with the model, then dropped. After training,
//    P^c = normalize(mean over local class-c samples of normalize(h(f(x)))), eval mode.
//  - Server (5.2): align_latents on the round's prototypes, then one image per class from the
//    centroids, converted to the clients' input, broadcast with the centroids; classes nobody
//    has uploaded yet are left out unless unseen_classes = "keep" (docs/algorithms.md#fedktl).
//  - No weights are ever aggregated: the algorithm declares private models.
#include "engine/algorithms/fedktl.hpp"
#include "engine/tensors/tensor_archive.hpp"

#include <cmath>

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/class_means.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/core/error.hpp"

namespace drift {
namespace F = torch::nn::functional;

namespace {
constexpr const char* kImages = "ktl_images";
constexpr const char* kLatents = "ktl_latents";
}  // namespace

void FedKtlClient::begin(ClientContext& ctx) {
  images_ = latents_ = torch::Tensor();
  latent_head_ = torch::nn::Linear(nullptr);
  const auto& tensors = ctx.task.payload.tensors;
  auto images = tensors.find(kImages), latents = tensors.find(kLatents);
  if (images == tensors.end() || latents == tensors.end()) return;  // round 1: ArcFace only
  images_ = images->second;
  latents_ = latents->second;
  if (images_.size(0) != latents_.size(0) || images_.size(0) == 0)
    throw DecodeError("generated images and latents differ in number");
  latent_head_ = torch::nn::Linear(ctx.model.feature_dim(), latents_.size(1));
  init_parameters(*latent_head_, stream_seed(ctx.seed, "fedktl-latent-head"));
  latent_head_->to(ctx.device);
  pair_order_.resize(static_cast<std::size_t>(images_.size(0)));
  for (std::size_t i = 0; i < pair_order_.size(); ++i) pair_order_[i] = static_cast<std::int64_t>(i);
  Rng rng = make_stream(ctx.seed, "fedktl-pairs", {ctx.client_id, ctx.task.round});
  rng.shuffle(pair_order_);
  next_pair_ = 0;
}

std::vector<torch::Tensor> FedKtlClient::extra_parameters() {
  return latent_head_ ? latent_head_->parameters() : std::vector<torch::Tensor>{};
}

torch::Tensor FedKtlClient::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  auto total = arcface_loss(out.logits, labels, options_.scale, options_.margin);
  // A generated batch of one would put BatchNorm in train mode on a single sample: skipped.
  if (!latent_head_ || options_.mu == 0.0 || images_.size(0) < 2) return total;
  const auto n = std::min<std::int64_t>(ctx.task.hyper.batch_size, images_.size(0));
  std::vector<std::int64_t> pick;
  for (std::int64_t i = 0; i < n; ++i) {
    pick.push_back(pair_order_[next_pair_]);
    next_pair_ = (next_pair_ + 1) % pair_order_.size();
  }
  const auto index = torch::tensor(pick, torch::kInt64).to(ctx.device);
  const auto features = ctx.model.forward(images_.index_select(0, index)).features;
  return total + options_.mu * F::mse_loss(latent_head_->forward(features), latents_.index_select(0, index));
}

void FedKtlClient::end(ClientContext& ctx, ClientUpdate& update) {
  ClassMeans means;
  for_each_local_batch(ctx, [&](const ModelOutput& out, const torch::Tensor& labels) {
    means.add(F::normalize(out.embedding, F::NormalizeFuncOptions().dim(1)), labels);
  });
  for (auto& [c, mean] : means.means())
    update.payload.class_vectors[kKtlPrototypes][c] = F::normalize(mean, F::NormalizeFuncOptions().dim(1));
  latent_head_ = torch::nn::Linear(nullptr);
}

FedKtlServer::FedKtlServer(FedKtlServerOptions options, std::unique_ptr<LatentGenerator> generator,
                           const FederationShape& shape)
    : options_(std::move(options)),
      generator_(std::move(generator)),
      shape_(shape),
      rng_(make_stream(shape.seed, "fedktl-server")) {
  const auto classes = shape.num_classes;
  const auto k = options_.etf_dim > 0 ? options_.etf_dim : classes;
  if (k < classes - 1)
    throw UserError("algorithm.etf_dim = " + std::to_string(k) + " is below the number of classes minus one (" +
                    std::to_string(classes - 1) + ")");
  const auto latent_dim = generator_->spec().latent_dim;
  transformer_ = FeatureTransformer(k, latent_dim);
  init_parameters(*transformer_, stream_seed(shape.seed, "fedktl-transformer"));
  Rng init = make_stream(shape.seed, "fedktl-centroids");
  centroids_ = gaussian_matrix(classes, latent_dim, init);  // nn.Embedding's N(0, 1)
  seen_.assign(static_cast<std::size_t>(classes), false);
}

Payload FedKtlServer::broadcast(std::uint32_t) {
  Payload p;
  if (images_.defined()) {
    p.tensors[kImages] = images_;
    p.tensors[kLatents] = latents_;
  }
  return p;
}

void FedKtlServer::aggregate(NamedTensors&, const std::vector<ClientUpdate>& updates, const AggregationInput&) {
  const auto uploaded = stack_class_vectors(updates, kKtlPrototypes, shape_.num_classes);
  if (uploaded.empty()) return;  // nothing new: last round's pairs stay
  const auto* label = uploaded.labels.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < uploaded.labels.numel(); ++i) seen_[static_cast<std::size_t>(label[i])] = true;
  auto sampler = [this](std::int64_t n) { return generator_->sample_valid_latents(n, rng_); };
  align_latents(transformer_, centroids_, uploaded.rows, uploaded.labels, sampler, options_.alignment, rng_);
  std::vector<std::int64_t> sent;
  for (std::size_t c = 0; c < seen_.size(); ++c)
    if (seen_[c] || options_.unseen_classes == UnseenClasses::keep) sent.push_back(static_cast<std::int64_t>(c));
  latents_ = centroids_.detach().index_select(0, torch::tensor(sent, torch::kInt64));
  const bool per_channel = !shape_.channel_mean.empty();
  images_ = images_for_clients(generator_->synthesize(latents_), generator_->spec(), shape_.input_shape,
                               per_channel ? shape_.channel_mean : std::vector<double>{shape_.pixel_mean},
                               per_channel ? shape_.channel_std : std::vector<double>{shape_.pixel_std});
}

AlgorithmInfo fedktl_info() {
  using O = FedKtlOptions;
  constexpr auto client = &O::client;
  constexpr auto server = &O::server;
  constexpr auto alignment = &FedKtlServerOptions::alignment;
  // clang-format off
  const ParamTable<O> params{{
      bind_key<O>("mu", "weight of the generated-pair regression L_M", client, &FedKtlClientOptions::mu)
          .range(0.0, std::nullopt),
      bind_key<O>("lambda", "server: weight of the MSE to the centroid table", server, alignment,
                  &LatentAlignmentOptions::lambda).range(0.0, std::nullopt),
      bind_key<O>("scale", "ArcFace scale s", client, &FedKtlClientOptions::scale).range(0.0, std::nullopt, true),
      bind_key<O>("margin", "ArcFace margin m (radians)", client, &FedKtlClientOptions::margin).range(0.0, 3.14159),
      bind_key<O>("etf_dim", "K, the ETF's dimension (>= classes - 1); 0 = the number of classes", server,
                  &FedKtlServerOptions::etf_dim).range(0.0, std::nullopt),
      bind_key<O>("server_lr", "server Adam learning rate eta_S", server, alignment, &LatentAlignmentOptions::lr)
          .range(0.0, std::nullopt, true),
      bind_key<O>("server_epochs", "server epochs E_S over the round's prototypes", server, alignment,
                  &LatentAlignmentOptions::epochs).range(1.0, std::nullopt),
      bind_key<O>("server_batch", "server batch B_S", server, alignment, &LatentAlignmentOptions::batch_size)
          .range(2.0, std::nullopt),
      bind_key<O>("mmd_bandwidths",
                  "RBF bandwidths: the paper's {10, 15, 20, 50}, or rescaled per batch to the median distance "
                  "(for large latents, e.g. Stable Diffusion's 16384)",
                  server, alignment, &LatentAlignmentOptions::bandwidth_rule),
      bind_key<O>("unseen_classes",
                  "pairs of classes no client has uploaded yet (random centroids): left out, or sent as the "
                  "authors' code does",
                  server, &FedKtlServerOptions::unseen_classes),
      bind_key<O>("generator", "random: a seeded random-weight MLP | folder: the generator in generator_folder",
                  &O::generator),
      input_file(bind_key<O>("generator_folder",
                             "generator = folder: what drift pretrain-generator or an export wrote, relative to the "
                             "scenario (docs/algorithm_guide.md#latent-generators-for-fedktl)",
                             &O::generator_folder),
                 "generator_digest"),
      bind_key<O>("generator_digest",
                  "the generator folder's digest; written when the scenario is resolved, and a folder whose files "
                  "differ is refused",
                  &O::generator_digest),
      bind_key<O>("latent_dim", "generator = random: latent width H", &O::latent_dim).range(1.0, std::nullopt),
      bind_key<O>("resolution", "generator = random: image side before resizing to the data", &O::resolution)
          .range(4.0, std::nullopt),
  }};
  // clang-format on
  auto info = algorithm_info(
      "fedktl",
      "FedKTL: private heterogeneous models on a shared ETF; prototypes up, generated image-latent pairs down", params,
      [](const O& o) { return std::make_unique<FedKtlClient>(o.client); },
      [](const O& o, const FederationShape& shape) {
        auto generator = o.generator == GeneratorSource::random
                             ? random_generator(o.latent_dim, o.resolution, stream_seed(shape.seed, "fedktl-generator"))
                             : load_generator(o.generator_folder);
        return std::make_unique<FedKtlServer>(o.server, std::move(generator), shape);
      });
  info.model_options = params.reading([](const O& o) {
    ModelOptions m;
    m.head = HeadKind::etf;
    m.etf_dim = o.server.etf_dim;
    return m;
  });
  // A folder that is not a generator is refused when the scenario is validated; the modules
  // themselves are probed when the server starts.
  info.check = params.reading([](const O& o, const FederationShape&) -> std::string {
    if (o.generator == GeneratorSource::random)
      return o.generator_folder.empty() ? ""
                                        : "algorithm.generator_folder is read only under algorithm.generator = "
                                          "\"folder\" (the generator is \"random\")";
    if (o.generator_folder.empty()) return "algorithm.generator = \"folder\" needs algorithm.generator_folder";
    try {
      read_generator_spec(o.generator_folder);
    } catch (const UserError& e) {
      return std::string("algorithm.generator_folder: ") + e.what();
    }
    return "";
  });
  info.private_models = true;
  info.reads_features = true;
  info.needs_images = true;
  return info;
}

// The generator is fixed (pretrained or seeded); what the rounds changed is kept.
void FedKtlServer::archive(StateArchive& ar) {
  archive_module(ar, *transformer_);
  archive_tensor(ar, centroids_);
  ar.values(seen_);
  archive_tensor(ar, images_);
  archive_tensor(ar, latents_);
  rng_.archive(ar);
}

}  // namespace drift
