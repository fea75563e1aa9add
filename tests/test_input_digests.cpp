// The files a scenario reads besides its dataset (docs/traces.md#digests): the resolved scenario
// records each one's digest beside its path, and refuses a file whose bytes changed since.
#include <filesystem>

#include "data_files.hpp"
#include "engine/config/key_binding.hpp"
#include "engine/config/param_table.hpp"
#include "engine/core/error.hpp"
#include "engine/core/stream_hash.hpp"
#include "engine/population/availability.hpp"
#include "scenario_error.hpp"
#include "sim_harness.hpp"

namespace drift {

TEST_CASE("traces and partition files are recorded by digest, and other bytes are refused") {
  const auto dir = test::fresh_folder("input-digests");
  const auto file = [&](const std::string& name, const std::string& bytes) {
    test::write_file(dir / name, bytes);
    return (dir / name).string();
  };
  const auto profile = file("profile.csv", "client,speed,up_bandwidth,down_bandwidth,latency\n0,10,1e6,1e6,0\n");
  const auto night = file("night.csv", "client,start,end\n0,0,50\n");
  file("split.json", "[[0, 1], [2, 3], [4], [5]]");
  std::string text = test::kFourClients;
  text.replace(text.find("[profile]\n"), 10, "[profile]\ntrace = \"profile.csv\"\n");
  // (The markov model reads no trace: its idle trace key gets no digest.)
  text +=
      "[partition]\nscheme = \"file\"\nfile = \"split.json\"\n"
      "[groups.night]\nrule = \"id_range\"\nfrom = 0\nto = 1\n"
      "[groups.night.availability]\nmodel = \"trace\"\ntrace = \"night.csv\"\n"
      "[availability]\nmodel = \"markov\"\ntrace = \"night.csv\"\n";
  const auto source = (dir / "s.toml").string();
  const auto resolved = parse_scenario(text, source);
  REQUIRE(resolved.profile.trace_digest.size() == 16);
  CHECK(resolved.partition.params.string("file_digest").size() == 16);
  CHECK_THAT(resolved.resolved_toml,
             Catch::Contains("trace = '" + night + "'\ntrace_clients = 'ids'\ntrace_digest = '"));
  const auto& toml = resolved.resolved_toml;
  std::size_t recorded = 0;  // the profile's and the night group's; not the markov model's
  for (auto at = toml.find("trace_digest = '"); at != std::string::npos; at = toml.find("trace_digest = '", at + 1))
    recorded += toml.compare(at + 16, 1, "'") != 0 ? 1 : 0;
  CHECK(recorded == 2);
  // Resolved again, the same digests; a trace with other bytes is refused by name.
  CHECK(parse_scenario(resolved.resolved_toml, source).resolved_toml == resolved.resolved_toml);
  file("night.csv", "client,start,end\n0,0,60\n");
  CHECK_THAT(test::error_of(resolved.resolved_toml),
             Catch::Contains("groups.night.availability.trace " + night + " has digest") &&
                 Catch::Contains("the file changed since the run started"));
  file("night.csv", "client,start,end\n0,0,50\n");
  file("split.json", "[[0], [1, 2, 3], [4], [5]]");
  CHECK_THAT(test::error_of(resolved.resolved_toml),
             Catch::Contains("partition.file " + (dir / "split.json").string()));
  // A missing file is its reader's to report, when the run reads it.
  std::filesystem::remove(profile);
  CHECK(parse_scenario(text, source).profile.trace_digest.empty());
  std::filesystem::remove_all(dir);
}

namespace {

struct CalendarOptions {
  std::string calendar;
  std::string calendar_digest;
};

// A model as a plugin would add it, reading a file under a key of its own choosing; it is
// online throughout (the file's bytes only matter to its digest here).
AvailabilityModelInfo calendar_row() {
  using O = CalendarOptions;
  const ParamTable<O> params({input_file(bind_key<O>("calendar", "a calendar file", &O::calendar), "calendar_digest"),
                              bind_key<O>("calendar_digest", "its digest", &O::calendar_digest)});
  return availability_info("test-calendar", "online throughout; reads a calendar", params,
                           [](const O&, std::uint32_t clients, std::uint64_t seed, std::uint32_t tag,
                              const Population*) { return make_availability_model({}, clients, seed, tag); });
}

// The test-calendar model, registered once for the cases that use it.
bool calendar_registered() {
  static const bool registered = (register_availability_model(calendar_row()), true);
  return registered;
}

}  // namespace

TEST_CASE("a member's file key resolves and records its digest, whatever its name and the key's") {
  CHECK(calendar_registered());
  const auto dir = test::fresh_folder("input-digests-member");
  test::write_file(dir / "cal.csv", "monday\n");
  const auto source = (dir / "s.toml").string();
  const auto with = [&](const std::string& model) {
    return test::kFourClients + std::string("[availability]\nmodel = \"") + model + "\"\ncalendar = \"cal.csv\"\n";
  };
  const auto resolved = parse_scenario(with("test-calendar"), source);
  CHECK_THAT(resolved.resolved_toml, Catch::Contains("calendar = '" + (dir / "cal.csv").string() +
                                                     "'\ncalendar_digest = '" + hash_file(dir / "cal.csv").hex()));
  test::write_file(dir / "cal.csv", "tuesday\n");
  CHECK_THAT(test::error_of(resolved.resolved_toml),
             Catch::Contains("availability.calendar " + (dir / "cal.csv").string() + " has digest"));
  std::filesystem::remove_all(dir);
}

// A folder (FedKTL's generator) is pinned by its files' names and bytes, not by where it is.
TEST_CASE("a member's folder key records the digest of the folder's files") {
  CHECK(calendar_registered());
  const auto dir = test::fresh_folder("input-digests-folder");
  for (const char* folder : {"a", "b"}) {
    std::filesystem::create_directories(dir / folder / "sub");
    test::write_file(dir / folder / "one.txt", "1\n");
    test::write_file(dir / folder / "sub" / "two.txt", "2\n");
  }
  const auto source = (dir / "s.toml").string();
  const auto digest_of = [&](const std::string& folder) {
    const auto text =
        test::kFourClients + std::string("[availability]\nmodel = \"test-calendar\"\ncalendar = \"") + folder + "\"\n";
    const auto toml = parse_scenario(text, source).resolved_toml;
    const auto at = toml.find("calendar_digest = '");
    REQUIRE(at != std::string::npos);
    CHECK_THAT(toml, Catch::Contains("calendar = '" + (dir / folder).string() + "'"));
    return toml.substr(at + 19, 16);
  };
  const auto a = digest_of("a");
  CHECK(digest_of("b") == a);
  std::filesystem::rename(dir / "b" / "sub" / "two.txt", dir / "b" / "sub" / "three.txt");
  CHECK(digest_of("b") != a);
  test::write_file(dir / "b" / "sub" / "three.txt", "");
  std::filesystem::rename(dir / "b" / "sub" / "three.txt", dir / "b" / "sub" / "two.txt");
  CHECK(digest_of("b") != a);  // the same names, other bytes
  std::filesystem::remove_all(dir);
}

}  // namespace drift
