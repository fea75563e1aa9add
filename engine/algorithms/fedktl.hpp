#pragma once
// FedKTL (Zhang et al., CVPR 2024; docs/algorithms.md#fedktl): heterogeneous clients keep private models
// that project onto a shared simplex ETF; only ETF-space class prototypes go up, and one
// generated (image, latent) pair per class comes down. The mathematical pieces live in
// fedktl_math; this file wires them to clients, the server and a LatentGenerator.
#include <memory>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/fedktl_math.hpp"
#include "engine/generators/latent_generator.hpp"

namespace drift {

struct FedKtlClientOptions {
  double mu = 50.0;     // weight of the latent-regression task L_M
  double scale = 64.0;  // ArcFace s
  double margin = 0.5;  // ArcFace m
};

class FedKtlClient final : public ClientAlgorithm {
 public:
  explicit FedKtlClient(FedKtlClientOptions options) : options_(options) {}
  void begin(ClientContext& ctx) override;
  std::vector<torch::Tensor> extra_parameters() override;
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;

 private:
  FedKtlClientOptions options_;
  torch::Tensor images_, latents_;          // this round's generated pairs (absent in round 1)
  torch::nn::Linear latent_head_{nullptr};  // h', re-made from the shared seed every round
  std::vector<std::int64_t> pair_order_;
  std::size_t next_pair_ = 0;
};

// A class no client has uploaded yet has a random centroid: its pair is left out of the
// broadcast (`skip`, docs/algorithms.md#fedktl), or sent as the authors' code does (`keep`).
enum class UnseenClasses { skip, keep };
template <>
struct ChoiceNames<UnseenClasses> {
  static constexpr std::array<std::string_view, 2> names{"skip", "keep"};
};

struct FedKtlServerOptions {
  LatentAlignmentOptions alignment;
  std::int64_t etf_dim = 0;  // K; 0 = the number of classes
  UnseenClasses unseen_classes = UnseenClasses::skip;
};

// Where the server's generator comes from: a seeded random-weight MLP, or a folder
// (docs/algorithm_guide.md#latent-generators-for-fedktl).
enum class GeneratorSource { random, folder };
template <>
struct ChoiceNames<GeneratorSource> {
  static constexpr std::array<std::string_view, 2> names{"random", "folder"};
};

// Both halves' options and where the server's generator comes from, as the algorithm's
// parameter table fills them. The server's options (they hold a vector) come last: after them,
// the string makes GCC 12 report a false -Wmaybe-uninitialized on the constructor's cleanup.
struct FedKtlOptions {
  GeneratorSource generator = GeneratorSource::random;
  std::string generator_folder;  // generator = folder
  std::string generator_digest;  // of the folder's files, recorded when the scenario is resolved
  std::int64_t latent_dim = 64;  // of the random generator
  std::int64_t resolution = 32;  // of the random generator's images
  FedKtlClientOptions client;
  FedKtlServerOptions server;
};

class FedKtlServer final : public ServerAlgorithm {
 public:
  FedKtlServer(FedKtlServerOptions options, std::unique_ptr<LatentGenerator> generator, const FederationShape& shape);
  Payload broadcast(std::uint32_t round) override;
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;

  const torch::Tensor& centroids() const { return centroids_; }
  void archive(StateArchive& ar) override;

 private:
  FedKtlServerOptions options_;
  std::unique_ptr<LatentGenerator> generator_;
  FederationShape shape_;
  FeatureTransformer transformer_{nullptr};
  torch::Tensor centroids_;         // [C, H], persistent
  std::vector<bool> seen_;          // by class: uploaded at least once
  torch::Tensor images_, latents_;  // what the next round's clients get
  Rng rng_;
};

// The class vectors clients upload: "ktl_prototypes".
inline constexpr const char* kKtlPrototypes = "ktl_prototypes";

}  // namespace drift
