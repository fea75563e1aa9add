#pragma once
// A small, strict CSV reader for trace files: a header naming the columns, then numbers.
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "engine/config/choices.hpp"

namespace drift {

struct CsvTable {
  std::string path;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  std::vector<std::size_t> lines;  // file line of each row, for messages
  // The fields of the columns read as text (read_csv's `text_columns`), per row in their order;
  // such a column's number in `rows` is NaN.
  std::vector<std::vector<std::string>> texts;
};

// Throws UserError naming the file and line on a missing file, a header that lacks one of
// `required` columns, a short row or a field that is not a number (but in `text_columns`).
CsvTable read_csv(const std::string& path, const std::vector<std::string>& required, const std::string& what,
                  const std::vector<std::string>& text_columns = {});

std::size_t column_index(const CsvTable& table, const std::string& name);

// The next line of a trace into `line`; false at the end. A line longer than a trace's ever is
// (/dev/zero, a binary file) is a UserError naming `where`, read no further.
bool read_trace_line(std::istream& in, std::string& line, const std::string& where);

// Which client each row of a trace is about (column "client"): the row's own id with
// mapping `ids` (an id at or past `clients` is a UserError naming the line), or with
// `seeded` a draw from the ("trace-clients", seed) stream: the trace's distinct ids, sorted and
// shuffled, the k-th becoming client k, the rest unused. Unused rows get -1. Traces that hold
// the same ids map alike, so an availability and a device trace of one source stay paired.
std::vector<long> trace_rows_to_clients(const CsvTable& table, std::uint32_t clients, TraceMapping mapping,
                                        std::uint64_t seed);

}  // namespace drift
