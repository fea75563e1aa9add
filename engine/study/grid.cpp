#include "engine/study/grid.hpp"

#include <cctype>
#include <sstream>

#include "engine/core/error.hpp"

namespace drift {
namespace {

// Letters, digits and - _ . (and = where `keep_equals`); anything else becomes _.
std::string safe_name(const std::string& text, bool keep_equals) {
  std::string out;
  for (char c : text) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out += plain || (keep_equals && c == '=') ? c : '_';
  }
  return out;
}

std::vector<std::string> variant_overrides(const std::string& label) {
  std::vector<std::string> parts;
  std::stringstream in(label);
  for (std::string part; std::getline(in, part, '+');) parts.push_back(part);
  if (parts.empty() || parts.front().empty()) throw UserError("--algorithms: empty entry in '" + label + "'");
  std::vector<std::string> sets;
  const auto colon = parts.front().find(':');
  sets.push_back("algorithm.name=" + parts.front().substr(0, colon));
  if (colon != std::string::npos) sets.push_back("algorithm.preset=" + parts.front().substr(colon + 1));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].find('=') == std::string::npos)
      throw UserError("--algorithms: '" + parts[i] + "' in '" + label + "' is not KEY=VALUE (e.g. fedskc+gpr=false)");
    const bool scenario_key = parts[i].substr(0, parts[i].find('=')).find('.') != std::string::npos;
    sets.push_back(scenario_key ? parts[i] : "algorithm." + parts[i]);
  }
  return sets;
}

}  // namespace

std::vector<std::string> split_top_level(const std::string& text, const std::string& what) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  items.push_back(current);
  if (quote || depth != 0) throw UserError(what + ": unbalanced quotes or brackets in '" + text + "'");
  for (const auto& item : items)
    if (item.empty()) throw UserError(what + ": empty item in '" + text + "'");
  return items;
}

Factor grid_factor(const std::string& option) {
  const auto eq = option.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == option.size())
    throw UserError("--grid " + option + ": expected KEY=V1,V2,... (e.g. sampler.name=uniform,stratified)");
  Factor f{option.substr(0, eq), {}};
  if (f.name == "seed") throw UserError("--grid seed=...: seeds are given with --seeds or --seed-list");
  for (const auto& value : split_top_level(option.substr(eq + 1), "--grid " + f.name)) {
    // A quoted TOML string is shown (and names directories) without its quotes.
    const bool quoted =
        value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front();
    f.levels.push_back({quoted ? value.substr(1, value.size() - 2) : value, {f.name + "=" + value}});
  }
  return f;
}

Factor algorithm_factor(const std::vector<std::string>& variants) {
  Factor f{"algorithm", {}};
  for (const auto& label : variants) f.levels.push_back({label, variant_overrides(label)});
  return f;
}

std::vector<Cell> grid_cells(const std::vector<Factor>& factors) {
  std::vector<Cell> cells{Cell{}};
  for (const auto& factor : factors) {
    std::vector<Cell> next;
    for (const auto& cell : cells)
      for (std::size_t l = 0; l < factor.levels.size(); ++l) {
        auto c = cell;
        c.level.push_back(l);
        next.push_back(std::move(c));
      }
    cells = std::move(next);
  }
  return cells;
}

std::vector<std::string> cell_sets(const std::vector<Factor>& factors, const Cell& cell) {
  std::vector<std::string> sets;
  for (std::size_t f = 0; f < factors.size(); ++f)
    for (const auto& s : factors[f].levels.at(cell.level.at(f)).sets) sets.push_back(s);
  return sets;
}

std::string cell_directory(const std::vector<Factor>& factors, const Cell& cell) {
  if (factors.empty()) return "default";
  if (factors.size() == 1 && factors[0].name == "algorithm")
    return safe_name(factors[0].levels.at(cell.level.at(0)).label, false);
  std::string name;
  for (std::size_t f = 0; f < factors.size(); ++f)
    name += (f ? "+" : "") + safe_name(factors[f].name + "=" + factors[f].levels.at(cell.level.at(f)).label, true);
  return name;
}

std::string cell_label(const std::vector<Factor>& factors, const std::vector<std::string>& levels) {
  std::string label;
  for (std::size_t f = 0; f < factors.size(); ++f) label += (f ? ", " : "") + factors[f].name + "=" + levels.at(f);
  return label.empty() ? "default" : label;
}

std::string cell_label(const std::vector<Factor>& factors, const Cell& cell) {
  std::vector<std::string> levels;
  for (std::size_t f = 0; f < factors.size(); ++f) levels.push_back(factors[f].levels.at(cell.level.at(f)).label);
  return cell_label(factors, levels);
}

}  // namespace drift
