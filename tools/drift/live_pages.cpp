#include "live_pages.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace drift::cli {

LivePages::LivePages(double minutes, Draw draw, Warn warn)
    : period_(minutes * 60.0), draw_(std::move(draw)), warn_(std::move(warn)) {
  // The drawing thread never takes SIGINT or SIGTERM: a study starts it before it watches for
  // them, and the kernel would otherwise hand a signal to this thread, whose default action
  // ends the whole process with no checkpoint (docs/checkpoints.md#interrupts).
  sigset_t interrupts, before;
  sigemptyset(&interrupts);
  sigaddset(&interrupts, SIGINT);
  sigaddset(&interrupts, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &interrupts, &before);
  thread_ = std::thread([this] { loop(); });
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

LivePages::~LivePages() { stop(); }

void LivePages::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(1);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LivePages::loop() {
  // Nice 10 for this thread and the gnuplot processes it starts (they inherit it): a drawing
  // takes the cores only when training leaves them idle.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
  std::string last_warning;
  std::chrono::duration<double> wait = period_;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, wait, [this] { return stop_.load() != 0; })) {
    lock.unlock();
    const auto begun = std::chrono::steady_clock::now();
    try {
      draw_(stop_, drawings_.load());
      drawings_.fetch_add(1);
    } catch (const PlotInterrupted&) {
      // stopped between two figures: the final drawing follows
    } catch (const std::exception& e) {
      if (e.what() != last_warning) warn_(std::string("live page not drawn: ") + e.what());
      last_warning = e.what();
    }
    // Whatever output.plot_minutes asks, the next drawing waits 49 times as long as this one
    // took: drawing takes at most 2 % of the wall time, of one core.
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - begun;
    wait = std::max(period_, 49.0 * took);
    lock.lock();
  }
}

LiveBanner live_banner(const std::string& progress, std::size_t done, std::size_t total, const std::string& what,
                       double plot_minutes, std::size_t drawing, const std::string& detail) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char clock[32];
  std::strftime(clock, sizeof clock, "%H:%M:%S", &local);
  const int refresh = static_cast<int>(std::clamp(plot_minutes * 60.0, 10.0, 60.0));
  return {"Running: " + progress + " (" + std::to_string(100 * done / std::max<std::size_t>(total, 1)) +
              " %), drawn at " + clock + (detail.empty() ? "" : "; " + detail) + ". This page reloads itself every " +
              std::to_string(refresh) + " s; the final page replaces it when the " + what + " ends.",
          refresh, drawing % 2 == 0 ? "live-figures-1" : "live-figures-2"};
}

}  // namespace drift::cli
