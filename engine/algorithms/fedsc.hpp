#pragma once
// FedSC (Wang et al., KDD 2025; docs/algorithms.md#fedsc): relational prototypes (each client's class
// prototype merged with its M nearest peers), consistent prototypes (weighted by how far each
// client's label distribution is from uniform), and the client losses RPCL (multi-positive
// InfoNCE on features) and CPDR (squared distance to the consistent prototype).
#include <map>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/class_means.hpp"

namespace drift::fedsc {

// Which peers are a client's nearest: by angular difference to the global prototype
// |theta_i - theta_k| (`angle`), or the rows closest to the global prototype (`global`).
enum class NeighbourRule { angle, global };

// Rows [n, d] of one class (client-id order) and the class's global prototype [d]. Each row
// is averaged with its M nearest other rows under `rule`. Ties go to the lower index.
torch::Tensor relational_prototypes(const torch::Tensor& rows, const torch::Tensor& global, std::int64_t neighbours,
                                    NeighbourRule rule);

// d_k = sqrt(0.5 * sum_c (q_c - 1/C)^2), q = counts / sum(counts).
double label_discrepancy(const torch::Tensor& counts);

// e_k = sigmoid(b_k - a_k) / sum, b_k = N_k / sum N, a_k = d_k / sum d (0 when sum d = 0).
std::vector<double> consistency_weights(const std::vector<double>& discrepancy, const std::vector<double>& samples);

struct ClientOptions {
  bool rpcl = true, cpdr = true;
  double tau = 0.05;
  double rpcl_weight = 1.0, cpdr_weight = 1.0;
  bool normalize = true;          // U: divide the cosine by the batch's mean distance to each prototype
  bool self_positive = false;     // released code: the positive is the sample itself (cos = 1)
  bool pooled_negatives = false;  // released code: negatives pooled over the batch's labels
  KnowledgePass knowledge_pass = KnowledgePass::after;
};

// RPCL on a batch: mean over samples. `bank` [P, d] with classes `bank_classes` [P] (int64).
torch::Tensor rpcl_loss(const torch::Tensor& z, const torch::Tensor& labels, const torch::Tensor& bank,
                        const torch::Tensor& bank_classes, const torch::Tensor& u, const ClientOptions& o);
// CPDR: mean over samples of the mean squared difference (z - cc^y)^2 over the d feature
// entries (the MSE the released code calls; the paper's sum over entries is d times larger and
// diverges with momentum SGD); samples of classes without a consistent prototype count 0.
torch::Tensor cpdr_loss(const torch::Tensor& z, const torch::Tensor& labels, const torch::Tensor& consistent,
                        const torch::Tensor& has);

class Client final : public ClientAlgorithm {
 public:
  explicit Client(ClientOptions o) : o_(std::move(o)) {}
  void begin(ClientContext& ctx) override;
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;

 private:
  ClientOptions o_;
  torch::Tensor bank_, bank_classes_;  // relational prototypes and their classes
  torch::Tensor consistent_, has_;     // [K, d] and [K] bool
  ClassMeans means_;
};

struct ServerOptions {
  std::int64_t neighbours = 2;
  NeighbourRule rule = NeighbourRule::angle;
  bool merge = true;  // off: the raw client prototypes (released code)
  bool keep_stale = true;
};

// Both halves' options, as the algorithm's parameter table fills them.
struct Options {
  ClientOptions client;
  ServerOptions server;
};

class Server final : public ServerAlgorithm {
 public:
  explicit Server(ServerOptions o) : o_(std::move(o)) {}
  Payload broadcast(std::uint32_t round) override;
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;
  const std::map<std::uint32_t, torch::Tensor>& consistent() const { return consistent_; }
  AlgorithmMetrics metrics() const override { return {{}, {{"consistency_weight", last_weights_}}}; }
  const std::map<std::uint32_t, torch::Tensor>& relational() const { return relational_; }
  void archive(StateArchive& ar) override;

 private:
  ServerOptions o_;
  std::map<std::uint32_t, torch::Tensor> relational_;  // class -> [n, d]
  std::map<std::uint32_t, torch::Tensor> consistent_;  // class -> [d]
  std::vector<double> last_weights_;                   // CPDR's consistency weights, by client id
};

}  // namespace drift::fedsc

namespace drift {

template <>
struct ChoiceNames<fedsc::NeighbourRule> {
  static constexpr std::array<std::string_view, 2> names{"angle", "global"};
};

}  // namespace drift
