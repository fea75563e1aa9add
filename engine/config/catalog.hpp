#pragma once
// What every catalogue (datasets, models, samplers, availability models, algorithms) does with
// its rows: find one by name, list the names, and refuse an unknown name with the closest one.
// A row is any struct with a `name`; the catalogues differ only in what a row carries.
#include <algorithm>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config/param_spec.hpp"
#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"

namespace drift {

// A catalogue's rows: the built-in ones, then those plugins add (docs/plugins.md). A deque, so
// that a row found before a plugin adds another stays where it is.
template <class Row>
using Rows = std::deque<Row>;

// The row called `name`, or nullptr. `Table` is a std::vector or a Rows of rows.
template <class Table>
const typename Table::value_type* find_row(const Table& rows, std::string_view name) {
  for (const auto& row : rows)
    if (row.name == name) return &row;
  return nullptr;
}

template <class Table>
std::vector<std::string> row_names(const Table& rows) {
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.name);
  return names;
}

// The row called `name`; an unknown name throws UserError("unknown <what> 'x' (did you mean ...)").
template <class Table>
const typename Table::value_type& row_named(const Table& rows, const std::string& name, const char* what) {
  if (const auto* row = find_row(rows, name)) return *row;
  throw UserError(std::string("unknown ") + what + " '" + name + "'" + did_you_mean(name, row_names(rows)));
}

// The keys (`params`) of the rows called `names`, each key once, in order; an unknown name
// adds none. What a section takes when several of its members are in use (a timeline's
// samplers, the groups' availability models).
template <class Table>
std::vector<ParamSpec> params_of_rows(const Table& rows, const std::vector<std::string>& names) {
  std::vector<ParamSpec> out;
  for (const auto& name : names)
    if (const auto* row = find_row(rows, name))
      for (const auto& spec : row->params)
        if (std::none_of(out.begin(), out.end(), [&](const ParamSpec& p) { return p.key == spec.key; }))
          out.push_back(spec);
  return out;
}

// Appends a plugin's row; a name the catalogue already has throws UserError naming `what`.
template <class Row>
void add_row(Rows<Row>& rows, Row row, const std::string& what) {
  if (row.name.empty()) throw UserError("a plugin adds " + what + " without a name");
  if (find_row(rows, row.name) != nullptr)
    throw UserError("a plugin adds " + what + " '" + row.name + "', but drift already has one by that name");
  rows.push_back(std::move(row));
}

}  // namespace drift
