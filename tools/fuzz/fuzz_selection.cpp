// The sampler's request and answer.
#include "fuzz_input.hpp"
#include "messages/selection_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using drift::msg::Buffer;
  return drift::fuzz::decode_bytes(data, size, [](const Buffer& b) {
    drift::fuzz::each_decoder(
        b, [](const Buffer& x) { drift::msg::decode_selection_request(x); },
        [](const Buffer& x) { drift::msg::decode_selection(x); });
  });
}
