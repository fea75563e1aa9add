#pragma once
// The files and folders a scenario reads besides its dataset: every key the schema or a family's
// row declares a path (ParamSpec::path: traces, a partition file, a model file, an edge map,
// FedKTL's generator folder). Their paths resolve against the scenario, and the resolved scenario
// records a digest beside each one its row asks for (docs/traces.md#digests), so a resume or a
// worker that finds other bytes under the same path is refused instead of running another world.
#include <filesystem>
#include <string>

#include <toml++/toml.h>

namespace drift {

// Rewrites every declared path in `root` to an absolute one, relative to `base_dir` (the
// scenario's folder), whichever member of its family is in use.
void absolutise_input_paths(toml::table& root, const std::filesystem::path& base_dir);

// Writes the digest of each path the members in use read beside it (trace_digest, file_digest,
// generator_digest, ...); throws UserError, prefixed with `source`, where a recorded digest differs from
// the file's bytes. A missing file is left to its reader, which says so.
void record_input_digests(toml::table& root, const std::string& source);

}  // namespace drift
