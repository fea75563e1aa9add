#include "engine/study/privacy_figures.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace drift {

Figure privacy_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir) {
  if (metrics.empty() || !metrics.back().dp) return {};
  std::ostringstream data;
  data << "# round epsilon epsilon_amplified epsilon_max_client\n";
  bool amplified = false;
  for (const auto& m : metrics) {
    data << m.round << ' ' << data_number(m.dp_epsilon) << ' ' << data_number(m.dp_epsilon_amplified) << ' '
         << data_number(m.dp_epsilon_max_client) << '\n';
    amplified = amplified || std::isfinite(m.dp_epsilon_amplified);
  }
  write_text_file(dir / "privacy.dat", data.str());
  std::string plot =
      "plot 'privacy.dat' using 1:2 with lines lw 3 lc rgb '#000000' title 'guarantee (epsilon)', "
      "'' using 1:4 with lines lw 2 dt 2 lc rgb '#c62828' title 'busiest client, no amplification'";
  if (amplified) plot += ", '' using 1:3 with lines lw 2 lc rgb '#1565c0' title 'sampling design, amplified'";
  return {"privacy",
          "Privacy spent: epsilon after each aggregation (the guarantee, the busiest client's own, and the sampling "
          "design's amplified figure, which holds only where summary.json says so)",
          "set title 'Privacy spent (epsilon at the run delta)'\nset xlabel 'round'\nset ylabel 'epsilon'\n"
          "set yrange [0:*]\nset key inside left top\n" +
              plot,
          1000, 500};
}

Figure secure_aggregation_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir) {
  if (std::none_of(metrics.begin(), metrics.end(), [](const RoundReport& m) { return m.sa; })) return {};
  std::ostringstream data;
  // NaN, not the missing marker: gnuplot joins a line across a missing value, but breaks it at
  // NaN, so a stage an aborted round never reached leaves a gap.
  data << "# round U1 U2 U3 U4 U5 threshold aborted_at\n";
  for (const auto& m : metrics) {
    if (!m.sa) continue;
    data << m.round;
    for (std::size_t s = 0; s < 5; ++s)
      data << ' ' << (s < m.sa_survivors.size() ? std::to_string(m.sa_survivors[s]) : "NaN");
    data << ' ' << m.sa_threshold << ' '
         << (m.sa_aborted && !m.sa_survivors.empty() ? std::to_string(m.sa_survivors.back()) : "NaN") << '\n';
  }
  write_text_file(dir / "secure_aggregation.dat", data.str());
  return {"secure_aggregation",
          "Secure aggregation: the clients left after each stage of the protocol in each round, against the "
          "threshold below which a round aborts (crosses: aborted rounds, at the stage that failed)",
          "set title 'Secure aggregation: survivors per stage'\nset xlabel 'round'\nset ylabel 'clients'\n"
          "set yrange [0:*]\nset key outside right top\n"
          "plot 'secure_aggregation.dat' using 1:2 with linespoints lw 2 lc rgb '#90caf9' title 'U1 keys advertised', "
          "'' using 1:3 with linespoints lw 2 lc rgb '#42a5f5' title 'U2 keys shared', "
          "'' using 1:4 with linespoints lw 3 lc rgb '#1565c0' title 'U3 inputs in the sum', "
          "'' using 1:6 with linespoints lw 2 lc rgb '#2e7d32' title 'U5 unmasked', "
          "'' using 1:7 with lines lw 2 dt 2 lc rgb '#000000' title 'threshold', "
          "'' using 1:8 with points pt 2 ps 2 lw 3 lc rgb '#c62828' title 'aborted'",
          1000, 500};
}

Figure accuracy_vs_epsilon_figure(const StudyTable& table, const std::filesystem::path& dir) {
  // Cells in study order, numbered for the data file; only those with a private run are drawn.
  std::vector<std::string> cells;
  std::vector<bool> drawn;
  std::vector<std::string> current;
  std::ostringstream data;
  data << "# cell epsilon epsilon_amplified last5_accuracy_percent\n";
  for (const auto& r : table.runs) {
    if (cells.empty() || r.levels != current) {
      current = r.levels;
      cells.push_back(legend_label(table, r.levels));
      drawn.push_back(false);
    }
    const auto& s = r.summary;
    if (!r.finished() || r.diverged() || !std::isfinite(s.epsilon)) continue;
    drawn.back() = true;
    data << cells.size() << ' ' << data_number(s.epsilon) << ' ' << data_number(s.epsilon_amplified) << ' '
         << data_number(100.0 * s.last5_mean_accuracy) << '\n';
  }
  if (std::find(drawn.begin(), drawn.end(), true) == drawn.end()) return {};
  write_text_file(dir / "privacy_runs.dat", data.str());
  std::string plot = "plot ";
  for (std::size_t c = 0, colour = 1; c < cells.size(); ++c) {
    if (!drawn[c]) continue;
    const auto index = std::to_string(c + 1), lc = std::to_string(colour++);
    plot += (plot.size() > 5 ? ", " : "") + std::string("'privacy_runs.dat' using ($1 == ") + index +
            " ? $2 : 1/0):4 with points pt 7 ps 1.5 lc " + lc + " title " + gnuplot_quoted(cells[c]) +
            ", '' using ($1 == " + index + " ? $3 : 1/0):4 with points pt 6 ps 1.5 lc " + lc + " notitle";
  }
  return {
      "accuracy_vs_epsilon",
      "Accuracy against epsilon: each private run's last-5 accuracy at its guarantee (filled) and at the "
      "figure a Poisson accountant prints (hollow)",
      "set title 'Accuracy against epsilon (filled: the guarantee; hollow: a Poisson accountant)'\n"
      "set xlabel 'epsilon (log scale)'\nset logscale x\nset ylabel 'last-5 accuracy (%)'\nset key tmargin horizontal\n"
      "set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n" +
          plot,
      1000, 550};
}

}  // namespace drift
