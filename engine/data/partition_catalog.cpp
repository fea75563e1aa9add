// The partition schemes' rows (docs/development.md#adding-a-partition-scheme): each binds its
// own keys of [partition] to an Options struct, whose initialisers are the keys' defaults, and
// cuts with a partitioner of partition.cpp, partition_slices.cpp or partition_file.cpp.
#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/data/partition.hpp"

namespace drift {
namespace {

// Keys several schemes take, written once; each scheme's Options has the member.
template <class O>
KeyBinding<O> alpha_key() {
  return bind_key<O>("alpha", "Dirichlet concentration; small = more skewed", &O::alpha).range(0.0, {}, true);
}
template <class O>
KeyBinding<O> min_samples_key(const std::string& help) {
  return bind_key<O>("min_client_samples", help, &O::min_client_samples).range(1.0, {});
}
template <class O>
KeyBinding<O> attempts_key() {
  return bind_key<O>("max_attempts", "Dirichlet redraws before giving up", &O::max_attempts).range(1.0, {});
}

struct NoOptions {};

struct DirichletOptions {
  double alpha = 0.5;
  std::int64_t min_client_samples = 10;
  std::int64_t max_attempts = 1000;
};

struct CreffOptions {
  double alpha = 0.5;
  std::int64_t max_attempts = 1000;
};

struct ShardsOptions {
  std::int64_t shards_per_client = 2;
};

struct FileOptions {
  std::string file;         // absolute once the scenario is resolved
  std::string file_digest;  // its bytes' hash, recorded when resolved
};

struct DomainOptions {
  double alpha = 0.5;  // domains_dirichlet only
  std::int64_t min_client_samples = 10;
};

ParamTable<DirichletOptions> dirichlet_params() {
  using O = DirichletOptions;
  return ParamTable<O>(
      {alpha_key<O>(), min_samples_key<O>("redraws until every client has this many"), attempts_key<O>()});
}

PartitionSchemeInfo iid_row() {
  return partition_scheme_info(
      "iid", "uniform shuffle, near-equal shares", ParamTable<NoOptions>(std::vector<KeyBinding<NoOptions>>{}),
      [](const NoOptions&, const PartitionInput& in, Rng& rng) {
        if (static_cast<std::int64_t>(in.labels.size()) < in.clients)
          throw UserError("cannot give " + std::to_string(in.clients) + " clients a sample each from " +
                          std::to_string(in.labels.size()) + " training samples");
        return partition_iid(static_cast<std::int64_t>(in.labels.size()), in.clients, rng);
      });
}

PartitionSchemeInfo dirichlet_row() {
  return partition_scheme_info("dirichlet", "per-class Dirichlet(alpha) label skew (PFLlib / NIID-Bench convention)",
                               dirichlet_params(), [](const DirichletOptions& o, const PartitionInput& in, Rng& rng) {
                                 return partition_dirichlet(in.labels, in.num_classes, in.clients, o.alpha,
                                                            o.min_client_samples, o.max_attempts, rng);
                               });
}

PartitionSchemeInfo creff_row() {
  using O = CreffOptions;
  auto row = partition_scheme_info(
      "dirichlet_creff", "CReFF / FedSKC code: Dirichlet among 10 workers per chunk, re-cut into equal-size clients",
      ParamTable<O>({alpha_key<O>(), attempts_key<O>()}), [](const O& o, const PartitionInput& in, Rng& rng) {
        return partition_dirichlet_creff(in.labels, in.num_classes, in.clients, o.alpha, o.max_attempts, rng);
      });
  row.check = [](const ParamSet&, std::uint32_t clients) -> std::string {
    if (clients >= 10) return "";
    return "partition.scheme = \"dirichlet_creff\" splits among 10 workers per chunk and needs federation.clients "
           ">= 10";
  };
  return row;
}

PartitionSchemeInfo shards_row() {
  using O = ShardsOptions;
  return partition_scheme_info(
      "shards", "label-sorted shards, shards_per_client per client (McMahan et al.)",
      ParamTable<O>(
          {bind_key<O>("shards_per_client", "label shards per client", &O::shards_per_client).range(1.0, {})}),
      [](const O& o, const PartitionInput& in, Rng& rng) {
        return partition_shards(in.labels, in.clients, o.shards_per_client, rng);
      });
}

PartitionSchemeInfo file_row() {
  using O = FileOptions;
  const ParamTable<O> params(
      {input_file(
           bind_key<O>("file", "JSON per-client lists of training-sample indices, relative to the scenario", &O::file),
           "file_digest"),
       bind_key<O>("file_digest",
                   "the file's digest; written when the scenario is resolved, and a file whose bytes differ is refused",
                   &O::file_digest)});
  auto row = partition_scheme_info(
      "file", "per-client index lists read from partition.file (JSON), to replicate another framework's split", params,
      [](const O& o, const PartitionInput& in, Rng&) {
        return partition_from_file(o.file, in.num_samples, in.clients);
      },
      PartitionSource::file);
  row.no_long_tail = "the file fixes every index";
  row.check = [params](const ParamSet& p, std::uint32_t) -> std::string {
    if (!params.read(p).file.empty()) return "";
    return "partition.scheme = \"file\" needs partition.file (a JSON list of per-client index lists)";
  };
  return row;
}

// Client k holds domain k mod D; `skewed` first keeps a Dirichlet share of each domain.
PartitionSchemeInfo domains_row(bool skewed) {
  using O = DomainOptions;
  std::vector<KeyBinding<O>> keys;
  if (skewed) keys.push_back(alpha_key<O>());
  keys.push_back(min_samples_key<O>("samples every client of a domain holds at least"));
  auto row = partition_scheme_info(
      skewed ? "domains_dirichlet" : "domains",
      skewed ? "as domains, each domain first keeping a Dirichlet(alpha) share of its samples (FedCCL's imbalanced "
               "setting)"
             : "multi-domain datasets: client k holds domain k mod D, each domain dealt evenly among its clients",
      ParamTable<O>(std::move(keys)),
      [skewed](const O& o, const PartitionInput& in, Rng& rng) {
        const auto num_domains = *std::max_element(in.domains.begin(), in.domains.end()) + 1;
        return partition_domains(in.domains, num_domains, in.clients, skewed, o.alpha, o.min_client_samples, rng);
      },
      PartitionSource::domains);
  row.no_long_tail = "each domain keeps its own samples";
  return row;
}

PartitionSchemeInfo natural_row() {
  PartitionSchemeInfo row;
  row.name = "natural";
  row.description =
      "LEAF datasets: one client per writer or speaker with their own train/test split (a seeded sample of writers "
      "when there are fewer clients)";
  row.source = PartitionSource::writers;
  row.no_long_tail = "a writer's data is their own";
  return row;
}

PartitionSchemeInfo slices_row() {
  return partition_scheme_info(
      "dirichlet_slices",
      "FedAU / FedAWE code: a Dirichlet(alpha) row per client, each class cut in dataset order in proportion to the "
      "rows (label skew, sizes near the mean)",
      dirichlet_params(), [](const DirichletOptions& o, const PartitionInput& in, Rng& rng) {
        return partition_dirichlet_slices(in.labels, in.num_classes, in.clients, o.alpha, o.min_client_samples,
                                          o.max_attempts, rng);
      });
}

Rows<PartitionSchemeInfo>& partition_rows() {
  // The order `drift list` shows them in.
  static Rows<PartitionSchemeInfo> rows = {iid_row(),         dirichlet_row(), creff_row(),
                                           shards_row(),      file_row(),      domains_row(false),
                                           domains_row(true), natural_row(),   slices_row()};
  return rows;
}

}  // namespace

const Rows<PartitionSchemeInfo>& partition_catalog() { return partition_rows(); }

std::vector<std::string> partition_scheme_names() { return row_names(partition_catalog()); }

const PartitionSchemeInfo& partition_scheme(const std::string& name) {
  return row_named(partition_catalog(), name, "partition scheme");
}

void register_partition_scheme(PartitionSchemeInfo info) {
  add_row(partition_rows(), std::move(info), "partition scheme");
}

}  // namespace drift
