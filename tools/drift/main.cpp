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
  auto* slots_opt = run_cmd->add_option("--slots", run.slots, "CPU trainer slots (same as --devices cpu:N)")->check(CLI::Range(1, 4096));
  run_cmd->add_option("--devices", run.devices, "device pool, e.g. cpu:2,cuda:0x4 (overrides [devices])")->excludes(slots_opt);
  run_cmd->add_flag("--no-progress", run.no_progress, "plain log lines even on a terminal");

  drift::cli::ValidateArgs validate;
  auto* validate_cmd = app.add_subcommand("validate", "check a scenario (and its data) without running it");
  validate_cmd->add_option("scenario", validate.scenario, "scenario file (TOML)")->required();
  validate_cmd->add_option("--set", validate.sets, "override a scenario key (repeatable)");
  validate_cmd->add_flag("--print", validate.print, "print the resolved scenario with every default");

  drift::cli::CompareArgs compare;
  auto* compare_cmd = app.add_subcommand("compare", "run a scenario for several algorithms and seeds; write a table");
  compare_cmd->add_option("scenario", compare.scenario, "scenario file (TOML)")->required();
  compare_cmd
      ->add_option("--algorithms", compare.algorithms,
                   "variants NAME[:PRESET][+KEY=VALUE]..., comma-separated, e.g. fedavg,fedskc:reference,fedskc+gpr=false")
      ->required()
      ->delimiter(',');
  compare_cmd->add_option("--seeds", compare.seeds, "seeds 1..N (default 3)")->check(CLI::Range(1, 1000));
  compare_cmd->add_option("--seed-list", compare.seed_list, "explicit seeds, comma-separated")->delimiter(',');
  compare_cmd->add_option("--set", compare.sets, "override a scenario key for every run (repeatable)");
  compare_cmd->add_option("--out", compare.out, "output directory (default runs/compare-<scenario>); must be new or empty");
  compare_cmd->add_option("--slots", compare.slots, "CPU trainer slots per run")->check(CLI::Range(1, 4096));

  app.add_subcommand("list", "list datasets, partitions, models, algorithms and samplers");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (run_cmd->parsed()) return drift::cli::run_command(run);
    if (validate_cmd->parsed()) return drift::cli::validate_command(validate);
    if (compare_cmd->parsed()) return drift::cli::compare_command(compare);
    return drift::cli::list_command();
  } catch (const drift::UserError& e) {
    std::fprintf(stderr, "drift: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "drift: internal error: %s\n", e.what());
    return 1;
  }
}
