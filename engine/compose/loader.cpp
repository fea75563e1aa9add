// Reading a scenario: TOML text, then --set overrides, then validation and conversion
// (scenario_validator.cpp, scenario_builder.cpp).
#include "engine/compose/loader.hpp"

#include "engine/compose/consistency.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/compose/plugins.hpp"
#include "engine/compose/scenario_table.hpp"
#include "engine/core/error.hpp"
#include "engine/core/stream_hash.hpp"

namespace drift {
namespace {

// "a.so, b.so" into its items; an empty text has none.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t"), last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
  }
  return items;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

// [plugins] files, and the --plugin files: loaded before the table is validated, since what
// they add are names the other keys may use. Paths are resolved (the scenario's relative to
// it, --plugin's to the working directory) and each library's digest checked against the one
// the scenario records, then both written back, so a resume or a worker loads the same bytes.
// A library whose recorded digest is already loaded is not loaded again from its path.
void load_named_plugins(toml::table& root, const std::string& source, const std::vector<std::string>& extra) {
  const auto* section = root["plugins"].as_table();
  const auto text_of = [&](const char* key) {
    const auto* value = section != nullptr ? section->get(key) : nullptr;
    if (value != nullptr && !value->is_string())
      throw UserError(source + ": plugins." + key + " must be a string (comma-separated library paths)");
    return value != nullptr ? value->as_string()->get() : std::string();
  };
  std::vector<std::string> files;
  const auto base = std::filesystem::path(source).parent_path();
  for (const auto& f : split_list(text_of("files")))
    files.push_back(std::filesystem::absolute(base / f).lexically_normal().string());
  for (const auto& f : extra) {
    if (f.empty())
      throw UserError("--plugin needs the path of a shared library built with DRIFT_PLUGIN, not an empty string");
    const auto path = std::filesystem::absolute(f).lexically_normal().string();
    if (std::find(files.begin(), files.end(), path) == files.end()) files.push_back(path);
  }
  if (files.empty()) return;
  const auto recorded = split_list(text_of("digests"));
  const auto loaded_with = [](const std::string& digest) {
    for (const auto& p : loaded_plugins())
      if (p.digest == digest) return true;
    return false;
  };
  std::vector<std::string> digests;
  for (std::size_t i = 0; i < files.size(); ++i) {
    // The recorded bytes, already loaded from another path (--plugin of a worker or a resume
    // where the library lives elsewhere): the scenario keeps its text, so its hash is the same.
    if (i < recorded.size() && loaded_with(recorded[i])) {
      digests.push_back(recorded[i]);
      continue;
    }
    if (i < recorded.size()) {
      std::error_code error;
      const auto now = std::filesystem::is_regular_file(files[i], error) ? hash_file(files[i]).hex() : recorded[i];
      if (now != recorded[i])
        throw UserError(source + ": plugin " + files[i] + " has digest " + now + ", but the scenario records " +
                        recorded[i] +
                        ": the library changed since the scenario was resolved (or this machine holds "
                        "another one)");
    }
    digests.push_back(load_plugin(files[i]).digest);
  }
  auto& table = *root.insert("plugins", toml::table{}).first->second.as_table();
  table.insert_or_assign("files", join_list(files));
  table.insert_or_assign("digests", join_list(digests));
}

toml::node* ensure_parent(toml::table& root, const std::string& key, std::string& leaf) {
  toml::table* table = &root;
  std::size_t start = 0;
  for (;;) {
    const auto dot = key.find('.', start);
    if (dot == std::string::npos) {
      leaf = key.substr(start);
      return table;
    }
    const std::string part = key.substr(start, dot - start);
    toml::node* next = table->get(part);
    if (next == nullptr) next = &table->insert(part, toml::table{}).first->second;
    if (!next->is_table()) throw UserError("--set " + key + ": '" + part + "' is not a table");
    table = next->as_table();
    start = dot + 1;
  }
}

// A table value merges into the table it overrides, key by key: `--set 'training={lr=0.1}'`
// changes the learning rate and keeps the rest of [training].
void assign(toml::table& table, const std::string& leaf, const toml::node& value) {
  auto* existing = table.get(leaf);
  if (value.is_table() && existing != nullptr && existing->is_table()) {
    for (const auto& [k, v] : *value.as_table()) assign(*existing->as_table(), std::string(k.str()), v);
    return;
  }
  table.insert_or_assign(leaf, value);
}

void apply_override(toml::table& root, const Override& o) {
  if (o.key.empty()) throw UserError("--set needs key=value");
  if (o.value.find_first_of("\r\n") != std::string::npos)
    throw UserError("--set " + o.key + ": the value spans several lines; give one line");
  std::string leaf;
  auto* table = ensure_parent(root, o.key, leaf)->as_table();
  if (leaf.empty()) throw UserError("--set " + o.key + ": empty key");
  try {
    auto parsed = toml::parse("v = " + o.value);
    assign(*table, leaf, *parsed.get("v"));
  } catch (const toml::parse_error& e) {
    // A value that opens as a TOML string, array or table meant to be one: say why it is not,
    // rather than take its quotes and backslashes as the letters of a bare word.
    if (!o.value.empty() && std::string("\"'[{").find(o.value.front()) != std::string::npos)
      throw UserError("--set " + o.key + "=" + o.value + ": not a TOML value (" + std::string(e.description()) + ")");
    // Digits TOML cannot hold (2^64) are a number too large, not a word.
    const std::size_t sign = !o.value.empty() && (o.value[0] == '-' || o.value[0] == '+') ? 1 : 0;
    const auto digits = o.value.substr(sign);
    if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos)
      throw UserError("--set " + o.key + "=" + o.value +
                      ": a whole number past TOML's integers (-2^63 to 2^63 - 1); write a float (e.g. 1e19) if "
                      "the key takes one");
    table->insert_or_assign(leaf, o.value);  // a bare word: take it as a string
  }
}

// toml++ parses a dotted key recursively, so a key nested tens of thousands deep overflows
// the stack. No scenario key is deeper than a few levels: refuse deep ones before parsing.
void check_key_depth(const std::string& text, const std::string& source) {
  constexpr int kMaxDepth = 32;
  int line = 1, dots = 0;
  bool in_key = true, quoted = false;
  char quote = 0;
  for (char c : text) {
    if (c == '\n') {
      ++line;
      dots = 0;
      in_key = true;
      quoted = false;
      continue;
    }
    if (!in_key) continue;
    if (quoted) {
      if (c == quote) quoted = false;
    } else if (c == '"' || c == '\'') {
      quoted = true;
      quote = c;
    } else if (c == '=' || c == '#' || c == ']') {
      in_key = false;
    } else if (c == '.' && ++dots > kMaxDepth) {
      throw UserError(source + ":" + std::to_string(line) + ": a key nested more than " + std::to_string(kMaxDepth) +
                      " levels deep");
    }
  }
}

}  // namespace

Override parse_override(const std::string& flag) {
  const auto eq = flag.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("--set " + flag + ": expected key=value, e.g. --set federation.rounds=5");
  return {flag.substr(0, eq), flag.substr(eq + 1)};
}

Scenario parse_scenario(const std::string& toml_text, const std::string& source_name,
                        const std::vector<Override>& overrides, const std::vector<std::string>& plugins) {
  toml::table root;
  check_key_depth(toml_text, source_name);
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    throw UserError(source_name + ":" + std::to_string(e.source().begin.line) + ":" +
                    std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
  std::set<std::string> overridden;
  for (const auto& o : overrides) {
    apply_override(root, o);
    overridden.insert(o.key);
  }
  load_named_plugins(root, source_name, plugins);
  if (!root.contains("name")) {
    root.insert("name", std::filesystem::path(source_name).stem().string());
  }
  validate_scenario_table(root, source_name, overridden);
  Scenario scenario;
  try {
    scenario = build_scenario(root, source_name);
  } catch (const UserError& e) {
    // A combination that cannot run may come from --set: say so, not only the file.
    const std::string prefix = source_name + ": ";
    const std::string what = e.what();
    if (overrides.empty() || what.rfind(prefix, 0) != 0) throw;
    std::string keys;
    for (const auto& o : overrides) keys += (keys.empty() ? "" : ", ") + o.key + "=" + o.value;
    throw UserError(source_name + " with --set " + keys + ": " + what.substr(prefix.size()));
  }
  for (auto& warning : consistency_warnings(scenario)) scenario.warnings.push_back(std::move(warning));
  return scenario;
}

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides,
                       const std::vector<std::string>& plugins) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot open scenario file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), path, overrides, plugins);
}

}  // namespace drift
