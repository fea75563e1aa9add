#include <torch/torch.h>

#include <algorithm>

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/model_changes.hpp"
#include "engine/config/catalog.hpp"
#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"

namespace drift {

void ServerAlgorithm::aggregate_async(NamedTensors& global, NamedTensors mean, std::vector<ClientUpdate> updates,
                                      const AggregationInput& input) {
  for (auto& u : updates) u.weights = mean;  // shares the tensors: aggregate() reads them only
  aggregate(global, updates, input);
}

ClientShares ServerAlgorithm::shares(const std::vector<ClientUpdate>& updates) const {
  return shares_of(updates, sample_weights(updates));
}

torch::Tensor ClientAlgorithm::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext&) {
  return torch::nn::functional::cross_entropy(out.logits, labels);
}

namespace {

Rows<AlgorithmInfo>& algorithm_rows() {
  static Rows<AlgorithmInfo> catalog = {fedavg_info(),
                                        fedprox_info(),
                                        fedavgm_info(),
                                        fednova_info(),
                                        fedadam_info(),
                                        fedyogi_info(),
                                        fedadagrad_info(),
                                        scaffold_info(),
                                        fedproto_info(),
                                        moon_info(),
                                        fednh_info(),
                                        fedrcl_info(),
                                        fedccl_info(),
                                        fedskc_info(),
                                        fedsc_info(),
                                        fedktl_info(),
                                        fedproto_ht_info(),
                                        feddistill_info(),
                                        lg_fedavg_info(),
                                        fedgh_info(),
                                        fedau_info(),
                                        fedavg_participants_info(),
                                        fedavg_all_info(),
                                        known_probability_info(),
                                        mifa_info(),
                                        fedvarp_info(),
                                        amplified_fedavg_info(),
                                        fedawe_info()};
  return catalog;
}

}  // namespace

const Rows<AlgorithmInfo>& algorithm_catalog() { return algorithm_rows(); }

void register_algorithm(AlgorithmInfo info) { add_row(algorithm_rows(), std::move(info), "algorithm"); }

void for_each_local_batch(ClientContext& ctx,
                          const std::function<void(const ModelOutput&, const torch::Tensor&)>& visit) {
  if (ctx.data == nullptr || ctx.indices == nullptr) throw std::logic_error("client context without local data");
  std::vector<std::int64_t> order = *ctx.indices;
  std::sort(order.begin(), order.end());
  const auto n = static_cast<std::int64_t>(order.size());
  const std::int64_t batch = std::max<std::int64_t>(ctx.task.hyper.batch_size, 1);
  torch::NoGradGuard no_grad;
  ctx.model.eval();
  for (std::int64_t start = 0; start < n; start += batch) {
    // The data may live on the device (training/device_data): the indices go where it is.
    auto idx = torch::from_blob(order.data() + start, {std::min(batch, n - start)}, torch::kInt64)
                   .to(ctx.data->images.device());
    visit(ctx.model.forward(ctx.data->images.index_select(0, idx).to(ctx.device)),
          ctx.data->labels.index_select(0, idx).to(ctx.device));
  }
  ctx.model.train();
}

std::vector<ParamSpec> algorithm_params(const AlgorithmInfo& info, const std::string& preset) {
  if (info.presets.empty()) return info.params;
  const Preset* chosen = &info.presets.front();
  if (!preset.empty()) {
    chosen = nullptr;
    for (const auto& p : info.presets)
      if (p.name == preset) chosen = &p;
    if (chosen == nullptr) {
      std::vector<std::string> names;
      for (const auto& p : info.presets) names.push_back(p.name);
      throw UserError("unknown preset '" + preset + "' of " + info.name + did_you_mean(preset, names) +
                      "; choose one of: " + join(names));
    }
  }
  std::vector<std::string> names;
  for (const auto& p : info.presets) names.push_back(p.name);
  auto preset_key = make_param("preset", ParamKind::string, info.presets.front().name,
                               "parameter set that supplies the defaults below");
  preset_key.choices = [names] { return names; };
  std::vector<ParamSpec> params = {std::move(preset_key)};
  for (auto spec : info.params) {
    if (auto it = chosen->values.find(spec.key); it != chosen->values.end()) spec.default_value = it->second;
    params.push_back(std::move(spec));
  }
  return params;
}

const AlgorithmInfo* find_algorithm(const std::string& name) { return find_row(algorithm_catalog(), name); }

std::vector<std::string> algorithm_names() { return row_names(algorithm_catalog()); }

}  // namespace drift
