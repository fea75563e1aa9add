// drift study --emit slurm|shell: scripts that run a study as --shards N shards on a cluster's
// scheduler or with plain processes, then collect it (docs/studies.md#schedulers).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "commands.hpp"
#include "engine/core/error.hpp"
#include "engine/study/gnuplot.hpp"
#include "engine/training/devices.hpp"

namespace drift::cli {
namespace fs = std::filesystem;

namespace {

// `text` in single quotes for a POSIX shell (a quote inside becomes '\'').
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A file name for an #SBATCH line: in double quotes (a space would end it), each % doubled so
// that Slurm does not expand it, except the `pattern` appended after it ("shard-%a.log").
std::string sbatch_file(const fs::path& dir, const std::string& pattern) {
  const auto text = fs::absolute(dir).string();
  if (text.find_first_of("\"\n\\") != std::string::npos)
    throw UserError("--emit slurm: " + text +
                    " holds a quote, backslash or newline, which an #SBATCH line cannot carry");
  std::string out = "\"";
  for (char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out + "/" + pattern + "\"";
}

std::string this_executable() {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("drift") : self.string();
}

// How the scripts start drift: the launcher's words (a container runtime and its image, say),
// or this executable by its absolute path.
std::vector<std::string> launcher_words(const std::string& launcher) {
  std::vector<std::string> words;
  std::istringstream in(launcher);
  for (std::string word; in >> word;) words.push_back(word);
  if (words.empty()) words.push_back(this_executable());
  return words;
}

// The study's command line with absolute paths, without --shard, --collect or --emit.
std::string study_line(const StudyArgs& a, const fs::path& out) {
  auto words = launcher_words(a.launcher);
  words.insert(words.end(), {"study", fs::absolute(a.scenario).lexically_normal().string()});
  for (const auto& g : a.grid) words.insert(words.end(), {"--grid", g});
  for (const auto& v : a.algorithms) words.insert(words.end(), {"--algorithms", v});
  if (a.seeds > 0) words.insert(words.end(), {"--seeds", std::to_string(a.seeds)});
  for (auto s : a.seed_list) words.insert(words.end(), {"--seed-list", std::to_string(s)});
  for (const auto& s : a.sets) words.insert(words.end(), {"--set", s});
  for (const auto& p : a.plugins) words.insert(words.end(), {"--plugin", fs::absolute(p).lexically_normal().string()});
  for (auto& flag : a.pool.flags()) words.push_back(std::move(flag));
  if (a.jobs > 0) words.insert(words.end(), {"--jobs", std::to_string(a.jobs)});
  if (a.no_plots) words.push_back("--no-plots");
  words.insert(words.end(), {"--out", fs::absolute(out).lexically_normal().string(), "--no-progress"});
  std::string line;
  for (const auto& w : words) line += (line.empty() ? "" : " ") + quoted(w);
  return line;
}

void write_script(const fs::path& path, const std::string& text) {
  write_text_file(path, text);
  chmod(path.c_str(), 0755);
}

// What a shard asks of its node: a core per slot of each run at once, and the GPUs its pool
// names (Slurm numbers a job's GPUs from 0, so cuda:I needs I + 1 of them).
std::string shard_resources(const StudyArgs& a) {
  std::uint32_t slots = std::max(1, a.pool.slots), gpus = 0;
  if (!a.pool.devices.empty()) {
    slots = 0;
    for (const auto& d : parse_device_pool(a.pool.devices)) {
      slots += d.slots;
      if (d.device.is_cuda()) gpus = std::max<std::uint32_t>(gpus, d.device.index() + 1);
    }
  }
  auto text = "#SBATCH --cpus-per-task=" + std::to_string(slots * std::max(1, a.jobs)) + "\n";
  if (gpus > 0) text += "#SBATCH --gres=gpu:" + std::to_string(gpus) + "\n";
  return text;
}

fs::path emit_slurm(const StudyArgs& a, const StudyPlan& plan, const std::string& line, const fs::path& dir) {
  const auto n = std::to_string(a.shards);
  const auto logs = quoted((fs::absolute(dir)).string());
  write_script(dir / "shard.sbatch", "#!/bin/bash\n# One shard of the study in " + fs::absolute(plan.out).string() +
                                         " per array task (docs/studies.md#schedulers).\n"
                                         "#SBATCH --job-name=drift-study\n#SBATCH --array=1-" +
                                         n + "\n" + shard_resources(a) +
                                         "#SBATCH --output=" + sbatch_file(dir, "shard-%a.log") + "\nexec " + line +
                                         " --shard \"$SLURM_ARRAY_TASK_ID/" + n + "\"\n");
  write_script(dir / "collect.sbatch",
               "#!/bin/bash\n# The study's tables and figures once every shard has ended.\n"
               "#SBATCH --job-name=drift-collect\n#SBATCH --cpus-per-task=1\n#SBATCH --output=" +
                   sbatch_file(dir, "collect.log") + "\nexec " + line + " --collect\n");
  write_script(dir / "submit.sh", "#!/bin/bash\n# Submits the study's " + n +
                                      " shards as a Slurm job array and a collect job that runs after them.\n"
                                      "set -euo pipefail\ncd " +
                                      logs +
                                      "\narray=$(sbatch --parsable shard.sbatch)\n"
                                      "sbatch --dependency=afterany:\"${array%%;*}\" collect.sbatch\n"
                                      "echo \"submitted job array ${array%%;*} (" +
                                      n + " shards) and its collect job\"\n");
  return dir / "submit.sh";
}

fs::path emit_shell(const StudyArgs& a, const std::string& line, const fs::path& dir) {
  const auto n = std::to_string(a.shards);
  const auto logs = fs::absolute(dir).string();
  write_script(
      dir / "run.sh",
      "#!/bin/bash\n# The study's " + n +
          " shards as processes of this machine, then its tables (docs/studies.md#schedulers).\n"
          "# Elsewhere: on each machine that shares the study directory, run the command of the loop\n"
          "# below with its own --shard I/" +
          n +
          " (by ssh, or a scheduler of your own),\n"
          "# or with GNU parallel: seq 1 " +
          n + " | parallel -j " + n + " " + line + " --shard {}/" + n + "\nset -u\nfor i in $(seq 1 " + n +
          "); do\n  " + line + " --shard \"$i/" + n + "\" > " + quoted(logs) +
          "/shard-\"$i\".log 2>&1 &\ndone\nstatus=0\nfor job in $(jobs -p); do wait \"$job\" || status=1; done\n" +
          line + " --collect\nexit $status\n");
  return dir / "run.sh";
}

}  // namespace

int emit_study_scripts(const StudyArgs& args, const StudyPlan& plan) {
  if (args.shards < 1) throw UserError("--emit: give --shards N, the number of shards to run");
  const auto dir = plan.out / args.emit;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw WriteError(dir.string() + ": cannot create: " + ec.message());
  const auto line = study_line(args, plan.out);
  const auto script = args.emit == "slurm" ? emit_slurm(args, plan, line, dir) : emit_shell(args, line, dir);
  std::printf("%s\n", script.c_str());
  std::fprintf(stderr, "%s shards of %zu runs: run %s%s\n", std::to_string(args.shards).c_str(), plan.runs.size(),
               args.emit == "slurm" ? "bash " : "", quoted(script.string()).c_str());
  return 0;
}

}  // namespace drift::cli
