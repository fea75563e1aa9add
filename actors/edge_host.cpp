#include "actors/edge_host.hpp"

#include <algorithm>
#include <string>

#include "actors/wire.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/core/error.hpp"
#include "engine/sim/edge_host.hpp"
#include "messages/codec.hpp"
#include "messages/edge_codec.hpp"

namespace drift::actors {

EdgeServerMaker edge_server_maker(const SlotContext& ctx, FederationShape shape) {
  const auto* algorithm = find_algorithm(ctx.scenario->algorithm);
  return [algorithm, scenario = ctx.scenario, population = ctx.population, shape = std::move(shape)](std::uint32_t e) {
    return algorithm->make_server(scenario->algorithm_params, edge_shape(shape, *scenario, *population, e));
  };
}

FederationShape shape_without_directory(const SlotContext& ctx) {
  auto shape = federation_shape(*ctx.scenario, *ctx.data);
  shape.state_dir.clear();
  return shape;
}

std::string edge_list(const std::vector<std::uint32_t>& edges) {
  std::string out;
  for (auto e : edges) out += (out.empty() ? "" : ", ") + std::to_string(e);
  return out;
}

void check_edges_for_workers(const SlotContext& ctx) {
  const auto make = edge_server_maker(ctx, shape_without_directory(ctx));
  for (std::uint32_t e = 0; e < ctx.population->edges(); ++e) {
    try {
      make(e);  // cheap: a table in memory fills as clients report
    } catch (const UserError& err) {
      throw UserError("--edges-on-workers: a worker keeps edge " + std::to_string(e) +
                      "'s server half in memory, having no run directory, but " + err.what());
    }
  }
}

namespace {

struct EdgeHostState {
  SlotContext ctx;
  std::vector<std::uint32_t> kept;  // ascending
  std::unique_ptr<EdgeHost> host;   // this process's host of the kept edges

  bool keeps(std::uint32_t edge) const { return std::binary_search(kept.begin(), kept.end(), edge); }

  EdgeHost& at(std::uint32_t edge) {
    if (!host) throw std::logic_error("asked about edge " + std::to_string(edge) + " before being assigned edges");
    if (!keeps(edge)) throw std::logic_error("asked about edge " + std::to_string(edge) + ", not kept here");
    return *host;
  }

  void assign(const Buffer& buffer) {
    if (host) throw std::logic_error("assigned edges twice");
    kept = msg::decode_edge_assignment(buffer);  // ascending
    const auto count = ctx.population->edges();
    if (!kept.empty() && kept.back() >= count)
      throw DecodeError("edge " + std::to_string(kept.back()) + " of " + std::to_string(count));
    auto make = edge_server_maker(ctx, shape_without_directory(ctx));
    host = make_local_edge_host(
        *ctx.scenario, count, [&](std::uint32_t e) { return keeps(e) ? make(e) : std::unique_ptr<ServerAlgorithm>(); });
  }

  Buffer settle() {
    std::vector<msg::EdgeStatePart> parts;
    for (auto e : kept) {
      auto server = StateArchive::writer();
      host->archive_server(e, server);
      auto model = StateArchive::writer();
      host->archive_model(e, model);
      parts.push_back({e, server.take(), model.take()});
    }
    return msg::encode_edge_states(parts);
  }

  void restore(const Buffer& buffer) {
    for (auto& part : msg::decode_edge_states(buffer)) {
      auto& edges = at(part.edge);
      const auto what = "edge " + std::to_string(part.edge) + "'s ";
      if (!part.server.empty()) {
        auto ar = StateArchive::reader(std::move(part.server), what + "server half from the checkpoint");
        edges.archive_server(part.edge, ar);
        ar.expect_end();
      }
      if (!part.model.empty()) {
        auto ar = StateArchive::reader(std::move(part.model), what + "model from the checkpoint");
        edges.archive_model(part.edge, ar);
        ar.expect_end();
      }
    }
  }
};

std::string kept_text(const std::vector<std::uint32_t>& kept, std::uint32_t edges) {
  return "keeping " + std::to_string(kept.size()) + " of the " + std::to_string(edges) + " edges for the coordinator" +
         (kept.empty() ? "" : ": " + edge_list(kept));
}

// Runs one call; one that throws ends the host with the reason (and answers it, when asked).
template <class Call>
auto guarded(edge_host_actor::pointer self, const char* what, Call&& call) -> caf::result<decltype(call())> {
  try {
    return call();
  } catch (const std::exception& e) {
    auto err = caf::make_error(caf::sec::runtime_error, std::string("edge host: ") + what + ": " + e.what());
    self->quit(err);
    return err;
  }
}

template <class Call>
void guarded_void(edge_host_actor::pointer self, const char* what, Call&& call) {
  guarded(self, what, [&] {
    call();
    return true;
  });
}

}  // namespace

edge_host_actor::behavior_type edge_host(edge_host_actor::pointer self, SlotContext ctx,
                                         std::function<void(const std::string&)> log) {
  auto state = std::make_shared<EdgeHostState>();
  state->ctx = std::move(ctx);
  return {
      [=](edge_assign_atom, const Buffer& edges) {
        guarded_void(self, "assign", [&] {
          state->assign(edges);
          log(kept_text(state->kept, state->ctx.population->edges()));
        });
      },
      [=](edge_pull_atom, std::uint32_t edge, const Buffer& model) {
        guarded_void(self, "pull", [&] { state->at(edge).pull(edge, msg::decode_bundle(model)); });
      },
      [=](edge_regroup_atom, std::uint32_t edge, const Buffer& regroup) {
        guarded_void(self, "regroup", [&] { state->at(edge).regroup(edge, msg::decode_client_regroup(regroup)); });
      },
      [=](edge_task_atom, std::uint32_t edge, std::uint32_t serial, std::uint64_t version) -> caf::result<Buffer> {
        return guarded(self, "task", [&] {
          Buffer out;
          state->at(edge).task(edge, serial, version,
                               [&](std::shared_ptr<TrainingTask> t) { out = msg::encode_task(*t); });
          return out;
        });
      },
      [=](edge_aggregate_atom, std::uint32_t edge, const Buffer& input,
          const std::vector<Buffer>& updates) -> caf::result<Buffer> {
        return guarded(self, "aggregate", [&] {
          std::vector<ClientUpdate> decoded;
          for (const auto& u : updates) decoded.push_back(msg::decode_update(u));
          Buffer out;
          state->at(edge).aggregate(edge, std::move(decoded), msg::decode_aggregation_input(input),
                                    [&](EdgeAggregated a) { out = msg::encode_edge_aggregated(a); });
          return out;
        });
      },
      [=](edge_model_atom, std::uint32_t edge) -> caf::result<Buffer> {
        return guarded(self, "model", [&] {
          Buffer out;
          state->at(edge).models({edge}, [&](std::vector<NamedTensors> m) { out = msg::encode_bundle(m.at(0)); });
          return out;
        });
      },
      [=](edge_drop_atom, std::uint32_t edge) {
        guarded_void(self, "drop", [&] { state->at(edge).drop_model(edge); });
      },
      [=](edge_settle_atom) -> caf::result<Buffer> {
        return guarded(self, "settle", [&] {
          if (!state->host) throw std::logic_error("asked to settle before being assigned edges");
          return state->settle();
        });
      },
      [=](edge_restore_atom, const Buffer& parts) { guarded_void(self, "restore", [&] { state->restore(parts); }); },
  };
}

}  // namespace drift::actors
