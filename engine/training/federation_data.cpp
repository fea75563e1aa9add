#include "engine/training/federation_data.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/sim/availability.hpp"

namespace drift {

FederationData prepare_federation_data(const Scenario& scenario) {
  FederationData fed;
  fed.data = load_dataset(scenario.data);
  const auto& labels_tensor = fed.data.train->labels;
  std::vector<std::int64_t> labels(labels_tensor.data_ptr<std::int64_t>(),
                                   labels_tensor.data_ptr<std::int64_t>() + labels_tensor.numel());
  fed.partition = make_partition(scenario.partition, labels, fed.data.train->num_classes, scenario.clients, scenario.seed);
  fed.histograms = class_histograms(fed.partition, labels, fed.data.train->num_classes);
  fed.population = std::make_shared<const Population>(build_population(scenario, fed.histograms));
  ClientAvailability check(scenario, *fed.population);  // parses and checks availability traces
  return fed;
}

}  // namespace drift

namespace drift {

std::shared_ptr<Model> make_scenario_model(const Scenario& scenario, const Dataset& train) {
  ModelOptions options;
  const auto* algorithm = find_algorithm(scenario.algorithm);
  if (algorithm != nullptr && algorithm->model_options) options = algorithm->model_options(scenario.algorithm_params);
  options.width = scenario.model_width;
  return make_model(scenario.model, train.input_shape(), train.num_classes, scenario.seed, options);
}

}  // namespace drift
