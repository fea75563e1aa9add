#pragma once
// Another drift started by this one (a study's runs, the isolated check of a file): the same
// executable, bound to die with this process.
#include <sys/types.h>

#include <string>
#include <vector>

namespace drift::cli {

struct DriftChildSetup {
  int output_fd = -1;                    // its stdout and stderr go here (-1: this process's)
  bool own_process_group = false;        // so that a signal to the study's group spares it
  bool for_untrusted_file = false;       // no core file, and an address-space limit outside sanitizer builds
  bool close_other_fds = false;          // keep none of this process's descriptors past stderr (its sockets)
  std::vector<std::string> environment;  // NAME=VALUE entries added to (or replacing) this process's
};

// Starts /proc/self/exe with `args` (args[0] names it). The child is killed when the thread
// that started it ends, so start it from a thread that lives as long as the child should.
// Returns its pid, or -1 when fork fails.
pid_t start_drift_child(std::vector<std::string> args, const DriftChildSetup& setup);

}  // namespace drift::cli
