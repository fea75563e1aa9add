#include "actors/checkpointer.hpp"

#include <cstdio>

namespace drift::actors {

Checkpointer::Checkpointer(const Scenario& scenario, CheckpointOptions options, std::shared_ptr<msg::StateStore> states)
    : scenario_(scenario), options_(std::move(options)), states_(std::move(states)) {
  if (options_.resume_from) wall_before_ = options_.resume_from->checkpoint.wall_seconds;
  if (options_.resume_from && options_.interrupt) options_.interrupt->checkpoint_on_disk = true;
}

bool Checkpointer::due(std::uint32_t round, bool last) {
  if (!enabled()) return false;
  const auto& interrupt = options_.interrupt;
  // An interrupt at the last aggregation changes nothing: the run ends anyway.
  stopping_ = !last && ((interrupt && interrupt->signal.load() != 0) ||
                        (options_.stop_after > 0 && round >= options_.stop_after));
  if (last) return scenario_.checkpoint.at_end;
  if (stopping_) return true;
  const auto& c = scenario_.checkpoint;
  if (c.every > 0 && round % static_cast<std::uint64_t>(c.every) == 0) return true;
  const double minutes = std::chrono::duration<double>(Clock::now() - last_).count() / 60.0;
  return c.minutes > 0 && minutes >= c.minutes;
}

std::string Checkpointer::write(std::uint32_t round, double virtual_time, std::string driver, std::string sampler) {
  const auto began = Clock::now();
  Checkpoint c;
  c.round = round;
  c.virtual_time = virtual_time;
  c.wall_seconds = wall_seconds();
  c.driver = std::move(driver);
  c.sampler = std::move(sampler);
  c.files = options_.directory->marks();
  const auto bytes =
      write_checkpoint(options_.directory->path(), std::move(c), scenario_.resolved_toml,
                       [this](const std::filesystem::path& dir) { states_->save_to(dir / "client_state"); });
  last_ = Clock::now();
  if (options_.interrupt) options_.interrupt->checkpoint_on_disk = true;
  const double ms = std::chrono::duration<double, std::milli>(last_ - began).count();
  char line[160];
  std::snprintf(line, sizeof line, "checkpoint after aggregation %u: %.2f MB in %.0f ms", round,
                static_cast<double>(bytes) / 1e6, ms);
  return line;
}

double Checkpointer::wall_seconds() const {
  return wall_before_ + std::chrono::duration<double>(Clock::now() - started_).count();
}

}  // namespace drift::actors
