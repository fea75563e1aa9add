#include "engine/population/csv_table.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <unordered_map>

#include "engine/core/error.hpp"
#include "engine/core/input_file.hpp"
#include "engine/core/rng.hpp"

namespace drift {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) {
    const auto b = field.find_first_not_of(" \t\r");
    const auto e = field.find_last_not_of(" \t\r");
    out.push_back(b == std::string::npos ? "" : field.substr(b, e - b + 1));
  }
  return out;
}

// A trace line is a few numbers; anything longer is not a trace (/dev/zero, a binary file), and
// reading it whole would take memory without bound.
constexpr std::size_t kMaxLineBytes = 4096;

}  // namespace

bool read_trace_line(std::istream& in, std::string& line, const std::string& where) {
  char buffer[kMaxLineBytes + 2];  // the line, its newline and getline's terminating zero
  in.getline(buffer, sizeof buffer);
  const auto got = static_cast<std::size_t>(in.gcount());
  if (in.fail() && !in.eof() && got == sizeof buffer - 1)
    throw UserError(where + ": a line longer than " + std::to_string(kMaxLineBytes) + " bytes: not a CSV trace");
  if (got == 0) return false;                     // the end, or an error
  line.assign(buffer, in.eof() ? got : got - 1);  // without the newline getline counted
  return true;
}

CsvTable read_csv(const std::string& path, const std::vector<std::string>& required, const std::string& what,
                  const std::vector<std::string>& text_columns) {
  auto in = open_input_file(path, what + " (CSV file)");
  CsvTable t;
  t.path = path;
  std::string line;
  std::size_t number = 0;
  while (read_trace_line(in, line, path + ":" + std::to_string(number + 1))) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    auto fields = split(line);
    if (t.columns.empty()) {
      t.columns = fields;
      for (const auto& r : required)
        if (std::find(t.columns.begin(), t.columns.end(), r) == t.columns.end())
          throw UserError(path + ":" + std::to_string(number) + ": header lacks column '" + r + "' (" + what + ")");
      continue;
    }
    if (fields.size() != t.columns.size())
      throw UserError(path + ":" + std::to_string(number) + ": expected " + std::to_string(t.columns.size()) +
                      " fields, found " + std::to_string(fields.size()));
    std::vector<double> row;
    std::vector<std::string> texts;
    for (std::size_t k = 0; k < fields.size(); ++k) {
      const auto& f = fields[k];
      if (std::find(text_columns.begin(), text_columns.end(), t.columns[k]) != text_columns.end()) {
        texts.push_back(f);
        row.push_back(std::nan(""));
        continue;
      }
      char* end = nullptr;
      const double v = std::strtod(f.c_str(), &end);
      if (f.empty() || *end != '\0' || !std::isfinite(v))
        throw UserError(path + ":" + std::to_string(number) + ": '" + f + "' is not a number");
      // Checked here, where the text is: a double cannot print a large id as it was written.
      if (t.columns[k] == "client" && (v < 0 || v != std::floor(v) || v > 4e9))
        throw UserError(path + ":" + std::to_string(number) + ": client " + f +
                        " is not a client id (a whole number from 0 to 4e9)");
      row.push_back(v);
    }
    t.rows.push_back(std::move(row));
    t.texts.push_back(std::move(texts));
    t.lines.push_back(number);
  }
  if (t.columns.empty()) throw UserError(path + ": empty trace file (" + what + ")");
  return t;
}

std::size_t column_index(const CsvTable& table, const std::string& name) {
  return static_cast<std::size_t>(std::find(table.columns.begin(), table.columns.end(), name) - table.columns.begin());
}

std::vector<long> trace_rows_to_clients(const CsvTable& table, std::uint32_t clients, TraceMapping mapping,
                                        std::uint64_t seed) {
  const auto c = column_index(table, "client");
  std::vector<long> out;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const double id = table.rows[i][c];
    if (id < 0 || id != std::floor(id) || id > 4e9) {
      std::ostringstream text;  // as a person wrote it: a whole number in full, not "%f"'s six decimals
      if (id == std::floor(id) && std::fabs(id) < 1e30) text << std::fixed << std::setprecision(0);
      text << id;
      throw UserError(table.path + ":" + std::to_string(table.lines[i]) + ": client " + text.str() +
                      " is not a client id (a whole number from 0 to 4e9)");
    }
    if (mapping == TraceMapping::ids && id >= clients)
      throw UserError(table.path + ":" + std::to_string(table.lines[i]) + ": client " +
                      std::to_string(static_cast<long>(id)) + " is not a client id below " + std::to_string(clients) +
                      " (trace_clients = \"seeded\" draws the clients from a larger trace)");
    out.push_back(static_cast<long>(id));
  }
  if (mapping == TraceMapping::ids) return out;
  std::vector<long> ids = out;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.size() < clients)
    throw UserError(table.path + ": the trace names " + std::to_string(ids.size()) + " clients, fewer than the " +
                    std::to_string(clients) + " that trace_clients = \"seeded\" gives one each");
  Rng rng = make_stream(seed, "trace-clients");
  rng.shuffle(ids);
  std::unordered_map<long, long> client_of;
  for (std::uint32_t k = 0; k < clients; ++k) client_of.emplace(ids[k], static_cast<long>(k));
  for (auto& row : out) {
    const auto it = client_of.find(row);
    row = it == client_of.end() ? -1 : it->second;
  }
  return out;
}

}  // namespace drift
