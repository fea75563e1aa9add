#pragma once
// A hierarchical run's edges (docs/hierarchy.md): which edge reached the cloud in each cloud
// round, and sampling drift at both tiers.
#include <filesystem>
#include <vector>

#include "engine/metrics/round_report.hpp"
#include "engine/study/gnuplot.hpp"

namespace drift {

// Each sampled edge's fate per cloud round (reported, idle, late, lost), edges.dat beside it;
// an empty Figure for a flat run.
Figure edge_fate_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir);

// Per cloud round: the aggregated clients' labels against the population's, the reporting
// edges' clients against the population's (drift from which edges reached the cloud), and the
// mean over edges of each edge's aggregated clients against its own clients (drift inside the
// edges); edge_drift.dat beside it. Empty for a flat run or one without label histograms.
Figure edge_drift_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir);

// Per cloud round: its length in virtual time, and the mean and longest time the sampled edges
// spent in their edge rounds (the edge tier); edge_time.dat beside it. Empty for a flat run.
Figure edge_time_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir);

// Per cloud round, each edge's clients, where the timeline moves clients between edges;
// edge_clients.dat beside it. Empty otherwise.
Figure edge_clients_figure(const std::vector<RoundReport>& metrics, const std::filesystem::path& dir);

}  // namespace drift
