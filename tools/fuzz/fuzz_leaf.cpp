// LEAF's JSON files (FEMNIST, Shakespeare), which a user downloads and drift parses with its own
// streaming handler: whatever the bytes, a UserError or a result, never a crash.
#include "engine/data/leaf_json.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the row width the reader requires: any (text), or FEMNIST-like rows of 4.
  const std::int64_t width = data[0] % 2 == 0 ? 0 : 4;
  ++data, --size;
  return drift::fuzz::read_as_file(data, size, ".json", [width](const std::string& path) {
    for (const auto& user : drift::read_leaf_json(path, width))
      if (user.samples() != user.declared) __builtin_trap();  // the reader promised they agree
  });
}
