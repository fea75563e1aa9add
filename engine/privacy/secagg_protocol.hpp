#pragma once
// Secure aggregation's stages as a simulator needs them (docs/privacy.md#secure-aggregation):
// who survives each stage of SecAgg (Bonawitz et al. 2017) or SecAgg+ (Bell et al. 2020), when
// a round aborts, and what each client sends and computes in each stage. No cryptography: masks
// cancel exactly in modular arithmetic, so the sum is the sum of the encoded inputs of U3.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace drift::privacy {

enum class SecAggStage : std::uint8_t {
  advertise_keys = 0,  // S0: two public keys up
  share_keys = 1,      // S1: Shamir shares of b_u and s_u, one ciphertext per neighbour
  masked_input = 2,    // S2: the masked input up (its members form U3)
  consistency = 3,     // S3: signatures over U3 (the active-adversary variant only)
  unmasking = 4,       // S4: shares of b_v for v in U3, of s_v for v in U2 \ U3
};
inline constexpr int kSecAggStages = 5;
const char* stage_name(SecAggStage stage);

// Flower's SecAgg+ share and threshold rule from fractions of the cohort n: s shares (the
// closed neighbourhood's size), threshold t, and `half` neighbours on each side of the ring.
struct ShareRule {
  std::uint32_t shares = 0, threshold = 0, half = 0;
};
ShareRule share_rule(std::uint32_t n, double share_fraction, double threshold_fraction);

// Who talks to whom: neighbours[u] lists u's neighbours (never u), ascending positions.
using NeighbourGraph = std::vector<std::vector<std::uint32_t>>;
NeighbourGraph complete_graph(std::uint32_t n);
// SecAgg+: positions in the ring order `ring` (a permutation of 0..n-1), each joined to the
// `half` positions on either side of it.
NeighbourGraph ring_graph(const std::vector<std::uint32_t>& ring, std::uint32_t half);

// Sizes in bits of the protocol's messages: a public key, one encrypted share, one element of
// the masked vector, and the number of elements (the model plus Flower's weight element).
struct SecAggSizes {
  double key_bits = 256, share_bits = 256, element_bits = 32;
  std::uint64_t elements = 0;
};

struct SecAggUnitCosts {  // seconds
  double keygen = 100e-6, key_agreement = 100e-6;
  double encrypt_per_byte = 10e-9, decrypt_per_byte = 10e-9;
  double field_op = 50e-9, prg_per_element = 2e-9, add_per_element = 0.5e-9;
  double server_speed = 10.0;  // the server's unit costs are these divided by it
};

struct StageBits {
  double down = 0, up = 0;
};

// One round of the protocol over a cohort: the survivor sets as the stages end, and the abort
// rules of the spec (the complete graph gives SecAgg's, a ring SecAgg+'s).
class SecAggSession {
 public:
  // `ids` names the clients in abort reasons (their positions when empty).
  SecAggSession(NeighbourGraph graph, std::uint32_t threshold, bool consistency_check,
                std::vector<std::uint32_t> ids = {});

  std::uint32_t cohort() const { return static_cast<std::uint32_t>(graph_.size()); }
  // Whether the round runs stage `s` at all (S3 only with the consistency check).
  bool runs(SecAggStage s) const { return s != SecAggStage::consistency || consistency_check_; }
  // Still in the protocol: in every survivor set so far.
  bool active(std::uint32_t u) const { return alive_[u]; }
  // What client u downloads and uploads in stage s, given who survived the stages before it.
  StageBits bits(std::uint32_t u, SecAggStage s, const SecAggSizes& sizes) const;
  // Client u's computation in stage s (unscaled seconds).
  double client_work(std::uint32_t u, SecAggStage s, const SecAggSizes& sizes, const SecAggUnitCosts& c) const;
  // The server's computation after stage s (already divided by its speed).
  double server_work(SecAggStage s, const SecAggSizes& sizes, const SecAggUnitCosts& c) const;

  // Ends stage s: `completed[u]` says whether active client u finished it. Clients SecAgg+ makes
  // fail (too few ciphertexts, too few live neighbours) leave too; then the server's checks.
  void end_stage(SecAggStage s, const std::vector<bool>& completed);

  bool aborted() const { return aborted_; }
  SecAggStage abort_stage() const { return abort_stage_; }
  const std::string& abort_reason() const { return abort_reason_; }
  // |U1| .. |U5| for the stages that ended (U4 = U3 without the consistency check).
  const std::array<std::uint32_t, kSecAggStages>& survivors() const { return survivors_; }
  // U2 and U3 (the clients whose input is in the sum), by position in the cohort.
  const std::vector<bool>& shared_keys() const { return in_u2_; }
  const std::vector<bool>& in_sum() const { return in_sum_; }
  const NeighbourGraph& graph() const { return graph_; }
  std::uint32_t threshold() const { return threshold_; }
  // The secrets the server rebuilt: self masks of U3, masking keys of U2 \ U3.
  std::uint32_t self_masks_rebuilt() const { return count(in_sum_); }
  std::uint32_t keys_rebuilt() const;

 private:
  static std::uint32_t count(const std::vector<bool>& v);
  std::uint32_t live_neighbours(std::uint32_t u, const std::vector<bool>& set) const;
  void abort(SecAggStage s, std::string why);
  void check_neighbourhoods(SecAggStage s);
  void check_shares();

  std::uint32_t id(std::uint32_t u) const { return ids_.empty() ? u : ids_[u]; }

  NeighbourGraph graph_;
  std::vector<std::uint32_t> ids_;
  std::uint32_t threshold_;
  bool consistency_check_;
  std::vector<bool> alive_, in_u1_, in_u2_, in_sum_;
  std::array<std::uint32_t, kSecAggStages> survivors_{};
  bool aborted_ = false;
  SecAggStage abort_stage_ = SecAggStage::advertise_keys;
  std::string abort_reason_;
};

// One client's time through a stage from its start: two latencies, its download and upload at
// its bandwidths (bits per second), and its work.
double stage_done(double latency, double down_bits_per_s, double up_bits_per_s, const StageBits& bits, double work);

}  // namespace drift::privacy
