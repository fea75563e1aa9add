#include "engine/study/summary_rows.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>

#include "engine/metrics/summary_fields.hpp"
#include "engine/study/gnuplot.hpp"

namespace drift {
namespace {

using json = nlohmann::json;

std::string format(const char* pattern, double v) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, v);
  return text;
}

std::string percent(const json& v) {
  return v.is_number() ? format("%.1f %%", 100.0 * v.get<double>()) : "not reached";
}
std::string duration(const json& v) { return v.is_number() ? readable_duration(v.get<double>()) : "not reached"; }
std::string decimal(const json& v) { return v.is_number() ? format("%.3f", v.get<double>()) : "undefined"; }
std::string count(const json& v) { return v.is_number() ? format("%.0f", v.get<double>()) : v.dump(); }

// Each (key, value) of an object as `item` spells it, joined by `separator`.
std::string joined(const json& object, const char* separator,
                   const std::function<std::string(const std::string&, const json&)>& item) {
  std::string out;
  for (const auto& [key, v] : object.items()) out += (out.empty() ? "" : separator) + item(key, v);
  return out;
}

// {"0.5": x, "0.7": null} as "50 %: <x>; 70 %: not reached".
std::string by_target(const json& targets, const std::function<std::string(const json&)>& value) {
  return joined(targets, "; ", [&](const std::string& key, const json& v) {
    return format("%g %%", 100.0 * std::stod(key)) + ": " + value(v);
  });
}

// The text of one summary field's value, as `shown` says.
std::string shown_as(Shown shown, const json& v) {
  switch (shown) {
    case Shown::count:
      return count(v);
    case Shown::decimal:
      return decimal(v);
    case Shown::percent:
      return percent(v);
    case Shown::duration:
      return duration(v);
    case Shown::rounds_by_target:
      return by_target(v, [](const json& r) { return r.is_number() ? "round " + count(r) : "not reached"; });
    case Shown::duration_by_target:
      return by_target(v, duration);
    case Shown::percent_by_time:
      return joined(v, "; ", [](const std::string& key, const json& a) {
        return readable_duration(std::stod(key)) + ": " + percent(a);
      });
    case Shown::hidden:
    case Shown::counts_in_group:
      break;
  }
  return v.dump();
}

// The rows of summary_fields.hpp's fields that `s` has; a group of counts is one row.
void field_rows(const json& s, std::vector<std::pair<std::string, std::string>>& rows) {
  static const RunSummary shape;
  visit_summary_fields(shape, [&](const SummaryField& field, const auto&) {
    if (field.shown == Shown::hidden) return;
    const auto dot = field.key.find('.');
    const auto key = std::string(field.key.substr(0, dot));
    if (!s.contains(key) || (s[key].is_object() && s[key].empty())) return;
    const auto item = dot == std::string_view::npos ? std::string() : std::string(field.key.substr(dot + 1));
    if (!item.empty() && !s[key].contains(item)) return;
    if (field.shown != Shown::counts_in_group)  // a row of its own, nested in its group or not
      return rows.emplace_back(field.label, shown_as(field.shown, item.empty() ? s[key] : s[key][item])), void();
    const auto text = count(s[key][item]) + " " + item;
    if (!rows.empty() && rows.back().first == field.label)
      rows.back().second += ", " + text;
    else
      rows.emplace_back(field.label, text);
  });
}

}  // namespace

std::vector<std::pair<std::string, std::string>> readable_summary(const json& s) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto add = [&](const char* key, const char* label, const std::function<std::string(const json&)>& show) {
    if (s.contains(key) && !(s[key].is_object() && s[key].empty())) rows.emplace_back(label, show(s[key]));
  };
  const auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  add("status", "status", text);
  add("reason", "reason", text);
  field_rows(s, rows);
  add("diverged", "diverged", [](const json& v) {
    return "at aggregation " + count(v.value("aggregation", json())) + ": " + v.value("reason", std::string());
  });
  add("privacy", "privacy", [](const json& v) {
    return "epsilon " +
           (v.contains("epsilon") && v["epsilon"].is_number() ? format("%.3g", v["epsilon"].get<double>())
                                                              : "undefined") +
           " at delta " + format("%g", v.value("delta", 0.0)) + " (" + v.value("bound", std::string()) + ")";
  });
  add("secure_aggregation", "secure aggregation", [](const json& v) {
    return count(v.value("rounds", json())) + " rounds, " + count(v.value("aborted", json())) + " aborted; " +
           readable_duration(v.value("seconds", 0.0)) + " of protocol, " +
           readable_duration(v.value("extra_seconds", 0.0)) + " beyond plain uploads; " +
           count(v.value("overflow_count", json())) + " elements wrapped";
  });
  add("wall_seconds", "wall time", duration);
  return rows;
}

}  // namespace drift
