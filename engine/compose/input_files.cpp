#include "engine/compose/input_files.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <system_error>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/stream_hash.hpp"
#include "engine/data/partition.hpp"
#include "engine/population/availability.hpp"

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

// The keys naming files that the members of a family read (ParamSpec::digest_key), whichever
// member: a key is resolved even where its member is not the one in use, so that a study's
// variant that switches to it finds the file.
template <class Row>
std::vector<ParamSpec> file_keys(const Rows<Row>& catalog) {
  std::vector<ParamSpec> out;
  for (const auto& row : catalog)
    for (const auto& spec : row.params)
      if (!spec.digest_key.empty() &&
          std::none_of(out.begin(), out.end(), [&](const ParamSpec& s) { return s.key == spec.key; }))
        out.push_back(spec);
  return out;
}

// The file keys of the member that `member_key` names in `table` (its scheme or model).
template <class Row>
std::vector<ParamSpec> used_file_keys(const toml::table& table, const char* member_key, const Rows<Row>& catalog) {
  const auto name = text_at(table, member_key);
  std::vector<ParamSpec> out;
  for (const auto& row : catalog)
    if (row.name == name)
      std::copy_if(row.params.begin(), row.params.end(), std::back_inserter(out),
                   [](const ParamSpec& spec) { return !spec.digest_key.empty(); });
  return out;
}

void absolutise(toml::table& table, const std::string& key, const std::filesystem::path& base_dir) {
  if (const auto v = text_at(table, key.c_str()); !v.empty()) table.insert_or_assign(key, resolve_path(v, base_dir));
}

}  // namespace

void absolutise_input_paths(toml::table& root, const std::filesystem::path& base_dir) {
  const auto availability_files = file_keys(availability_catalog());
  for_each_trace_table(root, [&](toml::table& t, const std::string&, bool availability) {
    if (!availability) return absolutise(t, "trace", base_dir);  // a profile's trace
    for (const auto& spec : availability_files) absolutise(t, spec.key, base_dir);
  });
  if (auto* partition = root["partition"].as_table())
    for (const auto& spec : file_keys(partition_catalog())) absolutise(*partition, spec.key, base_dir);
  for (const char* section : {"model", "hierarchy"})
    if (auto* table = root[section].as_table()) absolutise(*table, "file", base_dir);
}

// Only where the file is read: a profile's trace always, a family member's files when it is the
// member in use (elsewhere the key is idle, and says so).
void record_input_digests(toml::table& root, const std::string& source) {
  for_each_trace_table(root, [&](toml::table& t, const std::string& where, bool availability) {
    if (!availability) return record_digest(t, "trace", "trace_digest", where, source);
    for (const auto& spec : used_file_keys(t, "model", availability_catalog()))
      record_digest(t, spec.key.c_str(), spec.digest_key.c_str(), where, source);
  });
  if (auto* partition = root["partition"].as_table())
    for (const auto& spec : used_file_keys(*partition, "scheme", partition_catalog()))
      record_digest(*partition, spec.key.c_str(), spec.digest_key.c_str(), "partition", source);
}

}  // namespace drift
