#include "engine/study/participation_figures.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace drift {
namespace fs = std::filesystem;

namespace {

struct ClientRate {
  double probability = std::nan("");  // p_i; NaN where its availability defines none
  double samples = 0.0;
  double aggregated = 0.0;
};

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream s(line);
  for (std::string field; std::getline(s, field, ',');) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// population.csv's sample counts (third column, before any quoted field) and p_i (the last
// column; a quoted trace list may hold commas, so it is read from the end). Empty when missing.
std::vector<ClientRate> read_population(const fs::path& file) {
  std::ifstream in(file);
  std::vector<ClientRate> clients;
  std::string line;
  if (!std::getline(in, line)) return clients;  // header
  while (std::getline(in, line)) {
    const auto fields = split_commas(line);
    if (fields.size() < 3) break;  // a last line cut short
    ClientRate c;
    c.samples = std::stod(fields[2]);
    const auto last = line.substr(line.rfind(',') + 1);
    if (!last.empty()) c.probability = std::stod(last);
    clients.push_back(c);
  }
  return clients;
}

// Adds participation.csv's `aggregated` column; false when the file is missing or another size.
bool read_aggregated(const fs::path& file, std::vector<ClientRate>& clients) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return false;
  std::size_t c = 0;
  for (; std::getline(in, line) && c < clients.size(); ++c) {
    const auto fields = split_commas(line);
    if (fields.size() < 3) return false;
    clients[c].aggregated = std::stod(fields[2]);
  }
  return c == clients.size();
}

}  // namespace

Figure participation_bias_figure() {
  return {"participation_bias",
          "Participation bias: the aggregates' client shares over the drift window against the objective's weights",
          "set title 'Participation bias (shares over the drift window vs the objective)'\nset xlabel 'round'\n"
          "set ylabel 'total variation'\nset yrange [0:*]\n"
          "plot 'rounds.dat' using 1:10 with lines lw 2 lc rgb '#1565c0' title 'vs data weights n_i / n', "
          "'' using 1:11 with lines lw 2 lc rgb '#c62828' title 'vs uniform 1 / N'",
          1000, 500};
}

Figure participation_rate_figure(const fs::path& run_dir, const fs::path& dir, std::uint32_t aggregations) {
  auto clients = read_population(run_dir / "population.csv");
  if (clients.empty() || aggregations == 0 || !read_aggregated(run_dir / "participation.csv", clients)) return {};
  double total = 0.0;
  bool any_probability = false;
  for (const auto& c : clients) {
    total += c.samples;
    any_probability = any_probability || std::isfinite(c.probability);
  }
  std::ostringstream data;
  data << "# client participation_probability data_weight aggregated rate\n";
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const auto& c = clients[i];
    data << i << ' ' << data_number(c.probability) << ' ' << data_number(total > 0.0 ? c.samples / total : 0.0) << ' '
         << c.aggregated << ' ' << data_number(c.aggregated / aggregations) << '\n';
  }
  write_text_file(dir / "participation_rates.dat", data.str());
  // A rate is in [0, 1]; the margin keeps the clients at 0 and 1 off the frame.
  const std::string points = " with points pt 7 ps 0.6 lc rgb '#1565c0' notitle";
  const std::string axes = "set yrange [-0.04:1.04]\nset offsets graph 0.03, graph 0.03, 0, 0\n";
  const std::string by_weight =
      "unset key\nset xlabel 'data weight n_i / n'\nset ylabel 'empirical rate'\nplot 'participation_rates.dat' using "
      "3:5" +
      points;
  if (!any_probability)
    return {"participation_rates", "Each client's share of aggregations against its data weight",
            "set title 'Participation rate (aggregations taken part in / aggregations)'\n" + axes + by_weight, 800,
            500};
  return {"participation_rates", "Each client's empirical participation rate against its p_i and its data weight",
          "set multiplot layout 1,2 title 'Participation rate (aggregations taken part in / aggregations)'\n" + axes +
              "unset key\nset title 'dashed: rate = p_i'\nset xlabel 'participation probability p_i'\nset ylabel "
              "'empirical rate'\n"
              "plot 'participation_rates.dat' using 2:5" +
              points + ", x with lines dt 2 lc rgb '#757575' notitle\nunset title\n" + by_weight + "\nunset multiplot",
          1100, 450};
}

namespace {

// population.csv's group of each client ("" where it has none), in client order.
std::vector<std::string> read_groups(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> groups;
  std::string line;
  if (!std::getline(in, line)) return groups;  // header
  while (std::getline(in, line)) {
    const auto fields = split_commas(line);
    if (fields.size() < 2) break;
    groups.push_back(fields[1]);
  }
  return groups;
}

// One series of dots per group, in the order groups first appear.
std::string client_dots(const std::vector<std::string>& names) {
  static const char* colours[] = {"#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037"};
  std::string plot = "plot ";
  for (std::size_t g = 0; g < names.size(); ++g) {
    if (g > 0) plot += ", ";
    plot += "'client_accuracy.dat' using ($4 == " + std::to_string(g) + " ? $2 : 1/0):($3 * 100) with points pt 7 " +
            "ps 0.8 lc rgb '" + colours[g % 7] + "' title " + gnuplot_quoted(names[g].empty() ? "clients" : names[g]);
  }
  return plot;
}

}  // namespace

Figure client_accuracy_figure(const std::vector<RoundReport>& metrics, const fs::path& run_dir, const fs::path& dir) {
  std::ostringstream summary;
  summary << "# round mean weighted p10 worst participation_correlation held_out (accuracies in %)\n";
  const RoundReport* last = nullptr;
  for (const auto& m : metrics) {
    if (!m.client_summary) continue;
    last = &m;
    summary << m.round << ' ' << data_number(100 * m.client_accuracy_mean) << ' '
            << data_number(100 * m.client_accuracy_weighted) << ' ' << data_number(100 * m.client_accuracy_p10) << ' '
            << data_number(100 * m.client_accuracy_worst) << ' ' << data_number(m.client_participation_correlation)
            << ' ' << data_number(100 * m.client_accuracy_held_out) << '\n';
  }
  if (last == nullptr || last->round == 0) return {};
  write_text_file(dir / "client_accuracy_summary.dat", summary.str());
  const auto groups = read_groups(run_dir / "population.csv");
  std::vector<std::string> names;
  std::ostringstream dots;
  dots << "# client participation_rate accuracy group (at round " << last->round << ")\n";
  const auto& held = last->held_out_clients;
  for (std::size_t c = 0; c < last->client_accuracy.size(); ++c) {
    // Held-out clients (never eligible) are a series of their own, whatever their group.
    const bool held_out = std::find(held.begin(), held.end(), c) != held.end();
    const auto group = held_out ? std::string("held out") : c < groups.size() ? groups[c] : std::string();
    auto at = std::find(names.begin(), names.end(), group);
    if (at == names.end()) at = names.insert(names.end(), group);
    const double taken = c < last->client_participations.size() ? last->client_participations[c] : std::nan("");
    dots << c << ' ' << data_number(taken / last->round) << ' ' << data_number(last->client_accuracy[c]) << ' '
         << (at - names.begin()) << '\n';
  }
  write_text_file(dir / "client_accuracy.dat", dots.str());
  const auto correlation = last->client_participation_correlation;
  const auto round = std::to_string(last->round);
  return {
      "client_accuracy",
      "Who the global model serves: each client's accuracy on its own held-out split against its participation "
      "rate (round " +
          round + "), and the spread of those accuracies over rounds",
      "set multiplot layout 1,2\nset title 'Round " + round + ": accuracy by client (correlation with rate " +
          (std::isfinite(correlation) ? std::to_string(correlation).substr(0, 5) : std::string("undefined")) +
          ")'\nset xlabel 'participation rate so far'\nset ylabel 'accuracy on own split (%)'\n"
          "set yrange [-3:103]\nset offsets graph 0.03, graph 0.03, 0, 0\n" +
          (names.size() > 1 ? "set key below\nset bmargin 7\n" : "unset key\n") + client_dots(names) +
          "\nset title 'Accuracy across clients'\nset xlabel 'round'\nset offsets 0, 0, 0, 0\n"
          "set key below maxrows 2\nset bmargin 7\n"
          "plot 'client_accuracy_summary.dat' using 1:2 with linespoints pt 7 ps 0.5 lw 2 lc rgb '#1565c0' "
          "title 'mean', '' using 1:3 with lines dt 2 lc rgb '#2e7d32' title 'weighted by samples', "
          "'' using 1:4 with linespoints pt 7 ps 0.5 lc rgb '#ef6c00' title '10th percentile', "
          "'' using 1:5 with linespoints pt 7 ps 0.5 lc rgb '#c62828' title 'worst'" +
          (held.empty() ? "" : ", '' using 1:7 with linespoints pt 6 ps 0.6 lc rgb '#6a1b9a' title 'held out (mean)'") +
          "\nunset multiplot",
      1200, 480};
}

}  // namespace drift
