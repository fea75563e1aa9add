#pragma once
// What a plugin (a shared library built against an installed drift) includes: the registry it
// adds its algorithms, samplers, availability models, partition schemes, models and dataset
// readers to, and DRIFT_PLUGIN, its one entry point. docs/plugins.md shows a complete plugin.
//
//   #include "engine/compose/plugin.hpp"
//   DRIFT_PLUGIN(registry) { registry.algorithm(my_algorithm_info()); }
#include <torch/version.h>

#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/plugin_build.hpp"
#include "engine/config/scenario.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {

// Adds rows to drift's catalogues. A name drift already has (built in or from another plugin)
// throws UserError, which refuses the plugin.
class PluginRegistry {
 public:
  void algorithm(AlgorithmInfo info);
  void sampler(SamplerInfo info);
  void partition(PartitionSchemeInfo info);
  void availability(AvailabilityModelInfo info);
  void model(ModelInfo info);
  void dataset(DatasetInfo info);
  // "algorithm fedprox-again", one per row added, for `drift list`.
  const std::vector<std::string>& added() const { return added_; }

 private:
  std::vector<std::string> added_;
};

}  // namespace drift

#define DRIFT_PLUGIN_STRINGIFY2(x) #x
#define DRIFT_PLUGIN_STRINGIFY(x) DRIFT_PLUGIN_STRINGIFY2(x)

// Everything that must match between drift and a plugin for the plugin's rows to be read
// correctly: drift's version, LibTorch's, the C++ ABI, and the layout of what crosses (the rows
// and the scenario). Compiled into both; drift refuses a plugin whose text differs.
#define DRIFT_PLUGIN_BUILD_TEXT                                    \
  ("drift " DRIFT_PLUGIN_DRIFT_VERSION ", LibTorch " TORCH_VERSION \
   ", C++ ABI " DRIFT_PLUGIN_STRINGIFY(__GXX_ABI_VERSION) "/" DRIFT_PLUGIN_STRINGIFY(_GLIBCXX_USE_CXX11_ABI))

namespace drift::plugin_detail {
// The rows' and the scenario's sizes, as this translation unit sees them.
inline std::string layout_text() {
  return std::to_string(sizeof(AlgorithmInfo)) + "/" + std::to_string(sizeof(SamplerInfo)) + "/" +
         std::to_string(sizeof(PartitionSchemeInfo)) + "/" + std::to_string(sizeof(AvailabilityModelInfo)) + "/" +
         std::to_string(sizeof(ModelInfo)) + "/" + std::to_string(sizeof(DatasetInfo)) + "/" +
         std::to_string(sizeof(Scenario));
}
inline std::string build_text() { return std::string(DRIFT_PLUGIN_BUILD_TEXT) + ", layout " + layout_text(); }
}  // namespace drift::plugin_detail

// The entry point: drift calls drift_plugin_build() first and registers the plugin only when
// the text is its own.
#define DRIFT_PLUGIN(registry)                                          \
  extern "C" const char* drift_plugin_build() {                         \
    static const std::string text = drift::plugin_detail::build_text(); \
    return text.c_str();                                                \
  }                                                                     \
  extern "C" void drift_plugin_register(drift::PluginRegistry& registry)
