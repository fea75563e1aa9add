#pragma once
// Live pages (docs/outputs.md#live-pages): while a run or a study goes on, its index.html and
// figures are redrawn every output.plot_minutes of wall time, on a thread of their own at a
// lower CPU priority, so that training keeps its cores, and never more often than keeps the
// drawing under 2 % of the wall time. The final drawing replaces them.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "commands.hpp"

namespace drift::cli {

class LivePages {
 public:
  // `draw` draws the page for the `drawing`-th time (0, 1, ...), giving up between two figures
  // when `stop` is set. `warn` hears why a drawing failed (once for each reason).
  using Draw = std::function<void(const std::atomic<int>& stop, std::size_t drawing)>;
  using Warn = std::function<void(const std::string& text)>;
  LivePages(double minutes, Draw draw, Warn warn);
  ~LivePages();
  LivePages(const LivePages&) = delete;
  LivePages& operator=(const LivePages&) = delete;

  // Ends the drawing (a drawing under way stops at its next figure) and waits for the thread.
  void stop();
  // Pages drawn so far.
  std::size_t drawings() const { return drawings_.load(); }

 private:
  void loop();

  std::chrono::duration<double> period_;
  Draw draw_;
  Warn warn_;
  std::atomic<int> stop_{0};
  std::atomic<std::size_t> drawings_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
};

// The `drawing`-th live page of a run or study (`what`): "Running: PROGRESS (P %), drawn at
// 14:03:07[; DETAIL]. ...", with P = done / total; it reloads as often as it is redrawn (between
// 10 s and a minute), and its figures go to two folders in turn.
LiveBanner live_banner(const std::string& progress, std::size_t done, std::size_t total, const std::string& what,
                       double plot_minutes, std::size_t drawing, const std::string& detail = "");

}  // namespace drift::cli
