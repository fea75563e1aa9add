#pragma once
// FedSKC (Wang et al., ICWS 2025; docs/algorithms.md#fedskc): structural knowledge (per-class mean
// logits) shared through the server, local contrastive learning (LCL) against it, global
// discrepancy aggregation (GDA) and global period review (GPR). The server formulas are free
// functions so that tests check them against hand-computed numbers.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/class_means.hpp"

namespace drift::fedskc {

// Class id -> knowledge vector [C] (float64 on the server, float32 on the wire as [1, C]).
using Knowledge = std::map<std::uint32_t, torch::Tensor>;

// Eq. 1 for one class. `rows` [n, C] holds the knowledge of the n participants that hold the
// class, in client-id order. Each row is averaged with its M nearest other rows (L2; ties go
// to the lower index; fewer than M others: all of them), and the smoothed rows are averaged.
torch::Tensor merge_class_knowledge(const torch::Tensor& rows, std::int64_t neighbours);

// Eq. 4: e_k = sigmoid(N_k - a_k d_k + b_k) / sum, a_k = d_k / sum d, b_k = N_k / sum N.
// With raw_counts = false the N_k term is left out (the `fraction` option): the paper's raw
// counts saturate the sigmoid and give uniform weights. sum d = 0 gives a_k = 0.
std::vector<double> gda_weights(const std::vector<double>& discrepancy, const std::vector<double>& samples,
                                bool raw_counts);

// Eq. 5's variance term: sum over `classes` of the variance of the C entries of c~^j.
double knowledge_variance(const Knowledge& knowledge, const std::set<std::uint32_t>& classes, bool unbiased);

// Eq. 5: w <- beta w + (1 - beta) rho (w_prev - w) (literal) or w + (1 - beta) rho (w_prev - w)
// (convex). Integer tensors are never touched; buffers (BatchNorm statistics) only when asked.
void apply_gpr(NamedTensors& current, const NamedTensors& previous, double rho, double beta, bool convex,
               bool include_buffers);

// U of Eq. 2, the cosine's divisor: none (U = 1), the batch's or the local data set's mean
// distance to each class's knowledge.
enum class Normalization { none, batch, dataset };
// Eq. 4's N_k term: the raw sample counts (the paper) or left out (`fraction`).
enum class GdaCount { raw, fraction };
// Eq. 5 as written (`literal`: beta w + ...) or as a step from w (`convex`: w + ...).
enum class GprMode { literal, convex };
// The variance of the C entries of a knowledge vector: divided by C or by C - 1.
enum class GprVariance { population, unbiased };
// What GPR moves: the parameters, or the BatchNorm statistics too (`state`).
enum class GprScope { parameters, state };
// The classes Eq. 5's variance sums run over: those fresh in both rounds, or each round's own.
enum class GprClasses { common, own };

struct ClientOptions {
  bool lcl = true;
  double tau = 0.08;
  double weight = 1.0;
  double warmup_rounds = 0.0;  // LCL weight min(round / warmup, 1); 0 = none
  Normalization normalization = Normalization::batch;
  bool positive_twice = false;  // released code: the positive also sits among the C candidates
  bool self_positive = false;   // released code: a class without knowledge uses the sample itself
  bool silu = true;             // c <- c * sigmoid(c) on upload
  KnowledgePass knowledge_pass = KnowledgePass::after;
};

// Eq. 2-3 on a batch: mean over the batch of the LCL term (samples skipped count 0).
// `knowledge` [P, C] holds the vectors of the classes listed in `classes` (ascending);
// `u` [P] divides the cosine (undefined: U = 1).
torch::Tensor lcl_loss(const torch::Tensor& logits, const torch::Tensor& labels, const torch::Tensor& knowledge,
                       const std::vector<std::int64_t>& classes, const torch::Tensor& u, const ClientOptions& o);
// The same with the column of each class in `knowledge` given as a tensor on the logits' device
// ([C], -1 for a class without knowledge: knowledge_columns), made once per round rather than
// uploaded at every batch.
torch::Tensor lcl_loss(const torch::Tensor& logits, const torch::Tensor& labels, const torch::Tensor& knowledge,
                       const torch::Tensor& column_of, const torch::Tensor& u, const ClientOptions& o);
torch::Tensor knowledge_columns(const std::vector<std::int64_t>& classes, std::int64_t num_classes,
                                const torch::Device& device);

class Client final : public ClientAlgorithm {
 public:
  explicit Client(ClientOptions options) : o_(std::move(options)) {}
  void begin(ClientContext& ctx) override;
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;
  // Every step captures: the knowledge, its columns, U and the LCL weight live in tensors
  // refilled in place each job, so a key names only how many classes have knowledge and
  // whether the step adds to the uploaded means.
  std::optional<std::string> step_graph_key(const ClientContext& ctx) const override;

 private:
  // The round's knowledge [P, C], U [P] and knowledge_columns [classes], one set per P at
  // fixed addresses: a step captured in one job reads the next job's values.
  struct KnowledgeSlot {
    torch::Tensor knowledge, u, columns;
  };
  KnowledgeSlot& slot_for(std::int64_t rows, std::int64_t width, std::int64_t classes, const torch::Device& device);

  ClientOptions o_;
  std::map<std::int64_t, KnowledgeSlot> slots_;
  KnowledgeSlot* active_ = nullptr;  // this job's; null without knowledge
  torch::Tensor weight_;             // this round's LCL weight, 0-dim float32
  ClassMeans means_;                 // of the logits, for the upload
};

struct ServerOptions {
  std::int64_t neighbours = 1;
  bool gda = true;
  GdaCount gda_count = GdaCount::raw;
  bool gpr = true;
  double beta = 0.95;
  GprMode gpr_mode = GprMode::literal;
  double gpr_rho_limit = 1.0;  // |rho| applied at most this; 0: unbounded (paper, released code)
  GprVariance gpr_variance = GprVariance::population;
  GprScope gpr_scope = GprScope::parameters;
  GprClasses gpr_classes = GprClasses::common;
  bool keep_stale = true;  // a class nobody held this round keeps its old knowledge
};

// Both halves' options, as the algorithm's parameter table fills them.
struct Options {
  ClientOptions client;
  ServerOptions server;
};

class Server final : public ServerAlgorithm {
 public:
  explicit Server(ServerOptions options) : o_(options) {}
  Payload broadcast(std::uint32_t round) override;
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;

  const Knowledge& knowledge() const { return knowledge_; }
  double last_rho() const { return last_rho_; }                  // as computed; NaN when GPR was skipped
  double last_applied_rho() const { return last_applied_rho_; }  // after gpr_rho_limit
  AlgorithmMetrics metrics() const override;                     // rho and the aggregation weights
  const std::vector<double>& last_weights() const { return last_weights_; }
  void archive(StateArchive& ar) override;

 private:
  ServerOptions o_;
  Knowledge knowledge_;  // what the next round receives
  Knowledge previous_;   // last round's fresh knowledge, for GPR
  bool has_previous_ = false;
  double last_rho_ = 0.0;
  double last_applied_rho_ = 0.0;
  std::vector<double> last_weights_;
};

}  // namespace drift::fedskc

namespace drift {

template <>
struct ChoiceNames<fedskc::Normalization> {
  static constexpr std::array<std::string_view, 3> names{"none", "batch", "dataset"};
};
template <>
struct ChoiceNames<fedskc::GdaCount> {
  static constexpr std::array<std::string_view, 2> names{"raw", "fraction"};
};
template <>
struct ChoiceNames<fedskc::GprMode> {
  static constexpr std::array<std::string_view, 2> names{"literal", "convex"};
};
template <>
struct ChoiceNames<fedskc::GprVariance> {
  static constexpr std::array<std::string_view, 2> names{"population", "unbiased"};
};
template <>
struct ChoiceNames<fedskc::GprScope> {
  static constexpr std::array<std::string_view, 2> names{"parameters", "state"};
};
template <>
struct ChoiceNames<fedskc::GprClasses> {
  static constexpr std::array<std::string_view, 2> names{"common", "own"};
};

}  // namespace drift
