// Evaluation jobs, their results and the weight bundles they carry.
#include "fuzz_input.hpp"
#include "messages/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using drift::msg::Buffer;
  return drift::fuzz::decode_bytes(data, size, [](const Buffer& b) {
    drift::fuzz::each_decoder(
        b, [](const Buffer& x) { drift::msg::decode_eval_job(x); },
        [](const Buffer& x) { drift::msg::decode_eval_result(x); },
        [](const Buffer& x) { drift::msg::decode_bundle(x); });
  });
}
