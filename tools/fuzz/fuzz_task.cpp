// The training task a client receives: weights, the algorithm's payload, hyper-parameters.
#include "fuzz_input.hpp"
#include "messages/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return drift::fuzz::decode_bytes(data, size, [](const drift::msg::Buffer& b) { drift::msg::decode_task(b); });
}
