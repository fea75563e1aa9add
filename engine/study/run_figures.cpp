#include "engine/study/run_figures.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/core/error.hpp"
#include "engine/core/input_file.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "engine/study/edge_figures.hpp"
#include "engine/study/participation_figures.hpp"
#include "engine/study/privacy_figures.hpp"

namespace drift {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// rounds.dat: round time train_loss cohort_tv cohort_js window_tv window_js change_tv update_drift
// participation_bias participation_bias_uniform;
// evaluations.dat: round time accuracy(%) test_loss; time in `unit`.
void write_round_data(const std::vector<RoundReport>& metrics, const fs::path& dir, const TimeUnit& unit) {
  std::ostringstream rounds, evals;
  rounds << "# round time_" << unit.label
         << " train_loss cohort_tv cohort_js window_tv window_js change_tv update_drift participation_bias"
            " participation_bias_uniform\n";
  evals << "# round time_" << unit.label << " accuracy_percent test_loss\n";
  for (const auto& m : metrics) {
    const double hours = m.time_end / unit.seconds;
    rounds << m.round << ' ' << data_number(hours) << ' ' << data_number(m.train_loss);
    for (double distance : {m.cohort_tv, m.cohort_js, m.window_tv, m.window_js, m.change_tv, m.update_drift,
                            m.participation_bias, m.participation_bias_uniform})
      rounds << ' ' << data_number(distance);
    rounds << '\n';
    if (m.evaluated)
      evals << m.round << ' ' << data_number(hours) << ' ' << data_number(100.0 * m.test_accuracy) << ' '
            << data_number(m.test_loss) << '\n';
  }
  write_text_file(dir / "rounds.dat", rounds.str());
  write_text_file(dir / "evaluations.dat", evals.str());
}

// Two panels side by side, their keys inside at `key` ("right bottom"), so the plots keep the width.
Figure two_panels(const std::string& name, const std::string& title, const std::string& y_label,
                  const std::string& by_round, const std::string& by_time, const TimeUnit& unit,
                  const std::string& key) {
  return {name, title,
          "set multiplot layout 1,2 title '" + title + "'\nset key inside " + key + "\nset ylabel '" + y_label +
              "'\nset xlabel 'round'\n" + by_round + "\nset xlabel 'virtual time (" + unit.label + ")'\n" + by_time +
              "\nunset multiplot",
          1100, 450};
}

// Participation codes, strongest last: what a client did in a round.
enum Code { not_eligible, offline, idle, selected, finished, late, dropped, failed, stale };

int event_code(const std::string& event, const std::string& detail) {
  static const std::map<std::string, int> codes = {{"selected", selected}, {"finished", finished}, {"late", late},
                                                   {"dropped", dropped},   {"failed", failed},     {"stale", stale}};
  if (event == "eligible") return detail == "offline" ? offline : idle;
  const auto it = codes.find(event);
  return it == codes.end() ? not_eligible : it->second;
}

struct ClientRow {
  std::uint32_t round = 0, client = 0;
  std::string event, detail;
  double time = 0.0;
};

std::vector<ClientRow> read_client_rows(const fs::path& file) {
  std::ifstream in(file);
  std::vector<ClientRow> rows;
  std::string line;
  const auto fields = [](const std::string& text) {
    std::stringstream s(text);
    std::vector<std::string> f;
    for (std::string field; std::getline(s, field, ',');) f.push_back(field);
    return f;
  };
  std::getline(in, line);
  // Columns by their header's names (visit_client_fields), not by position.
  const auto header = fields(line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t round = column("round"), client = column("client"), event = column("event"), time = column("time"),
                    detail = column("detail");
  if (std::max({round, client, event, time}) >= header.size()) return rows;
  while (std::getline(in, line)) {
    const auto f = fields(line);
    if (f.size() <= std::max({round, client, event, time})) break;  // a last line cut short
    ClientRow r{static_cast<std::uint32_t>(std::stoul(f[round])), static_cast<std::uint32_t>(std::stoul(f[client])),
                f[event], detail < f.size() ? f[detail] : "", std::stod(f[time])};
    rows.push_back(std::move(r));
  }
  return rows;
}

Figure participation_figure(const std::vector<ClientRow>& rows, std::uint32_t rounds, std::uint32_t clients,
                            const fs::path& dir) {
  const std::uint32_t shown = std::min<std::uint32_t>(clients, kFigureClients);
  std::vector<std::vector<int>> grid(rounds, std::vector<int>(shown, not_eligible));
  for (const auto& r : rows)
    if (r.round >= 1 && r.round <= rounds && r.client < shown)
      grid[r.round - 1][r.client] = std::max(grid[r.round - 1][r.client], event_code(r.event, r.detail));
  std::ostringstream data;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    for (std::uint32_t c = 0; c < shown; ++c) data << round + 1 << ' ' << c << ' ' << grid[round][c] << '\n';
    data << '\n';
  }
  write_text_file(dir / "participation.dat", data.str());
  const std::string title =
      "Participation: client x round" +
      (shown < clients ? " (first " + std::to_string(shown) + " of " + std::to_string(clients) + " clients)"
                       : std::string(""));
  return {"participation", title,
          "set title '" + title +
              "'\nset xlabel 'round'\nset ylabel 'client'\nunset key\nunset grid\n"
              "set rmargin at screen 0.8\nset cbrange [-0.5:8.5]\nset palette maxcolors 9\n"
              "set palette defined (0 '#ffffff', 1 '#bdbdbd', 2 '#e3ecf7', 3 '#ffd54f', 4 '#2e7d32', 5 '#fb8c00', "
              "6 '#c62828', 7 '#6a1b9a', 8 '#26a69a')\n"
              "set cbtics ('busy' 0, 'offline' 1, 'online, idle' 2, 'selected' 3, 'finished' 4, 'late' 5, "
              "'dropped' 6, 'failed' 7, 'stale' 8)\n"
              "set xrange [0.5:" +
              std::to_string(rounds) + ".5]\nset yrange [-0.5:" + std::to_string(shown) +
              "-0.5]\n"
              "plot 'participation.dat' using 1:2:3 with image",
          1000, 600};
}

// One bar per task selected in `round`: from its selection to its outcome, coloured by outcome.
Figure timeline_figure(const std::vector<ClientRow>& rows, std::uint32_t round, const fs::path& dir,
                       const TimeUnit& unit) {
  std::map<std::uint32_t, std::vector<const ClientRow*>> by_client;
  for (const auto& r : rows)
    if (r.event != "eligible") by_client[r.client].push_back(&r);
  std::ostringstream data;
  data << "# client start_" << unit.label << " end_" << unit.label << " outcome_code\n";
  std::size_t tasks = 0;
  for (const auto& [client, events] : by_client)
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i]->event != "selected" || events[i]->round != round) continue;
      for (std::size_t j = i + 1; j < events.size(); ++j) {
        const int code = event_code(events[j]->event, "");
        if (code < finished || code == stale) continue;
        data << client << ' ' << data_number(events[i]->time / unit.seconds) << ' '
             << data_number(events[j]->time / unit.seconds) << ' ' << code << '\n';
        ++tasks;
        break;
      }
    }
  const auto name = "timeline_round_" + std::to_string(round);
  write_text_file(dir / (name + ".dat"), data.str());
  const std::string title = "Client tasks selected in round " + std::to_string(round) + " (" + std::to_string(tasks) +
                            " tasks) in virtual time";
  return {name, title,
          "set title '" + title + "'\nset xlabel 'virtual time (" + unit.label +
              ")'\nset ylabel 'client'\nunset key\n"
              "set rmargin at screen 0.85\nset cbrange [3.5:7.5]\nset palette maxcolors 4\n"
              "set palette defined (4 '#2e7d32', 5 '#fb8c00', 6 '#c62828', 7 '#6a1b9a')\n"
              "set cbtics ('finished' 4, 'late' 5, 'dropped' 6, 'failed' 7)\n"
              "plot '" +
              name + ".dat' using 2:1:($3-$2):(0):4 with vectors nohead lw 3 lc palette",
          1000, 500};
}

Figure partition_figure(const fs::path& run_dir, const fs::path& dir) {
  const auto p = json::parse(read_own_file(run_dir / "partition.json").value_or(""), nullptr, false);
  if (!p.is_object() || !p.contains("clients")) return {};
  const auto& clients = p["clients"];
  const std::size_t shown = std::min(clients.size(), kFigureClients);
  std::ostringstream data;
  std::size_t classes = 0;
  for (std::size_t c = 0; c < shown; ++c) {
    const auto h = clients[c].value("class_histogram", std::vector<double>{});
    classes = std::max(classes, h.size());
    for (std::size_t k = 0; k < h.size(); ++k) data << c << ' ' << k << ' ' << h[k] << '\n';
    data << '\n';
  }
  write_text_file(dir / "partition.dat", data.str());
  const std::string title =
      "Training samples per client and class" +
      (shown < clients.size() ? " (first " + std::to_string(shown) + " clients)" : std::string(""));
  return {"partition", title,
          "set title '" + title +
              "'\nset xlabel 'client'\nset ylabel 'class'\nunset key\nunset grid\n"
              "set palette defined (0 '#ffffff', 1 '#08306b')\nset cblabel 'samples'\n"
              "set yrange [-0.5:" +
              std::to_string(classes) + "-0.5]\nset xrange [-0.5:" + std::to_string(shown) +
              "-0.5]\n"
              "plot 'partition.dat' using 1:2:3 with image",
          1000, 450};
}

// Empty when no update was ever stale (every sync run without stale updates).
Figure staleness_figure(const std::vector<RoundReport>& metrics, const fs::path& dir) {
  std::map<std::uint64_t, std::uint64_t> counts;
  bool any = false;
  for (const auto& m : metrics)
    for (const auto s : m.staleness) {
      ++counts[s];
      any = any || s > 0;
    }
  if (!any) return {};
  std::ostringstream data;
  for (const auto& [s, n] : counts) data << s << ' ' << n << '\n';
  write_text_file(dir / "staleness.dat", data.str());
  return {"staleness", "Staleness of aggregated updates (model versions behind)",
          "set title 'Staleness of aggregated updates'\nset xlabel 'staleness (model versions)'\n"
          "set ylabel 'updates'\nunset key\nset style fill solid 0.8\nset boxwidth 0.8\n"
          "plot 'staleness.dat' using 1:2 with boxes lc rgb '#1565c0'",
          800, 450};
}

}  // namespace

std::vector<Figure> run_figures(const fs::path& run_dir, const fs::path& dir,
                                std::vector<std::uint32_t> timeline_rounds) {
  const auto metrics = read_metrics_reports(run_dir / "metrics.jsonl");
  if (metrics.empty()) return {};
  fs::create_directories(dir);
  const auto unit = time_unit_for(metrics.back().time_end);
  const bool update_drift =
      std::any_of(metrics.begin(), metrics.end(), [](const RoundReport& m) { return std::isfinite(m.update_drift); });
  write_round_data(metrics, dir, unit);
  std::vector<Figure> figures;
  const std::string points = " with linespoints pt 7 ps 0.5";
  figures.push_back(two_panels("accuracy", "Test accuracy", "accuracy (%)",
                               "plot 'evaluations.dat' using 1:3" + points + " title 'test'",
                               "plot 'evaluations.dat' using 2:3" + points + " title 'test'", unit, "right bottom"));
  figures.push_back(
      two_panels("loss", "Loss", "loss",
                 "plot 'rounds.dat' using 1:3 with lines title 'train (aggregated)', 'evaluations.dat' using 1:4" +
                     points + " title 'test'",
                 "plot 'rounds.dat' using 2:3 with lines title 'train (aggregated)', 'evaluations.dat' using 2:4" +
                     points + " title 'test'",
                 unit, "right top"));
  figures.push_back(
      {"drift", "Sampling drift: distance of label distributions",
       "set title 'Sampling drift'\nset xlabel 'round'\nset ylabel 'distance'\nset yrange [0:*]\n"
       "plot 'rounds.dat' using 1:4 with lines lw 2 lc rgb '#1565c0' title 'cohort vs population (TV)', "
       "'' using 1:5 with lines lc rgb '#64b5f6' title 'cohort vs population (JS)', "
       "'' using 1:6 with lines lw 2 lc rgb '#2e7d32' title 'window vs population (TV)', "
       "'' using 1:7 with lines lc rgb '#81c784' title 'window vs population (JS)', "
       "'' using 1:8 with lines dt 2 lw 2 lc rgb '#c62828' title 'cohort vs previous cohort (TV)'" +
           std::string(update_drift ? ", '' using 1:9 with linespoints pt 7 ps 0.5 lc rgb '#6a1b9a' title "
                                      "'cohort vs population update (relative L2)'"
                                    : ""),
       1000, 500});
  // No bias before an aggregate gave any client a share (MIFA's official-wait holds the model).
  if (std::any_of(metrics.begin(), metrics.end(), [](const auto& m) { return std::isfinite(m.participation_bias); }))
    figures.push_back(participation_bias_figure());
  const auto rounds = metrics.back().round;
  if (auto rates = participation_rate_figure(run_dir, dir, rounds); !rates.name.empty())
    figures.push_back(std::move(rates));
  if (auto served = client_accuracy_figure(metrics, run_dir, dir); !served.name.empty())
    figures.push_back(std::move(served));
  const auto rows = read_client_rows(run_dir / "clients.csv");
  const auto partition = json::parse(read_own_file(run_dir / "partition.json").value_or(""), nullptr, false);
  const auto clients = partition.is_object() ? partition.value("num_clients", 0u) : 0u;
  if (clients > 0 && rounds > 0) figures.push_back(participation_figure(rows, rounds, clients, dir));
  // By default the first round and the last: how the world looked at the start and at the end.
  if (timeline_rounds.empty())
    timeline_rounds = rounds > 1 ? std::vector<std::uint32_t>{1, rounds} : std::vector<std::uint32_t>{1};
  for (auto round : timeline_rounds) {
    if (round < 1 || round > rounds)
      throw UserError("--rounds " + std::to_string(round) + ": the run has rounds 1 to " + std::to_string(rounds));
    figures.push_back(timeline_figure(rows, round, dir, unit));
  }
  for (auto f : {partition_figure(run_dir, dir), staleness_figure(metrics, dir), privacy_figure(metrics, dir),
                 secure_aggregation_figure(metrics, dir), edge_fate_figure(metrics, dir),
                 edge_drift_figure(metrics, dir), edge_time_figure(metrics, dir), edge_clients_figure(metrics, dir)})
    if (!f.name.empty()) figures.push_back(std::move(f));
  return figures;
}

}  // namespace drift
