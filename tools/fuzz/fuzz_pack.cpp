// A pack job and its result (devices.pack): the clients of a pack, and each client's update
// bytes or error, as a slot and the server read them from each other.
#include "fuzz_input.hpp"
#include "messages/pack_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using drift::msg::Buffer;
  return drift::fuzz::decode_bytes(data, size, [](const Buffer& b) {
    drift::fuzz::each_decoder(
        b, [](const Buffer& x) { drift::msg::decode_pack_job(x); },
        [](const Buffer& x) { drift::msg::decode_pack_result(x); });
  });
}
