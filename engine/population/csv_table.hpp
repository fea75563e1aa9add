#pragma once
// A small, strict CSV reader for trace files: a header naming the columns, then numbers.
#include <string>
#include <vector>

namespace drift {

struct CsvTable {
  std::string path;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  std::vector<std::size_t> lines;  // file line of each row, for messages
};

// Throws UserError naming the file and line on a missing file, a header that lacks one of
// `required` columns, a short row or a field that is not a number.
CsvTable read_csv(const std::string& path, const std::vector<std::string>& required, const std::string& what);

std::size_t column_index(const CsvTable& table, const std::string& name);

}  // namespace drift
