#pragma once
// Partitioners: which training samples each client holds. Deterministic given the stream.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/config/catalog.hpp"
#include "engine/config/param_table.hpp"
#include "engine/config/scenario.hpp"
#include "engine/core/rng.hpp"

namespace drift {

// indices[k] = ascending sample indices of client k.
struct Partition {
  std::vector<std::vector<std::int64_t>> indices;
  std::size_t num_clients() const { return indices.size(); }
};

// What a scheme is given to cut: the training pool's labels (after the long tail, when the
// scheme takes one), the classes, the clients, each training sample's domain (multi-domain
// datasets; empty otherwise) and the training set's size (which a file's indices refer to).
struct PartitionInput {
  const std::vector<std::int64_t>& labels;
  std::int64_t num_classes = 0;
  std::uint32_t clients = 0;
  const std::vector<std::int64_t>& domains;
  std::int64_t num_samples = 0;
};

// Where a scheme's split comes from, which decides what the dataset must offer.
enum class PartitionSource {
  labels,   // the labels (and a seeded stream): any dataset
  domains,  // each sample's domain: a multi-domain dataset (digit5)
  file,     // a file of index lists: the stream and the labels are not read
  writers,  // each sample's writer (LEAF): federation_data builds it from the dataset, not `make`
};

// One row per partition scheme (docs/development.md#adding-a-partition-scheme): its name, what
// it does, its own keys of [partition] beside scheme and long_tail, how it cuts, and what
// validation must know. Every decision about a scheme reads these fields, never its name.
struct PartitionSchemeInfo {
  using Make = std::function<Partition(const ParamSet&, const PartitionInput&, Rng&)>;
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  Make make;  // from the ("partition") stream; unset for PartitionSource::writers
  PartitionSource source = PartitionSource::labels;
  // Why partition.long_tail cannot shrink the pool first ("the file fixes every index"); empty: it can.
  std::string no_long_tail;
  // A refusal that involves the federation (too few clients, a missing file); empty when it fits.
  std::function<std::string(const ParamSet&, std::uint32_t clients)> check;
};

// A scheme with parameters: `params` binds its keys to the members of Options, and `make`
// receives them read, as make(const Options&, const PartitionInput&, Rng&).
template <class Options, class Make>
PartitionSchemeInfo partition_scheme_info(std::string name, std::string description, const ParamTable<Options>& params,
                                          Make make, PartitionSource source = PartitionSource::labels) {
  PartitionSchemeInfo info;
  info.name = std::move(name);
  info.description = std::move(description);
  info.params = params.specs();
  info.make = params.reading(std::move(make));
  info.source = source;
  return info;
}

const Rows<PartitionSchemeInfo>& partition_catalog();
std::vector<std::string> partition_scheme_names();
// The row of `name`; an unknown name throws UserError with the closest one.
const PartitionSchemeInfo& partition_scheme(const std::string& name);
// A plugin's scheme, after the built-in ones (docs/plugins.md); a taken name throws UserError.
void register_partition_scheme(PartitionSchemeInfo info);

// Each client gets a near-equal share of a uniform shuffle (sizes differ by at most one).
Partition partition_iid(std::int64_t num_samples, std::uint32_t clients, Rng& rng);

// Per class c: p ~ Dir(alpha * 1_K); clients already holding >= N/K samples get p = 0; the
// class's shuffled indices are cut at the cumulative proportions. The whole draw is repeated
// until every client has >= min_size samples (the PFLlib / NIID-Bench convention). Throws
// UserError if that is impossible (min_size * K > N) or fails after max_attempts.
Partition partition_dirichlet(const std::vector<std::int64_t>& labels, std::int64_t num_classes, std::uint32_t clients,
                              double alpha, std::int64_t min_size, std::int64_t max_attempts, Rng& rng);

// FedAU's and FedAWE's split: client k draws a row q_k ~ Dir(alpha * 1_C); each class's samples,
// in dataset order, are cut into consecutive slices, client k's ending at
// round_half_even(n_c * sum_{m<=k} q_m[c] / sum_m q_m[c]). Sizes differ but stay near n / K. The whole
// draw is repeated until every client has >= min_size samples (the first draw is the code's).
Partition partition_dirichlet_slices(const std::vector<std::int64_t>& labels, std::int64_t num_classes,
                                     std::uint32_t clients, double alpha, std::int64_t min_size,
                                     std::int64_t max_attempts, Rng& rng);
// The cut itself, for given rows (one per client, one weight per class).
Partition slices_by_label_rows(const std::vector<std::int64_t>& labels, std::int64_t num_classes,
                               const std::vector<std::vector<double>>& rows);

// The size-bounded Dirichlet draws' rule: call `draw` until every client holds `min_size`
// samples, at most `max_attempts` times. Throws UserError, naming the keys to change, for
// alpha <= 0, for a minimum that `num_samples` cannot meet, and when no draw met it.
struct MinSizeDraw {
  std::string scheme;  // how the error names the draw: "Dirichlet", "dirichlet_slices"
  double alpha = 0.0;
  std::uint32_t clients = 0;
  std::int64_t num_samples = 0, min_size = 0, max_attempts = 0;
};
Partition redraw_until_min_size(const MinSizeDraw& rule, const std::function<Partition()>& draw);

// McMahan et al.: sort by label, cut into clients * shards_per_client equal shards, deal
// shards_per_client random shards to each client.
Partition partition_shards(const std::vector<std::int64_t>& labels, std::uint32_t clients,
                           std::int64_t shards_per_client, Rng& rng);

// CReFF's clients_indices (docs/algorithms.md#conventions): shuffle; cut into ceil(K/10) chunks of ~10/K of the data;
// split each chunk among 10 workers by the Dirichlet rule above, redrawn until every worker
// holds half its share; concatenate the workers and re-cut into K equal slices (sizes differ
// by at most one). Label skew survives approximately; client sizes become equal. K >= 10.
Partition partition_dirichlet_creff(const std::vector<std::int64_t>& labels, std::int64_t num_classes,
                                    std::uint32_t clients, double alpha, std::int64_t max_attempts, Rng& rng);

// The long-tailed training pool of docs/algorithms.md#conventions: class c keeps its first floor(n_max *
// rho^(-c/(C-1))) shuffled samples, n_max = N / C (class 0 is the head). Ascending indices.
std::vector<std::int64_t> long_tail_pool(const std::vector<std::int64_t>& labels, std::int64_t num_classes, double rho,
                                         Rng& rng);

// Reads per-client index lists from JSON: [[i, ...], ...] or {"clients": [[...], ...]} (a
// client may also be {"indices": [...]}). Throws UserError naming the client and index for a
// wrong client count, a non-integer, an index outside [0, num_samples), a duplicate or an
// empty client.
Partition partition_from_file(const std::string& path, std::int64_t num_samples, std::uint32_t clients);

// Family D (docs/algorithms.md#conventions): client k holds domain k mod D, and each domain's samples are dealt
// among its clients like iid. With `skewed` (FedCCL's imbalanced setting), each domain first
// keeps a share of its samples: q ~ Dir(alpha * 1_D), domain d keeps ceil(n_d q_d / max q), at
// least min_size per client. Throws UserError for fewer clients than domains.
Partition partition_domains(const std::vector<std::int64_t>& domains, std::int64_t num_domains, std::uint32_t clients,
                            bool skewed, double alpha, std::int64_t min_size, Rng& rng);

// LEAF's natural clients: client k holds every training sample of one writer (`owners` gives
// each sample's writer, 0 .. num_writers-1). With as many clients as writers, client k is writer
// k; with fewer, a sample of writers drawn from `rng`, kept in writer order. `writers[k]` is
// client k's writer. Throws UserError for more clients than writers.
struct NaturalPartition {
  Partition partition;
  std::vector<std::int64_t> writers;
};
NaturalPartition partition_natural(const std::vector<std::int64_t>& owners, std::int64_t num_writers,
                                   std::uint32_t clients, Rng& rng);

// The row of config.scheme cuts the data, after the long-tail transform when config.long_tail
// > 1. `domains` (one per sample) is needed by the domain schemes only. Streams: ("long-tail")
// and ("partition") of the scenario seed.
Partition make_partition(const PartitionConfig& config, const std::vector<std::int64_t>& labels,
                         std::int64_t num_classes, std::uint32_t clients, std::uint64_t seed,
                         const std::vector<std::int64_t>& domains = {});

// histogram[k][c] = samples of class c held by client k.
std::vector<std::vector<std::int64_t>> class_histograms(const Partition& partition,
                                                        const std::vector<std::int64_t>& labels,
                                                        std::int64_t num_classes);

}  // namespace drift
