// The join handshake: what a stranger can send the gatekeeper before the token is checked
// (join request, worker ready), the reply a worker reads, and the join rules applied to it.
#include "engine/cluster/join.hpp"
#include "fuzz_input.hpp"
#include "messages/cluster_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using drift::msg::Buffer;
  return drift::fuzz::decode_bytes(data, size, [](const Buffer& b) {
    drift::fuzz::each_decoder(
        b,
        [](const Buffer& x) {
          drift::join_refusal(drift::JoinPolicy{"0123456789abcdef0123", "hash"}, drift::msg::decode_join_request(x));
        },
        [](const Buffer& x) { drift::msg::decode_worker_ready(x); },
        [](const Buffer& x) { drift::msg::decode_join_reply(x); });
  });
}
