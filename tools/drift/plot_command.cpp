// drift plot, and the figures at the end of run, study and compare: gnuplot figures and an
// index.html per run directory and per study directory.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "engine/compose/atomic_file.hpp"
#include "engine/core/error.hpp"
#include "engine/core/input_file.hpp"
#include "engine/core/remove_tree.hpp"
#include "engine/study/html.hpp"
#include "engine/study/run_figures.hpp"
#include "engine/study/study_figures.hpp"
#include "engine/study/summary_rows.hpp"

namespace drift::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json(const fs::path& file) {
  const auto text = read_own_file(file);
  return text ? json::parse(*text, nullptr, false) : json();
}

std::string read_text(const fs::path& file) { return read_own_file(file).value_or(""); }

// Renders every figure; returns a note for the page when some (or all) could not be drawn, and
// says it on stderr too unless `quiet` (a live page, redrawn soon: its page says it).
std::string render_all(const fs::path& dir, std::vector<Figure>& figures, const std::atomic<int>* stop, bool quiet) {
  const auto gnuplot = find_gnuplot();
  if (gnuplot.empty()) {
    figures.clear();
    const std::string note =
        "no figures: gnuplot is not installed (Debian package gnuplot-nox; make quickstart "
        "installs it); the data files are in " +
        dir.string();
    if (!quiet) std::fprintf(stderr, "drift: %s\n", note.c_str());
    return note;
  }
  std::vector<Figure> drawn;
  std::string note;
  for (auto& f : figures) {
    if (stop && stop->load() != 0) throw PlotInterrupted();
    const auto error = render_figure(dir, f, gnuplot);
    if (error.empty())
      drawn.push_back(std::move(f));
    else {
      if (!quiet) std::fprintf(stderr, "drift: warning: %s\n", error.c_str());
      note = "some figures could not be drawn: " + error;
    }
  }
  figures = std::move(drawn);
  return note;
}

// The run's headline numbers as an HTML table, from summary.json.
std::string summary_html(const json& s) {
  if (!s.is_object()) return "<p class=\"warning\">No summary.json: the run has not finished.</p>\n";
  std::ostringstream out;
  out << "<table>\n";
  for (const auto& [label, value] : readable_summary(s))
    out << "<tr><td>" << html_escape(label) << "</td><td>" << html_escape(value) << "</td></tr>\n";
  out << "</table>\n<p>Files: <a href=\"metrics.jsonl\">metrics.jsonl</a>, <a href=\"clients.csv\">clients.csv</a>, "
         "<a href=\"population.csv\">population.csv</a>, <a href=\"summary.json\">summary.json</a>, "
         "<a href=\"scenario.toml\">scenario.toml</a>, <a href=\"log.txt\">log.txt</a></p>\n";
  return out.str();
}

// A study directory's table and factors, rebuilt from study.json and the run directories.
StudyTable table_from_directory(const fs::path& out) {
  const auto definition = read_json(out / "study.json");
  if (!definition.is_object()) throw UserError((out / "study.json").string() + ": not a study definition");
  StudyTable table;
  for (const auto& f : definition["factors"]) {
    Factor factor{f["name"].get<std::string>(), {}};
    for (const auto& l : f["levels"]) factor.levels.push_back({l.get<std::string>(), {}});
    table.factors.push_back(std::move(factor));
  }
  const auto seeds = definition.value("seeds", std::vector<std::uint64_t>{});
  if (seeds.empty()) throw UserError((out / "study.json").string() + ": names no seeds");
  // The targets and budgets the runs were made with, as the first finished run's summary spells them.
  for (const auto& cell : grid_cells(table.factors)) {
    const auto s = read_json(out / study_run_path(table.factors, cell, seeds.front()) / "summary.json");
    if (!s.is_object()) continue;
    const auto rounds_to = s.value("rounds_to_accuracy", json::object());
    const auto at_time = s.value("accuracy_at_time", json::object());
    for (const auto& [k, v] : rounds_to.items()) table.targets.accuracies.push_back(std::stod(k));
    for (const auto& [k, v] : at_time.items()) table.targets.times.push_back(std::stod(k));
    std::sort(table.targets.accuracies.begin(), table.targets.accuracies.end());  // keys sort as text
    std::sort(table.targets.times.begin(), table.targets.times.end());
    break;
  }
  return read_study_table(out, std::move(table.factors), seeds, std::move(table.targets));
}

// Writes `page` as `directory`/index.html: a live page with its banner, or the final one,
// after which the folders of the live drawings go (docs/outputs.md#live-pages).
void write_page(const fs::path& directory, HtmlPage& page, const LiveBanner* live) {
  if (live) {
    page.live_text = live->text;
    page.refresh_seconds = live->refresh_seconds;
  }
  write_file_atomically(directory / "index.html", render_html(page));
  if (live) return;
  for (const char* name : {"live-figures-1", "live-figures-2"}) {
    std::error_code ec;
    remove_tree(directory / name, ec);
  }
}

}  // namespace

void plot_run_directory(const fs::path& run, const std::vector<std::uint32_t>& timeline_rounds,
                        const std::atomic<int>* stop, const LiveBanner* live) {
  const std::string figures_dir = live ? live->figures_dir : "figures";
  const auto dir = run / figures_dir;
  auto figures = run_figures(run, dir, timeline_rounds);
  HtmlPage page;
  // The parent names the run within a study (its cell) or the runs directory.
  page.title = "drift run " + (fs::absolute(run).lexically_normal().parent_path().filename() / run.filename()).string();
  page.note = render_all(dir, figures, stop, live != nullptr);
  if (stop && stop->load() != 0) throw PlotInterrupted();
  page.figures = std::move(figures);
  const auto summary = read_json(run / "summary.json");
  // A live page says how far the run is instead of "no summary yet".
  if (!live || summary.is_object()) page.intro_html = summary_html(summary);
  page.figures_prefix = figures_dir;
  write_page(run, page, live);
}

void plot_study_directory(const fs::path& out, const StudyTable& table, const std::atomic<int>* stop,
                          const LiveBanner* live) {
  const std::string figures_dir = live ? live->figures_dir : "figures";
  const auto dir = out / figures_dir;
  // A live page has figures once a run has finished: before, every line would be empty.
  const bool any_finished =
      std::any_of(table.runs.begin(), table.runs.end(), [](const RunRecord& r) { return r.finished(); });
  auto figures = live && !any_finished ? std::vector<Figure>{} : study_figures(table, out, dir);
  HtmlPage page;
  page.title = "drift study " + fs::absolute(out).filename().string();
  page.note = render_all(dir, figures, stop, live != nullptr);
  if (stop && stop->load() != 0) throw PlotInterrupted();
  page.figures = std::move(figures);
  page.figures_prefix = figures_dir;
  // The table as study.md holds it; a live page draws it before study.md is written.
  std::string intro = markdown_tables_to_html(study_markdown(table));
  if (fs::exists(out / "comparison.md"))
    intro += "<h2>Comparison</h2>\n" + markdown_tables_to_html(read_text(out / "comparison.md"));
  page.intro_html = intro +
                    "<p>Files: <a href=\"study.csv\">study.csv</a>, <a href=\"study.md\">study.md</a>, "
                    "<a href=\"study.json\">study.json</a></p>\n";
  std::string runs = "<h2>Runs</h2>\n<ul>\n";
  for (const auto& r : table.runs)
    runs += "<li><a href=\"" + html_escape(r.path) + "/index.html\">" + html_escape(r.path) +
            "</a>: " + html_escape(r.status) + "</li>\n";
  page.outro_html = runs + "</ul>\n";
  write_page(out, page, live);
}

void still_live_page(const fs::path& directory, const std::string& text) {
  const auto file = directory / "index.html";
  if (fs::exists(file)) write_file_atomically(file, still_page(read_text(file), text));
}

int plot_command(const std::string& directory, const std::vector<std::uint32_t>& timeline_rounds) {
  fs::path dir = fs::path(directory).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // runs/quickstart/ names runs/quickstart
  if (fs::exists(dir / "study.json")) {
    const auto table = table_from_directory(dir);
    plot_study_directory(dir, table);
    for (const auto& r : table.runs)
      if (fs::exists(dir / r.path / "metrics.jsonl")) plot_run_directory(dir / r.path, timeline_rounds);
  } else if (fs::exists(dir / "metrics.jsonl")) {
    plot_run_directory(dir, timeline_rounds);
  } else {
    throw UserError(directory + ": neither a run directory (metrics.jsonl) nor a study directory (study.json)");
  }
  std::fprintf(stderr, "figures and index.html in %s\n", directory.c_str());
  return 0;
}

}  // namespace drift::cli
