#include "engine/study/summary_rows.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>

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

}  // namespace

std::vector<std::pair<std::string, std::string>> readable_summary(const json& s) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto add = [&](const char* key, const char* label, const std::function<std::string(const json&)>& show) {
    if (s.contains(key) && !(s[key].is_object() && s[key].empty())) rows.emplace_back(label, show(s[key]));
  };
  const auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  add("status", "status", text);
  add("reason", "reason", text);
  add("rounds", "rounds", count);
  add("virtual_time", "virtual time", duration);
  add("best_accuracy", "best accuracy", percent);
  add("best_round", "best round", count);
  add("final_accuracy", "final accuracy", percent);
  add("last5_mean_accuracy", "mean of the last 5 evaluations", percent);
  add("rounds_to_accuracy", "first round at accuracy", [](const json& v) {
    return by_target(v, [](const json& r) { return r.is_number() ? "round " + count(r) : "not reached"; });
  });
  add("time_to_accuracy", "virtual time to accuracy", [](const json& v) { return by_target(v, duration); });
  add("accuracy_at_time", "accuracy after virtual time", [](const json& v) {
    return joined(v, "; ", [](const std::string& key, const json& a) {
      return readable_duration(std::stod(key)) + ": " + percent(a);
    });
  });
  add("mean_cohort_tv", "mean cohort drift (TV)", decimal);
  add("mean_cohort_change_tv", "mean change between cohorts (TV)", decimal);
  add("mean_participation_bias", "mean participation bias", decimal);
  add("mean_participation_bias_uniform", "mean participation bias against uniform", decimal);
  add("mean_update_drift", "mean update drift", decimal);
  add("updates", "updates", [](const json& v) {
    return joined(v, ", ", [](const std::string& key, const json& n) { return count(n) + " " + key; });
  });
  add("wasted_compute_seconds", "wasted compute (virtual)", duration);
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
