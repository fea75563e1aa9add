// drift: run, validate and inspect federated-learning scenarios.
#include <CLI/CLI.hpp>

#include <charconv>

#include <cstdio>

#include "commands.hpp"
#include "engine/core/error.hpp"
#include "engine/core/version.hpp"
#include "engine/training/cpu_arithmetic.hpp"
#include "option_checks.hpp"

namespace {

// An error is one line: a value it quotes (a path, a --set) may hold a newline or another
// control character, which is shown escaped instead of breaking the line.
std::string one_line(const char* text) {
  std::string out;
  for (const char* p = text; *p; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else
      out += *p;
  }
  return out;
}

// One function per subcommand: its options, bound to the fields of its arguments.

void add_plugin_option(CLI::App* cmd, std::vector<std::string>& plugins) {
  cmd->add_option(
      "--plugin", plugins,
      "a plugin library to load first: algorithms, samplers, models, datasets (repeatable; docs/plugins.md)");
}

// GiB as a positive number: the bound of a process's caching allocator (gpu_memory.hpp).
void add_gpu_memory_option(CLI::App* cmd, double& gib, const std::string& help) {
  cmd->add_option("--gpu-memory", gib, help)->check(drift::cli::gibibytes());
}

// What both ends of a multi-node run are told alike: where the join token is, and TLS.
void add_trust_options(CLI::App* cmd, std::string& token_file, bool& tls, std::string& cert, std::string& key,
                       std::string& ca, const std::string& group) {
  cmd->add_option("--token-file", token_file, "file holding the join token (else $DRIFT_JOIN_TOKEN)")->group(group);
  cmd->add_flag("--tls", tls, "encrypt and authenticate with CAF's OpenSSL module")->group(group);
  cmd->add_option("--cert", cert, "TLS: this side's certificate (PEM)")->group(group);
  cmd->add_option("--key", key, "TLS: its private key (PEM)")->group(group);
  cmd->add_option("--ca", ca, "TLS: the CA certificate that signed every peer (PEM)")->group(group);
}

// `drift run`, and `drift resume`, which takes the same options but a run directory.
CLI::App* add_run(CLI::App& app, drift::cli::RunArgs& run, bool resume = false) {
  auto* cmd = resume ? app.add_subcommand("resume",
                                          "continue a run from its last checkpoint (after an interrupt, a "
                                          "crash or a full disk), or extend a finished one with --set "
                                          "federation.rounds=N")
                     : app.add_subcommand("run", "run a scenario and write a run directory");
  cmd->add_option(resume ? "run_dir" : "scenario", run.scenario, resume ? "the run directory" : "scenario file (TOML)")
      ->required();
  cmd->add_option("--set", run.sets, "override a scenario key, e.g. --set federation.rounds=5 (repeatable)");
  if (!resume) {
    add_plugin_option(cmd, run.plugins);
  } else {
    // A resumed run loads the plugins its scenario.toml records; --plugin gives a library that
    // has moved since, recognised by its digest.
    cmd->add_option("--plugin", run.plugins, "a plugin the run records, now at another path (repeatable)");
  }
  if (!resume) cmd->add_option("--out", run.out, "run directory (default: <output.runs_dir>/<name>[-N])");
  auto* slots_opt =
      cmd->add_option("--slots", run.slots, "CPU trainer slots (same as --devices cpu:N)")->check(CLI::Range(1, 4096));
  cmd->add_option("--devices", run.devices, "device pool, e.g. cpu:2,cuda:0x4 (overrides [devices])")
      ->excludes(slots_opt);
  add_gpu_memory_option(cmd, run.gpu_memory, "GiB the run may hold of each of its GPUs, e.g. 20 (default: no bound)");
  cmd->add_flag("--slot-processes", run.slot_processes,
                "run each trainer slot in a drift worker process of its own on loopback (same results; on a GPU, "
                "slots then share no CUDA context)");
  cmd->add_flag("--no-progress", run.no_progress, "plain log lines even on a terminal");
  cmd->add_flag("--no-plots", run.no_plots, "write no figures, neither live pages nor at the end");
  // Studies run each run as a child process that logs to its run directory only.
  cmd->add_flag("--quiet", run.quiet)->group("");
  // Tests: stop as if interrupted after this aggregation.
  cmd->add_option("--stop-after", run.stop_after)->check(CLI::Range(1, 1 << 30))->group("");
  auto* listen =
      cmd->add_option("--listen", run.listen, "coordinate workers: listen on HOST:PORT (port 0: any free port)")
          ->group("Multi-node");
  cmd->add_option("--workers", run.workers, "wait for N workers before the first round")
      ->check(CLI::Range(0, 100000))
      ->group("Multi-node");
  cmd->add_flag("--no-local", run.no_local, "train on workers only (no local trainer slots)")->group("Multi-node");
  cmd->add_flag("--edges-on-workers", run.edges_on_workers,
                "[hierarchy]: the workers keep the edges' aggregators, spread over them (same results)")
      ->group("Multi-node");
  cmd->add_option("--join-timeout", run.join_timeout, "seconds to wait for the workers (0: forever; default 600)")
      ->check(drift::cli::seconds())
      ->group("Multi-node");
  cmd->add_option("--heartbeat-timeout", run.heartbeat_timeout,
                  "seconds a worker may leave a heartbeat unanswered before its jobs run elsewhere (default 10)")
      ->check(CLI::Range(0.1, 86400.0))
      ->needs(listen)
      ->group("Multi-node");
  cmd->add_option("--job-deadline", run.deadline_factor,
                  "a worker's job may run this many times its mean job (and at least 60 s) before it runs "
                  "elsewhere (default 10)")
      ->check(CLI::Range(1.0, 1e6))
      ->needs(listen)
      ->group("Multi-node");
  add_trust_options(cmd, run.token_file, run.tls, run.cert, run.key, run.ca, "Multi-node");
  return cmd;
}

CLI::App* add_worker(CLI::App& app, drift::cli::WorkerArgs& worker) {
  auto* cmd = app.add_subcommand("worker", "offer this machine's trainer slots to a coordinator (drift run --listen)");
  cmd->add_option("--connect", worker.connect, "the coordinator's HOST:PORT")->required();
  cmd->add_option("--devices", worker.devices, "device pool, e.g. cpu:2,cuda:0x4 (default: cpu, one slot per core)");
  add_gpu_memory_option(cmd, worker.gpu_memory, "GiB this worker may hold of each of its GPUs (default: no bound)");
  cmd->add_option("--name", worker.name, "name in both sides' logs (default: host:pid)");
  cmd->add_option("--expect-scenario", worker.expect_scenario,
                  "refuse to train unless the coordinator runs the scenario with this hash");
  cmd->add_option("--connect-timeout", worker.connect_timeout, "seconds to keep retrying the connection (default 60)")
      ->check(drift::cli::seconds());
  cmd->add_option("--coordinator-timeout", worker.coordinator_timeout,
                  "seconds without the coordinator's heartbeat before giving up (0: never; default 60)")
      ->check(drift::cli::seconds());
  cmd->add_option("--plugin", worker.plugins,
                  "a plugin the coordinator's scenario names, at this machine's path (repeatable; matched by digest)");
  add_trust_options(cmd, worker.token_file, worker.tls, worker.cert, worker.key, worker.ca, "Options");
  // Fault injection for the worker-loss tests: the process kills itself (SIGKILL) when its
  // N-th training job arrives. Hidden from --help.
  cmd->add_option("--crash-after-jobs", worker.crash_after_jobs)->group("")->check(CLI::Range(0, 1000000));
  return cmd;
}

CLI::App* add_epsilon(CLI::App& app, drift::cli::EpsilonArgs& eps) {
  auto* cmd =
      app.add_subcommand("epsilon", "the (epsilon, delta) of a DP-FedAvg schedule, or the noise for a target epsilon");
  auto* noise = cmd->add_option("--noise", eps.noise, "noise multiplier z = sigma / C (privacy.noise_multiplier)");
  cmd->add_option("--epsilon", eps.epsilon, "find the smallest noise multiplier that keeps epsilon within this")
      ->excludes(noise);
  cmd->add_option("--rate", eps.rate, "sampling rate q (Poisson), or cohort / population (fixed)");
  // Bounded: a count past int64's range would otherwise be clamped silently.
  cmd->add_option("--steps", eps.steps, "releases (rounds) composed, 1 to 10^12")
      ->required()
      ->check(drift::cli::whole_number(1, 1'000'000'000'000));
  cmd->add_option("--delta", eps.delta, "delta of (epsilon, delta)")->required();
  cmd->add_option("--sampling", eps.sampling, "poisson (default), fixed (cohorts without replacement) or none")
      ->check(CLI::IsMember({"poisson", "fixed", "none"}));
  cmd->add_flag("--opacus", eps.opacus, "Opacus's orders, signed series and conversion (its published numbers)");
  return cmd;
}

CLI::App* add_validate(CLI::App& app, drift::cli::ValidateArgs& validate) {
  auto* cmd = app.add_subcommand("validate", "check a scenario (and its data) without running it");
  cmd->add_option("scenario", validate.scenario, "scenario file (TOML)")->required();
  cmd->add_option("--set", validate.sets, "override a scenario key (repeatable)");
  add_plugin_option(cmd, validate.plugins);
  cmd->add_flag("--print", validate.print, "print the resolved scenario with every default");
  cmd->add_flag("--no-data", validate.no_data, "check the scenario without reading its dataset");
  return cmd;
}

// The options drift study and drift compare share.
void add_study_options(CLI::App* cmd, drift::cli::StudyArgs& study, const std::string& default_out) {
  cmd->add_option("scenario", study.scenario, "scenario file (TOML)")->required();
  auto* seeds = cmd->add_option("--seeds", study.seeds, "seeds 1..N (default 3)")->check(CLI::Range(1, 1000));
  cmd->add_option("--seed-list", study.seed_list, "explicit seeds, comma-separated")
      ->delimiter(',')
      // Its own check: CLI11's NonNegativeNumber names its range up to the largest double.
      ->check(CLI::Validator(
          [](std::string& seed) {
            // A scenario's seed is a TOML integer: at most 2^63 - 1.
            std::int64_t value = 0;
            const auto [end, error] = std::from_chars(seed.data(), seed.data() + seed.size(), value);
            const bool whole = !seed.empty() && error == std::errc() && end == seed.data() + seed.size() && value >= 0;
            return whole ? std::string() : "a seed is a whole number from 0 to 2^63 - 1, not " + seed;
          },
          "SEED"))
      ->excludes(seeds);
  cmd->add_option("--set", study.sets, "override a scenario key for every run (repeatable)");
  add_plugin_option(cmd, study.plugins);
  cmd->add_option("--out", study.out,
                  "output directory (default " + default_out + "); run again with the same arguments, it resumes");
  auto* slots = cmd->add_option("--slots", study.pool.slots, "CPU trainer slots per run")->check(CLI::Range(1, 4096));
  cmd->add_option("--devices", study.pool.devices, "every run's device pool, e.g. cuda:0x2 (instead of --slots)")
      ->excludes(slots);
  cmd->add_flag("--slot-processes", study.pool.slot_processes, "every run's slots in worker processes of their own");
  add_gpu_memory_option(cmd, study.pool.gpu_memory,
                        "GiB each run may hold of each of its GPUs; also bounds the runs at once (default: no bound)");
  cmd->add_option("--jobs", study.jobs,
                  "runs at once (default: what fills the pool: cores over its slots, and what its GPUs hold at "
                  "--gpu-memory; 1 without --slots or --devices)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--no-plots", study.no_plots, "write no figures");
  cmd->add_flag("--no-progress", study.no_progress, "a line per run instead of a live progress line");
}

CLI::App* add_compare(CLI::App& app, drift::cli::StudyArgs& compare) {
  auto* cmd = app.add_subcommand("compare", "run a scenario for several algorithms and seeds; write a table");
  add_study_options(cmd, compare, "runs/compare-<scenario>");
  cmd->add_option(
         "--algorithms", compare.algorithms,
         "variants NAME[:PRESET][+KEY=VALUE]..., comma-separated, e.g. fedavg,fedskc:reference,fedskc+gpr=false")
      ->required();
  return cmd;
}

CLI::App* add_study(CLI::App& app, drift::cli::StudyArgs& study) {
  auto* cmd = app.add_subcommand("study", "run a grid of scenario keys, algorithms and seeds; tables and figures");
  add_study_options(cmd, study, "runs/study-<scenario>");
  cmd->add_option("--grid", study.grid,
                  "a factor KEY=V1,V2,... over a scenario key; values are TOML ([0.3,0.4] stays whole) (repeatable)");
  cmd->add_option("--algorithms", study.algorithms, "a factor over algorithm variants, as drift compare takes them");
  auto* shard = cmd->add_option("--shard", study.shard,
                                "I/N: start with the I-th of N slices of the runs, then help with the rest; any number "
                                "of shards may share one --out, on one machine or over a shared filesystem");
  cmd->add_flag("--collect", study.collect,
                "build the tables, figures and index.html from the runs that have finished; run nothing")
      ->excludes(shard);
  auto* emit = cmd->add_option("--emit", study.emit,
                               "slurm | shell: write scripts that run the study as --shards shards (a Slurm job "
                               "array and a collect job, or plain processes), and run nothing")
                   ->check(CLI::IsMember({"slurm", "shell"}))
                   ->excludes(shard);
  cmd->add_option("--shards", study.shards, "with --emit: how many shards")->check(CLI::Range(1, 100000))->needs(emit);
  cmd->add_option("--launcher", study.launcher,
                  "with --emit: the command the scripts start drift with, words split at spaces (default: this "
                  "executable's path), e.g. \"apptainer run /shared/drift.sif\" when drift runs in an image")
      ->needs(emit);
  return cmd;
}

CLI::App* add_plot(CLI::App& app, std::string& directory, std::vector<std::uint32_t>& rounds) {
  auto* cmd = app.add_subcommand("plot", "draw the figures of a run or study directory (gnuplot), and its index.html");
  cmd->add_option("directory", directory, "a run directory, or a study's (drift study / compare --out)")->required();
  cmd->add_option("--rounds", rounds, "rounds whose task timeline to draw, comma-separated (default: first and last)")
      ->delimiter(',');
  return cmd;
}

// The copy of drift that reads a file for the isolated check runs a check command with
// --in-process (hidden): it reads the file itself instead of starting another copy.
CLI::App* add_check_generator(CLI::App& app, std::string& generator_dir, bool& in_process) {
  auto* cmd = app.add_subcommand("check-generator", "load and probe a TorchScript latent generator folder");
  cmd->add_option("directory", generator_dir, "folder with generator.json, synthesis.pt and mapping.pt")->required();
  cmd->add_flag("--in-process", in_process)->group("");
  return cmd;
}

CLI::App* add_check_model(CLI::App& app, drift::cli::CheckModelArgs& check) {
  auto* cmd = app.add_subcommand(
      "check-model", "read a model file (an exported program or a TorchScript module) and run it on a probe batch");
  cmd->add_option("file", check.file, "the file torch.export.save or torch.jit.save wrote")->required();
  auto* input =
      cmd->add_option("--input", check.input, "one sample's shape, e.g. 1,28,28 (C,H,W), to run the module on")
          ->delimiter(',')
          ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->add_option("--classes", check.classes, "the logits forward(x) must give")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24))
      ->needs(input);
  cmd->add_flag("--features", check.features, "run features(x), as algorithms that read features do")->needs(input);
  cmd->add_option("--digest", check.digest)->group("");
  cmd->add_flag("--in-process", check.in_process)->group("");
  return cmd;
}

CLI::App* add_pretrain_generator(CLI::App& app, drift::cli::PretrainGeneratorArgs& pretrain) {
  auto* cmd = app.add_subcommand("pretrain-generator",
                                 "train drift's own small generator (a VAE decoder) and export it for FedKTL");
  cmd->add_option("--out", pretrain.out, "output folder (new or empty)")->required();
  cmd->add_option("--dataset", pretrain.dataset, "training images (default fashion-mnist)");
  cmd->add_option("--data-path", pretrain.data_path, "dataset folder (default: the Debian package's)");
  cmd->add_option("--max-samples", pretrain.max_samples, "use the first N training images (0: all)")
      ->check(drift::cli::whole_number(0, 1'000'000'000));
  cmd->add_option("--latent-dim", pretrain.latent_dim, "latent dimension H (default 64)")->check(CLI::Range(1, 65536));
  cmd->add_option("--resolution", pretrain.resolution, "output side in pixels (default 32)")->check(CLI::Range(4, 512));
  cmd->add_option("--epochs", pretrain.epochs, "training epochs (default 5)")->check(CLI::Range(1, 10000));
  cmd->add_option("--seed", pretrain.seed, "seed of every random choice (default 1)");
  return cmd;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread or tensor: every process drift starts (runs, workers, slot processes,
  // a study's runs) computes the same bits for a scenario and seed.
  drift::use_reproducible_cpu_arithmetic();
  CLI::App app{"drift: federated learning under partial participation, stragglers and sampling drift"};
  // One line, as drift's own refusals: CLI11 adds "Run with --help for more information."
  app.failure_message(
      [](const CLI::App*, const CLI::Error& e) { return std::string("drift: error: ") + e.what() + "\n"; });
  app.require_subcommand(1);
  app.set_version_flag("--version", "drift " + drift::drift_version() + " (LibTorch " + drift::torch_version() + ")");
  drift::cli::RunArgs run;
  drift::cli::WorkerArgs worker;
  drift::cli::ValidateArgs validate;
  drift::cli::StudyArgs compare, study;
  std::string plot_dir;
  std::vector<std::uint32_t> plot_rounds;
  std::string generator_dir;
  drift::cli::PretrainGeneratorArgs pretrain;
  auto* run_cmd = add_run(app, run);
  drift::cli::RunArgs resume;
  auto* resume_cmd = add_run(app, resume, true);
  auto* worker_cmd = add_worker(app, worker);
  auto* validate_cmd = add_validate(app, validate);
  auto* compare_cmd = add_compare(app, compare);
  auto* study_cmd = add_study(app, study);
  auto* plot_cmd = add_plot(app, plot_dir, plot_rounds);
  std::string list_what;
  std::vector<std::string> list_plugins;
  auto* list_cmd = app.add_subcommand(
      "list", "list datasets, partitions, models, algorithms and samplers; `drift list keys`: every scenario key");
  list_cmd->add_option("what", list_what, "keys: every scenario key with its type, default, range and help")
      ->check(CLI::IsMember({"keys"}));
  bool list_markdown = false;
  list_cmd->add_flag("--markdown", list_markdown, "both as one markdown page (docs/catalogue.md)");
  add_plugin_option(list_cmd, list_plugins);
  bool generator_in_process = false;
  auto* generator_cmd = add_check_generator(app, generator_dir, generator_in_process);
  drift::cli::CheckModelArgs check_model;
  auto* check_model_cmd = add_check_model(app, check_model);
  auto* pretrain_cmd = add_pretrain_generator(app, pretrain);
  drift::cli::EpsilonArgs epsilon;
  auto* epsilon_cmd = add_epsilon(app, epsilon);
  std::string trace_file;
  auto* trace_cmd = app.add_subcommand("trace-info", "say what an availability or profile trace (CSV) holds");
  trace_cmd->add_option("file", trace_file, "a trace in drift's CSV format (docs/traces.md)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (!generator_in_process && !check_model.in_process) drift::cli::install_isolated_checker();
    if (check_model_cmd->parsed()) return drift::cli::check_model_command(check_model);
    if (run_cmd->parsed()) return drift::cli::run_command(run);
    if (resume_cmd->parsed()) return drift::cli::resume_command(resume);
    if (validate_cmd->parsed()) return drift::cli::validate_command(validate);
    if (compare_cmd->parsed()) return drift::cli::compare_command(compare);
    if (study_cmd->parsed()) return drift::cli::study_command(study);
    if (plot_cmd->parsed()) return drift::cli::plot_command(plot_dir, plot_rounds);
    if (worker_cmd->parsed()) return drift::cli::worker_command(worker);
    if (generator_cmd->parsed()) return drift::cli::check_generator_command(generator_dir);
    if (pretrain_cmd->parsed()) return drift::cli::pretrain_generator_command(pretrain);
    if (trace_cmd->parsed()) return drift::cli::trace_info_command(trace_file);
    if (epsilon_cmd->parsed()) return drift::cli::epsilon_command(epsilon);
    drift::cli::load_plugins(list_plugins);
    if (list_markdown) return drift::cli::list_markdown_command();
    return list_what == "keys" ? drift::cli::list_keys_command() : drift::cli::list_command();
  } catch (const drift::WriteError& e) {
    std::fprintf(stderr, "drift: error: %s\n", one_line(e.what()).c_str());
    return 1;
  } catch (const drift::UserError& e) {
    std::fprintf(stderr, "drift: error: %s\n", one_line(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "drift: internal error: %s\n", one_line(e.what()).c_str());
    return 1;
  }
}
