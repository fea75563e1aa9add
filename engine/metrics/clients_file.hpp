#pragma once
// clients.csv: one row per client event of each aggregation (docs/outputs.md, "The files of a
// run directory"). The columns are the round, then visit_client_fields' fields in their order.
#include <string>

#include "engine/metrics/round_report.hpp"

namespace drift {

std::string clients_csv_header();  // with its newline
std::string clients_csv_rows(const RoundReport& report);

}  // namespace drift
