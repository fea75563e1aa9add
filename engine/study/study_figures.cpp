#include "engine/study/study_figures.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "engine/metrics/comparison.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "engine/study/privacy_figures.hpp"

namespace drift {
namespace fs = std::filesystem;

namespace {

void add_point(Band& band, double x, const std::vector<double>& values) {
  band.x.push_back(x);
  if (values.empty()) {
    band.mean.push_back(std::nan(""));
    band.std.push_back(std::nan(""));
    return;
  }
  const auto ms = mean_std(values);
  band.mean.push_back(ms.mean);
  band.std.push_back(ms.std);
}

// Accuracy bands in percent (`y_scale` 100), distances as they are (1).
std::string band_data(const Band& b, double x_scale, double y_scale = 100.0) {
  std::ostringstream out;
  out << (y_scale == 100.0 ? "# x mean_percent std_percent\n" : "# x mean std\n");
  for (std::size_t i = 0; i < b.x.size(); ++i)
    out << data_number(b.x[i] * x_scale) << ' ' << data_number(y_scale * b.mean[i]) << ' '
        << data_number(y_scale * b.std[i]) << '\n';
  return out.str();
}

// gnuplot's default palette has 8 colours: past them, cells take the next dash pattern.
constexpr std::size_t kColours = 8;
// Past this many cells the key goes below the plot, two columns wide, so that the cells' long
// names do not squeeze the plot into a sliver.
constexpr std::size_t kKeyBeside = 6;

std::string band_plot(const std::vector<std::string>& files, const std::vector<std::string>& titles) {
  std::string plot = files.size() > kKeyBeside ? "set key below maxcols 2\nplot " : "plot ";
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto colour = std::to_string(i % kColours + 1);
    const auto dashes = std::to_string(i / kColours % 4 + 1);
    plot += std::string(i ? ", \\\n     " : "") + "'" + files[i] + "' using 1:($2-$3):($2+$3) with filledcurves lc " +
            colour + " fs transparent solid 0.15 notitle, '" + files[i] + "' using 1:2 with lines lw 2 lc " + colour +
            " dt " + dashes + " title " + gnuplot_quoted(titles[i]);
  }
  return plot;
}

// The extra height a key below the plot needs: a line a cell (long names keep it to one column).
int key_height(std::size_t cells) { return cells > kKeyBeside ? 18 * static_cast<int>(cells) + 30 : 0; }

Figure band_figure(const std::string& name, const std::string& x_label, const std::vector<std::string>& files,
                   const std::vector<std::string>& titles) {
  const auto plot = band_plot(files, titles);
  return {name, "Test accuracy, mean ± std over seeds, against " + x_label,
          "set title 'Test accuracy (mean ± std over seeds)'\nset xlabel '" + x_label +
              "'\nset ylabel 'accuracy (%)'\n" + plot,
          1100, 500 + key_height(files.size())};
}

// The participation bias against both objectives, one above the other, one band per cell.
// Stacked, each panel keeps the accuracy figure's width beside the cells' legend; side by
// side, long cell names left each panel a sliver.
Figure bias_figure(const std::vector<std::string>& sample_files, const std::vector<std::string>& uniform_files,
                   const std::vector<std::string>& titles) {
  return {"participation_bias_by_round", "Participation bias, mean ± std over seeds, against rounds",
          "set multiplot layout 2,1 title 'Participation bias: shares over the drift window vs the objective (mean ± "
          "std over seeds)'\nset xlabel 'round'\nset ylabel 'total variation'\nset yrange [0:*]\n"
          "set title 'vs data weights n_i / n'\n" +
              band_plot(sample_files, titles) + "\nset title 'vs uniform 1 / N'\n" + band_plot(uniform_files, titles) +
              "\nunset multiplot",
          1100, 900 + 2 * key_height(titles.size())};
}

// Per round, mean ± std of `value` over the runs where it has one.
template <class Value>
Band band_of_rounds(const std::vector<std::vector<RoundFacts>>& runs, Value&& value) {
  std::map<std::uint32_t, std::vector<double>> by_round;
  for (const auto& run : runs)
    for (const auto& f : run)
      if (const std::optional<double> v = value(f)) by_round[f.round].push_back(*v);
  Band band;
  for (const auto& [round, values] : by_round) add_point(band, round, values);
  return band;
}

}  // namespace

Band band_by_round(const std::vector<std::vector<RoundFacts>>& runs) {
  return band_of_rounds(runs,
                        [](const RoundFacts& f) { return f.evaluated ? std::optional(f.accuracy) : std::nullopt; });
}

Band bias_band_by_round(const std::vector<std::vector<RoundFacts>>& runs, bool uniform) {
  return band_of_rounds(runs, [uniform](const RoundFacts& f) {
    const double bias = uniform ? f.participation_bias_uniform : f.participation_bias;
    return std::isfinite(bias) ? std::optional(bias) : std::nullopt;
  });
}

// A cell's line ends where its longest run ends (a run that ended earlier keeps its final
// accuracy until then), not at the study's longest cell.
Band band_by_time(const std::vector<std::vector<RoundFacts>>& runs, const std::vector<double>& grid) {
  double cell_end = 0.0;
  for (const auto& run : runs)
    if (!run.empty()) cell_end = std::max(cell_end, run.back().time_end);
  std::vector<double> times;
  for (double t : grid)
    if (t < cell_end) times.push_back(t);
  times.push_back(cell_end);
  Band band;
  for (double t : times) {
    std::vector<double> values;
    for (const auto& run : runs) {
      std::optional<double> at;
      for (const auto& f : run)
        if (f.evaluated && f.time_end <= t) at = f.accuracy;
      if (at) values.push_back(*at);
    }
    add_point(band, t, values);
  }
  return band;
}

std::vector<Figure> study_figures(const StudyTable& table, const fs::path& study_dir, const fs::path& dir) {
  // Runs by cell, in cell order; diverged and unfinished runs are counted, not drawn.
  std::vector<std::pair<std::string, std::vector<std::vector<RoundFacts>>>> cells;
  std::vector<std::size_t> diverged;
  std::vector<std::string> current;
  double end = 0.0;
  for (const auto& r : table.runs) {
    if (cells.empty() || r.levels != current) {
      current = r.levels;
      cells.push_back({legend_label(table, r.levels), {}});
      diverged.push_back(0);
    }
    if (!r.finished()) continue;
    if (r.diverged()) {
      ++diverged.back();
      continue;
    }
    cells.back().second.push_back(read_metrics_file(study_dir / r.path / "metrics.jsonl"));
    end = std::max(end, r.summary.virtual_time);
  }
  if (cells.empty()) return {};
  fs::create_directories(dir);
  std::vector<double> grid;
  for (std::size_t i = 0; i <= kTimeGridPoints; ++i)
    grid.push_back(end * static_cast<double>(i) / static_cast<double>(kTimeGridPoints));
  const auto unit = time_unit_for(end);
  std::vector<std::string> round_files, time_files, titles, bias_files, uniform_bias_files;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const auto& [label, runs] = cells[c];
    const auto stem = "cell_" + std::to_string(c + 1);
    write_text_file(dir / (stem + "_rounds.dat"), band_data(band_by_round(runs), 1.0));
    write_text_file(dir / (stem + "_time.dat"), band_data(band_by_time(runs, grid), 1.0 / unit.seconds));
    write_text_file(dir / (stem + "_bias.dat"), band_data(bias_band_by_round(runs, false), 1.0, 1.0));
    write_text_file(dir / (stem + "_bias_uniform.dat"), band_data(bias_band_by_round(runs, true), 1.0, 1.0));
    bias_files.push_back(stem + "_bias.dat");
    uniform_bias_files.push_back(stem + "_bias_uniform.dat");
    round_files.push_back(stem + "_rounds.dat");
    time_files.push_back(stem + "_time.dat");
    titles.push_back(label + " (" + std::to_string(runs.size()) + " seeds" +
                     (diverged[c] ? ", " + std::to_string(diverged[c]) + " diverged" : "") + ")");
  }
  std::vector<Figure> figures{band_figure("accuracy_by_round", "round", round_files, titles),
                              band_figure("accuracy_by_time", "virtual time (" + unit.label + ")", time_files, titles),
                              bias_figure(bias_files, uniform_bias_files, titles)};
  if (auto privacy = accuracy_vs_epsilon_figure(table, dir); !privacy.name.empty()) figures.push_back(privacy);
  return figures;
}

}  // namespace drift
