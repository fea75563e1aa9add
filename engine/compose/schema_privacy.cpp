// The [privacy] and [secure_aggregation] sections of the scenario's key table (docs/privacy.md).
#include "engine/compose/schema_privacy.hpp"

namespace drift {
namespace {

using S = Scenario;
using Pv = PrivacyConfig;
using Sa = SecureAggregationConfig;

// Why a key does nothing in this scenario; "" where it acts.
std::string no_privacy(const S& s) { return s.privacy.mode == PrivacyMode::none ? "with privacy.mode = none" : ""; }
std::string fixed_clip(const S& s) {
  if (const auto why = no_privacy(s); !why.empty()) return why;
  return s.privacy.clip_mode == DpClip::fixed ? "with privacy.clip_mode = fixed" : "";
}
std::string no_secagg(const S& s) {
  return s.secure_aggregation.protocol == SecAggProtocol::none ? "with secure_aggregation.protocol = none" : "";
}
std::string not_secagg_plus(const S& s) {
  if (const auto why = no_secagg(s); !why.empty()) return why;
  return s.secure_aggregation.protocol == SecAggProtocol::secagg
             ? "with secure_aggregation.protocol = secagg (every client is a neighbour)"
             : "";
}
std::string not_flower(const S& s) {
  if (const auto why = no_secagg(s); !why.empty()) return why;
  return s.secure_aggregation.encoding != SecAggEncoding::flower ? "with a fixed-point encoding" : "";
}
std::string not_fixed_point(const S& s) {
  if (const auto why = no_secagg(s); !why.empty()) return why;
  return s.secure_aggregation.encoding == SecAggEncoding::flower ? "with secure_aggregation.encoding = flower" : "";
}

}  // namespace

ScenarioSection privacy_section() {
  return {
      "privacy",
      "user-level differential privacy of the shared model (docs/privacy.md)",
      {bind_key<S>("mode",
                   "none | central: the server adds noise to the sum of clipped updates | local: each client adds its "
                   "own | distributed: each adds a 1/t share inside secure aggregation",
                   &S::privacy, &Pv::mode),
       bind_key<S>("clip",
                   "C: each client's update (its model minus the global one) is scaled to an L2 norm of at most C",
                   &S::privacy, &Pv::clip)
           .range(0.0, {}, true)
           .idle_when(no_privacy),
       bind_key<S>(
           "clip_mode",
           "fixed | adaptive: C starts at clip and follows a noisy quantile of the update norms (Andrew et al.)",
           &S::privacy, &Pv::clip_mode)
           .idle_when(no_privacy),
       bind_key<S>("target_quantile", "adaptive: the share of updates C should leave unclipped", &S::privacy,
                   &Pv::target_quantile)
           .range(0.0, 1.0)
           .idle_when(fixed_clip),
       bind_key<S>("clip_lr", "adaptive: C is multiplied by exp(-clip_lr (unclipped share - target_quantile))",
                   &S::privacy, &Pv::clip_lr)
           .range(0.0, 100.0)
           .idle_when(fixed_clip),
       bind_key<S>("count_noise", "adaptive: standard deviation of the noisy unclipped count; 0 = expected cohort / 20",
                   &S::privacy, &Pv::count_noise)
           .range(0.0, {})
           .idle_when(fixed_clip),
       bind_key<S>(
           "noise_multiplier",
           "z: Gaussian noise of standard deviation z C per coordinate (central: on the sum; local: on each update)",
           &S::privacy, &Pv::noise_multiplier)
           .range(0.0, 1e6)
           .idle_when(no_privacy),
       bind_key<S>(
           "denominator",
           "central: divide the noisy sum by the expected cohort (sound) or the number of updates actually summed",
           &S::privacy, &Pv::denominator)
           .idle_when(no_privacy),
       bind_key<S>("delta", "delta of the (epsilon, delta) reported", &S::privacy, &Pv::delta)
           .range(0.0, 1.0, true)
           .idle_when(no_privacy),
       bind_key<S>("target_epsilon",
                   "> 0: end the run (status ended) before an aggregation would take epsilon past this", &S::privacy,
                   &Pv::target_epsilon)
           .range(0.0, {})
           .idle_when(no_privacy)}};
}

ScenarioSection secure_aggregation_section() {
  return {
      "secure_aggregation",
      "secure aggregation's stages, dropouts, costs and integer sum in virtual time "
      "(docs/privacy.md#secure-aggregation)",
      {bind_key<S>("protocol", "none | secagg: every client a neighbour | secagg_plus: a ring of `shares` neighbours",
                   &S::secure_aggregation, &Sa::protocol),
       bind_key<S>("shares",
                   "secagg_plus: each client's neighbourhood, itself included, as a fraction of the cohort (Flower's "
                   "num_shares)",
                   &S::secure_aggregation, &Sa::shares)
           .range(0.0, 1.0, true)
           .idle_when(not_secagg_plus),
       bind_key<S>("threshold",
                   "shares needed to rebuild a secret, as a fraction of the neighbourhood; 0 = floor(s/2) + 1 "
                   "(floor(2s/3) + 1 with consistency_check)",
                   &S::secure_aggregation, &Sa::threshold)
           .range(0.0, 1.0)
           .idle_when(no_secagg),
       bind_key<S>("consistency_check", "the active-adversary variant's extra stage: clients sign the list of inputs",
                   &S::secure_aggregation, &Sa::consistency_check)
           .idle_when(no_secagg),
       bind_key<S>("encoding",
                   "flower: clip to [-c, c], Q levels, sum mod 2^modulus_bits | flsim: FLSim's signed fixed point | "
                   "signed_mod: the same, true modular",
                   &S::secure_aggregation, &Sa::encoding)
           .idle_when(no_secagg),
       bind_key<S>("rounding", "stochastic (unbiased, keyed per client) | deterministic (half to even)",
                   &S::secure_aggregation, &Sa::rounding)
           .idle_when(not_flower),
       bind_key<S>("clip_range", "flower: c, each coordinate of a weighted input is clipped to [-c, c]",
                   &S::secure_aggregation, &Sa::clip_range)
           .range(0.0, {}, true)
           .idle_when(not_flower),
       bind_key<S>("quantization_bits", "flower: Q = 2^bits levels over [-c, c]", &S::secure_aggregation,
                   &Sa::quantization_bits)
           .range(1, 62)
           .idle_when(not_flower),
       bind_key<S>("modulus_bits", "flower: the sum is taken mod M = 2^bits", &S::secure_aggregation, &Sa::modulus_bits)
           .range(2, 63)
           .idle_when(not_flower),
       bind_key<S>("max_weight",
                   "flower: W, the largest client weight (sample count); 0 = the population's largest client",
                   &S::secure_aggregation, &Sa::max_weight)
           .range(0.0, {})
           .idle_when(not_flower),
       bind_key<S>("scale", "flsim, signed_mod: s, an input x becomes round(s x)", &S::secure_aggregation, &Sa::scale)
           .range(0.0, {}, true)
           .idle_when(not_fixed_point),
       bind_key<S>("bits", "flsim, signed_mod: b, integers in [-2^(b-1), 2^(b-1))", &S::secure_aggregation, &Sa::bits)
           .range(2, 62)
           .idle_when(not_fixed_point),
       bind_key<S>("dropout",
                   "probability that a client still in the protocol stops in each stage (beside going offline)",
                   &S::secure_aggregation, &Sa::dropout)
           .range(0.0, 1.0)
           .idle_when(no_secagg),
       bind_key<S>("detection_delay", "seconds until the server notices that a client stopped", &S::secure_aggregation,
                   &Sa::detection_delay)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("stage_timeout",
                   "seconds a stage waits for its clients at most; 0 = until each answers or is noticed gone",
                   &S::secure_aggregation, &Sa::stage_timeout)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("key_bits", "bits of a public key on the wire", &S::secure_aggregation, &Sa::key_bits)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("share_bits", "bits of an encrypted share on the wire", &S::secure_aggregation, &Sa::share_bits)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("keygen_seconds", "a key pair's generation", &S::secure_aggregation, &Sa::keygen_seconds)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("key_agreement_seconds", "one key agreement", &S::secure_aggregation, &Sa::key_agreement_seconds)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("cipher_seconds_per_byte", "encrypting or decrypting one byte of a share", &S::secure_aggregation,
                   &Sa::cipher_seconds_per_byte)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("field_op_seconds", "one finite-field operation of secret sharing", &S::secure_aggregation,
                   &Sa::field_op_seconds)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("prg_seconds_per_element", "expanding a mask seed by one element", &S::secure_aggregation,
                   &Sa::prg_seconds_per_element)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("add_seconds_per_element", "adding one element mod M", &S::secure_aggregation,
                   &Sa::add_seconds_per_element)
           .range(0.0, {})
           .idle_when(no_secagg),
       bind_key<S>("server_speed", "the server's unit costs are the clients' divided by this", &S::secure_aggregation,
                   &Sa::server_speed)
           .range(0.0, {}, true)
           .idle_when(no_secagg),
       bind_key<S>("simulate_masks", "add and cancel the pairwise and self masks: the sum must come out bit-identical",
                   &S::secure_aggregation, &Sa::simulate_masks)
           .idle_when(not_flower)}};
}

}  // namespace drift
