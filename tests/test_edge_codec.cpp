// The messages between a round driver and an edge host in a worker (messages/edge.capnp), and
// the archive splice that keeps such a host's checkpoint parts in the driver's format.
#include "catch_torch.hpp"

#include "engine/core/error.hpp"
#include "engine/core/state_archive.hpp"
#include "messages/edge_codec.hpp"

using namespace drift;

TEST_CASE("the edge host's messages survive a round trip", "[codec][hierarchy]") {
  CHECK(msg::decode_edge_assignment(msg::encode_edge_assignment({0, 3, 6})) == std::vector<std::uint32_t>{0, 3, 6});
  CHECK(msg::decode_edge_assignment(msg::encode_edge_assignment({})).empty());

  const AggregationInput input{7, {0, 2, 1}, {9, 7, 8}};
  const auto in = msg::decode_aggregation_input(msg::encode_aggregation_input(input));
  CHECK(in.round == 7);
  CHECK(in.staleness == input.staleness);
  CHECK(in.pulled_version == input.pulled_version);

  EdgeAggregated a;
  a.moved = true;
  a.metrics.scalars = {{"rho", 0.1 + 0.2}, {"table_on_disk", 0.0}};
  a.metrics.per_client = {{"weight", {1.0 / 3.0, 2.0 / 3.0}}};
  a.shares = {{2, 1.0 / 3.0}, {5, 2.0 / 3.0}};
  const auto out = msg::decode_edge_aggregated(msg::encode_edge_aggregated(a));
  CHECK(out.moved);
  CHECK(out.metrics.scalars == a.metrics.scalars);  // to the bit: doubles travel as they are
  CHECK(out.metrics.per_client == a.metrics.per_client);
  CHECK(out.shares == a.shares);
  CHECK_FALSE(msg::decode_edge_aggregated(msg::encode_edge_aggregated({})).moved);

  const ClientRegroup regroup{{1, 4, 8}, {2, std::nullopt, 0}};
  const auto r = msg::decode_client_regroup(msg::encode_client_regroup(regroup));
  CHECK(r.clients == regroup.clients);
  CHECK((r.previous == regroup.previous));

  const std::string binary("\0\1\2\xff", 4);
  const auto parts = msg::decode_edge_states(msg::encode_edge_states({{1, binary, "m"}, {4, "", ""}}));
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].edge == 1);
  CHECK(parts[0].server == binary);
  CHECK(parts[0].model == "m");
  CHECK(parts[1].edge == 4);
  CHECK(parts[1].server.empty());
}

TEST_CASE("the edge host's messages refuse what cannot be so", "[codec][hierarchy]") {
  CHECK_THROWS_AS(msg::decode_edge_assignment(msg::encode_edge_assignment({2, 2})), DecodeError);
  CHECK_THROWS_AS(msg::decode_edge_assignment(msg::encode_edge_assignment({3, 1})), DecodeError);
  CHECK_THROWS_WITH(msg::decode_aggregation_input(msg::encode_aggregation_input({1, {0, 0}, {4}})),
                    Catch::Contains("1 pulled versions for 2 staleness values"));
  CHECK_THROWS_AS(msg::decode_client_regroup(msg::encode_client_regroup({{4, 1}, {0, 1}})), DecodeError);
  CHECK_THROWS_AS(msg::encode_client_regroup({{1, 2}, {0}}), std::invalid_argument);  // the caller's bug
  CHECK_THROWS_AS(msg::decode_edge_states(msg::encode_edge_states({{3, "", ""}, {1, "", ""}})), DecodeError);
  // Bytes of another message are refused, never misread.
  CHECK_THROWS_AS(msg::decode_edge_states(msg::Buffer(std::vector<char>(5, 'x'))), DecodeError);
}

TEST_CASE("an archive part written elsewhere and spliced reads as if written in place", "[archive][hierarchy]") {
  auto part_of = [](std::uint64_t& v, std::string& s, StateArchive& ar) {
    ar.section("edge");
    ar.value(v);
    ar.text(s);
  };
  std::uint64_t v = 42;
  std::string s = "table";
  auto whole = StateArchive::writer();
  part_of(v, s, whole);
  auto elsewhere = StateArchive::writer();
  part_of(v, s, elsewhere);
  auto spliced = StateArchive::writer();
  spliced.splice(elsewhere.take());
  CHECK(spliced.bytes() == whole.bytes());
  auto reader = StateArchive::reader(spliced.take(), "spliced");
  CHECK_THROWS_AS(reader.splice("x"), std::logic_error);
}
