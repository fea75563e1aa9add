#include "engine/sampling/selection.hpp"

#include <algorithm>
#include <unordered_set>

namespace drift {

void draw_distinct(std::vector<std::uint32_t>& chosen, std::uint32_t count, std::uint32_t population, Rng& rng,
                   const std::function<std::uint32_t()>& draw, const std::function<bool(std::uint32_t)>& accept) {
  std::unordered_set<std::uint32_t> taken(chosen.begin(), chosen.end());
  const std::size_t target = chosen.size() + count;
  std::size_t misses = 0;
  const std::size_t budget = 64 * static_cast<std::size_t>(count) + 1024;
  while (chosen.size() < target && misses < budget) {
    const auto c = draw();
    if (!taken.count(c) && accept(c)) {
      taken.insert(c);
      chosen.push_back(c);
    } else {
      ++misses;
    }
  }
  if (chosen.size() < target && population > 0) {
    const auto start = static_cast<std::uint32_t>(rng.below(population));
    for (std::uint32_t i = 0; i < population && chosen.size() < target; ++i) {
      const auto c = (start + i) % population;
      if (!taken.count(c) && accept(c)) {
        taken.insert(c);
        chosen.push_back(c);
      }
    }
  }
}

void draw_distinct_from(std::vector<std::uint32_t>& chosen, std::uint32_t count, const std::vector<std::uint32_t>& pool,
                        Rng& rng, const std::function<bool(std::uint32_t)>& accept) {
  if (pool.empty()) return;
  const std::size_t target = chosen.size() + count;
  draw_distinct(
      chosen, count, 0, rng, [&] { return pool[rng.below(pool.size())]; }, accept);
  if (chosen.size() >= target) return;
  // Exact fill when few pool members qualify: scan the pool from a random start.
  std::unordered_set<std::uint32_t> taken(chosen.begin(), chosen.end());
  const auto start = rng.below(pool.size());
  for (std::size_t i = 0; i < pool.size() && chosen.size() < target; ++i) {
    const auto c = pool[(start + i) % pool.size()];
    if (!taken.count(c) && accept(c)) {
      taken.insert(c);
      chosen.push_back(c);
    }
  }
}

AliasTable::AliasTable(const std::vector<double>& weights) : probability_(weights.size()), alias_(weights.size()) {
  const auto n = weights.size();
  double total = 0.0;
  for (double w : weights) total += w;
  std::vector<double> scaled(n);
  std::vector<std::uint32_t> small, large;
  for (std::size_t i = 0; i < n; ++i) {
    scaled[i] = total > 0 ? weights[i] * static_cast<double>(n) / total : 1.0;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    const auto s = small.back(), l = large.back();
    small.pop_back();
    probability_[s] = scaled[s];
    alias_[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (auto i : large) probability_[i] = 1.0;
  for (auto i : small) probability_[i] = 1.0;
}

std::uint32_t AliasTable::draw(Rng& rng) const {
  const auto i = static_cast<std::uint32_t>(rng.below(probability_.size()));
  return rng.uniform() < probability_[i] ? i : alias_[i];
}

}  // namespace drift
