#include "engine/compose/input_files.hpp"

#include <functional>
#include <system_error>

#include "engine/core/error.hpp"
#include "engine/core/stream_hash.hpp"

namespace drift {
namespace {

// Relative paths are relative to the scenario file; stored absolute, so a resolved
// scenario.toml written elsewhere still finds them.
std::string resolve_path(const std::string& path, const std::filesystem::path& base_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return std::filesystem::absolute(base_dir / path).lexically_normal().string();
}

// A table that may name a trace: `where` says which, for messages ("groups.night.availability");
// `availability`: one of an availability model's tables, which reads its trace under the trace model only.
using TraceVisit = std::function<void(toml::table& table, const std::string& where, bool availability)>;

void for_each_trace_table(toml::table& root, const TraceVisit& visit) {
  const auto at = [&](toml::node_view<toml::node> node, const std::string& where, bool availability) {
    if (auto* t = node.as_table()) visit(*t, where, availability);
  };
  at(root["profile"], "profile", false);
  at(root["availability"], "availability", true);
  at(root["hierarchy"]["availability_model"], "hierarchy.availability_model", true);
  if (auto* groups = root["groups"].as_table())
    for (auto&& [name, node] : *groups)
      if (auto* group = node.as_table()) {
        const auto prefix = "groups." + std::string(name.str()) + ".";
        at((*group)["profile"], prefix + "profile", false);
        at((*group)["availability"], prefix + "availability", true);
      }
}

std::string text_at(const toml::table& table, const char* key) { return table[key].value<std::string>().value_or(""); }

// `table`'s file under `key`: its digest written under `digest_key`, or refused when the digest
// recorded there is another.
void record_digest(toml::table& table, const char* key, const char* digest_key, const std::string& where,
                   const std::string& source) {
  const auto path = text_at(table, key);
  std::error_code missing;
  if (path.empty() || !std::filesystem::is_regular_file(path, missing)) return;
  const auto digest = hash_file(path).hex();
  const auto recorded = text_at(table, digest_key);
  if (!recorded.empty() && recorded != digest)
    throw UserError(source + ": " + where + "." + key + " " + path + " has digest " + digest +
                    ", but the scenario records " + where + "." + digest_key + " = \"" + recorded +
                    "\": the file changed since the run started (or this machine holds another one); remove the "
                    "recorded digest to run with the file as it is now");
  table.insert_or_assign(digest_key, digest);
}

}  // namespace

void absolutise_input_paths(toml::table& root, const std::filesystem::path& base_dir) {
  for_each_trace_table(root, [&](toml::table& t, const std::string&, bool) {
    if (const auto v = text_at(t, "trace"); !v.empty()) t.insert_or_assign("trace", resolve_path(v, base_dir));
  });
  for (const char* section : {"partition", "model", "hierarchy"})
    if (auto* table = root[section].as_table())
      if (const auto v = text_at(*table, "file"); !v.empty())
        table->insert_or_assign("file", resolve_path(v, base_dir));
}

// Only where the file is read: a profile's trace always, an availability table's under the
// trace model, partition.file under the file scheme (elsewhere the key is idle, and says so).
void record_input_digests(toml::table& root, const std::string& source) {
  for_each_trace_table(root, [&](toml::table& t, const std::string& where, bool availability) {
    if (availability && text_at(t, "model") != "trace") return;
    record_digest(t, "trace", "trace_digest", where, source);
  });
  if (auto* partition = root["partition"].as_table(); partition && text_at(*partition, "scheme") == "file")
    record_digest(*partition, "file", "file_digest", "partition", source);
}

}  // namespace drift
