#include "engine/data/partition.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "engine/core/error.hpp"

namespace drift {
namespace {

void sort_each(Partition& p) {
  for (auto& client : p.indices) std::sort(client.begin(), client.end());
}

// Consecutive slices of `sequence`, one per client, sizes differing by at most one (the first
// n mod K clients get the extra sample); each slice sorted.
Partition cut_into_equal_slices(const std::vector<std::int64_t>& sequence, std::uint32_t clients) {
  const auto n = static_cast<std::int64_t>(sequence.size());
  Partition p;
  p.indices.resize(clients);
  const std::int64_t base = n / clients, extra = n % clients;
  std::int64_t at = 0;
  for (std::uint32_t k = 0; k < clients; ++k) {
    const std::int64_t size = base + (static_cast<std::int64_t>(k) < extra ? 1 : 0);
    p.indices[k].assign(sequence.begin() + at, sequence.begin() + at + size);
    at += size;
  }
  sort_each(p);
  return p;
}

}  // namespace

Partition redraw_until_min_size(const MinSizeDraw& rule, const std::function<Partition()>& draw) {
  if (!(rule.alpha > 0.0)) throw UserError("partition.alpha must be > 0");
  if (rule.min_size * static_cast<std::int64_t>(rule.clients) > rule.num_samples)
    throw UserError("cannot give " + std::to_string(rule.clients) + " clients at least " +
                    std::to_string(rule.min_size) + " samples each from " + std::to_string(rule.num_samples) +
                    " training samples; lower partition.min_client_samples or federation.clients");
  std::int64_t smallest = 0;
  for (std::int64_t attempt = 0; attempt < rule.max_attempts; ++attempt) {
    auto p = draw();
    smallest = std::numeric_limits<std::int64_t>::max();
    for (const auto& c : p.indices) smallest = std::min<std::int64_t>(smallest, static_cast<std::int64_t>(c.size()));
    if (smallest >= rule.min_size) return p;
  }
  throw UserError(rule.scheme + " partition (alpha=" + std::to_string(rule.alpha) + ", " +
                  std::to_string(rule.clients) + " clients) left a client with " + std::to_string(smallest) +
                  " samples after " + std::to_string(rule.max_attempts) +
                  " attempts, below partition.min_client_samples=" + std::to_string(rule.min_size) +
                  "; raise partition.alpha or lower min_client_samples");
}

Partition partition_iid(std::int64_t num_samples, std::uint32_t clients, Rng& rng) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(num_samples));
  for (std::int64_t i = 0; i < num_samples; ++i) order[static_cast<std::size_t>(i)] = i;
  rng.shuffle(order);
  return cut_into_equal_slices(order, clients);
}

Partition partition_dirichlet(const std::vector<std::int64_t>& labels, std::int64_t num_classes, std::uint32_t clients,
                              double alpha, std::int64_t min_size, std::int64_t max_attempts, Rng& rng) {
  const auto n = static_cast<std::int64_t>(labels.size());
  std::vector<std::vector<std::int64_t>> by_class(static_cast<std::size_t>(num_classes));
  for (std::int64_t i = 0; i < n; ++i)
    by_class[static_cast<std::size_t>(labels[static_cast<std::size_t>(i)])].push_back(i);
  const double cap = static_cast<double>(n) / clients;

  const MinSizeDraw rule{"Dirichlet", alpha, clients, n, min_size, max_attempts};
  return redraw_until_min_size(rule, [&] {
    Partition p;
    p.indices.resize(clients);
    for (auto members : by_class) {
      if (members.empty()) continue;
      rng.shuffle(members);
      auto proportions = dirichlet_draw(rng, alpha, clients);
      // Full clients take no more; renormalising over the others cannot divide by zero
      // because the clients' total is below n, so some client is below the cap.
      double total = 0.0;
      for (std::uint32_t k = 0; k < clients; ++k) {
        if (static_cast<double>(p.indices[k].size()) >= cap) proportions[k] = 0.0;
        total += proportions[k];
      }
      if (total <= 0.0) {
        // Every remaining client drew (numerically) zero mass: give the class to the least
        // loaded open client, the limit of the distribution as alpha -> 0.
        std::uint32_t pick = 0;
        for (std::uint32_t k = 1; k < clients; ++k)
          if (p.indices[k].size() < p.indices[pick].size()) pick = k;
        proportions.assign(clients, 0.0);
        proportions[pick] = 1.0;
        total = 1.0;
      }
      const auto m = static_cast<double>(members.size());
      double cumulative = 0.0;
      std::size_t begin = 0;
      for (std::uint32_t k = 0; k < clients; ++k) {
        cumulative += proportions[k] / total;
        const std::size_t end =
            k + 1 == clients ? members.size() : std::min(members.size(), static_cast<std::size_t>(cumulative * m));
        if (end > begin) {
          p.indices[k].insert(p.indices[k].end(), members.begin() + static_cast<std::ptrdiff_t>(begin),
                              members.begin() + static_cast<std::ptrdiff_t>(end));
          begin = end;
        }
      }
    }
    sort_each(p);
    return p;
  });
}

Partition partition_shards(const std::vector<std::int64_t>& labels, std::uint32_t clients,
                           std::int64_t shards_per_client, Rng& rng) {
  const auto n = static_cast<std::int64_t>(labels.size());
  const std::int64_t shards = static_cast<std::int64_t>(clients) * shards_per_client;
  if (shards > n) {
    throw UserError("cannot cut " + std::to_string(n) + " samples into " + std::to_string(shards) +
                    " shards; lower partition.shards_per_client or federation.clients");
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return labels[static_cast<std::size_t>(a)] < labels[static_cast<std::size_t>(b)];
  });
  std::vector<std::int64_t> shard_ids(static_cast<std::size_t>(shards));
  for (std::int64_t s = 0; s < shards; ++s) shard_ids[static_cast<std::size_t>(s)] = s;
  rng.shuffle(shard_ids);

  Partition p;
  p.indices.resize(clients);
  for (std::int64_t s = 0; s < shards; ++s) {
    const std::int64_t shard = shard_ids[static_cast<std::size_t>(s)];
    const std::int64_t begin = shard * n / shards, end = (shard + 1) * n / shards;
    auto& client = p.indices[static_cast<std::size_t>(s / shards_per_client)];
    client.insert(client.end(), order.begin() + begin, order.begin() + end);
  }
  sort_each(p);
  return p;
}

Partition partition_dirichlet_creff(const std::vector<std::int64_t>& labels, std::int64_t num_classes,
                                    std::uint32_t clients, double alpha, std::int64_t max_attempts, Rng& rng) {
  constexpr std::uint32_t kWorkers = 10;
  if (clients < kWorkers) throw UserError("dirichlet_creff needs at least 10 clients");
  const auto n = static_cast<std::int64_t>(labels.size());
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  rng.shuffle(order);
  const std::int64_t chunks = (clients + kWorkers - 1) / kWorkers;
  const std::int64_t chunk_size = n * kWorkers / clients;
  std::vector<std::int64_t> sequence;  // every worker's samples, worker after worker
  sequence.reserve(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < chunks; ++j) {
    const std::int64_t begin = j * chunk_size, end = j + 1 == chunks ? n : std::min(n, (j + 1) * chunk_size);
    std::vector<std::int64_t> chunk_labels;
    for (std::int64_t i = begin; i < end; ++i)
      chunk_labels.push_back(labels[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])]);
    const auto min_size = static_cast<std::int64_t>(std::ceil(0.5 * static_cast<double>(end - begin) / kWorkers));
    Partition workers;
    try {
      workers = partition_dirichlet(chunk_labels, num_classes, kWorkers, alpha, min_size, max_attempts, rng);
    } catch (const UserError&) {
      throw UserError("dirichlet_creff: chunk " + std::to_string(j + 1) + " of " + std::to_string(chunks) +
                      " left a worker below half its share after " + std::to_string(max_attempts) +
                      " draws (alpha=" + std::to_string(alpha) + "); raise partition.alpha or partition.max_attempts");
    }
    for (const auto& worker : workers.indices)
      for (auto local : worker) sequence.push_back(order[static_cast<std::size_t>(begin + local)]);
  }
  return cut_into_equal_slices(sequence, clients);
}

std::vector<std::int64_t> long_tail_pool(const std::vector<std::int64_t>& labels, std::int64_t num_classes, double rho,
                                         Rng& rng) {
  std::vector<std::vector<std::int64_t>> by_class(static_cast<std::size_t>(num_classes));
  for (std::size_t i = 0; i < labels.size(); ++i)
    by_class[static_cast<std::size_t>(labels[i])].push_back(static_cast<std::int64_t>(i));
  const double n_max = std::floor(static_cast<double>(labels.size()) / static_cast<double>(num_classes));
  std::vector<std::int64_t> pool;
  for (std::int64_t c = 0; c < num_classes; ++c) {
    auto& members = by_class[static_cast<std::size_t>(c)];
    const double exponent = num_classes > 1 ? static_cast<double>(c) / static_cast<double>(num_classes - 1) : 0.0;
    const auto keep = static_cast<std::size_t>(std::floor(n_max * std::pow(1.0 / rho, exponent)));
    rng.shuffle(members);
    pool.insert(pool.end(), members.begin(),
                members.begin() + static_cast<std::ptrdiff_t>(std::min(keep, members.size())));
  }
  std::sort(pool.begin(), pool.end());
  return pool;
}

Partition partition_domains(const std::vector<std::int64_t>& domains, std::int64_t num_domains, std::uint32_t clients,
                            bool skewed, double alpha, std::int64_t min_size, Rng& rng) {
  if (num_domains < 1) throw UserError("the domain partition needs a multi-domain dataset (digit5)");
  if (clients < num_domains)
    throw UserError("the domain partition needs at least one client per domain: " + std::to_string(num_domains) +
                    " domains, " + std::to_string(clients) + " clients");
  std::vector<std::vector<std::int64_t>> by_domain(static_cast<std::size_t>(num_domains));
  for (std::size_t i = 0; i < domains.size(); ++i)
    by_domain.at(static_cast<std::size_t>(domains[i])).push_back(static_cast<std::int64_t>(i));
  std::vector<double> keep(static_cast<std::size_t>(num_domains), 1.0);
  if (skewed) {
    if (!(alpha > 0.0)) throw UserError("partition.alpha must be > 0");
    keep = dirichlet_draw(rng, alpha, static_cast<std::size_t>(num_domains));
    const double top = *std::max_element(keep.begin(), keep.end());
    for (auto& q : keep) q /= top;
  }
  Partition p;
  p.indices.resize(clients);
  for (std::int64_t d = 0; d < num_domains; ++d) {
    std::vector<std::uint32_t> members;
    for (std::uint32_t k = static_cast<std::uint32_t>(d); k < clients; k += static_cast<std::uint32_t>(num_domains))
      members.push_back(k);
    auto& pool = by_domain[static_cast<std::size_t>(d)];
    rng.shuffle(pool);
    const auto floor = static_cast<std::size_t>(min_size) * members.size();
    auto kept =
        static_cast<std::size_t>(std::ceil(keep[static_cast<std::size_t>(d)] * static_cast<double>(pool.size())));
    kept = std::min(pool.size(), std::max(kept, floor));
    if (kept < floor || kept < members.size())
      throw UserError("domain " + std::to_string(d) + " holds " + std::to_string(pool.size()) +
                      " samples, too few for " + std::to_string(members.size()) + " clients of at least " +
                      std::to_string(min_size));
    pool.resize(kept);
    const auto slices = cut_into_equal_slices(pool, static_cast<std::uint32_t>(members.size()));
    for (std::size_t m = 0; m < members.size(); ++m) {
      p.indices[members[m]] = slices.indices[m];
      std::sort(p.indices[members[m]].begin(), p.indices[members[m]].end());
    }
  }
  return p;
}

NaturalPartition partition_natural(const std::vector<std::int64_t>& owners, std::int64_t num_writers,
                                   std::uint32_t clients, Rng& rng) {
  if (static_cast<std::int64_t>(clients) > num_writers)
    throw UserError("federation.clients = " + std::to_string(clients) + " natural clients, but the dataset has " +
                    std::to_string(num_writers) + " writers with training data");
  NaturalPartition out;
  std::vector<std::int64_t> writers(static_cast<std::size_t>(num_writers));
  for (std::int64_t w = 0; w < num_writers; ++w) writers[static_cast<std::size_t>(w)] = w;
  if (static_cast<std::int64_t>(clients) < num_writers) {
    rng.shuffle(writers);
    writers.resize(clients);
    std::sort(writers.begin(), writers.end());
  }
  std::vector<std::int64_t> client_of(static_cast<std::size_t>(num_writers), -1);
  for (std::size_t k = 0; k < writers.size(); ++k)
    client_of[static_cast<std::size_t>(writers[k])] = static_cast<std::int64_t>(k);
  out.partition.indices.resize(clients);
  for (std::size_t i = 0; i < owners.size(); ++i) {
    const auto owner = owners[i];
    if (owner < 0 || owner >= num_writers) continue;
    if (const auto k = client_of[static_cast<std::size_t>(owner)]; k >= 0)
      out.partition.indices[static_cast<std::size_t>(k)].push_back(static_cast<std::int64_t>(i));
  }
  out.writers = std::move(writers);
  return out;
}

Partition make_partition(const PartitionConfig& config, const std::vector<std::int64_t>& labels,
                         std::int64_t num_classes, std::uint32_t clients, std::uint64_t seed,
                         const std::vector<std::int64_t>& domains) {
  const auto& row = partition_scheme(config.scheme);
  const std::string which = "partition.scheme = \"" + row.name + "\"";
  if (!row.make) throw UserError(which + " needs a dataset whose samples name their writers (femnist, shakespeare)");
  if (row.source == PartitionSource::domains && domains.empty())
    throw UserError(which + " needs a multi-domain dataset (digit5)");
  if (config.long_tail > 1.0 && !row.no_long_tail.empty())
    throw UserError("partition.long_tail does not apply to " + which + ": " + row.no_long_tail);
  std::vector<std::int64_t> pool;  // empty: every sample
  const std::vector<std::int64_t>* pool_labels = &labels;
  std::vector<std::int64_t> tail_labels;
  if (config.long_tail > 1.0) {
    Rng tail = make_stream(seed, "long-tail");
    pool = long_tail_pool(labels, num_classes, config.long_tail, tail);
    for (auto i : pool) tail_labels.push_back(labels[static_cast<std::size_t>(i)]);
    pool_labels = &tail_labels;
  }
  Rng rng = make_stream(seed, "partition");
  const PartitionInput input{*pool_labels, num_classes, clients, domains, static_cast<std::int64_t>(labels.size())};
  Partition p = row.make(config.params, input, rng);
  // Pool positions back to dataset indices; the pool is ascending, so each list stays sorted.
  if (!pool.empty())
    for (auto& client : p.indices)
      for (auto& i : client) i = pool[static_cast<std::size_t>(i)];
  return p;
}

std::vector<std::vector<std::int64_t>> class_histograms(const Partition& partition,
                                                        const std::vector<std::int64_t>& labels,
                                                        std::int64_t num_classes) {
  std::vector<std::vector<std::int64_t>> out(partition.num_clients(),
                                             std::vector<std::int64_t>(static_cast<std::size_t>(num_classes), 0));
  for (std::size_t k = 0; k < partition.num_clients(); ++k)
    for (auto i : partition.indices[k]) ++out[k][static_cast<std::size_t>(labels[static_cast<std::size_t>(i)])];
  return out;
}

}  // namespace drift
