// drift compare: one scenario, several algorithm variants, several seeds; one table.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "engine/core/error.hpp"
#include "engine/metrics/comparison.hpp"

namespace drift::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<double> kTargets = {0.5, 0.7, 0.8};

// NAME[:PRESET][+KEY=VALUE]... -> the --set overrides of that variant; KEY is an algorithm
// parameter, or a scenario key when it has a dot (training.momentum).
std::vector<std::string> variant_overrides(const std::string& label) {
  std::vector<std::string> parts;
  std::stringstream in(label);
  for (std::string part; std::getline(in, part, '+');) parts.push_back(part);
  if (parts.empty() || parts.front().empty()) throw UserError("--algorithms: empty entry in '" + label + "'");
  std::vector<std::string> sets;
  const auto colon = parts.front().find(':');
  sets.push_back("algorithm.name=" + parts.front().substr(0, colon));
  if (colon != std::string::npos) sets.push_back("algorithm.preset=" + parts.front().substr(colon + 1));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].find('=') == std::string::npos)
      throw UserError("--algorithms: '" + parts[i] + "' in '" + label + "' is not KEY=VALUE (e.g. fedskc+gpr=false)");
    // A dotted key is a scenario key (fedrcl+training.grad_clip=10); a plain one the algorithm's.
    const bool scenario_key = parts[i].substr(0, parts[i].find('=')).find('.') != std::string::npos;
    sets.push_back(scenario_key ? parts[i] : "algorithm." + parts[i]);
  }
  return sets;
}

// A directory name for a variant: its label with anything unusual replaced.
std::string directory_name(const std::string& label) {
  std::string out;
  for (char c : label) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> domain_names(const fs::path& run) {
  const auto partition = json::parse(read_text(run / "partition.json"));
  return partition.contains("domains") ? partition["domains"].get<std::vector<std::string>>() : std::vector<std::string>{};
}

SeedResult read_result(const fs::path& run, std::uint64_t seed) {
  const auto summary = json::parse(read_text(run / "summary.json"));
  SeedResult r;
  r.seed = seed;
  r.best_accuracy = summary.at("best_accuracy").get<double>();
  r.last5_accuracy = summary.at("last5_mean_accuracy").get<double>();
  for (double t : kTargets) {
    const auto v = summary.at("rounds_to_accuracy").value(json(t).dump(), json());
    r.rounds_to.push_back(v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt);
  }
  double bytes = 0.0;
  std::size_t n = 0;
  std::vector<std::vector<double>> domain_rounds;  // evaluated rounds' per-domain accuracies
  std::istringstream metrics(read_text(run / "metrics.jsonl"));
  for (std::string line; std::getline(metrics, line); ++n) {
    const auto m = json::parse(line);
    bytes += m.at("bytes_up").get<double>() + m.at("bytes_down").get<double>();
    if (m.contains("domain_accuracy")) domain_rounds.push_back(m["domain_accuracy"].get<std::vector<double>>());
  }
  r.bytes_per_round = n ? bytes / static_cast<double>(n) : 0.0;
  if (!domain_rounds.empty()) {
    const auto first = domain_rounds.size() > 5 ? domain_rounds.size() - 5 : 0;
    r.domain_last5.assign(domain_rounds.back().size(), 0.0);
    for (std::size_t i = first; i < domain_rounds.size(); ++i)
      for (std::size_t d = 0; d < r.domain_last5.size() && d < domain_rounds[i].size(); ++d)
        r.domain_last5[d] += domain_rounds[i][d] / static_cast<double>(domain_rounds.size() - first);
  }
  return r;
}

}  // namespace

int compare_command(const CompareArgs& args) {
  std::vector<std::uint64_t> seeds = args.seed_list;
  if (seeds.empty())
    for (int s = 1; s <= args.seeds; ++s) seeds.push_back(static_cast<std::uint64_t>(s));
  if (args.algorithms.empty()) throw UserError("--algorithms: name at least one algorithm");

  // Every variant is validated before anything runs or anything is written.
  std::vector<std::vector<std::string>> variant_sets;
  for (const auto& label : args.algorithms) {
    auto sets = args.sets;
    for (auto& s : variant_overrides(label)) sets.push_back(std::move(s));
    sets.push_back("evaluation.targets=[0.5, 0.7, 0.8]");
    try {
      load_scenario(args.scenario, parse_overrides(sets));
    } catch (const UserError& e) {
      throw UserError(label + ": " + e.what());
    }
    variant_sets.push_back(std::move(sets));
  }
  const fs::path out = args.out.empty() ? fs::path("runs") / ("compare-" + fs::path(args.scenario).stem().string())
                                        : fs::path(args.out);
  if (fs::exists(out) && !fs::is_empty(out))
    throw UserError("--out " + out.string() + " exists and is not empty; name a new directory");
  fs::create_directories(out);

  std::vector<ComparisonRow> rows;
  std::vector<std::string> domains;  // from the first run of a multi-domain dataset
  const std::size_t total = args.algorithms.size() * seeds.size();
  std::size_t done = 0;
  int status = 0;
  for (std::size_t v = 0; v < args.algorithms.size(); ++v) {
    ComparisonRow row{args.algorithms[v], {}};
    for (auto seed : seeds) {
      const auto started = std::chrono::steady_clock::now();
      RunArgs run;
      run.scenario = args.scenario;
      run.sets = variant_sets[v];
      run.sets.push_back("seed=" + std::to_string(seed));
      run.out = (out / directory_name(args.algorithms[v]) / ("seed-" + std::to_string(seed))).string();
      run.slots = args.slots;
      run.no_progress = run.quiet = true;
      const int code = run_command(run);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      ++done;
      if (code != 0) {
        std::fprintf(stderr, "[%zu/%zu] %s seed %llu: failed (see %s/log.txt)\n", done, total, row.label.c_str(),
                     static_cast<unsigned long long>(seed), run.out.c_str());
        status = 1;
        continue;
      }
      row.seeds.push_back(read_result(run.out, seed));
      if (domains.empty()) domains = domain_names(run.out);
      const auto& r = row.seeds.back();
      std::fprintf(stderr, "[%zu/%zu] %s seed %llu: best %.2f%%, last-5 %.2f%% (%.0f s)\n", done, total,
                   row.label.c_str(), static_cast<unsigned long long>(seed), r.best_accuracy * 100.0,
                   r.last5_accuracy * 100.0, wall);
    }
    rows.push_back(std::move(row));
    // Rewritten after every variant, so an interrupted comparison keeps what it finished.
    std::ofstream(out / "comparison.md") << comparison_markdown(rows, kTargets, domains);
    std::ofstream(out / "comparison.csv") << comparison_csv(rows, kTargets, domains);
  }
  std::cout << comparison_markdown(rows, kTargets, domains);
  std::fprintf(stderr, "tables in %s/comparison.md and comparison.csv\n", out.string().c_str());
  return status;
}

}  // namespace drift::cli
