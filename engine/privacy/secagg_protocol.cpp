#include "engine/privacy/secagg_protocol.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace drift::privacy {

const char* stage_name(SecAggStage stage) {
  switch (stage) {
    case SecAggStage::advertise_keys:
      return "advertise_keys";
    case SecAggStage::share_keys:
      return "share_keys";
    case SecAggStage::masked_input:
      return "masked_input";
    case SecAggStage::consistency:
      return "consistency";
    case SecAggStage::unmasking:
      return "unmasking";
  }
  return "?";
}

ShareRule share_rule(std::uint32_t n, double share_fraction, double threshold_fraction) {
  // Flower's rule, rounding half to even like Python's round() (std::nearbyint in the default mode).
  auto s = static_cast<std::uint32_t>(std::nearbyint(share_fraction * n));
  if (s < n && s % 2 == 0) ++s;
  if (s <= 2) s = n;
  const auto t = std::max<std::uint32_t>(static_cast<std::uint32_t>(std::nearbyint(threshold_fraction * s)), 2);
  if (s != n && s % 2 == 0) ++s;
  return {s, t, s >> 1};
}

NeighbourGraph complete_graph(std::uint32_t n) {
  NeighbourGraph g(n);
  for (std::uint32_t u = 0; u < n; ++u)
    for (std::uint32_t v = 0; v < n; ++v)
      if (v != u) g[u].push_back(v);
  return g;
}

NeighbourGraph ring_graph(const std::vector<std::uint32_t>& ring, std::uint32_t half) {
  const auto n = static_cast<std::uint32_t>(ring.size());
  NeighbourGraph g(n);
  for (std::uint32_t p = 0; p < n; ++p) {
    auto& mine = g[ring[p]];
    for (std::uint32_t i = 1; i <= half && i < n; ++i) {
      mine.push_back(ring[(p + i) % n]);
      mine.push_back(ring[(p + n - i) % n]);
    }
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    mine.erase(std::remove(mine.begin(), mine.end(), ring[p]), mine.end());
  }
  return g;
}

SecAggSession::SecAggSession(NeighbourGraph graph, std::uint32_t threshold, bool consistency_check,
                             std::vector<std::uint32_t> ids)
    : graph_(std::move(graph)),
      ids_(std::move(ids)),
      threshold_(threshold),
      consistency_check_(consistency_check),
      alive_(graph_.size(), true),
      in_u1_(graph_.size(), false),
      in_u2_(graph_.size(), false),
      in_sum_(graph_.size(), false) {
  if (threshold_ < 1) throw std::invalid_argument("secure aggregation: the threshold must be at least 1");
  if (!ids_.empty() && ids_.size() != graph_.size())
    throw std::invalid_argument("secure aggregation: one id per client");
}

std::uint32_t SecAggSession::count(const std::vector<bool>& v) {
  return static_cast<std::uint32_t>(std::count(v.begin(), v.end(), true));
}

std::uint32_t SecAggSession::live_neighbours(std::uint32_t u, const std::vector<bool>& set) const {
  std::uint32_t k = 0;
  for (auto v : graph_[u]) k += set[v] ? 1 : 0;
  return k;
}

std::uint32_t SecAggSession::keys_rebuilt() const {
  std::uint32_t k = 0;
  for (std::size_t u = 0; u < graph_.size(); ++u) k += in_u2_[u] && !in_sum_[u] ? 1 : 0;
  return k;
}

StageBits SecAggSession::bits(std::uint32_t u, SecAggStage s, const SecAggSizes& z) const {
  switch (s) {
    case SecAggStage::advertise_keys:
      return {0, 2 * z.key_bits};
    case SecAggStage::share_keys: {
      const double k = live_neighbours(u, in_u1_);
      return {2 * k * z.key_bits, 2 * k * z.share_bits};  // one ciphertext carries both shares
    }
    case SecAggStage::masked_input:
      return {2 * live_neighbours(u, in_u2_) * z.share_bits, static_cast<double>(z.elements) * z.element_bits};
    case SecAggStage::consistency:
      return {};
    case SecAggStage::unmasking:  // one share for each neighbour of U2 and one of its own
      return {0, (live_neighbours(u, in_u2_) + 1.0) * z.share_bits};
  }
  return {};
}

double SecAggSession::client_work(std::uint32_t u, SecAggStage s, const SecAggSizes& z,
                                  const SecAggUnitCosts& c) const {
  const double ciphertext_bytes = 2 * z.share_bits / 8;
  const double m = static_cast<double>(z.elements);
  switch (s) {
    case SecAggStage::advertise_keys:
      return 2 * c.keygen;
    case SecAggStage::share_keys: {
      const double k = live_neighbours(u, in_u1_);
      return k * c.key_agreement + 2 * (k + 1) * threshold_ * c.field_op + k * c.encrypt_per_byte * ciphertext_bytes;
    }
    case SecAggStage::masked_input: {
      const double k = live_neighbours(u, in_u2_);
      return k * (c.decrypt_per_byte * ciphertext_bytes + c.key_agreement) +
             (k + 1) * m * (c.prg_per_element + c.add_per_element);
    }
    default:
      return 0.0;
  }
}

double SecAggSession::server_work(SecAggStage s, const SecAggSizes& z, const SecAggUnitCosts& c) const {
  const double m = static_cast<double>(z.elements), t = threshold_;
  const double masks = m * (c.prg_per_element + c.add_per_element);
  if (s == SecAggStage::masked_input) return count(in_sum_) * m * c.add_per_element / c.server_speed;
  if (s != SecAggStage::unmasking) return 0.0;
  double work = (count(in_sum_) + keys_rebuilt()) * t * t * c.field_op + count(in_sum_) * masks;
  for (std::size_t v = 0; v < graph_.size(); ++v)
    if (in_u2_[v] && !in_sum_[v])
      work += live_neighbours(static_cast<std::uint32_t>(v), in_sum_) * (c.key_agreement + masks);
  return work / c.server_speed;
}

void SecAggSession::abort(SecAggStage s, std::string why) {
  if (aborted_) return;
  aborted_ = true;
  abort_stage_ = s;
  abort_reason_ = std::move(why);
}

// The server's rule after S0, S1 and S2: every client of the cohort needs t live members in its
// closed neighbourhood (for the complete graph: t clients left at all).
void SecAggSession::check_neighbourhoods(SecAggStage s) {
  char why[200];
  const auto left = count(alive_);
  if (left < threshold_) {
    std::snprintf(why, sizeof why, "%u of %u clients finished %s, below the threshold %u", left, cohort(),
                  stage_name(s), threshold_);
    return abort(s, why);
  }
  for (std::uint32_t u = 0; u < cohort(); ++u) {
    const auto live = live_neighbours(u, alive_) + (alive_[u] ? 1 : 0);
    if (live >= threshold_) continue;
    std::snprintf(why, sizeof why, "after %s client %u's neighbourhood has %u live members, below the threshold %u",
                  stage_name(s), id(u), live, threshold_);
    return abort(s, why);
  }
}

// After S4: t shares of every secret the server must rebuild, from the clients still there.
void SecAggSession::check_shares() {
  char why[200];
  for (std::uint32_t v = 0; v < cohort(); ++v) {
    if (!in_u2_[v]) continue;
    const bool self = in_sum_[v];  // its self mask; otherwise its masking key
    const auto shares = live_neighbours(v, alive_) + (self && alive_[v] ? 1 : 0);
    if (shares >= threshold_) continue;
    std::snprintf(why, sizeof why, "%u shares of client %u's %s came back, below the threshold %u", shares, id(v),
                  self ? "self mask" : "masking key", threshold_);
    return abort(SecAggStage::unmasking, why);
  }
}

void SecAggSession::end_stage(SecAggStage s, const std::vector<bool>& completed) {
  if (aborted_) throw std::logic_error("secure aggregation: a stage after the round aborted");
  if (completed.size() != graph_.size()) throw std::logic_error("secure aggregation: one answer per client");
  for (std::size_t u = 0; u < graph_.size(); ++u) alive_[u] = alive_[u] && completed[u];
  const auto i = static_cast<std::size_t>(s);
  switch (s) {
    case SecAggStage::advertise_keys:
      in_u1_ = alive_;
      survivors_[i] = count(alive_);
      if (cohort() < 2) return abort(s, "a cohort of fewer than 2 clients cannot hide an input");
      return check_neighbourhoods(s);
    case SecAggStage::share_keys:
      in_u2_ = alive_;
      survivors_[i] = count(alive_);
      return check_neighbourhoods(s);
    case SecAggStage::masked_input:
      // SecAgg+: a client that received fewer than t - 1 ciphertexts cannot mask; it fails.
      for (std::uint32_t u = 0; u < cohort(); ++u)
        if (alive_[u] && live_neighbours(u, in_u2_) + 1 < threshold_) alive_[u] = false;
      in_sum_ = alive_;
      survivors_[i] = survivors_[i + 1] = count(alive_);
      return check_neighbourhoods(s);
    case SecAggStage::consistency:
      survivors_[i] = count(alive_);
      return check_neighbourhoods(s);
    case SecAggStage::unmasking:
      // A client with fewer than t live members of U3 around it refuses to unmask.
      for (std::uint32_t u = 0; u < cohort(); ++u)
        if (alive_[u] && live_neighbours(u, in_sum_) + 1 < threshold_) alive_[u] = false;
      survivors_[i] = count(alive_);
      if (survivors_[i] < threshold_) {
        char why[160];
        std::snprintf(why, sizeof why, "%u of %u clients finished unmasking, below the threshold %u", survivors_[i],
                      cohort(), threshold_);
        return abort(s, why);
      }
      return check_shares();
  }
}

double stage_done(double latency, double down_bits_per_s, double up_bits_per_s, const StageBits& bits, double work) {
  return latency + bits.down / down_bits_per_s + work + latency + bits.up / up_bits_per_s;
}

}  // namespace drift::privacy
