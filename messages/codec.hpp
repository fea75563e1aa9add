#pragma once
// Encoders and decoders for every message drift sends. Encoding copies tensor bytes once;
// decoding aliases them. Every decoder checks the buffer against DecodeLimits and throws
// DecodeError on anything malformed: it never crashes and never trusts a length it was sent.
#include <cstdint>
#include <vector>

#include "engine/metrics/round_report.hpp"
#include "engine/tensors/federated_types.hpp"
#include "messages/buffer.hpp"

namespace drift::msg {

Buffer encode_task(const TrainingTask& task);
TrainingTask decode_task(const Buffer& buffer, const DecodeLimits& limits = {});

Buffer encode_update(const ClientUpdate& update);
ClientUpdate decode_update(const Buffer& buffer, const DecodeLimits& limits = {});

Buffer encode_bundle(const NamedTensors& tensors);
NamedTensors decode_bundle(const Buffer& buffer, const DecodeLimits& limits = {});

struct ClientStateMessage {
  std::uint32_t client_id = 0;
  Payload state;
};
Buffer encode_client_state(const ClientStateMessage& state);
ClientStateMessage decode_client_state(const Buffer& buffer, const DecodeLimits& limits = {});

Buffer encode_eval_job(const EvalJob& job);
EvalJob decode_eval_job(const Buffer& buffer, const DecodeLimits& limits = {});

Buffer encode_eval_result(const EvalResult& result);
EvalResult decode_eval_result(const Buffer& buffer, const DecodeLimits& limits = {});

Buffer encode_report(const RoundReport& report);
RoundReport decode_report(const Buffer& buffer, const DecodeLimits& limits = {});
// A report field's name in report.capnp: "per_class_accuracy" -> "perClassAccuracy".
std::string wire_field_name(std::string_view field);

}  // namespace drift::msg
