// The edge host actor ([hierarchy] edges kept in a worker): over the messages a round driver's
// proxy sends, it answers what the driver's own process answers (make_local_edge_host), to the
// bit, checkpoint parts included; a call it cannot apply ends it with the reason.
#include "catch_torch.hpp"

#include <caf/all.hpp>

#include "actors/edge_host.hpp"
#include "actors/wire.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/compose/loader.hpp"
#include "engine/sim/edge_host.hpp"
#include "engine/tensors/named_tensors.hpp"
#include "messages/codec.hpp"
#include "messages/edge_codec.hpp"

using namespace drift;
using namespace drift::actors;

namespace {

const char* kTwoEdges = R"(
seed = 5
[data]
max_train_samples = 400
max_test_samples = 100
[federation]
clients = 8
[algorithm]
name = "mifa"
[hierarchy]
edges = 2
)";

bool same_bits(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || !torch::equal(a[i].value, b[i].value)) return false;
  return true;
}

// Client `c`'s update: the model moved by a step of its own.
ClientUpdate update_of(const NamedTensors& global, std::uint32_t c) {
  ClientUpdate u;
  u.client_id = c;
  u.round = 1;
  u.num_samples = 40 + 10 * c;
  for (const auto& [name, t] : global)
    u.weights.push_back({name, t.is_floating_point() ? t + 0.01 * static_cast<double>(c + 1) : t.clone()});
  return u;
}

}  // namespace

TEST_CASE("an edge host actor answers as the local host does, and ends on a call it cannot apply",
          "[actors][hierarchy]") {
  auto scenario = std::make_shared<const Scenario>(parse_scenario(kTwoEdges, "edges.toml"));
  auto data = std::make_shared<const FederationData>(prepare_federation_data(*scenario));
  const SlotContext ctx{scenario, data, data->population, nullptr};
  auto local = make_local_edge_host(*scenario, 2, edge_server_maker(ctx, shape_without_directory(ctx)));
  const auto global = state_of(*make_scenario_model(*scenario, *data->data.train));

  caf::actor_system_config cfg;
  add_message_types(cfg);
  add_arithmetic_hook(cfg);
  caf::actor_system system{cfg};
  std::vector<std::string> logged;
  auto host = system.spawn(edge_host, ctx, [&logged](const std::string& line) { logged.push_back(line); });
  caf::scoped_actor self{system};
  auto ask = [&](auto... request) {
    Buffer out;
    self->request(host, caf::infinite, request...)
        .receive([&](const Buffer& b) { out = b; }, [&](caf::error& err) { FAIL(error_text(err)); });
    return out;
  };
  self->send(host, edge_assign_atom::value, msg::encode_edge_assignment({0, 1}));
  for (std::uint32_t e = 0; e < 2; ++e) {
    self->send(host, edge_pull_atom::value, e, msg::encode_bundle(global));
    local->pull(e, global);
  }
  // The task: the edge's model and its server half's broadcast.
  const auto task = msg::decode_task(ask(edge_task_atom::value, std::uint32_t{1}, std::uint32_t{3}, std::uint64_t{2}));
  local->task(1, 3, 2, [&](std::shared_ptr<TrainingTask> t) {
    CHECK(same_bits(task.weights, t->weights));
    CHECK(task.round == t->round);
    CHECK(task.model_version == t->model_version);
  });
  // An aggregation of two clients at edge 0, by their places there.
  const std::vector<ClientUpdate> updates{update_of(global, 0), update_of(global, 1)};
  const AggregationInput input{1, {0, 0}, {0, 0}};
  std::vector<Buffer> encoded;
  for (const auto& u : updates) encoded.push_back(msg::encode_update(u));
  const auto remote = msg::decode_edge_aggregated(
      ask(edge_aggregate_atom::value, std::uint32_t{0}, msg::encode_aggregation_input(input), encoded));
  local->aggregate(0, updates, input, [&](EdgeAggregated a) {
    CHECK(remote.moved == a.moved);
    CHECK(remote.metrics.scalars == a.metrics.scalars);
    CHECK(remote.shares == a.shares);
  });
  // The checkpoint parts are the bytes the local host writes: MIFA's table included.
  const auto parts = msg::decode_edge_states(ask(edge_settle_atom::value));
  REQUIRE(parts.size() == 2);
  for (const auto& part : parts) {
    auto server = StateArchive::writer();
    local->archive_server(part.edge, server);
    CHECK(part.server == server.bytes());
    auto model = StateArchive::writer();
    local->archive_model(part.edge, model);
    CHECK(part.model == model.bytes());
  }
  // The model, handed over.
  const auto model = msg::decode_bundle(ask(edge_model_atom::value, std::uint32_t{0}));
  local->models({0}, [&](std::vector<NamedTensors> m) { CHECK(same_bits(model, m.at(0))); });
  REQUIRE(logged.size() == 1);
  CHECK(logged[0] == "keeping 2 of the 2 edges for the coordinator: 0, 1");

  // An edge it does not keep: the answer is an error, and the host is gone.
  std::string error;
  self->request(host, caf::infinite, edge_task_atom::value, std::uint32_t{7}, std::uint32_t{1}, std::uint64_t{0})
      .receive([](const Buffer&) {}, [&](caf::error& err) { error = error_text(err); });
  CHECK_THAT(error, Catch::Contains("edge host: task: asked about edge 7, not kept here"));
  self->wait_for(host);
}
