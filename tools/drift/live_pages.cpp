#include "live_pages.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "engine/study/html.hpp"

namespace drift::cli {

LivePages::LivePages(double minutes, Draw draw, Warn warn)
    : period_(minutes * 60.0), draw_(std::move(draw)), warn_(std::move(warn)), thread_([this] { loop(); }) {}

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

std::string live_figures_dir(std::size_t drawing) { return drawing % 2 == 0 ? "live-figures-1" : "live-figures-2"; }

int live_refresh_seconds(double plot_minutes) { return static_cast<int>(std::clamp(plot_minutes * 60.0, 10.0, 60.0)); }

std::string drawn_at_now() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%H:%M:%S", &local);
  return std::string("drawn at ") + text;
}

void still_live_page(const std::filesystem::path& directory, const std::string& text) {
  const auto file = directory / "index.html";
  std::ifstream in(file);
  if (!in) return;
  std::ostringstream page;
  page << in.rdbuf();
  in.close();
  write_text_file(file, still_page(page.str(), text));
}

}  // namespace drift::cli
