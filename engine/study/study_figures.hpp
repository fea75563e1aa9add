#pragma once
// The figures of a study: test accuracy against rounds and against virtual time, and the
// participation bias against rounds, one line per cell (a combination of factor levels), the
// mean over seeds with a ± one standard deviation band. Diverged runs are left out of the bands
// and counted in the legend.
#include <filesystem>
#include <vector>

#include "engine/study/gnuplot.hpp"
#include "engine/study/study_results.hpp"

namespace drift {

// Points on the virtual-time axis of the study figure.
inline constexpr std::size_t kTimeGridPoints = 200;

std::vector<Figure> study_figures(const StudyTable& table, const std::filesystem::path& study_dir,
                                  const std::filesystem::path& figures_dir);

struct Band {
  std::vector<double> x, mean, std;  // NaN where no seed has a value yet
};

// Accuracy per evaluated round, mean ± std over the runs that evaluated that round.
Band band_by_round(const std::vector<std::vector<RoundFacts>>& runs);
// Participation bias per round (against n_i / n, or with `uniform` against 1 / N), mean ± std
// over the runs where it is defined.
Band bias_band_by_round(const std::vector<std::vector<RoundFacts>>& runs, bool uniform);
// Accuracy at each time of `grid` (that of the last evaluation at or before it), mean ± std
// over the runs that had been evaluated by then.
Band band_by_time(const std::vector<std::vector<RoundFacts>>& runs, const std::vector<double>& grid);

}  // namespace drift
