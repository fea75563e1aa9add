#include "engine/compose/plugins.hpp"

#include <dlfcn.h>

#include <deque>
#include <filesystem>
#include <mutex>

#include "engine/compose/plugin.hpp"
#include "engine/core/error.hpp"
#include "engine/core/stream_hash.hpp"

namespace drift {

namespace {

// Registers a row through the catalogue's own function and notes "KIND NAME" for drift list.
template <class Info>
void add_row_of(std::vector<std::string>& added, const char* kind, Info info, void (*register_row)(Info)) {
  const auto name = info.name;
  register_row(std::move(info));
  added.push_back(std::string(kind) + " " + name);
}

}  // namespace

void PluginRegistry::algorithm(AlgorithmInfo info) {
  add_row_of(added_, "algorithm", std::move(info), register_algorithm);
}
void PluginRegistry::sampler(SamplerInfo info) { add_row_of(added_, "sampler", std::move(info), register_sampler); }
void PluginRegistry::partition(PartitionSchemeInfo info) {
  add_row_of(added_, "partition scheme", std::move(info), register_partition_scheme);
}
void PluginRegistry::availability(AvailabilityModelInfo info) {
  add_row_of(added_, "availability model", std::move(info), register_availability_model);
}
void PluginRegistry::model(ModelInfo info) { add_row_of(added_, "model", std::move(info), register_model); }
void PluginRegistry::dataset(DatasetInfo info) { add_row_of(added_, "dataset", std::move(info), register_dataset); }

namespace {

struct PluginTable {
  std::mutex mutex;
  std::deque<LoadedPlugin> by_load;  // a deque: load_plugin() hands out references
};

PluginTable& plugin_table() {
  static PluginTable table;
  return table;
}

std::string dl_error() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown error";
}

// Reads the library's build text and registers it; the handle stays open for the process's
// life, since the catalogues now hold its code.
LoadedPlugin open_plugin(const std::string& path) {
  LoadedPlugin plugin;
  plugin.path = path;
  const std::string what = "a shared library built with DRIFT_PLUGIN";
  if (path.empty()) throw UserError("--plugin needs the path of " + what + ", not an empty string");
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw UserError("plugin " + path + ": no such file (" + what + ")");
  if (std::filesystem::is_directory(status)) throw UserError("plugin " + path + " is a directory, not " + what);
  if (!std::filesystem::is_regular_file(status))
    throw UserError("plugin " + path + " is not a regular file (a device, FIFO or socket), not " + what);
  plugin.digest = hash_file(path).hex();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw UserError("plugin " + path + ": cannot be loaded (" + dl_error() + ")");
  using BuildFn = const char* (*)();
  using RegisterFn = void (*)(PluginRegistry&);
  auto build = reinterpret_cast<BuildFn>(dlsym(handle, "drift_plugin_build"));
  auto enter = reinterpret_cast<RegisterFn>(dlsym(handle, "drift_plugin_register"));
  if (build == nullptr || enter == nullptr) {
    dlclose(handle);
    throw UserError("plugin " + path + ": not a drift plugin (it defines no DRIFT_PLUGIN entry point)");
  }
  const std::string theirs = build();
  if (theirs != drift_build_text()) {
    dlclose(handle);
    throw UserError("plugin " + path + " was built for " + theirs + "; this drift is " + drift_build_text() +
                    ": rebuild the plugin against this drift");
  }
  PluginRegistry registry;
  try {
    enter(registry);
  } catch (const std::exception& e) {
    throw UserError("plugin " + path + ": " + e.what());
  }
  plugin.added = registry.added();
  return plugin;
}

}  // namespace

std::string drift_build_text() { return plugin_detail::build_text(); }

const LoadedPlugin& load_plugin(const std::string& path) {
  auto& table = plugin_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  for (const auto& p : table.by_load)
    if (p.path == path) return p;
  table.by_load.push_back(open_plugin(path));
  return table.by_load.back();
}

const std::deque<LoadedPlugin>& loaded_plugins() { return plugin_table().by_load; }

}  // namespace drift
