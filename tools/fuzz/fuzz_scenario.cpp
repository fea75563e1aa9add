// A scenario file as a person (or a coordinator, to its workers) hands it over: parsed,
// validated and built.
#include "engine/compose/loader.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    drift::parse_scenario(text, "fuzz.toml");
  } catch (const drift::UserError&) {
  }
  return 0;
}
