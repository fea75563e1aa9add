// The plain-C++ side of multi-node runs: endpoints, the join rules, the token, the
// fingerprints and the handshake messages. The actors and processes are tested by the
// cli_cluster_* scripts.
#include "catch_torch.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engine/cluster/endpoint.hpp"
#include "engine/cluster/join.hpp"
#include "engine/compose/fingerprint.hpp"
#include "engine/core/error.hpp"
#include "engine/core/version.hpp"
#include "messages/cluster_codec.hpp"

using namespace drift;

TEST_CASE("endpoints parse HOST:PORT, [v6]:PORT and a bare port on loopback", "[cluster]") {
  auto e = parse_endpoint("10.0.0.7:4242", "--listen", true);
  CHECK(e.host == "10.0.0.7");
  CHECK(e.port == 4242);
  e = parse_endpoint("5000", "--listen", true);
  CHECK(e.host == "127.0.0.1");
  CHECK(e.port == 5000);
  e = parse_endpoint("[::1]:7", "--connect", false);
  CHECK(e.host == "::1");
  CHECK(e.text() == "[::1]:7");
  CHECK(parse_endpoint("127.0.0.1:0", "--listen", true).port == 0);
  CHECK_THROWS_WITH(parse_endpoint("127.0.0.1:0", "--connect", false), Catch::Contains("port 0 is only for listening"));
  CHECK_THROWS_WITH(parse_endpoint("host:70000", "--connect", false), Catch::Contains("1 to 65535"));
  CHECK_THROWS_WITH(parse_endpoint("host:", "--connect", false), Catch::Contains("--connect 'host:'"));
  CHECK_THROWS_WITH(parse_endpoint(":80", "--connect", false), Catch::Contains("host is empty"));
  CHECK_THROWS_WITH(parse_endpoint("::1:80", "--connect", false), Catch::Contains("[ADDRESS]:PORT"));
  CHECK_THROWS_AS(parse_endpoint("a:b", "--connect", false), UserError);
}

TEST_CASE("join rules: the token first, then versions, then the scenario hash", "[cluster]") {
  const JoinPolicy policy{"0123456789abcdef0123", "00000000deadbeef"};
  auto good = make_join_request("0123456789abcdef0123", "w1", "cpu:1", "");
  CHECK_FALSE(join_refusal(policy, good));
  good.expected_scenario = "00000000deadbeef";
  CHECK_FALSE(join_refusal(policy, good));

  auto r = good;
  r.token = "0123456789abcdef0124";
  CHECK(join_refusal(policy, r) == std::optional<std::string>("wrong join token"));
  r.protocol = kClusterProtocol + 1;  // a stranger learns nothing about versions
  CHECK(join_refusal(policy, r) == std::optional<std::string>("wrong join token"));

  r = good;
  r.protocol = kClusterProtocol + 1;
  CHECK_THAT(*join_refusal(policy, r), Catch::StartsWith("incompatible version") && Catch::Contains("protocol 2"));
  r = good;
  r.torch_version = "2.4.0";
  CHECK_THAT(*join_refusal(policy, r), Catch::Contains("LibTorch 2.4.0") && Catch::Contains(torch_version()));
  r = good;
  r.drift_version = "9.9.9";
  CHECK_THAT(*join_refusal(policy, r), Catch::Contains("drift 9.9.9"));
  r = good;
  r.expected_scenario = "1111111111111111";
  CHECK(*join_refusal(policy, r) ==
        "scenario hash mismatch: the worker expects 1111111111111111, the coordinator runs 00000000deadbeef");
}

TEST_CASE("constant-time comparison compares whole strings", "[cluster]") {
  CHECK(constant_time_equal("abc", "abc"));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "abcd"));
  CHECK_FALSE(constant_time_equal("", "a"));
  CHECK(constant_time_equal("", ""));
}

TEST_CASE("a worker's report must match the coordinator's scenario, data and slots", "[cluster]") {
  WorkerReady ready{7, "aaaa", "bbbb", 2};
  CHECK_FALSE(ready_refusal("aaaa", "bbbb", ready, 2));
  CHECK_THAT(*ready_refusal("aaab", "bbbb", ready, 2), Catch::StartsWith("scenario hash mismatch"));
  CHECK_THAT(*ready_refusal("aaaa", "bbbc", ready, 2),
             Catch::StartsWith("data fingerprint mismatch") && Catch::Contains("different dataset files"));
  CHECK_THAT(*ready_refusal("aaaa", "bbbb", ready, 1), Catch::Contains("declared 2 trainer slots and sent 1"));
  ready.slots = 0;
  CHECK(ready_refusal("aaaa", "bbbb", ready, 0));
}

TEST_CASE("the join token comes from a file or DRIFT_JOIN_TOKEN, never too short", "[cluster]") {
  const auto dir = std::filesystem::temp_directory_path() / "drift_test_token";
  std::filesystem::create_directories(dir);
  const auto file = (dir / "token").string();
  std::ofstream(file) << "  0123456789abcdef0123\n";
  CHECK(read_join_token(file) == "0123456789abcdef0123");
  std::ofstream(file) << "short\n";
  CHECK_THROWS_WITH(read_join_token(file), Catch::Contains("holds 5 characters") && Catch::Contains("at least 16"));
  CHECK_THROWS_WITH(read_join_token((dir / "missing").string()), Catch::Contains("cannot read the join token file"));

  ::setenv("DRIFT_JOIN_TOKEN", "fedcba9876543210fedcba", 1);
  CHECK(read_join_token("") == "fedcba9876543210fedcba");
  ::unsetenv("DRIFT_JOIN_TOKEN");
  CHECK_THROWS_WITH(read_join_token(""), Catch::Contains("no join token") && Catch::Contains("openssl rand -hex 16"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("fingerprints: stable, and sensitive to every byte and to boundaries", "[cluster]") {
  CHECK(scenario_hash("a = 1\n") == scenario_hash("a = 1\n"));
  CHECK(scenario_hash("a = 1\n") != scenario_hash("a = 2\n"));
  CHECK(scenario_hash("# resolved from /a.toml\na = 1\n") == scenario_hash("# resolved from /b.toml\na = 1\n"));
  CHECK(scenario_hash("a = 1\nb = 2\n") != scenario_hash("a = 1b = 2\n"));
  CHECK(scenario_hash("").size() == 16);

  Fingerprint ab_c, a_bc;
  ab_c.add(std::string("ab"));
  ab_c.add(std::string("c"));
  a_bc.add(std::string("a"));
  a_bc.add(std::string("bc"));
  CHECK(ab_c.hex() != a_bc.hex());

  // A dataset differing in one pixel, or in a partition index, changes the fingerprint.
  auto make = [](float pixel, std::int64_t index) {
    FederationData d;
    auto train = std::make_shared<Dataset>();
    train->images = torch::zeros({4, 1, 2, 2});
    train->images[2][0][1][1] = pixel;
    train->labels = torch::tensor({0, 1, 0, 1}, torch::kInt64);
    train->num_classes = 2;
    d.data.train = train;
    d.data.test = train;
    d.partition.indices = {{0, index}, {2, 3}};
    return data_fingerprint(d);
  };
  CHECK(make(0.5f, 1) == make(0.5f, 1));
  CHECK(make(0.5f, 1) != make(0.25f, 1));
  CHECK(make(0.5f, 1) != make(0.5f, 2));
}

TEST_CASE("handshake messages round-trip and malformed ones are refused", "[cluster][codec]") {
  const auto request = make_join_request("0123456789abcdef0123", "w1", "cpu:2", "abcd");
  const auto back = msg::decode_join_request(msg::encode_join_request(request));
  CHECK(back.protocol == kClusterProtocol);
  CHECK(back.drift_version == drift_version());
  CHECK(back.torch_version == torch_version());
  CHECK(back.token == request.token);
  CHECK(back.worker == "w1");
  CHECK(back.devices == "cpu:2");
  CHECK(back.expected_scenario == "abcd");

  JoinReply reply{true, "", 42, "seed = 1\n", "00ff"};
  const auto r = msg::decode_join_reply(msg::encode_join_reply(reply));
  CHECK(r.accepted);
  CHECK(r.session == 42);
  CHECK(r.scenario_toml == "seed = 1\n");
  CHECK(r.scenario_hash == "00ff");

  const auto w = msg::decode_worker_ready(msg::encode_worker_ready({9, "h", "f", 3}));
  CHECK(w.session == 9);
  CHECK(w.scenario_hash == "h");
  CHECK(w.data_fingerprint == "f");
  CHECK(w.slots == 3);

  // Truncated, garbage and oversized buffers: a DecodeError, never a crash.
  auto bytes = msg::encode_join_request(request).bytes();
  bytes.resize(bytes.size() - 8);
  CHECK_THROWS_AS(msg::decode_join_request(msg::Buffer(bytes)), DecodeError);
  CHECK_THROWS_AS(msg::decode_join_request(msg::Buffer(std::vector<char>(64, '\xff'))), DecodeError);
  const std::string huge(std::size_t{2} << 20, 'x');
  const auto big = msg::encode_join_request(make_join_request(huge, "w", "cpu", ""));
  CHECK_THROWS_WITH(msg::decode_join_request(big), Catch::Contains("exceeds the limit"));
}
