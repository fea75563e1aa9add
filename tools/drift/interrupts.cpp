#include "interrupts.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace drift::cli {
namespace {

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

InterruptWatch::InterruptWatch(std::shared_ptr<actors::RunInterrupt> interrupt,
                               std::function<void(const std::string&)> say, bool quit_on_second)
    : interrupt_(std::move(interrupt)) {
  // Blocked before any other thread exists, so every thread the run starts inherits the mask
  // and the signals reach only the watcher.
  const auto set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this, set, quit_on_second, say = std::move(say)] {
    const timespec poll{0, 200 * 1000 * 1000};
    while (!done_.load()) {
      const int sig = sigtimedwait(&set, nullptr, &poll);
      if (sig < 0) continue;  // timeout or EINTR: look at done_ again
      const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
      int expected = 0;
      const bool first = interrupt_->signal.compare_exchange_strong(expected, sig);
      ++interrupt_->received;
      if (first) {
        say(std::string(name) + ": stopping at the next aggregation with a checkpoint (again to quit at once)");
        continue;
      }
      say(std::string(name) + " again: quitting now; drift resume continues from the last checkpoint");
      if (quit_on_second) _exit(128 + sig);
    }
  });
}

InterruptWatch::~InterruptWatch() {
  done_ = true;
  thread_.join();
  const auto set = watched_signals();
  // A signal that came after the run stopped is acted on now, as it would have been.
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

int InterruptWatch::exit_code() const {
  const int sig = interrupt_->signal.load();
  return 128 + (sig != 0 ? sig : SIGINT);
}

}  // namespace drift::cli
