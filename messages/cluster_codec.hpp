#pragma once
// Encoders and decoders of the join handshake. A join request arrives from a peer nobody has
// authenticated yet, so its decoder takes small limits by default.
#include "engine/cluster/join.hpp"
#include "messages/buffer.hpp"

namespace drift::msg {

// Nothing in a handshake needs more (a resolved scenario is a few kilobytes).
inline constexpr DecodeLimits kHandshakeLimits{std::size_t{1} << 20};

Buffer encode_join_request(const JoinRequest& request);
JoinRequest decode_join_request(const Buffer& buffer, const DecodeLimits& limits = kHandshakeLimits);

Buffer encode_join_reply(const JoinReply& reply);
JoinReply decode_join_reply(const Buffer& buffer, const DecodeLimits& limits = kHandshakeLimits);

Buffer encode_worker_ready(const WorkerReady& ready);
WorkerReady decode_worker_ready(const Buffer& buffer, const DecodeLimits& limits = kHandshakeLimits);

}  // namespace drift::msg
