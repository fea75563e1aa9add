// The [data] keys whose checks span sections: partitions that need a kind of dataset, and
// [data.augment] with its presets.
#include "engine/compose/data_keys.hpp"

#include "engine/core/error.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"

namespace drift {

std::string partition_conflict(const PartitionConfig& p, const DataConfig& data, std::uint32_t clients) {
  const auto& row = partition_scheme(p.scheme);
  const std::string which = "partition.scheme = \"" + row.name + "\"";
  if (row.source == PartitionSource::writers) {
    if (!find_dataset(data.dataset)->natural_clients)
      return which + " needs a dataset whose samples name their writers (femnist, shakespeare); '" + data.dataset +
             "' has none";
    if (data.client_test_fraction > 0.0)
      return which + " keeps every writer's own test split: leave data.client_test_fraction at 0";
    if (data.max_train_samples > 0 || data.max_test_samples > 0)
      return "data.max_train_samples and max_test_samples would cut writers in half under " + which +
             ": take fewer writers with federation.clients instead";
  }
  if (p.long_tail != 1.0 && !row.no_long_tail.empty())
    return "partition.long_tail does not apply to " + which + " (" + row.no_long_tail + ")";
  return row.check ? row.check(p.params, clients) : "";
}

void finish_augment(const Scenario& s, toml::table& root, const std::string& source) {
  const auto& a = s.data.augment;
  auto& table = *root.at_path("data.augment").as_table();
  table.insert_or_assign("crop_padding", a.crop_padding);
  table.insert_or_assign("flip", a.flip);
  table.insert_or_assign("scope", name_of(a.scope));
  if (a.mean.size() != a.std.size())
    throw UserError(source + ": data.augment.mean and data.augment.std go together, one value per channel each");
  if ((a.enabled() || !a.mean.empty()) && find_dataset(s.data.dataset)->text)
    throw UserError(source + ": data.augment crops, flips and normalises images, but dataset '" + s.data.dataset +
                    "' holds text");
}

}  // namespace drift
