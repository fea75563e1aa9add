#pragma once
// Loading plugins (docs/plugins.md): shared libraries that add algorithms, samplers, models and
// dataset readers to drift's catalogues through DRIFT_PLUGIN (plugin.hpp). A scenario names its
// plugins ([plugins] files); the resolved scenario records each one's digest, so a resume or a
// worker that would load another library refuses, as for a model file.
#include <deque>
#include <string>
#include <vector>

namespace drift {

struct LoadedPlugin {
  std::string path;                // absolute
  std::string digest;              // of the library's bytes (16 hex digits)
  std::vector<std::string> added;  // "algorithm NAME", ... in the order the plugin added them
};

// Loads the library at `path` (absolute) once per process and registers what it adds; a second
// call for the same path returns the first load. Throws UserError with one line for a file
// that is not a loadable library, a plugin built against another drift, LibTorch or ABI, and a
// plugin whose registration fails (a name drift already has).
const LoadedPlugin& load_plugin(const std::string& path);

// Every plugin loaded so far, in load order.
const std::deque<LoadedPlugin>& loaded_plugins();

// This drift's build text, which a plugin's must equal.
std::string drift_build_text();

}  // namespace drift
