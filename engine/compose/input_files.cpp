#include "engine/compose/input_files.hpp"

#include <algorithm>
#include <iterator>
#include <system_error>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/schema.hpp"
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

std::string text_at(const toml::table& table, const std::string& key) {
  return table[key].value<std::string>().value_or("");
}

// One table of the scenario whose keys may name paths: `keys`, those any of its members reads
// (resolved even where that member is not the one in use, so that a study's variant that
// switches to it finds the file); `used`, those the member in use reads (their digests recorded).
struct PathTable {
  toml::table* table = nullptr;
  std::string where;  // "groups.night.availability", for messages
  std::vector<ParamSpec> keys;
  std::vector<ParamSpec> used;
};

std::vector<ParamSpec> path_keys(const std::vector<ParamSpec>& specs) {
  std::vector<ParamSpec> out;
  std::copy_if(specs.begin(), specs.end(), std::back_inserter(out), [](const ParamSpec& s) { return s.path; });
  return out;
}

// A family's table: the path keys of all its rows, and of the row `member_key` names.
template <class Row>
void add_member_table(std::vector<PathTable>& out, toml::node_view<toml::node> node, std::string where,
                      const char* member_key, const Rows<Row>& catalog) {
  auto* table = node.as_table();
  if (!table) return;
  PathTable t{table, std::move(where), {}, {}};
  const auto member = text_at(*table, member_key);
  for (const auto& row : catalog)
    for (const auto& spec : path_keys(row.params)) {
      if (std::none_of(t.keys.begin(), t.keys.end(), [&](const ParamSpec& s) { return s.key == spec.key; }))
        t.keys.push_back(spec);
      if (row.name == member) t.used.push_back(spec);
    }
  out.push_back(std::move(t));
}

// A table of fixed keys (a section of the schema, a profile): every path key is read.
void add_fixed_table(std::vector<PathTable>& out, toml::node_view<toml::node> node, std::string where,
                     const std::vector<ParamSpec>& specs) {
  auto keys = path_keys(specs);
  if (auto* table = node.as_table(); table && !keys.empty()) out.push_back({table, std::move(where), keys, keys});
}

toml::node_view<toml::node> section_at(toml::table& root, const std::string& dotted) {
  toml::node_view<toml::node> node{root};
  for (std::size_t from = 0; from <= dotted.size();) {
    const auto dot = std::min(dotted.find('.', from), dotted.size());
    node = node[dotted.substr(from, dot - from)];
    from = dot + 1;
  }
  return node;
}

// Every table of `root` whose keys the schema or a family's rows declare as paths
// (ParamSpec::path): no key is treated as a path for its name.
std::vector<PathTable> path_tables(toml::table& root) {
  std::vector<PathTable> out;
  // (The top level's [profile] is a section of the schema, with the profile's keys.)
  for (const auto& section : scenario_schema())
    if (!section.name.empty()) add_fixed_table(out, section_at(root, section.name), section.name, section.keys);
  add_member_table(out, root["availability"], "availability", "model", availability_catalog());
  const auto profile_specs = specs_of(profile_keys());
  if (auto* groups = root["groups"].as_table())
    for (auto&& [name, node] : *groups) {
      const toml::node_view<toml::node> group{node};
      const auto prefix = "groups." + std::string(name.str()) + ".";
      add_fixed_table(out, group["profile"], prefix + "profile", profile_specs);
      add_member_table(out, group["availability"], prefix + "availability", "model", availability_catalog());
    }
  add_member_table(out, root["hierarchy"]["availability_model"], "hierarchy.availability_model", "model",
                   availability_catalog());
  add_member_table(out, root["partition"], "partition", "scheme", partition_catalog());
  add_member_table(out, root["algorithm"], "algorithm", "name", algorithm_catalog());
  return out;
}

// The digest of what `path` names: a file's bytes, or a folder's files (their names relative
// to it and their bytes, in name order), so a generator folder is pinned as a file is.
std::string path_digest(const std::filesystem::path& path) {
  if (!std::filesystem::is_directory(path)) return hash_file(path).hex();
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  StreamHash hash;
  for (const auto& file : files) {
    hash.add(std::filesystem::relative(file, path).generic_string() + '\0');
    hash.add(hash_file(file).hex());
  }
  return hash.hex();
}

// `table`'s file or folder under `key`: its digest written under `digest_key`, or refused when
// the digest recorded there is another.
void record_digest(toml::table& table, const std::string& key, const std::string& digest_key, const std::string& where,
                   const std::string& source) {
  const auto path = text_at(table, key);
  // A missing path, or one that is neither a file nor a folder (/dev/zero has no end), is left
  // to its reader, which says what is wrong with it.
  std::error_code unreadable;
  if (path.empty() ||
      !(std::filesystem::is_regular_file(path, unreadable) || std::filesystem::is_directory(path, unreadable)))
    return;
  const auto digest = path_digest(path);
  const auto recorded = text_at(table, digest_key);
  if (!recorded.empty() && recorded != digest)
    throw UserError(source + ": " + where + "." + key + " " + path + " has digest " + digest +
                    ", but the scenario records " + where + "." + digest_key + " = \"" + recorded + "\": the " +
                    (std::filesystem::is_directory(path) ? "folder's files" : "file") +
                    " changed since the run started (or this machine holds another one); remove the "
                    "recorded digest to run with the file as it is now");
  table.insert_or_assign(digest_key, digest);
}

}  // namespace

void absolutise_input_paths(toml::table& root, const std::filesystem::path& base_dir) {
  for (auto& t : path_tables(root))
    for (const auto& spec : t.keys)
      if (const auto v = text_at(*t.table, spec.key); !v.empty())
        t.table->insert_or_assign(spec.key, resolve_path(v, base_dir));
}

// Only where the file is read: by the member in use (elsewhere the key is idle, and says so).
void record_input_digests(toml::table& root, const std::string& source) {
  for (auto& t : path_tables(root))
    for (const auto& spec : t.used)
      if (!spec.digest_key.empty()) record_digest(*t.table, spec.key, spec.digest_key, t.where, source);
}

}  // namespace drift
