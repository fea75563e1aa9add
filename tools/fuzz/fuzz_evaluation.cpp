// Evaluation jobs, their results and the weight bundles they carry.
#include "fuzz_input.hpp"
#include "messages/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return drift::fuzz::decode_bytes(data, size, [](const drift::msg::Buffer& b) {
    for (auto decode : {+[](const drift::msg::Buffer& x) { drift::msg::decode_eval_job(x); },
                        +[](const drift::msg::Buffer& x) { drift::msg::decode_eval_result(x); },
                        +[](const drift::msg::Buffer& x) { drift::msg::decode_bundle(x); }}) {
      try {
        decode(b);
      } catch (const drift::DecodeError&) {
      }
    }
  });
}
