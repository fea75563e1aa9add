// The update a client sends back, and the client state that travels with it.
#include "fuzz_input.hpp"
#include "messages/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return drift::fuzz::decode_bytes(data, size, [](const drift::msg::Buffer& b) {
    try {
      drift::msg::decode_update(b);
    } catch (const drift::DecodeError&) {
    }
    drift::msg::decode_client_state(b);
  });
}
