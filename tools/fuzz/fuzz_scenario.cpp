// A scenario file as a person (or a coordinator, to its workers) hands it over: parsed,
// validated and built, and a small federation's population drawn from it (groups, profiles,
// held-out clients, the [hierarchy]'s edge map) over histograms of two labels.
#include "engine/compose/loader.hpp"
#include "engine/population/population.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto scenario = drift::parse_scenario(text, "fuzz.toml");
    if (scenario.clients <= 4096) {
      std::vector<std::vector<std::int64_t>> histograms(scenario.clients, std::vector<std::int64_t>(2, 0));
      for (std::uint32_t c = 0; c < scenario.clients; ++c) histograms[c][c % 2] = 1 + c % 7;
      drift::build_population(scenario, histograms);
    }
  } catch (const drift::UserError&) {
  }
  return 0;
}
