// drift study: a grid of scenario keys, algorithm variants and seeds; one run directory per
// cell and seed; study.csv and study.md rebuilt from them; figures. drift compare is the
// study whose only factor is the algorithm, with its own table besides.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "commands.hpp"
#include "engine/compose/fingerprint.hpp"
#include "engine/core/error.hpp"
#include "engine/core/input_file.hpp"
#include "engine/study/gnuplot.hpp"
#include "engine/study/study_results.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/devices.hpp"
#include "gpu_memory.hpp"
#include "live_pages.hpp"
#include "study_runner.hpp"

namespace drift::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The first value given twice, if any: a seed or level given twice would be run twice, and the
// table would count it as two runs of its cell.
template <class T>
std::optional<T> repeated(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  const auto twice = std::adjacent_find(values.begin(), values.end());
  return twice == values.end() ? std::nullopt : std::optional<T>(*twice);
}

void refuse_repeated_levels(const Factor& factor, const std::string& what) {
  std::vector<std::string> labels;
  for (const auto& level : factor.levels) labels.push_back(level.label);
  if (const auto twice = repeated(labels))
    throw UserError(what + ": names " + *twice + " twice: the table would count its runs twice");
}

std::vector<std::uint64_t> study_seeds(const StudyArgs& args) {
  if (args.seeds > 0 && !args.seed_list.empty()) throw UserError("--seeds and --seed-list: give one of them");
  if (!args.seed_list.empty()) {
    if (const auto twice = repeated(args.seed_list))
      throw UserError("--seed-list names seed " + std::to_string(*twice) +
                      " twice: the table would count its run twice");
    return args.seed_list;
  }
  std::vector<std::uint64_t> seeds;
  for (int s = 1; s <= (args.seeds > 0 ? args.seeds : 3); ++s) seeds.push_back(static_cast<std::uint64_t>(s));
  return seeds;
}

std::vector<Factor> study_factors(const StudyArgs& args) {
  std::vector<Factor> factors;
  std::vector<std::string> variants;
  for (const auto& a : args.algorithms)
    for (auto& v : split_top_level(a, "--algorithms")) variants.push_back(std::move(v));
  if (!variants.empty()) {
    factors.push_back(algorithm_factor(variants));
    refuse_repeated_levels(factors.back(), "--algorithms");
  }
  for (const auto& g : args.grid) {
    factors.push_back(grid_factor(g));
    refuse_repeated_levels(factors.back(), "--grid " + g);
    for (std::size_t f = 0; f + 1 < factors.size(); ++f)
      if (factors[f].name == factors.back().name)
        throw UserError("--grid " + g + ": " + factors[f].name + " is already a factor");
  }
  for (const auto& s : args.sets)
    if (s.rfind("seed=", 0) == 0)
      throw UserError("--set " + s + ": a study sets every run's seed itself; use --seeds or --seed-list");
  return factors;
}

// What defines the study; a directory holding a different one is refused rather than mixed.
json study_definition(const StudyArgs& args, const std::vector<Factor>& factors,
                      const std::vector<std::uint64_t>& seeds, const std::string& resolved_scenario) {
  json f = json::array();
  for (const auto& factor : factors) {
    json levels = json::array();
    for (const auto& l : factor.levels) levels.push_back(l.label);
    f.push_back({{"name", factor.name}, {"levels", levels}});
  }
  return {{"scenario", fs::absolute(args.scenario).lexically_normal().string()},
          {"scenario_hash", scenario_hash(resolved_scenario)},
          {"factors", f},
          {"seeds", seeds},
          {"sets", args.sets}};
}

// The study directory's lock; shards and --collect wait for it (a minute at most), since any
// number of them share the directory and each holds it only for a moment.
DirectoryLock lock_study(const fs::path& out, bool wait) {
  for (int tries = 0;; ++tries) {
    try {
      return DirectoryLock(out, "drift study");
    } catch (const UserError&) {
      if (!wait || tries >= 1200) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

// "I/N" as the 0-based slice and the count.
std::pair<std::uint32_t, std::uint32_t> parse_shard(const std::string& text) {
  unsigned i = 0, n = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%u/%u%c", &i, &n, &rest) != 2 || n < 1 || i < 1 || i > n)
    throw UserError("--shard " + text + ": give I/N with 1 <= I <= N, e.g. --shard 2/8");
  return {i - 1, n};
}

// Locked before it is read: a second study into the same directory is refused, not mixed in
// (shards of one study share it; see lock_study).
DirectoryLock prepare_directory(const fs::path& out, const json& definition, bool shared) {
  const auto file = out / "study.json";
  if (fs::exists(out) && !fs::is_directory(out))
    throw UserError("--out " + out.string() + " is a file, not a directory; name a new directory");
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw WriteError(out.string() + ": cannot create the study directory: " + ec.message());
  DirectoryLock lock = lock_study(out, shared);
  if (fs::exists(file)) {
    const auto old = json::parse(read_own_file(file).value_or(""), nullptr, false);
    // An unreadable file compares unequal to nothing (nlohmann's discarded value): say so, rather
    // than take the directory's runs for this study's.
    if (old.is_discarded() || !old.is_object())
      throw UserError(file.string() +
                      " is empty or not a study definition, so it cannot say which study the directory holds; "
                      "name a new directory (or restore the file)");
    if (old != definition)
      throw UserError("--out " + out.string() +
                      " holds a different study (its study.json differs: scenario, factors, "
                      "seeds or --set); name a new directory");
    return lock;
  }
  if (!is_empty_but_lock(out))
    throw UserError("--out " + out.string() + " exists, is not empty and holds no study; name a new directory");
  write_text_file(file, definition.dump(2) + "\n");
  return lock;
}

// The study's page while its runs go on (docs/outputs.md#live-pages): how many runs have
// finished, their table and figures so far. Shards share the directory and draw no live page.
std::unique_ptr<LivePages> live_study_page(const StudyArgs& args, const StudyPlan& plan, const std::string& where) {
  if (args.no_plots || plan.plot_minutes <= 0 || plan.shard_count > 1) return nullptr;
  auto draw = [&plan, where](const std::atomic<int>& stop, std::size_t drawing) {
    std::size_t finished = 0;
    for (const auto& r : plan.runs) finished += run_finished(plan.out / r.relative_path) ? 1 : 0;
    const auto total = plan.runs.size();
    const auto banner = live_banner(std::to_string(finished) + " of " + std::to_string(total) + " runs finished",
                                    finished, total, "study", plan.plot_minutes, drawing, where);
    plot_study_directory(plan.out, study_table(plan), &stop, &banner);
  };
  std::fprintf(stderr, "live page: %s (redrawn every %g min while the study runs)\n", (plan.out / "index.html").c_str(),
               plan.plot_minutes);
  return std::make_unique<LivePages>(plan.plot_minutes, draw, [](const std::string& text) {
    std::fprintf(stderr, "drift: warning: %s\n", text.c_str());
  });
}

// The pool every run gets (--devices, or --slots as cpu:N), checked once before anything runs:
// a GPU this build cannot use is refused here, not by every run (unless the study only writes
// scripts that run elsewhere: `elsewhere`). Empty: each run's scenario's.
std::vector<DeviceSlots> study_pool(const RunPool& flags, bool elsewhere = false) {
  if (flags.devices.empty() && flags.slots == 0) {
    if (flags.gpu_memory > 0) throw UserError("--gpu-memory needs --devices: the pool whose GPUs it bounds");
    return {};
  }
  const auto text = flags.devices.empty() ? "cpu:" + std::to_string(flags.slots) : flags.devices;
  auto pool = parse_device_pool(text);
  if (!elsewhere) require_devices(pool);
  check_gpu_memory(flags.gpu_memory, pool,
                   flags.devices.empty() ? "--slots " + std::to_string(flags.slots) : "--devices " + flags.devices);
  return pool;
}

// "4 at once on cuda:0 x2 in slot processes, each holding at most 20 GiB of a GPU": the
// progress's first line and the live page's banner.
std::string study_placement(const RunPool& flags, const std::vector<DeviceSlots>& pool, int jobs) {
  std::string text =
      std::to_string(jobs) + " at once on " + (pool.empty() ? "each scenario's devices" : describe(pool));
  if (flags.slot_processes) text += " in slot processes";
  if (flags.gpu_memory > 0) text += ", each holding at most " + gib_text(flags.gpu_memory) + " GiB of a GPU";
  return text;
}

}  // namespace

StudyPlan plan_study(const StudyArgs& args, const std::string& default_prefix) {
  StudyPlan plan;
  study_pool(args.pool, !args.emit.empty());
  plan.factors = study_factors(args);
  plan.seeds = study_seeds(args);
  const auto cells = grid_cells(plan.factors);
  // Every cell is validated before anything runs or anything is written.
  std::string resolved;
  std::map<std::string, std::string> cell_of_scenario;  // resolved scenario -> the cell that has it
  for (const auto& cell : cells) {
    auto sets = args.sets;
    for (auto& s : cell_sets(plan.factors, cell)) sets.push_back(std::move(s));
    sets.push_back("seed=" + std::to_string(plan.seeds.front()));
    Scenario scenario;
    try {
      scenario = load_scenario(args.scenario, parse_overrides(sets), args.plugins);
    } catch (const UserError& e) {
      throw UserError(cell_label(plan.factors, cell) + ": " + e.what());
    }
    for (const auto& w : scenario.warnings)
      if (plan.warnings.insert(w).second) std::fprintf(stderr, "drift: warning: %s\n", w.c_str());
    // Levels are compared by what they mean: 0.1, 0.10 and 1e-1 are one learning rate.
    const auto [same, fresh] = cell_of_scenario.emplace(scenario.resolved_toml, cell_label(plan.factors, cell));
    if (!fresh)
      throw UserError(same->second + " and " + cell_label(plan.factors, cell) +
                      " are the same scenario (their levels have the same values): the table would count the same "
                      "runs twice");
    if (resolved.empty()) {
      resolved = scenario.resolved_toml;
      plan.targets = {scenario.evaluation.targets, scenario.evaluation.at_times};
      plan.plot_minutes = scenario.plot_minutes;
    }
    sets.pop_back();
    for (auto seed : plan.seeds) {
      PlannedRun run;
      run.label = cell_label(plan.factors, cell) + ", seed " + std::to_string(seed);
      run.relative_path = study_run_path(plan.factors, cell, seed);
      run.sets = sets;
      run.sets.push_back("seed=" + std::to_string(seed));
      run.rounds = scenario.rounds;
      plan.runs.push_back(std::move(run));
    }
  }
  if (!args.out.empty()) check_output_path(args.out, "--out");
  plan.out = args.out.empty() ? fs::path("runs") / (default_prefix + fs::path(args.scenario).stem().string())
                              : fs::path(args.out);
  const bool shared = !args.shard.empty() || args.collect || !args.emit.empty();
  // Collecting reads a study that exists: a mistyped --out must not become an empty one.
  if (args.collect && !fs::exists(plan.out / "study.json"))
    throw UserError("--collect: " + plan.out.string() + " holds no study (no study.json); name the directory " +
                    "the study wrote");
  if (!args.shard.empty()) std::tie(plan.shard_index, plan.shard_count) = parse_shard(args.shard);
  plan.lock = prepare_directory(plan.out, study_definition(args, plan.factors, plan.seeds, resolved), shared);
  if (shared) plan.lock = DirectoryLock();  // claims keep the runs apart; the tables take it again
  return plan;
}

int execute_study(const StudyArgs& args, const StudyPlan& plan) {
  RunnerOptions options;
  options.scenario = args.scenario;
  options.study_dir = plan.out;
  options.pool = args.pool;
  options.no_plots = args.no_plots;
  for (const auto& p : args.plugins) options.plugins.push_back(fs::absolute(p).lexically_normal().string());
  const int cores = static_cast<int>(usable_cores());
  const auto pool = study_pool(args.pool);
  options.jobs = args.jobs > 0  ? args.jobs
                 : pool.empty() ? 1
                                : runs_at_once(pool, cores, gib_to_bytes(args.pool.gpu_memory), [&args](int gpu) {
                                    return args.pool.gpu_memory > 0 ? gpu_total_memory(gpu) : 0;
                                  });
  const auto where = study_placement(args.pool, pool, options.jobs);
  std::fprintf(stderr, "study: %zu run(s), %s\n", plan.runs.size(), where.c_str());
  options.live = !args.no_progress && isatty(STDERR_FILENO);
  options.shard_index = plan.shard_index;
  options.shard_count = plan.shard_count;
  std::size_t done = 0;
  auto live = live_study_page(args, plan, where);
  const auto outcome = run_planned(plan.runs, options, [&](const PlannedRun& run, int code, double wall) {
    ++done;
    const auto record = read_run_record(plan.out, run.relative_path, plan.targets);
    if (code >= 128)
      std::fprintf(stderr, "%s: interrupted at a checkpoint (resumes when the study runs again)\n", run.label.c_str());
    else if (code != 0)
      std::fprintf(stderr, "%s: failed (exit %d; see %s/%s.log)\n", run.label.c_str(), code, plan.out.c_str(),
                   run.relative_path.c_str());
    else if (record.diverged())
      std::fprintf(stderr, "%s: diverged at aggregation %u (%.0f s)\n", run.label.c_str(),
                   record.summary.diverged_round.value_or(0), wall);
    else
      std::fprintf(stderr, "%s: best %.2f%%, final %.2f%% after %s virtual (%.0f s)\n", run.label.c_str(),
                   record.summary.best_accuracy * 100.0, record.summary.final_accuracy * 100.0,
                   readable_duration(record.summary.virtual_time).c_str(), wall);
  });
  if (live) {
    live->stop();
    if (live->drawings() > 0 && outcome.interrupted_code != 0)
      still_live_page(plan.out,
                      "Interrupted; the same command again resumes the unfinished runs and draws the final page.");
  }
  if (outcome.skipped > 0 || outcome.resumed > 0)
    std::fprintf(stderr, "%zu run(s) had finished before and were kept, %zu resumed from a checkpoint; %zu ran now\n",
                 outcome.skipped, outcome.resumed, outcome.ran);
  if (outcome.interrupted_code != 0) {
    std::fprintf(stderr, "interrupted: run the same command again to resume the unfinished runs\n");
    return outcome.interrupted_code;
  }
  return outcome.failed > 0 ? 1 : 0;
}

StudyTable study_table(const StudyPlan& plan) {
  return read_study_table(plan.out, plan.factors, plan.seeds, plan.targets);
}

int study_command(const StudyArgs& args) {
  if (args.grid.empty() && args.algorithms.empty())
    throw UserError("drift study: give at least one --grid or --algorithms");
  const auto plan = plan_study(args, "study-");
  if (!args.emit.empty()) return emit_study_scripts(args, plan);
  const int status = args.collect ? 0 : execute_study(args, plan);
  // Shards share the directory: the tables and figures are drawn by one at a time.
  const auto lock = plan.lock.held() ? DirectoryLock() : lock_study(plan.out, true);
  const auto table = study_table(plan);
  write_text_file(plan.out / "study.csv", study_csv(table));
  write_text_file(plan.out / "study.md", study_markdown(table));
  std::cout << study_markdown(table);
  // An interrupted study keeps its last live page, which says how to go on; its final figures
  // come when the same command finishes the runs.
  const bool interrupted = status >= 128;
  if (!args.no_plots && !interrupted) plot_study_directory(plan.out, table);
  std::fprintf(stderr, "tables in %s/study.md and study.csv\n", plan.out.c_str());
  std::size_t missing = 0;
  for (const auto& r : plan.runs) missing += run_finished(plan.out / r.relative_path) ? 0 : 1;
  if (missing > 0 && (args.collect || !args.shard.empty()))
    std::fprintf(stderr, "%zu of %zu runs are not finished yet%s\n", missing, plan.runs.size(),
                 args.collect ? "" : " (other shards hold them, or run this shard again)");
  std::size_t damaged = 0;
  for (const auto& r : table.runs) {
    if (r.damage.empty()) continue;
    std::fprintf(stderr, "%s/%s: not counted: %s (cut or emptied since the run finished)\n", plan.out.c_str(),
                 r.path.c_str(), r.damage.c_str());
    ++damaged;
  }
  if (damaged > 0) {
    std::fprintf(stderr, "%zu run(s) not counted: delete their directories and run the study again\n", damaged);
    return status != 0 ? status : 1;
  }
  return status;
}

}  // namespace drift::cli
