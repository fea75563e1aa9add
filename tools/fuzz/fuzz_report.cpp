// The round report the server sends the metrics sink.
#include "fuzz_input.hpp"
#include "messages/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return drift::fuzz::decode_bytes(data, size, [](const drift::msg::Buffer& b) { drift::msg::decode_report(b); });
}
