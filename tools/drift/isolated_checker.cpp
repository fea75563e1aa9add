// The checker drift installs for files whose readers it does not own (engine/core/isolated_check.hpp):
// a copy of drift reads the file with `check-model` or `check-generator --in-process`, under a
// time limit and (outside sanitizer builds) a memory limit, and its end decides.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "drift_child.hpp"
#include "engine/core/error.hpp"
#include "engine/core/isolated_check.hpp"

namespace drift::cli {
namespace {

// A check reads one file; LibTorch's start-up takes about a second of it on a slow core, a
// sanitizer build several. DRIFT_CHECK_SECONDS overrides (docs/torchscript.md#hostile-files).
double check_seconds() {
  if (const char* text = std::getenv("DRIFT_CHECK_SECONDS")) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0) return seconds;
    throw UserError(std::string("DRIFT_CHECK_SECONDS='") + text + "' is not a positive number of seconds");
  }
  return 120.0;
}

std::vector<std::string> check_command(const IsolatedCheck& check) {
  if (check.kind == IsolatedCheck::Kind::generator) return {"drift", "check-generator", check.path, "--in-process"};
  std::vector<std::string> args{"drift", "check-model", check.path, "--in-process"};
  if (!check.digest.empty()) args.insert(args.end(), {"--digest", check.digest});
  if (!check.input_shape.empty()) {
    std::string shape;
    for (const auto d : check.input_shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    args.insert(args.end(), {"--input", shape, "--classes", std::to_string(check.num_classes)});
    if (check.features) args.emplace_back("--features");
  }
  return args;
}

struct ChildEnd {
  bool timed_out = false;
  bool reaped = false;  // waitpid answered with `status`
  int status = 0;       // waitpid's
  std::string output;   // stdout and stderr together
};

ChildEnd run_check(std::vector<std::string> args, double seconds) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw UserError("cannot check a file in a separate process: pipe failed");
  DriftChildSetup setup;
  setup.output_fd = fds[1];
  setup.for_untrusted_file = true;
  const pid_t pid = start_drift_child(std::move(args), setup);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    throw UserError("cannot check a file in a separate process: fork failed");
  }
  ChildEnd end;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buffer[4096];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      end.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    if (p.revents == 0) continue;
    const auto n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of output: the child has ended (or closed both streams)
    if (end.output.size() < (1 << 16)) end.output.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  // The output ended; the child may not have, and the deadline holds for it too.
  while (!end.timed_out) {
    const pid_t done = waitpid(pid, &end.status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) {
      end.reaped = done == pid;
      return end;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      end.timed_out = true;
    else
      usleep(10000);
  }
  kill(pid, SIGKILL);
  pid_t done = -1;
  while ((done = waitpid(pid, &end.status, 0)) < 0 && errno == EINTR) {
  }
  end.reaped = done == pid;
  return end;
}

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

// The last line of the child's output that starts with `prefix`, without it; empty if none.
std::string line_after(const std::string& output, const std::string& prefix) {
  std::string found;
  std::size_t start = 0;
  while (start < output.size()) {
    auto stop = output.find('\n', start);
    if (stop == std::string::npos) stop = output.size();
    if (output.compare(start, prefix.size(), prefix) == 0)
      found = output.substr(start + prefix.size(), stop - start - prefix.size());
    start = stop + 1;
  }
  return found;
}

void check_in_child(const IsolatedCheck& check) {
  const double seconds = check_seconds();
  const auto end = run_check(check_command(check), seconds);
  const std::string what =
      (check.kind == IsolatedCheck::Kind::generator ? "generator folder " : "model.file ") + check.path;
  const std::string doing =
      check.input_shape.empty() ? "reading it" : "reading it and running it on a probe batch of the dataset's shape";
  const std::string why = "; drift will not read it (docs/torchscript.md#hostile-files)";
  if (end.timed_out)
    throw UserError(what + ": " + doing + " did not finish within " + seconds_text(seconds) +
                    " s in a separate process (DRIFT_CHECK_SECONDS sets the limit)" + why);
  if (!end.reaped) throw UserError("cannot tell how the separate process that read " + what + " ended" + why);
  if (WIFEXITED(end.status) && WEXITSTATUS(end.status) == 0) return;
  if (WIFEXITED(end.status) && WEXITSTATUS(end.status) == 127)
    throw UserError("cannot check " + what + " in a separate process: /proc/self/exe did not start");
  if (WIFEXITED(end.status) && WEXITSTATUS(end.status) == 2) {
    const auto refusal = line_after(end.output, "drift: error: ");
    if (!refusal.empty()) throw UserError(refusal);
  }
  std::string how = WIFSIGNALED(end.status) ? std::string("signal ") + std::to_string(WTERMSIG(end.status)) + ", " +
                                                  strsignal(WTERMSIG(end.status))
                                            : "exit status " + std::to_string(WEXITSTATUS(end.status));
  if (const auto internal = line_after(end.output, "drift: internal error: "); !internal.empty())
    how += ": " + internal.substr(0, 160);
  throw UserError(what + ": " + doing + " crashed the separate process that did it (" + how +
                  "): the file is malformed, or made to crash LibTorch's TorchScript reader" + why);
}

}  // namespace

void install_isolated_checker() { set_isolated_checker(check_in_child); }

}  // namespace drift::cli
