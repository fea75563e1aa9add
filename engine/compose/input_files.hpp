#pragma once
// The files a scenario reads besides its dataset: profile and availability traces (the groups'
// and the edges' too), and a partition file (docs/traces.md#digests). Their paths resolve against
// the scenario, and the resolved scenario records each file's digest beside it, so a resume or a
// worker that finds other bytes under the same path is refused instead of running another world.
#include <filesystem>
#include <string>

#include <toml++/toml.h>

namespace drift {

// Rewrites trace, partition, model and edge-map paths in `root` to absolute ones, relative to
// `base_dir` (the scenario's folder).
void absolutise_input_paths(toml::table& root, const std::filesystem::path& base_dir);

// Writes each used trace's and partition file's digest beside its path (trace_digest,
// file_digest); throws UserError, prefixed with `source`, where a recorded digest differs from
// the file's bytes. A missing file is left to its reader, which says so.
void record_input_digests(toml::table& root, const std::string& source);

}  // namespace drift
