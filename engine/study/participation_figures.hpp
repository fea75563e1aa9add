#pragma once
// The participation diagnostics of a run (docs/outputs.md#participation-diagnostics): how far
// the shares the aggregates gave clients are from the objective's weights, round by round, and
// each client's empirical participation rate against its participation probability p_i and its
// data weight; and who the global model serves: each client's accuracy against its rate.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "engine/metrics/round_report.hpp"

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

// evaluation.per_client: each client's accuracy under the global model against its participation
// rate so far, at the run's last per-client evaluation, one dot per client coloured by its group
// (population.csv), beside the accuracies' mean, weighted mean, 10th percentile and worst over
// rounds. Writes client_accuracy.dat and client_accuracy_summary.dat; an empty Figure when the
// run measured none.
Figure client_accuracy_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& run_dir,
                              const std::filesystem::path& dir);

}  // namespace drift
