#pragma once
// Reading a model file in a child process first, as drift's isolated check does
// (engine/core/isolated_check.hpp): a crash or a hang there is the file's refusal, not a
// finding; the fuzz target reads the file itself only when the child got through.
#include <sanitizer/common_interface_defs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "engine/core/error.hpp"

namespace drift::fuzz {

// How the child that ran read(path) ended: got through (0), refused the file (2), met an
// exception a refusal is not (3, to be read again in the fuzzer's process so that it reports
// it), or crashed or hung for 10 s (anything else).
template <class Read>
int read_in_child(const std::string& path, Read&& read) {
  const pid_t pid = fork();
  if (pid == 0) {
    // The child's crash is the refusal, not a finding: no report, no artifact from libFuzzer.
    __sanitizer_set_death_callback(nullptr);
    for (const int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGALRM, SIGINT, SIGTERM, SIGXFSZ})
      std::signal(sig, SIG_DFL);
    std::freopen("/dev/null", "w", stderr);
    alarm(10);
    try {
      read(path);
    } catch (const UserError&) {
      _exit(2);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace drift::fuzz
