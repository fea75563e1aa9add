// Checkpoints: the archive, tensors in it, and round drivers saved mid-run and restored into
// a fresh driver, which must go on exactly as the uninterrupted run (docs/checkpoints.md).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/remove_tree.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/sim/sim_archive.hpp"
#include "engine/tensors/tensor_archive.hpp"
#include "sim_harness.hpp"

using namespace drift;
using namespace drift::test;

TEST_CASE("the state archive reads back what it wrote, and refuses what does not fit", "[checkpoint]") {
  auto w = StateArchive::writer();
  double x = 0.25;
  std::string text = "drift";
  std::vector<std::uint32_t> ids{3, 1, 4};
  std::map<std::string, double> named{{"a", 1.0}, {"b", -2.0}};
  std::optional<std::int64_t> some = 42, none;
  w.section("head");
  w.value(x);
  w.text(text);
  w.values(ids);
  w.map(named, [&](double& v) { w.value(v); });
  w.optional(some, [&](std::int64_t& v) { w.value(v); });
  w.optional(none, [&](std::int64_t& v) { w.value(v); });
  const auto bytes = w.take();

  auto r = StateArchive::reader(bytes, "test");
  double x2 = 0;
  std::string text2;
  std::vector<std::uint32_t> ids2;
  std::map<std::string, double> named2;
  std::optional<std::int64_t> some2, none2 = 7;
  r.section("head");
  r.value(x2);
  r.text(text2);
  r.values(ids2);
  r.map(named2, [&](double& v) { r.value(v); });
  r.optional(some2, [&](std::int64_t& v) { r.value(v); });
  r.optional(none2, [&](std::int64_t& v) { r.value(v); });
  r.expect_end();
  CHECK(x2 == 0.25);
  CHECK(text2 == "drift");
  CHECK(ids2 == ids);
  CHECK(named2 == named);
  CHECK(some2 == 42);
  CHECK_FALSE(none2.has_value());

  auto wrong = StateArchive::reader(bytes, "test");
  CHECK_THROWS_WITH(wrong.section("other"), Catch::Contains("expected part 'other', found 'head'"));
  auto cut = StateArchive::reader(bytes.substr(0, bytes.size() - 3), "cut.bin");
  cut.section("head");
  cut.value(x2);
  cut.text(text2);
  cut.values(ids2);
  cut.map(named2, [&](double& v) { cut.value(v); });
  CHECK_THROWS_WITH(cut.optional(some2, [&](std::int64_t& v) { cut.value(v); }),
                    Catch::Contains("cut.bin cannot be read: it ends early"));
  // A count larger than the bytes left is refused before anything is allocated.
  auto huge = StateArchive::writer();
  std::uint64_t n = std::uint64_t{1} << 60;
  huge.value(n);
  auto h = StateArchive::reader(huge.take(), "huge");
  std::vector<double> v;
  CHECK_THROWS_WITH(h.values(v), Catch::Contains("a count exceeds its data"));
}

TEST_CASE("tensors keep their dtype, shape, bits and gradient flag in an archive", "[checkpoint]") {
  std::vector<at::Tensor> ts{torch::tensor({1.5, -0.0, 1e-300}, torch::kFloat64),
                             torch::arange(12, torch::kInt64).reshape({3, 4}).t(),  // not contiguous
                             torch::zeros({0, 5}), torch::ones({2}).requires_grad_(true), at::Tensor()};
  auto w = StateArchive::writer();
  archive_tensors(w, ts);
  auto r = StateArchive::reader(w.take(), "t");
  std::vector<at::Tensor> back;
  archive_tensors(r, back);
  r.expect_end();
  REQUIRE(back.size() == ts.size());
  for (std::size_t i = 0; i + 1 < ts.size(); ++i) {
    CHECK(back[i].scalar_type() == ts[i].scalar_type());
    CHECK(back[i].sizes() == ts[i].sizes());
    CHECK(torch::equal(back[i], ts[i].detach()));
    CHECK(back[i].requires_grad() == ts[i].requires_grad());
  }
  CHECK_FALSE(back.back().defined());
}

TEST_CASE("a task plan comes back from an archive with every field", "[checkpoint]") {
  TaskPlan plan{7, 3, 1.5, 2.5, 4.25, 4.5, 9.0, 1e6, 1234, 5, 80.0, 0.25, 3};
  auto w = StateArchive::writer();
  archive_plan(w, plan);
  auto r = StateArchive::reader(w.take(), "plan");
  TaskPlan back;
  archive_plan(r, back);
  r.expect_end();
  // Every field in declaration order, speed, latency and the partial-work steps last.
  std::ostringstream fields;
  back.each_field([&fields](auto&... field) { ((fields << field << ' '), ...); });
  CHECK(fields.str() == "7 3 1.5 2.5 4.25 4.5 9 1e+06 1234 5 80 0.25 3 ");
}

namespace {

// What a report says, as text, so two runs compare in one CHECK.
std::string describe(const RoundReport& r) {
  std::ostringstream out;
  out.precision(17);
  out << r.round << " v" << r.model_version << " [" << r.time_start << ", " << r.time_end << "] up " << r.bytes_up
      << " down " << r.bytes_down << " f" << r.finished << " l" << r.late << " d" << r.dropped << " x" << r.failed
      << " online " << r.online << " cov " << r.coverage << " tv " << r.cohort_tv << " wtv " << r.window_tv << " |";
  for (auto c : r.cohort) out << ' ' << c;
  out << " | agg";
  for (auto c : r.aggregated) out << ' ' << c;
  out << " | stale";
  for (auto s : r.staleness) out << ' ' << s;
  out << " | edges";
  for (auto e : r.edges_reported) out << ' ' << e;
  for (auto w : r.edge_weight) out << ' ' << w;
  out << " | algorithm";  // the server halves' values, flat or per edge
  for (const auto& [name, v] : r.algorithm.scalars) out << ' ' << name << '=' << v;
  for (const auto* series : {&r.algorithm.per_client, &r.edge_algorithm})
    for (const auto& [name, values] : *series) {
      out << ' ' << name << ':';
      for (double v : values) out << ' ' << v;
    }
  for (const auto& c : r.clients)
    out << "\n  " << c.client_id << ' ' << name_of(c.event) << ' ' << c.time << ' ' << c.detail;
  return out.str();
}

std::vector<std::string> describe_all(const FakeHost& host, std::size_t from = 0) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < host.reports.size(); ++i) out.push_back(describe(host.reports[i]));
  for (std::size_t i = 0; i < host.evaluated.size(); ++i) out.push_back("eval " + std::to_string(host.evaluated[i]));
  return out;
}

// Runs the scenario three ways: straight through; held for a checkpoint after aggregation
// `at` and continued (with edges that answer late, under [hierarchy]); and restored from that
// checkpoint into a fresh driver and sampler.
void check_resume(const std::string& text, const std::vector<Override>& overrides, std::uint32_t at,
                  Sim::Server server = Sim::Server::fedavg) {
  Sim straight(text, overrides, 0, server);
  straight.run();
  REQUIRE(straight.host.finished);
  REQUIRE(straight.host.reports.size() > at);

  Sim held(text, overrides, 0, server, {}, true);
  held.host.checkpoint_at = at;
  held.driver->start();
  held.host.pump();
  REQUIRE(held.host.held);
  auto saved = StateArchive::writer();
  held.driver->archive(saved);
  auto sampler = StateArchive::writer();
  held.host.sampler->archive(sampler);
  held.driver->resume();
  held.host.pump();
  CHECK(describe_all(held.host) == describe_all(straight.host));

  Sim restored(text, overrides, 0, server);
  auto r = StateArchive::reader(saved.take(), "driver");
  restored.driver->archive(r);
  r.expect_end();
  auto rs = StateArchive::reader(sampler.take(), "sampler");
  restored.host.sampler->archive(rs);
  rs.expect_end();
  restored.driver->resume();
  restored.host.pump();
  REQUIRE(restored.host.finished);
  const auto tail = describe_all(straight.host, at);
  const auto got = describe_all(restored.host);
  // Reports after the checkpoint, then the evaluations: those after it are the restored run's.
  std::vector<std::string> reports(tail.begin(), tail.begin() + static_cast<long>(straight.host.reports.size() - at));
  std::vector<std::string> got_reports(got.begin(), got.begin() + static_cast<long>(restored.host.reports.size()));
  CHECK(got_reports == reports);
  const auto evaluations = straight.host.evaluated;
  CHECK(restored.host.evaluated ==
        std::vector<double>(evaluations.end() - static_cast<long>(restored.host.evaluated.size()), evaluations.end()));
}

// Stragglers, dropouts, a deadline with stale updates, a timeline that takes a group offline and
// changes speed, and Markov availability: every part of the world the driver keeps.
const char* kBusyWorld = R"(
seed = 3
[federation]
clients = 12
rounds = 7
[sampler]
clients_per_round = 4
name = "power_of_choice"
[profile]
speed = 10.0
speed_sigma = 0.5
[availability]
model = "markov"
mean_online = 200.0
mean_offline = 40.0
[simulation]
dropout = 0.1
deadline = 14.0
late_updates = "stale"
[async]
concurrency = 4
buffer_size = 3
[groups.slow]
rule = "id_range"
from = 0
to = 3
[[timeline]]
at_round = 3
action = "offline"
group = "slow"
[[timeline]]
at_time = 30.0
action = "speed"
group = "slow"
value = 0.5
[output]
log_eligible = false
)";

}  // namespace

TEST_CASE("a sync driver restored from a checkpoint goes on exactly as the uninterrupted run", "[checkpoint][sim]") {
  for (std::uint32_t at : {1u, 3u, 6u}) check_resume(kBusyWorld, {}, at);
}

TEST_CASE("FedBuff and FedAsync drivers restored from a checkpoint go on exactly as the uninterrupted run",
          "[checkpoint][sim]") {
  for (std::uint32_t at : {2u, 5u}) {
    check_resume(kBusyWorld, {{"simulation.mode", "\"fedbuff\""}, {"federation.rounds", "9"}}, at);
    check_resume(kBusyWorld, {{"simulation.mode", "\"fedasync\""}, {"federation.rounds", "12"}}, at);
  }
}

TEST_CASE("edge tiers restored from a checkpoint go on exactly as the uninterrupted run", "[checkpoint][sim]") {
  const std::vector<Override> edges{{"simulation.late_updates", "\"discard\""},
                                    {"hierarchy.edges", "3"},
                                    {"hierarchy.edge_rounds", "2"},
                                    {"hierarchy.latency", "1.5"}};
  for (std::uint32_t at : {2u, 5u}) {
    check_resume(kBusyWorld, edges, at);
    auto buffered = edges;
    buffered.insert(buffered.end(), {{"hierarchy.cloud", "\"fedbuff\""}, {"hierarchy.buffer", "2"}});
    check_resume(kBusyWorld, buffered, at);
    // Clients moved between edges and home again: the roster's and the sampler's edges come back
    // with the timeline's steps.
    const auto moving = std::string(kBusyWorld) +
                        "[[timeline]]\nat_round = 2\naction = \"move\"\ngroup = \"slow\"\nedge = \"2\"\n"
                        "[[timeline]]\nat_time = 45.0\naction = \"move\"\ngroup = \"slow\"\nedge = \"home\"\n";
    check_resume(moving, edges, at);
    check_resume(moving, buffered, at);
    // ... with edge server halves that keep a row per client (MIFA's table, FedAU's intervals):
    // a resume regroups them to the edges' clients of the checkpoint before they read their rows.
    for (const char* name : {"\"mifa\"", "\"fedau\""}) {
      auto remedy = edges;
      remedy.push_back({"algorithm.name", name});
      check_resume(moving, remedy, at, Sim::Server::scenario);
    }
    // A loop's reported values wait with it; two clients an edge round, so its rounds differ.
    for (const char* name : {"\"mifa\"", "\"fedau\""}) {
      auto remedy = buffered;
      remedy.insert(remedy.end(), {{"algorithm.name", name}, {"sampler.clients_per_round", "2"}});
      check_resume(moving, remedy, at, Sim::Server::scenario);
    }
    // Two of the three edges at work at once: the waiting pulls and the slots held come back.
    auto capped = buffered;
    capped.push_back({"hierarchy.concurrency", "2"});
    check_resume(kBusyWorld, capped, at);
    // One edge at work at a time: at a checkpoint the others' pulls wait for the slot.
    capped.back().value = "1";
    check_resume(kBusyWorld, capped, at);
  }
}

TEST_CASE("a checkpoint of another population is refused", "[checkpoint][sim]") {
  Sim a(kBusyWorld);
  a.host.checkpoint_at = 1;
  a.driver->start();
  a.host.pump();
  REQUIRE(a.host.held);
  auto saved = StateArchive::writer();
  a.driver->archive(saved);
  Sim b(kBusyWorld, {{"federation.clients", "13"}});
  auto r = StateArchive::reader(saved.take(), "state.bin");
  CHECK_THROWS_AS(b.driver->archive(r), DecodeError);
}

TEST_CASE("remove_tree removes a checkpoint folder and not what a link in it points to", "[checkpoint]") {
  namespace fs = std::filesystem;
  const auto root = fs::temp_directory_path() / ("drift_remove_tree_" + std::to_string(::getpid()));
  fs::create_directories(root / "run" / "checkpoint" / "tables");
  fs::create_directories(root / "outside");
  std::ofstream(root / "run" / "checkpoint" / "state.bin") << "state";
  std::ofstream(root / "run" / "checkpoint" / "tables" / "mifa.bin") << "table";
  std::ofstream(root / "outside" / "keep.txt") << "keep";
  fs::create_directory_symlink(root / "outside", root / "run" / "checkpoint" / "linked");

  std::error_code error;
  remove_tree(root / "run", error);
  CHECK_FALSE(error);
  CHECK_FALSE(fs::exists(root / "run"));
  CHECK(fs::exists(root / "outside" / "keep.txt"));  // the link went, its target stayed
  remove_tree(root / "run", error);                  // already gone: no error
  CHECK_FALSE(error);
  std::ofstream(root / "file.txt") << "a file alone";
  remove_tree(root / "file.txt", error);
  CHECK_FALSE(error);
  CHECK_FALSE(fs::exists(root / "file.txt"));
  remove_tree(root, error);
  CHECK_FALSE(error);
  CHECK_FALSE(fs::exists(root));
}

TEST_CASE("a buffered cloud resumes loops with what their edges' server halves reported so far", "[checkpoint][sim]") {
  // Two clients an edge round: a loop's first round reports FedAU weights of clients its second
  // does not train, and the step's report lists them; at several of these checkpoints a loop is midway.
  const char* world = R"(
seed = 3
[federation]
clients = 12
rounds = 9
[sampler]
clients_per_round = 2
[profile]
speed = 10.0
speed_sigma = 0.5
[algorithm]
name = "fedau"
[hierarchy]
edges = 3
edge_rounds = 2
latency = 1.5
cloud = "fedbuff"
buffer = 2
[output]
log_eligible = false
)";
  for (std::uint32_t at = 1; at < 8; ++at) check_resume(world, {}, at, Sim::Server::scenario);
}
