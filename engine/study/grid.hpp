#pragma once
// A study's design: factors (scenario keys, algorithm variants), their levels, and the cells of
// their Cartesian product, each with the --set overrides that make it (docs/studies.md).
#include <string>
#include <vector>

namespace drift {

struct FactorLevel {
  std::string label;              // as the user wrote it: "diurnal", "[0.3,0.4]", "fedskc:reference"
  std::vector<std::string> sets;  // KEY=VALUE overrides that make this level
};

struct Factor {
  std::string name;  // the scenario key ("sampler.name"), or "algorithm"
  std::vector<FactorLevel> levels;
};

struct Cell {
  std::vector<std::size_t> level;  // per factor, the index of its level
};

// Splits at the commas that are not inside brackets, braces or quotes, so that TOML values
// such as [0.3,0.4] or "a,b" stay whole. Empty items are an error naming `what`.
std::vector<std::string> split_top_level(const std::string& text, const std::string& what);

// --grid KEY=V1,V2,...: one factor over a scenario key; each value is TOML as --set takes it.
Factor grid_factor(const std::string& option);

// --algorithms NAME[:PRESET][+KEY=VALUE]...: one factor whose levels are algorithm variants;
// KEY is an algorithm parameter, or a scenario key when it has a dot (training.momentum).
Factor algorithm_factor(const std::vector<std::string>& variants);

// The Cartesian product, the first factor varying slowest.
std::vector<Cell> grid_cells(const std::vector<Factor>& factors);

// Every override of a cell, factor by factor.
std::vector<std::string> cell_sets(const std::vector<Factor>& factors, const Cell& cell);

// A directory name for a cell: "key=level+key=level" with anything unusual replaced; a study
// over algorithms alone names a cell by its variant, as drift compare always did.
std::string cell_directory(const std::vector<Factor>& factors, const Cell& cell);

// "sampler.name=uniform, privacy.mode=none": how progress lines, tables and figures name a cell
// ("default" in a study of no factor), from its levels' labels or from the cell.
std::string cell_label(const std::vector<Factor>& factors, const std::vector<std::string>& levels);
std::string cell_label(const std::vector<Factor>& factors, const Cell& cell);

}  // namespace drift
