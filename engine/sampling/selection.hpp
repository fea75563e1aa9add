#pragma once
// Shared machinery of the samplers: drawing distinct eligible clients by rejection with a
// bounded number of attempts, then a deterministic scan when eligible clients are rare.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/core/rng.hpp"

namespace drift {

// Adds up to `count` distinct clients to `chosen` (already-chosen ones are skipped):
// candidates come from `draw`, are kept if `accept`; after enough misses, ids are scanned
// from a random start over [0, population) so that the result is exact when few qualify.
void draw_distinct(std::vector<std::uint32_t>& chosen, std::uint32_t count, std::uint32_t population, Rng& rng,
                   const std::function<std::uint32_t()>& draw, const std::function<bool(std::uint32_t)>& accept);

// Same, over an explicit candidate list (a group, a stratum) instead of [0, population).
void draw_distinct_from(std::vector<std::uint32_t>& chosen, std::uint32_t count, const std::vector<std::uint32_t>& pool,
                        Rng& rng, const std::function<bool(std::uint32_t)>& accept);

// Walker's alias table: O(1) draws from a fixed discrete distribution.
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& weights);
  std::uint32_t draw(Rng& rng) const;

 private:
  std::vector<double> probability_;
  std::vector<std::uint32_t> alias_;
};

}  // namespace drift
