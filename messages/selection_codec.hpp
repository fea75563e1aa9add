#pragma once
// The messages between a round driver and the sampler actor (control.capnp).
#include "engine/sampling/cohort_sampler.hpp"
#include "messages/buffer.hpp"

namespace drift::msg {

Buffer encode_selection_request(const SelectionRequest& request);
// Throws DecodeError for busy clients out of order and for non-finite times or factors.
SelectionRequest decode_selection_request(const Buffer& buffer, const DecodeLimits& limits = {});

Buffer encode_selection(const Selection& selection);
Selection decode_selection(const Buffer& buffer, const DecodeLimits& limits = {});

}  // namespace drift::msg
