#pragma once
// A private run's epsilon over its aggregations (docs/outputs.md#privacy): the guarantee, the
// sampling design's amplified figure and the busiest client's own.
#include <filesystem>
#include <vector>

#include "engine/metrics/round_report.hpp"
#include "engine/study/gnuplot.hpp"
#include "engine/study/study_results.hpp"

namespace drift {

// privacy.dat (round, epsilon, epsilon_amplified, epsilon_max_client) beside the figure; an
// empty Figure for a run without privacy.
Figure privacy_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir);

// A run under secure aggregation: the survivors of each stage per round against the threshold,
// aborted rounds marked; secure_aggregation.dat beside it. Empty without the protocol.
Figure secure_aggregation_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir);

// A study's accuracy against epsilon: one point per finished private run (its last-5 accuracy
// at its guarantee, and hollow at the figure a Poisson accountant prints), a colour per cell;
// privacy_runs.dat beside it. An empty Figure when no run of the study is private.
Figure accuracy_vs_epsilon_figure(const StudyTable& table, const std::filesystem::path& dir);

}  // namespace drift
