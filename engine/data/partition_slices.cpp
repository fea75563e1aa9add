// FedAU's and FedAWE's split (docs/scenarios.md#partitions): a Dirichlet row per client, and
// each label's samples, in dataset order, cut into contiguous slices in proportion to the rows.
#include <algorithm>
#include <cmath>

#include "engine/data/partition.hpp"

namespace drift {

Partition slices_by_label_rows(const std::vector<std::int64_t>& labels, std::int64_t num_classes,
                               const std::vector<std::vector<double>>& rows) {
  std::vector<std::vector<std::int64_t>> by_class(static_cast<std::size_t>(num_classes));
  for (std::size_t i = 0; i < labels.size(); ++i)
    by_class.at(static_cast<std::size_t>(labels[i])).push_back(static_cast<std::int64_t>(i));
  Partition p;
  p.indices.resize(rows.size());
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    const auto& members = by_class[c];
    double total = 0.0;
    for (const auto& row : rows) total += row.at(c);
    if (members.empty() || !(total > 0.0)) continue;
    const auto size = static_cast<double>(members.size());
    double cumulative = 0.0;
    std::size_t begin = 0;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      cumulative += rows[k][c];
      // The code's np.round rounds half to even, as nearbyint does in the default rounding
      // mode; the last client's end is the class's size, whatever the sum's last bit.
      const auto end =
          k + 1 == rows.size()
              ? members.size()
              : std::min(members.size(), static_cast<std::size_t>(std::nearbyint(size * cumulative / total)));
      if (end <= begin) continue;
      p.indices[k].insert(p.indices[k].end(), members.begin() + static_cast<std::ptrdiff_t>(begin),
                          members.begin() + static_cast<std::ptrdiff_t>(end));
      begin = end;
    }
  }
  for (auto& client : p.indices) std::sort(client.begin(), client.end());
  return p;
}

Partition partition_dirichlet_slices(const std::vector<std::int64_t>& labels, std::int64_t num_classes,
                                     std::uint32_t clients, double alpha, std::int64_t min_size,
                                     std::int64_t max_attempts, Rng& rng) {
  const auto n = static_cast<std::int64_t>(labels.size());
  const MinSizeDraw rule{"dirichlet_slices", alpha, clients, n, min_size, max_attempts};
  return redraw_until_min_size(rule, [&] {
    std::vector<std::vector<double>> rows;
    rows.reserve(clients);
    for (std::uint32_t k = 0; k < clients; ++k)
      rows.push_back(dirichlet_draw(rng, alpha, static_cast<std::size_t>(num_classes)));
    return slices_by_label_rows(labels, num_classes, rows);
  });
}

}  // namespace drift
