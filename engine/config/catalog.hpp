#pragma once
// What every catalogue (datasets, models, samplers, availability models, algorithms) does with
// its rows: find one by name, list the names, and refuse an unknown name with the closest one.
// A row is any struct with a `name`; the catalogues differ only in what a row carries.
#include <string>
#include <string_view>
#include <vector>

#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"

namespace drift {

// The row called `name`, or nullptr.
template <class Row>
const Row* find_row(const std::vector<Row>& rows, std::string_view name) {
  for (const auto& row : rows)
    if (row.name == name) return &row;
  return nullptr;
}

template <class Row>
std::vector<std::string> row_names(const std::vector<Row>& rows) {
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.name);
  return names;
}

// The row called `name`; an unknown name throws UserError("unknown <what> 'x' (did you mean ...)").
template <class Row>
const Row& row_named(const std::vector<Row>& rows, const std::string& name, const std::string& what) {
  if (const auto* row = find_row(rows, name)) return *row;
  throw UserError("unknown " + what + " '" + name + "'" + did_you_mean(name, row_names(rows)));
}

}  // namespace drift
