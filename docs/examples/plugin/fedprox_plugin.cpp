// An algorithm, a model, a sampler, a partition scheme and an availability model from outside
// drift's source (docs/plugins.md):
// - `fedprox-plugin`: FedProx written again. FedAvg's server; each client adds
//   (mu/2) ||w - w_global||^2 to its loss. With the same mu, a run is byte-identical to drift's
//   own `fedprox`.
// - `mlp-plugin`: a perceptron with one hidden layer of 200 units, as a drift Model: its
//   backbone gives the features, and drift puts the head the algorithm asks for on them.
// - `highest-loss`: a sampler that takes the eligible clients whose last training loss was
//   highest, those never trained first (or last, with its parameter untried_first = false).
// - `quantity-skew`: NIID-Bench's quantity skew: labels spread evenly, the clients' sizes drawn
//   from Dir(beta).
// - `office-hours`: every client online from open_hour to close_hour on the first five days of
//   each seven-day week.
#include <algorithm>
#include <cmath>

#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/compose/plugin.hpp"
#include "engine/core/error.hpp"
#include "engine/population/population.hpp"

namespace {

class ProximalClient final : public drift::ClientAlgorithm {
 public:
  explicit ProximalClient(double mu) : mu_(mu) {}

  // Called before local training: the model then holds the global weights.
  void begin(drift::ClientContext& ctx) override {
    params_.clear();
    anchor_.clear();
    for (auto& p : ctx.model.parameters()) {
      params_.push_back(p);
      anchor_.push_back(p.detach().clone());
    }
  }

  torch::Tensor loss(const torch::Tensor& labels, const drift::ModelOutput& out, drift::ClientContext& ctx) override {
    auto total = ClientAlgorithm::loss(labels, out, ctx);  // cross-entropy
    if (mu_ == 0.0) return total;
    auto proximal = torch::zeros({}, out.logits.options());
    for (std::size_t i = 0; i < params_.size(); ++i) proximal = proximal + (params_[i] - anchor_[i]).pow(2).sum();
    return total + proximal * (mu_ / 2.0);
  }

 private:
  double mu_;
  std::vector<torch::Tensor> params_, anchor_;
};

struct Options {
  double mu = 0.01;
};

drift::AlgorithmInfo fedprox_plugin() {
  const drift::ParamTable<Options> params{
      {drift::bind_key<Options>("mu", "weight of the proximal term (mu/2)||w - w_global||^2", &Options::mu)
           .range(0.0, std::nullopt)}};
  auto info = drift::algorithm_info(
      "fedprox-plugin", "FedProx from a plugin: FedAvg plus a proximal term (docs/examples/plugin)", params,
      [](const Options& o) { return std::make_unique<ProximalClient>(o.mu); },
      [](const Options&, const drift::FederationShape&) { return drift::make_fedavg_server(); });
  // FedAvg's server half keeps nothing between rounds, so it can run at every edge of a
  // [hierarchy]. Clients moving between edges stay refused until the row says edge_moves.
  info.edge_tier = true;
  return info;
}

// The backbone: flatten, Linear(inputs, 200), ReLU. build_head adds the classifier (or MOON's
// projection, FedNH's cosine head, ...) and must come last, so its tensors follow the backbone's.
class Mlp final : public drift::Model {
 public:
  Mlp(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes, const drift::ModelOptions& options) {
    std::int64_t inputs = 1;
    for (auto d : input_shape) inputs *= d;
    hidden_ = register_module("hidden", torch::nn::Linear(inputs, 200));
    build_head(200, num_classes, options);
  }

 protected:
  drift::Extracted extract(const torch::Tensor& x, bool /*levels*/) override {
    drift::Extracted out;
    out.features = torch::relu(hidden_->forward(x.flatten(1)));
    return out;
  }

 private:
  torch::nn::Linear hidden_{nullptr};
};

drift::ModelInfo mlp_plugin() {
  drift::ModelInfo info;
  info.name = "mlp-plugin";
  info.description = "a perceptron with one hidden layer of 200 units, from a plugin (docs/examples/plugin)";
  info.make = [](const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                 const drift::ModelOptions& options) {
    return std::make_shared<Mlp>(input_shape, num_classes, options);
  };
  return info;
}

// Deterministic and without state of its own (the losses are the simulation's), so there is
// nothing to archive; a sampler that draws at random derives from drift::SeededSampler, as
// drift's do: a stream of the seed per call, and the call count archived for it.
class HighestLoss final : public drift::Sampler {
 public:
  HighestLoss(std::uint32_t population, bool untried_first) : population_(population), untried_first_(untried_first) {}

  std::vector<std::uint32_t> select(const drift::SelectionContext& ctx) override {
    std::vector<std::pair<double, std::uint32_t>> ranked;  // (-loss, id): highest loss first
    const double untried = untried_first_ ? -INFINITY : INFINITY;
    for (std::uint32_t c = 0; c < population_; ++c) {
      if (!ctx.eligible(c)) continue;
      const double loss = ctx.last_loss != nullptr && c < ctx.last_loss->size() ? (*ctx.last_loss)[c] : NAN;
      ranked.emplace_back(std::isnan(loss) ? untried : -loss, c);
    }
    std::sort(ranked.begin(), ranked.end());
    std::vector<std::uint32_t> chosen;
    for (std::size_t i = 0; i < ranked.size() && chosen.size() < ctx.count; ++i) chosen.push_back(ranked[i].second);
    std::sort(chosen.begin(), chosen.end());  // samplers return ascending ids
    return chosen;
  }
  void archive(drift::StateArchive&) override {}

 private:
  std::uint32_t population_;
  bool untried_first_;
};

// The sampler's parameters: members with their defaults, bound to keys of [sampler].
struct HighestLossOptions {
  bool untried_first = true;
};

drift::SamplerInfo highest_loss() {
  const drift::ParamTable<HighestLossOptions> params({drift::bind_key<HighestLossOptions>(
      "untried_first", "rank clients that never trained before every other (false: after)",
      &HighestLossOptions::untried_first)});
  // It chooses by the clients' losses: differential privacy must not claim amplification, nor
  // a per-client count of releases, for a run that uses it (docs/privacy.md).
  return drift::sampler_info(
      "highest-loss", "the eligible clients with the highest last training loss, untrained ones first (a plugin)",
      params,
      [](const HighestLossOptions& o, const drift::Scenario&, const drift::Population& population) {
        return std::make_unique<HighestLoss>(population.size(), o.untried_first);
      },
      drift::SamplingDesign::none, "training losses");
}

// NIID-Bench's quantity skew (partition "iid-diff-quantity"): the samples are shuffled and cut
// at the cumulative shares q ~ Dir(beta), so the labels stay balanced and only the sizes
// differ. Redrawn while a client would hold fewer than min_client_samples. Randomness comes
// from the stream drift hands the scheme.
struct QuantitySkewOptions {
  double beta = 0.5;
  std::int64_t min_client_samples = 10;
};

drift::Partition cut_by_quantity(const QuantitySkewOptions& o, const drift::PartitionInput& in, drift::Rng& rng) {
  const auto n = static_cast<std::int64_t>(in.labels.size());
  if (o.min_client_samples * static_cast<std::int64_t>(in.clients) > n)
    throw drift::UserError("quantity-skew cannot give " + std::to_string(in.clients) + " clients " +
                           std::to_string(o.min_client_samples) + " samples each from " + std::to_string(n));
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  rng.shuffle(order);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto shares = drift::dirichlet_draw(rng, o.beta, in.clients);
    drift::Partition p;
    p.indices.resize(in.clients);
    double cumulative = 0.0;
    std::int64_t begin = 0, smallest = n;
    for (std::uint32_t k = 0; k < in.clients; ++k) {
      cumulative += shares[k];
      const auto end = k + 1 == in.clients ? n : std::min(n, static_cast<std::int64_t>(cumulative * n));
      p.indices[k].assign(order.begin() + begin, order.begin() + std::max(begin, end));
      std::sort(p.indices[k].begin(), p.indices[k].end());
      smallest = std::min<std::int64_t>(smallest, static_cast<std::int64_t>(p.indices[k].size()));
      begin = std::max(begin, end);
    }
    if (smallest >= o.min_client_samples) return p;
  }
  throw drift::UserError("quantity-skew: no draw in 1000 gave every client " + std::to_string(o.min_client_samples) +
                         " samples; raise partition.beta or lower partition.min_client_samples");
}

drift::PartitionSchemeInfo quantity_skew() {
  using O = QuantitySkewOptions;
  const drift::ParamTable<O> params(
      {drift::bind_key<O>("beta", "Dirichlet concentration of the clients' sizes; small = very unequal", &O::beta)
           .range(0.0, {}, true),
       drift::bind_key<O>("min_client_samples", "redraws until every client holds this many", &O::min_client_samples)
           .range(1.0, {})});
  return drift::partition_scheme_info(
      "quantity-skew", "NIID-Bench's quantity skew: balanced labels, client sizes from Dir(beta) (a plugin)", params,
      cut_by_quantity);
}

// Online from open_hour to close_hour on days 0-4 of each week (virtual time 0 is a Monday,
// 00:00). The same for every client, and without randomness, so there is nothing to draw.
class OfficeHours final : public drift::AvailabilityModel {
 public:
  OfficeHours(double open_hour, double close_hour) : open_(open_hour * kHour), close_(close_hour * kHour) {}

  bool online(std::uint32_t, double t) override {
    const double in_week = std::fmod(t, kWeek), in_day = std::fmod(in_week, kDay);
    return in_week < 5 * kDay && in_day >= open_ && in_day < close_;
  }
  double next_offline(std::uint32_t c, double t) override { return online(c, t) ? t - std::fmod(t, kDay) + close_ : t; }
  double next_online(std::uint32_t c, double t) override {
    if (online(c, t)) return t;
    if (!(close_ > open_)) return drift::kNever;
    double day = t - std::fmod(t, kDay);  // today's midnight
    if (std::fmod(t, kDay) >= open_) day += kDay;
    while (std::fmod(day, kWeek) >= 5 * kDay) day += kDay;  // past the weekend
    return day + open_;
  }

 private:
  static constexpr double kHour = 3600.0, kDay = 24 * kHour, kWeek = 7 * kDay;
  double open_, close_;
};

struct OfficeHoursOptions {
  double open_hour = 9.0;
  double close_hour = 17.0;
};

drift::AvailabilityModelInfo office_hours() {
  using O = OfficeHoursOptions;
  const drift::ParamTable<O> params(
      {drift::bind_key<O>("open_hour", "hour of the day clients come online", &O::open_hour).range(0.0, 24.0),
       drift::bind_key<O>("close_hour", "hour of the day they go offline", &O::close_hour).range(0.0, 24.0)});
  auto row = drift::availability_info(
      "office-hours", "online from open_hour to close_hour, Monday to Friday (a plugin)", params,
      [](const O& o, std::uint32_t, std::uint64_t, std::uint32_t, const drift::Population*) {
        return std::make_unique<OfficeHours>(o.open_hour, o.close_hour);
      });
  row.cycle_seconds = [](const drift::ParamSet&) { return 7 * 24 * 3600.0; };  // a week
  return row;
}

}  // namespace

DRIFT_PLUGIN(registry) {
  registry.algorithm(fedprox_plugin());
  registry.model(mlp_plugin());
  registry.sampler(highest_loss());
  registry.partition(quantity_skew());
  registry.availability(office_hours());
}
