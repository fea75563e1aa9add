// The messages between a coordinator's round driver and a worker's edge host ([hierarchy]
// edges in workers): edge assignments, aggregation inputs and results, regroups and the
// edges' checkpoint parts, as either side reads them from the other.
#include "fuzz_input.hpp"
#include "messages/edge_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using drift::msg::Buffer;
  return drift::fuzz::decode_bytes(data, size, [](const Buffer& b) {
    drift::fuzz::each_decoder(
        b, [](const Buffer& x) { drift::msg::decode_edge_assignment(x); },
        [](const Buffer& x) { drift::msg::decode_aggregation_input(x); },
        [](const Buffer& x) { drift::msg::decode_edge_aggregated(x); },
        [](const Buffer& x) { drift::msg::decode_client_regroup(x); },
        [](const Buffer& x) { drift::msg::decode_edge_states(x); });
  });
}
