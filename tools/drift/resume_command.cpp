// drift resume RUN_DIR: continue a run from its last checkpoint (docs/checkpoints.md#resume).
#include <algorithm>
#include <cstdio>

#include "commands.hpp"
#include "engine/compose/schema.hpp"
#include "engine/config/suggest.hpp"
#include "engine/core/directory_lock.hpp"
#include "engine/core/error.hpp"
#include "engine/metrics/summary.hpp"
#include "engine/sim/round_rules.hpp"

namespace drift::cli {
namespace fs = std::filesystem;

namespace {

// The key table marks the keys a resumed run may change (may_change_on_resume in
// engine/compose/schema.cpp); the rest were used to compute what came before the checkpoint.
void check_overrides(const std::vector<Override>& overrides) {
  const auto resumable = resumable_keys();
  for (const auto& o : overrides) {
    if (std::find(resumable.begin(), resumable.end(), o.key) != resumable.end()) continue;
    throw UserError("--set " + o.key +
                    ": a resumed run cannot change it, since the aggregations before the "
                    "checkpoint were computed with its old value (run the scenario again instead); resume "
                    "may change: " +
                    join(resumable));
  }
}

}  // namespace

int resume_command(const RunArgs& args) {
  load_plugins(args.plugins);
  const fs::path path = args.scenario;
  if (!fs::is_directory(path)) throw UserError(path.string() + " is not a run directory");
  // Before anything is read: a run still going (or another resume) must not be read mid-swap.
  DirectoryLock lock(path, "drift resume");
  std::optional<StoredCheckpoint> stored;
  try {
    stored = read_checkpoint(path);
  } catch (const DecodeError& e) {
    throw UserError(e.what());
  }
  if (!stored)
    throw UserError(path.string() +
                    " holds no checkpoint (a run writes its first at checkpoint.every or "
                    "checkpoint.minutes, at its end or when interrupted): start it again with drift run");
  const auto overrides = parse_overrides(args.sets);
  check_overrides(overrides);
  auto scenario = std::make_shared<Scenario>(
      parse_scenario(stored->scenario_toml, (stored->directory / "scenario.toml").string(), overrides));
  apply_device_flags(args, *scenario);
  check_run_flags(args, *scenario);
  const auto& c = stored->checkpoint;
  if (scenario->rounds < static_cast<std::int64_t>(c.round))
    throw UserError("--set federation.rounds=" + std::to_string(scenario->rounds) + " is below the " +
                    std::to_string(c.round) + " aggregations the checkpoint holds");

  const auto status = read_run_status(path);
  if (status == RunStatus::diverged || status == RunStatus::ended) {
    std::printf(
        "%s %s after its last checkpoint (aggregation %u); resuming would repeat that. summary.json "
        "has the reason.\n",
        path.string().c_str(), name_of(*status).c_str(), c.round);
    return 0;
  }
  if (status == RunStatus::completed && stop_reached(*scenario, c.round, c.virtual_time)) {
    std::printf("%s is complete (%u aggregations); extend it with --set federation.rounds=N\n", path.string().c_str(),
                c.round);
    return 0;
  }

  PreparedRun run;
  run.scenario = scenario;
  run.data = std::make_shared<const FederationData>(prepare_federation_data(*scenario));
  check_run_data(args, run);
  run.directory = std::make_shared<RunDirectory>(path, *scenario, c.files, std::move(lock));
  run.resume_from = std::make_shared<const StoredCheckpoint>(std::move(*stored));
  return execute_run(args, std::move(run));
}

}  // namespace drift::cli
