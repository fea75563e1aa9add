// Partitions read from a file, to replicate another framework's split exactly.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/core/input_file.hpp"
#include "engine/data/partition.hpp"

namespace drift {

Partition partition_from_file(const std::string& path, std::int64_t num_samples, std::uint32_t clients) {
  auto in = open_input_file(path, "partition file (JSON)");
  nlohmann::json doc;
  // A partition nests at most {"clients": [{"indices": [...]}]}: deeper input is refused as it
  // is read, before a tree of it is built.
  constexpr int kMaxDepth = 4;
  const auto depth_limit = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    using E = nlohmann::json::parse_event_t;
    if ((event == E::array_start || event == E::object_start) && depth >= kMaxDepth)
      throw UserError(path +
                      ": nested deeper than a partition file is ({\"clients\": [{\"indices\": [...]}]} "
                      "or [[...], ...])");
    return true;
  };
  try {
    doc = nlohmann::json::parse(in, depth_limit);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(path + ": not valid JSON: " + e.what());
  }
  const nlohmann::json* lists = &doc;
  if (doc.is_object() && doc.contains("clients")) lists = &doc["clients"];
  if (!lists->is_array())
    throw UserError(path + ": expected a list of per-client index lists, or {\"clients\": [...]}");
  if (lists->size() != clients)
    throw UserError(path + ": holds " + std::to_string(lists->size()) + " clients but federation.clients is " +
                    std::to_string(clients));

  Partition p;
  p.indices.resize(clients);
  std::vector<std::int64_t> owner(static_cast<std::size_t>(num_samples), -1);
  for (std::uint32_t k = 0; k < clients; ++k) {
    const auto& entry = (*lists)[k];
    const nlohmann::json* indices = &entry;
    if (entry.is_object() && entry.contains("indices")) indices = &entry["indices"];
    const std::string who = path + ": client " + std::to_string(k);
    if (!indices->is_array()) throw UserError(who + ": expected a list of sample indices");
    if (indices->empty()) throw UserError(who + " holds no samples");
    for (const auto& item : *indices) {
      if (!item.is_number_integer()) throw UserError(who + ": '" + item.dump() + "' is not an integer index");
      // An index past int64's range arrives unsigned: compare it as written (item.dump()),
      // never as a wrapped negative number.
      const bool too_big =
          item.is_number_unsigned() && item.get<std::uint64_t>() >= static_cast<std::uint64_t>(num_samples);
      const auto i = too_big ? num_samples : item.get<std::int64_t>();
      if (i < 0 || i >= num_samples)
        throw UserError(who + ": index " + item.dump() + " is outside the training set [0, " +
                        std::to_string(num_samples) + ")");
      auto& first = owner[static_cast<std::size_t>(i)];
      if (first >= 0)
        throw UserError(who + ": index " + std::to_string(i) + " is already held by client " +
                        (first == static_cast<std::int64_t>(k) ? std::string("itself") : std::to_string(first)));
      first = k;
      p.indices[k].push_back(i);
    }
    std::sort(p.indices[k].begin(), p.indices[k].end());
  }
  return p;
}

}  // namespace drift
