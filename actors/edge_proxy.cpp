#include "actors/edge_proxy.hpp"

#include <deque>
#include <map>

#include "actors/wire.hpp"
#include "engine/tensors/tensor_archive.hpp"
#include "messages/codec.hpp"
#include "messages/edge_codec.hpp"

namespace drift::actors {
namespace {

std::string why_down(const caf::error& reason) {
  if (reason == caf::exit_reason::remote_link_unreachable) return exit_text(reason);
  if (reason == caf::exit_reason::user_shutdown) return "its worker was let go or shut down";
  return error_text(reason);
}

class ActorEdgeHost final : public EdgeProxy {
 public:
  explicit ActorEdgeHost(EdgeProxySetup setup)
      : s_(std::move(setup)), make_(edge_server_maker(s_.ctx, shape_without_directory(s_.ctx))), kept_(hosts()) {
    for (std::uint32_t e = 0; e < s_.ctx.population->edges(); ++e) kept_[e % hosts()].push_back(e);
    for (std::uint32_t h = 0; h < hosts(); ++h) {
      s_.self->monitor(s_.hosts[h]);
      s_.self->send(s_.hosts[h], edge_assign_atom::value, msg::encode_edge_assignment(kept_[h]));
    }
  }

  void pull(std::uint32_t edge, const NamedTensors& global) override {
    s_.self->send(host(edge), edge_pull_atom::value, edge, msg::encode_bundle(global));
  }

  void regroup(std::uint32_t edge, const ClientRegroup& regroup) override {
    s_.self->send(host(edge), edge_regroup_atom::value, edge, msg::encode_client_regroup(regroup));
  }

  void task(std::uint32_t edge, std::uint32_t serial, std::uint64_t version, TaskReady ready) override {
    const auto t = ticket();
    s_.self->request(host(edge), caf::infinite, edge_task_atom::value, edge, serial, version)
        .then(
            [this, t, ready](Buffer& buffer) {
              decoded(t, "task", [&] {
                auto task = std::make_shared<TrainingTask>(msg::decode_task(buffer));
                return [ready, task] { ready(task); };
              });
            },
            [this, edge](caf::error& err) { failed(edge % hosts(), err); });
  }

  // Edge-tier algorithms start every client from the task's model (FedAWE, whose clients do
  // not, cannot run at an edge: its catalogue row says so).
  const NamedTensors* start_model(std::uint32_t, std::uint32_t) const override { return nullptr; }

  void aggregate(std::uint32_t edge, std::vector<ClientUpdate> updates, AggregationInput input,
                 Aggregated done) override {
    const auto t = ticket();
    std::vector<Buffer> encoded;
    encoded.reserve(updates.size());
    for (const auto& u : updates) encoded.push_back(msg::encode_update(u));
    s_.self
        ->request(host(edge), caf::infinite, edge_aggregate_atom::value, edge, msg::encode_aggregation_input(input),
                  std::move(encoded))
        .then(
            [this, t, done](Buffer& buffer) {
              decoded(t, "aggregation", [&] {
                return [done, a = msg::decode_edge_aggregated(buffer)]() mutable { done(std::move(a)); };
              });
            },
            [this, edge](caf::error& err) { failed(edge % hosts(), err); });
  }

  void models(const std::vector<std::uint32_t>& edges, ModelsReady ready) override {
    const auto t = ticket();
    struct Gathered {
      std::vector<NamedTensors> models;
      std::size_t left;
    };
    auto gathered = std::make_shared<Gathered>(Gathered{std::vector<NamedTensors>(edges.size()), edges.size()});
    auto deliver = [gathered, ready] { ready(std::move(gathered->models)); };
    if (edges.empty()) return answer(t, deliver);
    for (std::size_t i = 0; i < edges.size(); ++i)
      s_.self->request(host(edges[i]), caf::infinite, edge_model_atom::value, edges[i])
          .then(
              [this, t, gathered, deliver, i](Buffer& buffer) {
                decoded(t, "model", [&] {
                  gathered->models[i] = msg::decode_bundle(buffer);
                  return --gathered->left == 0 ? std::function<void()>(deliver) : std::function<void()>();
                });
              },
              [this, h = edges[i] % hosts()](caf::error& err) { failed(h, err); });
  }

  void drop_model(std::uint32_t edge) override { s_.self->send(host(edge), edge_drop_atom::value, edge); }

  // Every host's state comes with its answer, for the archive calls that follow.
  void settle(std::function<void()> ready) override {
    const auto t = ticket();
    auto left = std::make_shared<std::size_t>(s_.hosts.size());
    for (std::size_t h = 0; h < s_.hosts.size(); ++h)
      s_.self->request(s_.hosts[h], caf::infinite, edge_settle_atom::value)
          .then(
              [this, t, left, ready](Buffer& buffer) {
                decoded(t, "checkpoint state", [&] {
                  for (auto& part : msg::decode_edge_states(buffer)) settled_[part.edge] = std::move(part);
                  return --*left == 0 ? ready : std::function<void()>();
                });
              },
              [this, h](caf::error& err) { failed(static_cast<std::uint32_t>(h), err); });
  }

  // Reading a checkpoint, a part is read here by a server half of the same kind (its layout
  // is that code's), written again, and sent to the edge's host; writing, the host's bytes go
  // in as they came.
  void archive_server(std::uint32_t edge, StateArchive& ar) override {
    if (!ar.loading()) return ar.splice(settled(edge).server);
    auto server = make_(edge);
    server->archive(ar);
    auto again = StateArchive::writer();
    server->archive(again);
    restore({edge, again.take(), {}});
  }

  void archive_model(std::uint32_t edge, StateArchive& ar) override {
    if (!ar.loading()) return ar.splice(settled(edge).model);
    NamedTensors model;
    archive_named(ar, model);
    auto again = StateArchive::writer();
    archive_named(again, model);
    restore({edge, {}, again.take()});
  }

  void on_down(const caf::actor_addr& source, const caf::error& reason) override {
    for (std::size_t h = 0; h < s_.hosts.size(); ++h)
      if (s_.hosts[h].address() == source)
        return s_.fail("lost the host of edges " + kept_text(h) + " (" + why_down(reason) +
                       "); the run stops, and drift resume continues it from its last checkpoint if it wrote one");
  }

 private:
  std::uint32_t hosts() const { return static_cast<std::uint32_t>(s_.hosts.size()); }
  const edge_host_actor& host(std::uint32_t edge) const { return s_.hosts.at(edge % hosts()); }

  std::string kept_text(std::size_t h) const { return kept_[h].empty() ? "(none)" : edge_list(kept_[h]); }

  const msg::EdgeStatePart& settled(std::uint32_t edge) const {
    const auto it = settled_.find(edge);
    if (it == settled_.end())
      throw std::logic_error("edge " + std::to_string(edge) + "'s state asked for before the edges settled");
    return it->second;
  }

  void restore(const msg::EdgeStatePart& part) {
    s_.self->send(host(part.edge), edge_restore_atom::value, msg::encode_edge_states({part}));
  }

  // Answers reach the driver in the order it asked, one at a time.
  std::uint64_t ticket() {
    answers_.emplace_back();
    return first_ + answers_.size() - 1;
  }

  void answer(std::uint64_t t, std::function<void()> deliver) {
    answers_.at(t - first_) = std::move(deliver);
    if (delivering_) return;  // the loop below that is running takes it in its turn
    delivering_ = true;
    while (!answers_.empty() && answers_.front()) {
      auto next = std::move(answers_.front());
      answers_.pop_front();
      ++first_;
      s_.step(next);
    }
    delivering_ = false;
  }

  // `make` reads an answer and returns what delivers it, or nothing while parts are missing.
  template <class Make>
  void decoded(std::uint64_t t, const char* what, Make&& make) {
    std::function<void()> deliver;
    try {
      deliver = make();
    } catch (const std::exception& e) {
      return s_.fail(std::string("a bad ") + what + " from an edge host: " + e.what());
    }
    if (deliver) answer(t, std::move(deliver));
  }

  // A host that went away answers every call still waiting so; its down message says why.
  void failed(std::uint32_t host, const caf::error& err) {
    if (err == caf::sec::request_receiver_down || err == caf::exit_reason::remote_link_unreachable) return;
    s_.fail("the host of edges " + kept_text(host) + " failed: " + error_text(err));
  }

  EdgeProxySetup s_;
  EdgeServerMaker make_;                          // server halves that read a checkpoint's parts
  std::vector<std::vector<std::uint32_t>> kept_;  // by host: its edges (edge e at host e mod hosts)
  std::deque<std::function<void()>> answers_;     // from ticket first_ on; empty: not here yet
  std::uint64_t first_ = 0;
  bool delivering_ = false;
  std::map<std::uint32_t, msg::EdgeStatePart> settled_;
};

}  // namespace

std::unique_ptr<EdgeProxy> make_edge_proxy(EdgeProxySetup setup) {
  return std::make_unique<ActorEdgeHost>(std::move(setup));
}

}  // namespace drift::actors
