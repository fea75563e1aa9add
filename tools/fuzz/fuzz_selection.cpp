// The sampler's request and answer.
#include "fuzz_input.hpp"
#include "messages/selection_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return drift::fuzz::decode_bytes(data, size, [](const drift::msg::Buffer& b) {
    try {
      drift::msg::decode_selection_request(b);
    } catch (const drift::DecodeError&) {
    }
    drift::msg::decode_selection(b);
  });
}
