#include "engine/metrics/metrics_file.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <type_traits>

#include "engine/core/error.hpp"

namespace drift {
namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T, class = void>
struct HasEmpty : std::false_type {};
template <class T>
struct HasEmpty<T, std::void_t<decltype(std::declval<const T&>().empty())>> : std::true_type {};

// Whether `value` of field `f` goes into the line of `r`.
template <class T>
bool is_written(const ReportField& f, const T& value, const RoundReport& r, bool shadow_clients) {
  bool has_entries = true;
  if constexpr (HasEmpty<T>::value) has_entries = !value.empty();
  switch (f.written) {
    case Written::always:
      return true;
    case Written::when_counted:
      if constexpr (std::is_signed_v<T>) return value >= 0;
      return true;
    case Written::when_not_empty:
      return has_entries;
    case Written::when_evaluated:
      return r.evaluated;
    case Written::when_evaluated_not_empty:
      return r.evaluated && has_entries;
    case Written::when_privately_evaluated:
      return r.evaluated && !r.client_accuracy.empty();
    case Written::with_shadow_clients:
      return shadow_clients;
    case Written::with_privacy:
      return r.dp;
    case Written::with_secure_aggregation:
      return r.sa;
    case Written::with_client_summary:
      return r.client_summary;
    case Written::with_edges:
      return !r.edge_updates.empty();
    case Written::with_buffered_edges:
      return !r.edge_staleness.empty();
    case Written::with_moving_clients:
      return !r.edge_clients.empty();
    case Written::with_edge_algorithm:
      return !r.edge_algorithm.empty();
    case Written::not_in_metrics:
      return false;
  }
  return false;
}

// The object of the line a field is written in (its key), or nullptr for the line itself.
const char* object_of(Written written) {
  switch (written) {
    case Written::with_shadow_clients:
      return "update_drift";
    case Written::with_privacy:
      return "privacy";
    case Written::with_secure_aggregation:
      return "secure_aggregation";
    case Written::with_client_summary:
      return "client_accuracy_summary";
    case Written::with_edges:
    case Written::with_buffered_edges:
    case Written::with_moving_clients:
    case Written::with_edge_algorithm:
      return "edges";
    default:
      return nullptr;
  }
}

struct LineWriter {
  const RoundReport& report;
  bool shadow_clients;
  json& line;

  template <class T>
  void operator()(const ReportField& f, const T& value) const {
    if (!is_written(f, value, report, shadow_clients)) return;
    if constexpr (std::is_same_v<T, AlgorithmMetrics>) {
      // Per-client values follow the order of "aggregated" (client id); NaN is written as null.
      auto& a = line[std::string(f.json_key())];
      for (const auto& [name, v] : value.scalars) a[name] = v;
      for (const auto& [name, v] : value.per_client) a[name] = v;
    } else if constexpr (std::is_same_v<T, std::vector<ClientRecord>>) {
      return;  // not_in_metrics: clients.csv holds them
    } else if (const char* object = object_of(f.written)) {
      line[object][std::string(f.json_key())] = value;
    } else {
      line[std::string(f.json_key())] = value;  // NaN is written as null
    }
  }
};

// `value` from `j`, read as the field's own type, so a count cannot be read narrower than it was
// written; a value of the wrong kind or width leaves the field as it was.
template <class T>
void read_value(const json& j, T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    if (j.is_boolean()) value = j.get<bool>();
  } else if constexpr (std::is_floating_point_v<T>) {
    value = j.is_number() ? j.get<T>() : std::numeric_limits<T>::quiet_NaN();
  } else if constexpr (std::is_unsigned_v<T>) {
    if (j.is_number_unsigned() && j.get<std::uint64_t>() <= std::numeric_limits<T>::max()) value = j.get<T>();
  } else if constexpr (std::is_integral_v<T>) {
    if (j.is_number_integer()) value = j.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (j.is_string()) value = j.get<std::string>();
  } else if constexpr (std::is_same_v<T, NamedSeries>) {
    if (!j.is_object()) return;
    for (const auto& [name, v] : j.items()) read_value(v, value[name]);
  } else if constexpr (std::is_same_v<T, AlgorithmMetrics>) {
    if (!j.is_object()) return;
    for (const auto& [name, v] : j.items()) {
      if (v.is_array())
        read_value(v, value.per_client[name]);
      else
        read_value(v, value.scalars[name]);
    }
  } else {
    if (!j.is_array()) return;
    for (const auto& element : j) read_value(element, value.emplace_back());
  }
}

struct LineReader {
  const json& line;

  template <class T>
  void operator()(const ReportField& f, T& value) const {
    if constexpr (!std::is_same_v<T, std::vector<ClientRecord>>) {
      if (f.written == Written::not_in_metrics) return;
      const json* object = &line;
      if (const char* nested = object_of(f.written)) object = line.contains(nested) ? &line[nested] : nullptr;
      const auto key = std::string(f.json_key());
      if (object && object->is_object() && object->contains(key)) {
        read_value((*object)[key], value);
      } else if constexpr (std::is_floating_point_v<T>) {
        if (f.nan_if_absent) value = kNaN;
      }
    }
  }
};

RoundReport report_from(const json& line) {
  RoundReport r;
  visit_report_fields(r, LineReader{line});
  r.evaluated = line.contains("test_accuracy");  // written only when evaluated
  r.dp = line.contains("privacy");
  r.sa = line.contains("secure_aggregation");
  r.client_summary = line.contains("client_accuracy_summary");
  return r;
}

// Calls `use(report)` for each line of `path`, in order.
template <class Use>
void for_each_line(const std::filesystem::path& path, Use&& use) {
  std::ifstream in(path);
  if (!in) throw UserError(path.string() + ": cannot read (not a run directory, or the run never started)");
  std::size_t number_of_line = 0;
  for (std::string text; std::getline(in, text);) {
    ++number_of_line;
    if (text.empty()) continue;
    const auto line = json::parse(text, nullptr, false);
    if (line.is_discarded() || !line.is_object()) {
      if (in.eof()) break;  // the last line, without its newline: cut short by a kill
      throw UserError(path.string() + ":" + std::to_string(number_of_line) + ": not a JSON object");
    }
    use(report_from(line));
  }
}

}  // namespace

std::string metrics_line(const RoundReport& report, bool shadow_clients) {
  json line = json::object();
  visit_report_fields(report, LineWriter{report, shadow_clients, line});
  if (report.evaluated && !report.domain_accuracy.empty()) {
    double sum = 0.0;
    for (double a : report.domain_accuracy) sum += a;
    line["domain_mean_accuracy"] = sum / static_cast<double>(report.domain_accuracy.size());
  }
  return line.dump() + "\n";
}

std::vector<RoundReport> read_metrics_reports(const std::filesystem::path& path) {
  std::vector<RoundReport> out;
  for_each_line(path, [&](RoundReport r) { out.push_back(std::move(r)); });
  return out;
}

std::vector<RoundFacts> read_metrics_file(const std::filesystem::path& path) {
  std::vector<RoundFacts> out;
  for_each_line(path, [&](const RoundReport& r) { out.push_back(facts_of(r)); });
  return out;
}

}  // namespace drift
