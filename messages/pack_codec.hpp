#pragma once
// The messages of a pack job (pack.capnp): its clients, and each client's update or error.
#include <cstdint>
#include <string>
#include <vector>

#include "messages/buffer.hpp"

namespace drift::msg {

Buffer encode_pack_job(const std::vector<std::uint32_t>& clients);
// Throws DecodeError for an empty pack or a client listed twice.
std::vector<std::uint32_t> decode_pack_job(const Buffer& buffer, const DecodeLimits& limits = {});

struct PackedReply {
  std::uint32_t client = 0;
  Buffer update;  // an Update message; empty when `error` says why there is none
  std::string error;
};

Buffer encode_pack_result(const std::vector<PackedReply>& members);
// Throws DecodeError for a member with both or neither of an update and an error.
std::vector<PackedReply> decode_pack_result(const Buffer& buffer, const DecodeLimits& limits = {});
// ... and unless it answers `clients`, one result each in their order.
std::vector<PackedReply> decode_pack_result(const Buffer& buffer, const std::vector<std::uint32_t>& clients,
                                            const DecodeLimits& limits = {});

}  // namespace drift::msg
