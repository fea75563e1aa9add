#include "engine/study/participation_figures.hpp"

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

}  // namespace drift
