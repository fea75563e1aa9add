#include "progress.hpp"

#include <cstdio>

namespace drift::cli {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  char out[32];
  if (s >= 3600)
    std::snprintf(out, sizeof(out), "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(out, sizeof(out), "%ld:%02ld", s / 60, s % 60);
  return out;
}

}  // namespace

ProgressDisplay::ProgressDisplay(std::shared_ptr<spdlog::logger> log, std::shared_ptr<spdlog::logger> file_only,
                                 bool live)
    : log_(std::move(log)), file_only_(std::move(file_only)), live_(live) {}

void ProgressDisplay::on_round(const RoundReport& r) {
  if (r.evaluated) {
    last_accuracy_ = r.test_accuracy;
    last_loss_ = r.test_loss;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double per_round = elapsed / r.round;
  const double eta = per_round * (r.total_rounds - r.round);
  std::size_t failed = 0;
  for (const auto& c : r.clients) failed += c.event == ClientEvent::failed;

  last_progress_ = std::chrono::steady_clock::now().time_since_epoch().count();
  auto& line_log = live_ ? file_only_ : log_;
  line_log->info(
      "round {}/{}: {} updates{}, train loss {:.4f}{} ({:.2f} s train, {:.2f} s eval)", r.round, r.total_rounds,
      r.num_updates, failed ? fmt::format(" ({} failed)", failed) : "", r.train_loss,
      r.evaluated ? fmt::format(", test accuracy {:.2f}%, test loss {:.4f}", 100 * r.test_accuracy, r.test_loss) : "",
      r.wall_train_seconds, r.wall_eval_seconds);
  for (const auto& c : r.clients)
    if (c.event == ClientEvent::failed) log_->warn("round {}: client {} failed: {}", r.round, c.client_id, c.detail);
  if (r.sa_aborted)
    log_->warn("round {}: secure aggregation aborted in {}: {}; the model stays as it was", r.round, r.sa_abort_stage,
               r.sa_abort_reason);
  if (live_) {
    std::fprintf(stderr, "\r\033[K round %u/%u | acc %.2f%% | loss %.4f | %.1f s/round | ETA %s", r.round,
                 r.total_rounds, 100 * last_accuracy_.load(), last_loss_, per_round, clock_text(eta).c_str());
    std::fflush(stderr);
  }
}

// A round can take long (a large FedBuff buffer, slow clients): on a terminal the live line
// counts its updates; otherwise a log line says so every 30 s.
void ProgressDisplay::on_progress(std::uint32_t round, std::uint32_t arrived, std::uint32_t needed) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  if (live_) {
    std::fprintf(stderr, "\r\033[K round %u: %u/%u updates | acc %.2f%%", round, arrived, needed,
                 100 * last_accuracy_.load());
    std::fflush(stderr);
    return;
  }
  const auto since = now - std::chrono::steady_clock::duration(last_progress_.load());
  if (since < std::chrono::seconds(30)) return;
  last_progress_ = now.count();
  log_->info("round {}: {}/{} updates so far", round, arrived, needed);
}

void ProgressDisplay::on_finish(const RunSummary& s) {
  if (live_) std::fprintf(stderr, "\n");
  if (s.diverged_round) {
    log_->error("diverged at aggregation {}: {}; its accuracies are not results", *s.diverged_round, s.divergence);
    return;
  }
  if (s.rounds == 0) {  // its virtual time is that of no aggregation: 0, whatever the edges simulated
    log_->info("finished 0 rounds: no aggregation took place, so there is no accuracy to report");
    return;
  }
  // Short runs in hundredths: a run of half a virtual second is not "0 virtual s".
  const auto virtual_s = fmt::format(s.virtual_time < 100 ? "{:.2f}" : "{:.0f}", s.virtual_time);
  log_->info(
      "finished {} rounds in {} virtual s: best accuracy {:.2f}% (round {}), final {:.2f}%, mean of last 5 "
      "{:.2f}%",
      s.rounds, virtual_s, 100 * s.best_accuracy, s.best_round, 100 * s.final_accuracy, 100 * s.last5_mean_accuracy);
}

void ProgressDisplay::on_notice(const std::string& text) {
  if (live_) std::fprintf(stderr, "\r\033[K");
  log_->info("{}", text);
}

void ProgressDisplay::on_checkpoint(const std::string& text) { file_only_->info("{}", text); }

void ProgressDisplay::on_warning(const std::string& text) {
  if (live_) std::fprintf(stderr, "\r\033[K");
  log_->warn("{}", text);
}

}  // namespace drift::cli
