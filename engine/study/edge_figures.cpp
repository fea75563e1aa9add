#include "engine/study/edge_figures.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace drift {
namespace {

bool hierarchical(const std::vector<RoundReport>& metrics) {
  return std::any_of(metrics.begin(), metrics.end(), [](const RoundReport& m) { return !m.edge_updates.empty(); });
}

// The edges' names in edge order from the run's edges.csv (beside the figures' folder); empty
// names for numbered edges.
std::vector<std::string> edge_names(const std::filesystem::path& figures) {
  std::ifstream in(figures.parent_path() / "edges.csv");
  std::string line;
  std::vector<std::string> names;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const auto first = line.find(',');
    if (first == std::string::npos) break;
    const auto second = line.find(',', first + 1);
    names.push_back(line.substr(first + 1, second - first - 1));
  }
  return names;
}

// "set ytics ('city' 0, 'village' 1)" where the edges are named.
std::string named_edge_tics(const std::filesystem::path& figures) {
  std::string tics;
  const auto names = edge_names(figures);
  for (std::size_t e = 0; e < names.size(); ++e) {
    if (names[e].empty()) return "";
    tics += (tics.empty() ? "" : ", ") + ("'" + names[e] + "' " + std::to_string(e));
  }
  return tics.empty() ? "" : "set ytics (" + tics + ")\n";
}

}  // namespace

Figure edge_fate_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir) {
  if (!hierarchical(metrics)) return {};
  std::ostringstream data;
  data << "# round edge fate (1 reported, 2 idle, 3 late, 4 lost) updates\n";
  std::size_t edges = 0;
  for (const auto& m : metrics) {
    edges = std::max(edges, m.edge_updates.size());
    int fate = 1;
    for (const auto* list : {&m.edges_reported, &m.edges_idle, &m.edges_late, &m.edges_lost}) {
      for (auto e : *list)
        data << m.round << ' ' << e << ' ' << fate << ' ' << (e < m.edge_updates.size() ? m.edge_updates[e] : 0)
             << '\n';
      ++fate;
    }
  }
  write_text_file(dir / "edges.dat", data.str());
  const auto series = [](int fate, const std::string& style, const std::string& title) {
    return "'edges.dat' using 1:($3 == " + std::to_string(fate) + " ? $2 : 1/0) " + style + " title '" + title + "'";
  };
  return {"edges",
          "Edges per cloud round: which reached the cloud (reported), had nothing to send (idle), arrived after the "
          "cloud's deadline (late) or went offline first (lost); an empty cell was not sampled",
          "set title 'Edges per cloud round'\nset xlabel 'cloud round'\nset ylabel 'edge'\nset yrange [-0.5:" +
              std::to_string(static_cast<double>(edges) - 0.5) + "]\n" + named_edge_tics(dir) +
              "set key outside right top\nplot " + series(1, "with points pt 5 ps 1.2 lc rgb '#1565c0'", "reported") +
              ", " + series(2, "with points pt 4 ps 1.2 lc rgb '#9e9e9e'", "idle") + ", " +
              series(3, "with points pt 9 ps 1.2 lc rgb '#ef6c00'", "late") + ", " +
              series(4, "with points pt 2 ps 1.2 lw 2 lc rgb '#c62828'", "lost"),
          1000, std::clamp(200 + 24 * static_cast<int>(edges), 350, 900)};
}

Figure edge_drift_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir) {
  if (!hierarchical(metrics)) return {};
  std::ostringstream data;
  data << "# round cloud_cohort_tv mean_edge_cohort_tv reported_edges_tv\n";
  bool any = false;
  for (const auto& m : metrics) {
    double sum = 0.0;
    std::size_t n = 0;
    for (double tv : m.edge_cohort_tv)
      if (std::isfinite(tv)) sum += tv, ++n;
    any = any || n > 0;
    data << m.round << ' ' << data_number(m.cohort_tv) << ' ' << data_number(n ? sum / n : std::nan("")) << ' '
         << data_number(m.edge_reported_tv) << '\n';
  }
  if (!any) return {};
  write_text_file(dir / "edge_drift.dat", data.str());
  return {
      "edge_drift",
      "Sampling drift at both tiers: the clients that reached the global model against the population; the "
      "clients of the edges that reported against the population (the cloud tier); each edge's aggregated "
      "clients against its own clients, averaged over edges (the edge tier)",
      "set title 'Sampling drift per tier (total variation)'\nset xlabel 'cloud round'\nset ylabel 'distance'\n"
      "set yrange [0:*]\nset key inside left bottom\n"
      "plot 'edge_drift.dat' using 1:2 with lines lw 2 lc rgb '#1565c0' title 'aggregated clients vs population', "
      "'' using 1:4 with lines lw 2 lc rgb '#c62828' title 'cloud tier: the reporting edges'' clients vs population', "
      "'' using 1:3 with lines lw 2 lc rgb '#2e7d32' title 'edge tier: aggregated vs the edge''s clients (mean)'",
      1000, 500};
}

Figure edge_time_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir) {
  if (!hierarchical(metrics)) return {};
  std::ostringstream data;
  data << "# round cloud_round_seconds mean_edge_busy max_edge_busy\n";
  bool any = false;
  for (const auto& m : metrics) {
    double sum = 0.0, most = 0.0;
    std::size_t n = 0;
    for (double busy : m.edge_busy_seconds)
      if (std::isfinite(busy)) sum += busy, most = std::max(most, busy), ++n;
    any = any || n > 0;
    const double nan = std::nan("");
    data << m.round << ' ' << data_number(m.time_end - m.time_start) << ' ' << data_number(n ? sum / n : nan) << ' '
         << data_number(n ? most : nan) << '\n';
  }
  if (!any) return {};  // metrics written before edges reported their time
  write_text_file(dir / "edge_time.dat", data.str());
  return {"edge_time",
          "Virtual time per tier: each cloud round's length, and the seconds the sampled edges spent in their edge "
          "rounds (mean and slowest); the rest of a cloud round is the edge-cloud link, waiting for an edge to come "
          "back (keep_work) or for the cloud's deadline",
          "set title 'Virtual time per tier'\nset xlabel 'cloud round'\nset ylabel 'virtual seconds'\n"
          "set yrange [0:*]\nset key inside left top\n"
          "plot 'edge_time.dat' using 1:2 with lines lw 2 lc rgb '#1565c0' title 'cloud round', "
          "'' using 1:4 with lines lw 2 lc rgb '#ef6c00' title 'edge rounds: the slowest edge', "
          "'' using 1:3 with lines lw 2 lc rgb '#2e7d32' title 'edge rounds: mean over sampled edges'",
          1000, 500};
}

// Lines per edge, in the edges' own order, with names from edges.csv where they are named.
Figure edge_clients_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir) {
  const bool moved =
      std::any_of(metrics.begin(), metrics.end(), [](const RoundReport& m) { return !m.edge_clients.empty(); });
  if (!moved) return {};
  std::ostringstream data;
  data << "# round clients_of_edge_0 clients_of_edge_1 ...\n";
  std::size_t edges = 0;
  for (const auto& m : metrics) {
    if (m.edge_clients.empty()) continue;
    edges = std::max(edges, m.edge_clients.size());
    data << m.round;
    for (auto n : m.edge_clients) data << ' ' << n;
    data << '\n';
  }
  write_text_file(dir / "edge_clients.dat", data.str());
  const auto names = edge_names(dir);
  std::string plot = "plot ";
  for (std::size_t e = 0; e < edges; ++e)
    plot += std::string(e ? ", " : "") + "'edge_clients.dat' using 1:" + std::to_string(e + 2) +
            " with steps lw 2 title '" + (e < names.size() && !names[e].empty() ? names[e] : std::to_string(e)) + "'";
  return {"edge_clients",
          "Clients per edge: how the timeline's moves ([[timeline]] action = move) shift the clients between edges, "
          "cloud round by cloud round; an edge's weight at the cloud follows its clients' samples",
          "set title 'Clients per edge'\nset xlabel 'cloud round'\nset ylabel 'clients'\nset yrange [0:*]\n"
          "set key outside right top title 'edge'\n" +
              plot,
          1000, 500};
}

}  // namespace drift
