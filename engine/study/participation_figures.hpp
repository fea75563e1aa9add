#pragma once
// The participation diagnostics of a run (docs/outputs.md#participation-diagnostics): how far
// the shares the aggregates gave clients are from the objective's weights, round by round, and
// each client's empirical participation rate against its participation probability p_i and its
// data weight.
#include <cstdint>
#include <filesystem>

#include "engine/study/gnuplot.hpp"

namespace drift {

// The bias over rounds, drawn from the rounds.dat that run_figures writes beside it.
Figure participation_bias_figure();

// participation_rates.dat (client, p_i or "?", data weight n_i / n, aggregations taken part in,
// rate = those / `aggregations`) from the run's population.csv and participation.csv, and the
// figure of rate against p_i (where any client has one) and against data weight. An empty
// Figure when either file is missing: participation.csv is written when the run ends.
Figure participation_rate_figure(const std::filesystem::path& run_dir, const std::filesystem::path& dir,
                                 std::uint32_t aggregations);

}  // namespace drift
