#include "catalogue_listing.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift::cli {
namespace {

// The rows of a family whose members have keys of their own.
template <class Rows>
std::vector<ListedMember> with_keys(const Rows& rows) {
  std::vector<ListedMember> out;
  for (const auto& row : rows) out.push_back({row.name, row.description, {}, {}, row.params});
  return out;
}

std::vector<std::string> algorithm_marks(const AlgorithmInfo& a) {
  std::vector<std::string> marks;
  if (a.packed) marks.push_back("packs");
  if (a.privatisable) marks.push_back("dp");
  if (a.edge_tier) marks.push_back("edges");
  if (a.edge_moves) marks.push_back("moves");
  return marks;
}

}  // namespace

std::vector<ListedFamily> catalogue_listing() {
  std::vector<ListedFamily> out;
  auto& datasets = out.emplace_back(
      ListedFamily{"Datasets", "datasets", "`[data] dataset`; docs/datasets.md says where each comes from.", {}});
  for (const auto& d : dataset_catalog())
    datasets.members.push_back(
        {d.name,
         d.description,
         {d.debian_package.empty() ? "download it yourself; set data.path" : "from " + d.debian_package},
         {},
         {}});
  out.push_back({"Partition schemes", "partitions",
                 "`[partition] scheme`, with the scheme's own keys in `[partition]`.", with_keys(partition_catalog())});
  auto& models = out.emplace_back(ListedFamily{
      "Models", "models", "`[model] name`; *packs*: several clients train as one model (`devices.pack`).", {}});
  for (const auto& m : model_catalog())
    models.members.push_back(
        {m.name,
         m.description,
         m.packs != PackedLayout::none ? std::vector<std::string>{"packs"} : std::vector<std::string>{},
         {},
         {}});
  auto& algorithms = out.emplace_back(
      ListedFamily{"Algorithms",
                   "algorithms",
                   "`[algorithm] name`, with the algorithm's own keys in `[algorithm]`; *packs*: trains in packs, "
                   "*dp*: takes `[privacy]`, *edges*: runs under `[hierarchy]`, *moves*: its clients may move between "
                   "edges.",
                   {}});
  for (const auto& a : algorithm_catalog()) {
    ListedMember m{a.name, a.description, algorithm_marks(a), {}, a.params};
    for (const auto& p : a.presets) m.presets.emplace_back(p.name, p.description);
    algorithms.members.push_back(std::move(m));
  }
  out.push_back({"Samplers", "samplers", "`[sampler] name`, with the sampler's own keys in `[sampler]`.",
                 with_keys(sampler_catalog())});
  out.push_back({"Availability models", "availability models",
                 "`[availability] model`, with the model's own keys in `[availability]` (and a group's "
                 "`[groups.NAME.availability]`).",
                 with_keys(availability_catalog())});
  return out;
}

}  // namespace drift::cli
