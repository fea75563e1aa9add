#pragma once
// The figures of one run directory, drawn from its files alone (metrics.jsonl, clients.csv,
// partition.json) into <run>/figures/: accuracy and loss against rounds and virtual time, the
// cohort's drift, a participation raster, a timeline of client tasks, the partition heatmap,
// and the staleness histogram of asynchronous runs (docs/outputs.md#figures).
#include <cstdint>
#include <filesystem>
#include <vector>

#include "engine/study/gnuplot.hpp"

namespace drift {

// At most this many clients appear in the raster and the heatmap (the first ones, by id).
inline constexpr std::size_t kFigureClients = 200;

// Writes the data files into `figures_dir` and returns the figures that draw them. The task
// timeline is drawn for `timeline_rounds` (default: the first round and the last); rounds the
// run does not have are a UserError.
std::vector<Figure> run_figures(const std::filesystem::path& run_dir, const std::filesystem::path& figures_dir,
                                std::vector<std::uint32_t> timeline_rounds = {});

}  // namespace drift
