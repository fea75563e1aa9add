// drift: run, validate and inspect federated-learning scenarios.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "engine/core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"drift: federated learning under partial participation, stragglers and sampling drift"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "drift 0.1.0");

  drift::cli::RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "run a scenario and write a run directory");
  run_cmd->add_option("scenario", run.scenario, "scenario file (TOML)")->required();
  run_cmd->add_option("--set", run.sets, "override a scenario key, e.g. --set federation.rounds=5 (repeatable)");
  run_cmd->add_option("--out", run.out, "run directory (default: <output.runs_dir>/<name>[-N])");
  run_cmd->add_option("--slots", run.slots, "CPU trainer slots (overrides devices.cpu_slots)")->check(CLI::Range(1, 4096));
  run_cmd->add_flag("--no-progress", run.no_progress, "plain log lines even on a terminal");

  drift::cli::ValidateArgs validate;
  auto* validate_cmd = app.add_subcommand("validate", "check a scenario (and its data) without running it");
  validate_cmd->add_option("scenario", validate.scenario, "scenario file (TOML)")->required();
  validate_cmd->add_option("--set", validate.sets, "override a scenario key (repeatable)");
  validate_cmd->add_flag("--print", validate.print, "print the resolved scenario with every default");

  app.add_subcommand("list", "list datasets, partitions, models, algorithms and samplers");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (run_cmd->parsed()) return drift::cli::run_command(run);
    if (validate_cmd->parsed()) return drift::cli::validate_command(validate);
    return drift::cli::list_command();
  } catch (const drift::UserError& e) {
    std::fprintf(stderr, "drift: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "drift: internal error: %s\n", e.what());
    return 1;
  }
}
