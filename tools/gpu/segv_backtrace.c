/* Preloaded into drift's runs by tools/gpu/bench.sh (LD_PRELOAD), where the GPU machine has no
 * debugger: on SIGSEGV or SIGABRT it writes the stack to stderr (the run's log), then dies of the
 * same signal. Found the crash inside cudaStreamEndCapture (docs/performance.md#cuda-graphs). */
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

static void write_stack(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  static const char header[] = "\n=== fatal signal: backtrace ===\n";
  (void)!write(2, header, sizeof header - 1);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  signal(SIGSEGV, write_stack);
  signal(SIGABRT, write_stack);
}
