// The files a scenario points to: availability traces, profile traces, partition files and a
// hierarchy's client-to-edge map.
#include "engine/compose/loader.hpp"
#include "engine/data/partition.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/population.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the reader, so one corpus covers the four formats.
  const auto kind = data[0] % 4;
  ++data, --size;
  if (kind == 0) {
    return drift::fuzz::read_as_file(data, size, ".csv", [](const std::string& path) {
      drift::AvailabilityConfig c;
      c.model = "trace";
      c.params.set("trace", path);
      auto model = drift::make_availability_model(c, 8, 1, 0);
      for (std::uint32_t client = 0; client < 8; ++client)
        model->next_online(client, 0.0), model->next_offline(client, 0.0);
    });
  }
  if (kind == 1) {
    return drift::fuzz::read_as_file(data, size, ".csv", [](const std::string& path) {
      auto s = drift::parse_scenario("[federation]\nclients = 8\n[profile]\ntrace = \"" + path + "\"\n", "fuzz.toml");
      drift::build_population(s, std::vector<std::vector<std::int64_t>>(8, std::vector<std::int64_t>{5, 5}));
    });
  }
  if (kind == 3) {
    return drift::fuzz::read_as_file(data, size, ".csv", [](const std::string& path) {
      auto s = drift::parse_scenario("[federation]\nclients = 8\n[hierarchy]\nassign = \"file\"\nfile = \"" + path +
                                         "\"\n[hierarchy.edge.a]\n[hierarchy.edge.b]\n[hierarchy.edge.c]\n",
                                     "fuzz.toml");
      drift::build_population(s, std::vector<std::vector<std::int64_t>>(8, std::vector<std::int64_t>{5, 5}));
    });
  }
  return drift::fuzz::read_as_file(data, size, ".json",
                                   [](const std::string& path) { drift::partition_from_file(path, 100, 4); });
}
