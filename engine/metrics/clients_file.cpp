#include "engine/metrics/clients_file.hpp"

#include <nlohmann/json.hpp>

#include <sstream>
#include <type_traits>

namespace drift {
namespace {

// One cell: reals as JSON spells them (NaN as null), so they read back exactly; a detail
// loses the characters that would break the row.
struct CellWriter {
  std::ostringstream& row;

  template <class T>
  void operator()(const ReportField&, const T& value) const {
    row << ',';
    if constexpr (std::is_floating_point_v<T>) {
      row << nlohmann::json(value).dump();
    } else if constexpr (std::is_same_v<T, ClientEvent>) {
      row << name_of(value);
    } else if constexpr (std::is_same_v<T, std::string>) {
      for (char ch : value) row << (ch == ',' || ch == '\n' || ch == '"' ? ' ' : ch);
    } else {
      row << value;
    }
  }
};

}  // namespace

std::string clients_csv_header() {
  std::string header = "round";
  const ClientRecord none;
  visit_client_fields(none, [&](const ReportField& f, const auto&) { (header += ',') += f.json_key(); });
  return header + "\n";
}

std::string clients_csv_rows(const RoundReport& report) {
  std::ostringstream rows;
  for (const auto& c : report.clients) {
    rows << report.round;
    visit_client_fields(c, CellWriter{rows});
    rows << '\n';
  }
  return rows.str();
}

}  // namespace drift
