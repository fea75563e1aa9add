#include "engine/study/study_results.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <type_traits>

#include "engine/core/input_file.hpp"
#include "engine/metrics/comparison.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "engine/metrics/summary_fields.hpp"
#include "engine/study/gnuplot.hpp"

namespace drift {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number_label(double v) {  // 50 -> "50", 0.5 -> "0.5", 3600 -> "3600"
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A result column: its name, and its value for a run (none: not reached / undefined).
struct Column {
  std::string name;
  std::function<std::optional<double>(const RunSummary&)> value;
  int digits;
  bool accuracy;               // withheld for diverged runs
  bool in_markdown = true;     // study.md shows the columns a reader compares; study.csv all
  bool measured_only = false;  // study.md leaves it out when no run measured it
  bool hours = false;          // a virtual time in hours
};

// The value of the summary field at `index` of the list in `s` (a per-target field: its entry
// `target`), times the column's scale; none when undefined or not reached.
std::optional<double> field_value(const RunSummary& s, std::size_t index, std::size_t target) {
  std::optional<double> out;
  std::size_t i = 0;
  visit_summary_fields(s, [&](const SummaryField& field, const auto& member) {
    if (i++ != index) return;
    if (field.kept == Kept::with_secure_aggregation && s.secagg_rounds == 0) return;
    using T = std::decay_t<decltype(member)>;
    if constexpr (std::is_arithmetic_v<T>)
      out = static_cast<double>(member);
    else if (const auto& entry = member.at(target).second)
      out = static_cast<double>(*entry);
    if (out && std::isfinite(*out))
      *out *= field.column.scale;
    else
      out.reset();
  });
  return out;
}

// The study's columns: the summary fields that have one, in the list's order; a per-target
// field gives one column per target.
std::vector<Column> result_columns(const SummaryTargets& targets) {
  std::vector<Column> columns;
  const auto shape = summarize({}, targets);
  std::size_t index = 0;
  visit_summary_fields(shape, [&](const SummaryField& field, const auto& member) {
    const auto& c = field.column;
    const auto i = index++;
    if (c.name.empty()) return;
    Column column{std::string(c.name), {}, c.digits, c.accuracy, c.in_markdown, c.measured_only, c.hours};
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(member)>>) {
      column.value = [i](const RunSummary& s) { return field_value(s, i, 0); };
      columns.push_back(std::move(column));
    } else {
      for (std::size_t k = 0; k < member.size(); ++k) {
        auto each = column;
        each.name += number_label(member[k].first * c.key_scale) + std::string(c.suffix);
        each.value = [i, k](const RunSummary& s) { return field_value(s, i, k); };
        columns.push_back(std::move(each));
      }
    }
  });
  return columns;
}

// "mean ± std", "mean ± std (k/n)" when only k runs have a value, "–" when none; diverged
// runs are named, never averaged.
std::string cell_text(const std::vector<const RunRecord*>& runs, const Column& col) {
  std::vector<double> values;
  std::size_t diverged = 0, counted = 0;
  for (const auto* r : runs) {
    if (!r->finished()) continue;
    if (col.accuracy && r->diverged()) {
      ++diverged;
      continue;
    }
    ++counted;
    if (const auto v = col.value(r->summary)) values.push_back(*v);
  }
  std::string text;
  if (values.empty())
    text = counted ? "–" : "";
  else {
    const auto ms = mean_std(values);
    text = fixed(ms.mean, col.digits) + (values.size() > 1 ? " ± " + fixed(ms.std, col.digits) : "");
    if (values.size() < counted) text += " (" + std::to_string(values.size()) + "/" + std::to_string(counted) + ")";
  }
  if (diverged)
    text += (text.empty() ? "" : ", ") + std::string("diverged ") + std::to_string(diverged) + "/" +
            std::to_string(diverged + counted);
  return text.empty() ? "–" : text;
}

void markdown_group(std::ostringstream& out, const std::vector<std::string>& heads,
                    const std::vector<std::pair<std::vector<std::string>, std::vector<const RunRecord*>>>& groups,
                    const std::vector<Column>& cols) {
  out << "|";
  for (const auto& h : heads) out << " " << h << " |";
  out << " runs |";
  for (const auto& c : cols) out << " " << c.name << " |";
  out << "\n|";
  for (std::size_t i = 0; i < heads.size() + 1 + cols.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& [labels, runs] : groups) {
    std::size_t done = 0;
    for (const auto* r : runs) done += r->finished() ? 1 : 0;
    out << "|";
    for (const auto& l : labels) out << " " << l << " |";
    out << " " << done << (done < runs.size() ? "/" + std::to_string(runs.size()) : "") << " |";
    for (const auto& c : cols) out << " " << cell_text(runs, c) << " |";
    out << "\n";
  }
}

}  // namespace

RunRecord read_run_record(const fs::path& study_dir, const std::string& relative_path, const SummaryTargets& targets) {
  RunRecord r;
  r.path = relative_path;
  const auto dir = study_dir / relative_path;
  if (!fs::exists(dir / "metrics.jsonl")) {
    r.status = "missing";
    return r;
  }
  r.summary = summarize(read_metrics_file(dir / "metrics.jsonl"), targets);
  const auto text = read_own_file(dir / "summary.json");
  const auto summary = text ? json::parse(*text, nullptr, false) : json();
  if (!summary.is_object()) {
    r.status = "unfinished";
    return r;
  }
  r.status = summary.value("status", "unfinished");
  r.wall_seconds = summary.value("wall_seconds", 0.0);
  // A finished run whose metrics.jsonl holds fewer aggregations than its summary counted was cut
  // or emptied since: its tables would average a run that is not the one that finished.
  const auto counted = summary.value("rounds", std::uint64_t{0});
  if (r.finished() && counted != r.summary.rounds) {
    r.damage = "metrics.jsonl holds " + std::to_string(r.summary.rounds) + " aggregations, but summary.json counted " +
               std::to_string(counted);
    r.status = "damaged";
  }
  return r;
}

std::string study_run_path(const std::vector<Factor>& factors, const Cell& cell, std::uint64_t seed) {
  return cell_directory(factors, cell) + "/seed-" + std::to_string(seed);
}

StudyTable read_study_table(const fs::path& study_dir, std::vector<Factor> factors,
                            const std::vector<std::uint64_t>& seeds, SummaryTargets targets) {
  StudyTable table{std::move(factors), std::move(targets), {}};
  for (const auto& cell : grid_cells(table.factors))
    for (auto seed : seeds) {
      auto record = read_run_record(study_dir, study_run_path(table.factors, cell, seed), table.targets);
      for (std::size_t f = 0; f < table.factors.size(); ++f)
        record.levels.push_back(table.factors[f].levels.at(cell.level[f]).label);
      record.seed = seed;
      table.runs.push_back(std::move(record));
    }
  return table;
}

std::string study_csv(const StudyTable& t) {
  const auto cols = result_columns(t.targets);
  std::ostringstream out;
  for (const auto& f : t.factors) out << csv_field(f.name) << ",";
  out << "seed,path,status,diverged_at";
  for (const auto& c : cols) out << "," << c.name;
  out << ",wall_seconds\n";
  for (const auto& r : t.runs) {
    for (const auto& l : r.levels) out << csv_field(l) << ",";
    out << r.seed << "," << csv_field(r.path) << "," << r.status << ","
        << (r.summary.diverged_round ? std::to_string(*r.summary.diverged_round) : "");
    for (const auto& c : cols) {
      const auto v = r.finished() && !(c.accuracy && r.diverged()) ? c.value(r.summary) : std::nullopt;
      out << "," << (v ? fixed(*v, c.digits ? c.digits + 2 : 0) : "");
    }
    out << "," << fixed(r.wall_seconds, 1) << "\n";
  }
  return out.str();
}

// study.csv keeps virtual hours; study.md gives virtual times in the unit that suits the
// study's longest run, as the figures do (0.01 h reads better as 0.6 min).
void time_columns_in(std::vector<Column>& cols, const TimeUnit& unit) {
  if (unit.label == "h") return;
  const std::string word = unit.label == "s" ? "seconds" : unit.label == "min" ? "minutes" : "days";
  const double factor = 3600.0 / unit.seconds;
  for (auto& c : cols) {
    if (!c.hours) continue;
    const bool total = c.name == "virtual_hours";
    c.name = total ? "virtual_" + word : word + c.name.substr(5);
    c.value = [value = c.value, factor](const RunSummary& s) {
      const auto v = value(s);
      return v ? std::optional<double>(*v * factor) : std::nullopt;
    };
    c.digits = 1;
  }
}

std::string study_markdown(const StudyTable& t) {
  std::vector<Column> cols;
  double longest = 0.0;
  for (const auto& r : t.runs)
    if (r.finished()) longest = std::max(longest, r.summary.virtual_time);
  for (auto& c : result_columns(t.targets)) {
    bool measured = !c.measured_only;
    for (const auto& r : t.runs) measured = measured || (r.finished() && c.value(r.summary));
    if (c.in_markdown && measured) cols.push_back(std::move(c));
  }
  const auto unit = time_unit_for(longest);
  time_columns_in(cols, unit);
  std::ostringstream out;
  std::vector<std::string> heads;
  for (const auto& f : t.factors) heads.push_back(f.name);
  // Per cell: runs that share every level.
  std::vector<std::pair<std::vector<std::string>, std::vector<const RunRecord*>>> cells;
  for (const auto& r : t.runs) {
    if (cells.empty() || cells.back().first != r.levels) cells.push_back({r.levels, {}});
    cells.back().second.push_back(&r);
  }
  out << "## Every cell (mean ± std over seeds)\n\nAccuracies are fractions; times are virtual (study.csv gives them "
         "in hours, with every run and more columns).\n\n";
  markdown_group(out, heads, cells, cols);
  if (t.factors.size() < 2) return out.str();
  for (std::size_t f = 0; f < t.factors.size(); ++f) {
    out << "\n## By " << t.factors[f].name << " (over every other factor and seed)\n\n";
    std::vector<std::pair<std::vector<std::string>, std::vector<const RunRecord*>>> groups;
    for (const auto& level : t.factors[f].levels) {
      groups.push_back({{level.label}, {}});
      for (const auto& r : t.runs)
        if (r.levels.at(f) == level.label) groups.back().second.push_back(&r);
    }
    markdown_group(out, {t.factors[f].name}, groups, cols);
  }
  return out.str();
}

std::string legend_label(const StudyTable& table, const std::vector<std::string>& levels) {
  std::vector<Factor> shown;
  std::vector<std::string> shown_levels;
  for (std::size_t f = 0; f < table.factors.size(); ++f) {
    const bool varies = std::any_of(table.runs.begin(), table.runs.end(),
                                    [&](const RunRecord& r) { return r.levels.at(f) != levels.at(f); });
    if (!varies) continue;
    shown.push_back(table.factors[f]);
    shown_levels.push_back(levels.at(f));
  }
  return shown.empty() ? cell_label(table.factors, levels) : cell_label(shown, shown_levels);
}

}  // namespace drift
