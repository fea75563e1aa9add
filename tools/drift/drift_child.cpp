#include "drift_child.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

extern char** environ;

namespace drift::cli {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // the sanitizers reserve terabytes of address space
#else
constexpr bool kSanitized = false;
#endif

// Address space a check of a file may take: LibTorch maps about 1 GiB at start-up; a module of
// drift's sizes needs a few hundred MiB more. A file made to exhaust memory stops here.
constexpr rlim_t kCheckAddressSpace = rlim_t{16} << 30;

// This process's environment with `extra` added; an entry of `extra` replaces one of the same name.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto name = entry.substr(0, entry.find('=') + 1);
    bool replaced = false;
    for (const auto& x : extra) replaced = replaced || x.compare(0, name.size(), name) == 0;
    if (!replaced) out.push_back(entry);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

}  // namespace

pid_t start_drift_child(std::vector<std::string> args, const DriftChildSetup& setup) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Built before fork: between fork and exec nothing may allocate.
  auto environment = child_environment(setup.environment);
  std::vector<char*> envp;
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  // Between fork and exec only async-signal-safe calls: this process may have other threads.
  if (setup.own_process_group) setpgid(0, 0);
  // Kept across execv; a parent that died before this line is seen by the check after it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(128 + SIGKILL);
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_UNBLOCK, &all, nullptr);  // a study's signal watcher blocked them
  if (setup.output_fd >= 0) {
    dup2(setup.output_fd, STDOUT_FILENO);
    dup2(setup.output_fd, STDERR_FILENO);
  }
#ifdef SYS_close_range
  if (setup.close_other_fds) syscall(SYS_close_range, 3U, ~0U, 0U);  // a kernel without it keeps them
#endif
  if (setup.for_untrusted_file) {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // a crash there is expected, not a core file to keep
    if (!kSanitized) {
      const rlimit memory{kCheckAddressSpace, kCheckAddressSpace};
      setrlimit(RLIMIT_AS, &memory);
    }
  }
  execve("/proc/self/exe", argv.data(), envp.data());
  _exit(127);
}

}  // namespace drift::cli
