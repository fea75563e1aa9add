// Phase times (DRIFT_PHASE_TIMES): scopes add up by name only while timing is on.
#include "catch_torch.hpp"

#include <thread>

#include "engine/core/phase_times.hpp"

using namespace drift;

TEST_CASE("phase scopes add their time to their phase while timing is on", "[phase_times]") {
  reset_phase_times();
  set_phase_times(true);
  for (int i = 0; i < 2; ++i) {
    const PhaseScope timed("test: sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  { const PhaseScope timed("test: nothing"); }
  set_phase_times(false);
  { const PhaseScope ignored("test: off"); }
  const auto totals = phase_totals();
  REQUIRE(totals.size() == 2);
  CHECK(totals[0].name == "test: nothing");  // by name
  CHECK(totals[1].name == "test: sleep");
  CHECK(totals[1].count == 2);
  CHECK(totals[1].wall_seconds >= 0.004);
  CHECK(totals[1].cpu_seconds < totals[1].wall_seconds);  // a sleeping thread uses no CPU
  const auto report = phase_report();
  CHECK(report.find("test: sleep") != std::string::npos);
  CHECK(report.find("test: off") == std::string::npos);
  reset_phase_times();
  CHECK(phase_report().empty());
}
