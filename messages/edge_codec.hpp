#pragma once
// The messages between a round driver and an edge host in another process (edge.capnp).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "messages/buffer.hpp"

namespace drift::msg {

// Decoding throws DecodeError unless the edges ascend without repeats.
Buffer encode_edge_assignment(const std::vector<std::uint32_t>& edges);
std::vector<std::uint32_t> decode_edge_assignment(const Buffer& buffer, const DecodeLimits& limits = {});

// Decoding throws DecodeError unless there are as many pulled versions as staleness values.
Buffer encode_aggregation_input(const AggregationInput& input);
AggregationInput decode_aggregation_input(const Buffer& buffer, const DecodeLimits& limits = {});

// Decoding throws DecodeError for shares whose clients and values differ in number.
Buffer encode_edge_aggregated(const EdgeAggregated& aggregated);
EdgeAggregated decode_edge_aggregated(const Buffer& buffer, const DecodeLimits& limits = {});

// Decoding throws DecodeError for lists of different lengths or clients out of order.
Buffer encode_client_regroup(const ClientRegroup& regroup);
ClientRegroup decode_client_regroup(const Buffer& buffer, const DecodeLimits& limits = {});

// An edge's state at a checkpoint: the bytes its server half and its model write into the
// driver's archive (StateArchive), kept whole so the checkpoint's format does not change.
struct EdgeStatePart {
  std::uint32_t edge = 0;
  std::string server;
  std::string model;
};
// Throws std::length_error for a part over Cap'n Proto's 512 MiB per blob; decoding throws
// DecodeError for edges out of order.
Buffer encode_edge_states(const std::vector<EdgeStatePart>& parts);
std::vector<EdgeStatePart> decode_edge_states(const Buffer& buffer, const DecodeLimits& limits = {});

}  // namespace drift::msg
