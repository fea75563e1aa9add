#include "study_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <thread>

#include "drift_child.hpp"
#include "engine/compose/checkpoint.hpp"
#include "engine/core/durations.hpp"
#include "engine/core/error.hpp"
#include "engine/core/remove_tree.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "engine/metrics/summary.hpp"
#include "gpu_memory.hpp"
#include "interrupts.hpp"

namespace drift::cli {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// A run taken by this process: an exclusive flock(2) on <run>.claim beside its directory. The
// kernel drops it when the process dies, however it dies, so a killed shard's run is free for
// the next process at once, and two processes never hold one run.
class RunClaim {
 public:
  static std::shared_ptr<RunClaim> take(const fs::path& run_dir) {
    fs::create_directories(run_dir.parent_path());
    const auto file = run_dir.string() + ".claim";
    const int fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw WriteError(file + ": cannot create the run's claim: " + std::strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      return nullptr;
    }
    return std::shared_ptr<RunClaim>(new RunClaim(fd));
  }
  ~RunClaim() { close(fd_); }
  RunClaim(const RunClaim&) = delete;
  RunClaim& operator=(const RunClaim&) = delete;

 private:
  explicit RunClaim(int fd) : fd_(fd) {}
  int fd_;
};

struct Running {
  const PlannedRun* run;
  Clock::time_point started;
  std::shared_ptr<RunClaim> claim;  // held until the child exits
};

// This process's own slice first (index I - 1 modulo N), then every other run: one shard's
// runs are another's fallback.
std::vector<const PlannedRun*> shard_order(const std::vector<PlannedRun>& runs, const RunnerOptions& o) {
  std::vector<const PlannedRun*> mine, others;
  for (std::size_t i = 0; i < runs.size(); ++i)
    (i % o.shard_count == o.shard_index ? mine : others).push_back(&runs[i]);
  mine.insert(mine.end(), others.begin(), others.end());
  return mine;
}

// Starts `drift run` for one planned run, or `drift resume` for one interrupted at a
// checkpoint; its stdout and stderr go to <run>.log beside it. The child has its own process
// group: a terminal's Ctrl-C reaches the study alone, which passes it on once. It dies with the
// study, however the study dies: an orphan would go on writing a run that the study, run
// again, resumes beside it. Killed, it loses nothing its checkpoint holds
// (docs/checkpoints.md#interrupts).
pid_t start_child(const PlannedRun& run, const RunnerOptions& o, bool resume) {
  const auto dir = o.study_dir / run.relative_path;
  fs::create_directories(dir.parent_path());
  std::vector<std::string> args = {"drift", resume ? "resume" : "run"};
  if (!resume) args.insert(args.end(), {o.scenario, "--out"});
  args.insert(args.end(), {dir.string(), "--no-progress", "--quiet"});
  for (const auto& s : resume ? std::vector<std::string>{} : run.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  if (o.no_plots) args.push_back("--no-plots");
  for (const auto& p : resume ? std::vector<std::string>{} : o.plugins) args.insert(args.end(), {"--plugin", p});
  for (auto& flag : o.pool.flags()) args.push_back(std::move(flag));
  const auto log = dir.string() + ".log";
  DriftChildSetup setup;
  setup.own_process_group = true;
  setup.output_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (resume ? O_APPEND : O_TRUNC), 0644);
  // The forking thread is the study's main thread, which lives as long as the study.
  const pid_t pid = start_drift_child(std::move(args), setup);
  if (setup.output_fd >= 0) close(setup.output_fd);
  if (pid < 0) throw UserError("cannot start a run: fork failed");
  return pid;
}

// Aggregations written so far and updates failed, from the run's metrics.jsonl.
std::pair<std::size_t, std::uint64_t> run_position(const fs::path& dir) {
  if (!fs::exists(dir / "metrics.jsonl")) return {0, 0};
  try {
    const auto facts = read_metrics_file(dir / "metrics.jsonl");
    return {facts.size(), summarize(facts, {}).failed};
  } catch (const UserError&) {
    return {0, 0};
  }
}

class Progress {
 public:
  Progress(const RunnerOptions& o, std::size_t total, std::size_t skipped) : o_(o), total_(total), done_(skipped) {}

  void finished(double wall) {
    ++done_;
    walls_ += wall;
    ++timed_;
  }

  void show(const std::map<pid_t, Running>& running, bool force) {
    const auto now = Clock::now();
    const double every = o_.live ? 1.0 : 30.0;
    if (!force && std::chrono::duration<double>(now - last_).count() < every) return;
    last_ = now;
    std::string line = "study: " + std::to_string(done_) + "/" + std::to_string(total_) + " runs done";
    std::uint64_t failed_updates = 0;
    for (const auto& [pid, r] : running) {
      const auto [rounds, failed] = run_position(o_.study_dir / r.run->relative_path);
      failed_updates += failed;
      line += "; " + r.run->label + ": round " + std::to_string(rounds) + "/" + std::to_string(r.run->rounds);
    }
    if (failed_updates) line += "; " + std::to_string(failed_updates) + " failed updates";
    if (timed_ > 0) {
      const double per_run = walls_ / static_cast<double>(timed_);
      const double left = per_run * static_cast<double>(total_ - done_) / static_cast<double>(std::max(1, o_.jobs));
      line += "; ETA " + human_duration(left);
    }
    if (o_.live)
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
    else
      std::fprintf(stderr, "%s\n", line.c_str());
  }

  void end_line() {
    if (o_.live) std::fprintf(stderr, "\r\033[K");
  }

 private:
  const RunnerOptions& o_;
  std::size_t total_, done_;
  double walls_ = 0.0;
  std::size_t timed_ = 0;
  Clock::time_point last_{};
};

// Starts pending runs while slots are free: each one claimed first; one another process holds
// is left to it, and one that finished meanwhile is skipped. Unfinished runs with a checkpoint
// resume; any other starts over.
void start_claimed(std::deque<const PlannedRun*>& pending, std::map<pid_t, Running>& running, RunnerOutcome& outcome,
                   const RunnerOptions& o) {
  while (!pending.empty() && static_cast<int>(running.size()) < std::max(1, o.jobs)) {
    const auto* r = pending.front();
    pending.pop_front();
    const auto dir = o.study_dir / r->relative_path;
    auto claim = RunClaim::take(dir);
    if (!claim || run_finished(dir)) continue;  // another process has it, or it is done
    const bool resume = has_checkpoint(dir);    // one that cannot be read: drift resume says why
    if (resume) {
      ++outcome.resumed;
    } else {
      std::error_code ec;
      remove_tree(dir, ec);  // without a checkpoint, an unfinished run starts over
      if (ec) throw WriteError(dir.string() + ": cannot remove: " + ec.message());
    }
    running[start_child(*r, o, resume)] = {r, Clock::now(), std::move(claim)};
  }
}

}  // namespace

std::vector<std::string> RunPool::flags() const {
  std::vector<std::string> out;
  if (slots > 0) out.insert(out.end(), {"--slots", std::to_string(slots)});
  if (!devices.empty()) out.insert(out.end(), {"--devices", devices});
  if (slot_processes) out.push_back("--slot-processes");
  if (gpu_memory > 0) out.insert(out.end(), {"--gpu-memory", gib_text(gpu_memory)});
  return out;
}

bool run_finished(const fs::path& run_dir) { return run_is_over(read_run_status(run_dir)); }

RunnerOutcome run_planned(const std::vector<PlannedRun>& runs, const RunnerOptions& o,
                          const std::function<void(const PlannedRun&, int, double)>& on_done) {
  RunnerOutcome outcome;
  std::deque<const PlannedRun*> pending;
  for (const auto* r : shard_order(runs, o)) {
    if (run_finished(o.study_dir / r->relative_path))
      ++outcome.skipped;
    else
      pending.push_back(r);
  }
  Progress progress(o, runs.size(), outcome.skipped);
  std::map<pid_t, Running> running;
  auto interrupt = std::make_shared<actors::RunInterrupt>();
  InterruptWatch watch(
      interrupt, [&](const std::string&) {}, false);
  int forwarded = 0;
  while (!pending.empty() || !running.empty()) {
    // Each signal goes on to every running run once; after the first, nothing new starts.
    for (; forwarded < interrupt->received.load(); ++forwarded) {
      progress.end_line();
      std::fprintf(stderr, forwarded == 0
                               ? "interrupted: the running runs stop at a checkpoint (again to stop them at once)\n"
                               : "interrupted again: stopping the running runs now\n");
      for (const auto& [pid, r] : running) kill(pid, interrupt->signal.load());
    }
    if (interrupt->received.load() > 0) {
      outcome.interrupted_code = watch.exit_code();
      pending.clear();
    }
    start_claimed(pending, running, outcome, o);
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0 && running.count(pid)) {
      const auto r = running.at(pid);
      running.erase(pid);
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      const double wall = std::chrono::duration<double>(Clock::now() - r.started).count();
      ++outcome.ran;
      if (code != 0 && code < 128) ++outcome.failed;
      progress.finished(wall);
      progress.end_line();
      on_done(*r.run, code, wall);
      progress.show(running, true);
      continue;
    }
    progress.show(running, false);
    // A run's end is noticed within 50 ms: a study of short runs waited up to 200 ms after each.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  progress.end_line();
  return outcome;
}

}  // namespace drift::cli
