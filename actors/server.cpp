#include "actors/server.hpp"

#include <chrono>
#include <map>

#include "actors/client.hpp"
#include "actors/wire.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/core/error.hpp"
#include "engine/training/local_training.hpp"
#include "messages/codec.hpp"

namespace drift::actors {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct ServerState {
  SlotContext ctx;
  ServerPeers peers;
  std::unique_ptr<ServerAlgorithm> algorithm;
  NamedTensors global;
  std::uint64_t version = 0;
  std::map<std::uint32_t, caf::actor> clients;  // spawned lazily
  caf::response_promise done;

  // The round in flight.
  RoundReport report;
  std::map<std::uint32_t, ClientUpdate> updates;  // ordered by client id
  std::map<std::uint32_t, ClientRecord> records;
  std::size_t pending = 0;
  std::vector<EvalResult> eval_parts;
  std::size_t eval_pending = 0;
  Clock::time_point phase_start;
};

class RoundDriver {
 public:
  RoundDriver(caf::event_based_actor* self, std::shared_ptr<ServerState> s) : self_(self), s_(std::move(s)) {}

  void start_round(std::uint32_t round) {
    s_->report = RoundReport{};
    s_->report.round = round;
    s_->report.total_rounds = s_->ctx.scenario->rounds;
    s_->updates.clear();
    s_->records.clear();
    s_->phase_start = Clock::now();
    auto self = self_;
    auto driver = *this;
    self->request(s_->peers.sampler, caf::infinite, select_atom::value, msg::encode_selection_request(round))
        .then([driver](const Buffer& selection) mutable { driver.dispatch(msg::decode_selection(selection).clients); },
              [driver](caf::error& err) mutable { driver.abort("sampler failed: " + error_text(err)); });
  }

 private:
  void dispatch(const std::vector<std::uint32_t>& cohort) {
    auto& r = s_->report;
    r.cohort = cohort;
    TrainingTask task;
    task.round = r.round;
    task.model_version = s_->version;
    task.weights = s_->global;
    task.payload = s_->algorithm->broadcast(r.round);
    task.hyper = s_->ctx.scenario->training;
    const Buffer buffer = msg::encode_task(task);  // encoded once, shared by the whole cohort

    s_->pending = cohort.size();
    for (auto id : cohort) {
      s_->records[id] = ClientRecord{id, "selected", 0, 0.0, buffer.size(), 0, ""};
      r.bytes_down += buffer.size();
      auto driver = *this;
      self_->request(client_actor(id), caf::infinite, task_atom::value, buffer)
          .then([driver, id](const Buffer& update) mutable { driver.on_update(id, update); },
                [driver, id](caf::error& err) mutable { driver.on_failure(id, error_text(err)); });
    }
  }

  caf::actor client_actor(std::uint32_t id) {
    auto it = s_->clients.find(id);
    if (it == s_->clients.end())
      it = s_->clients.emplace(id, self_->spawn<caf::linked>(client, id, s_->peers.pool)).first;
    return it->second;
  }

  void on_update(std::uint32_t id, const Buffer& buffer) {
    try {
      auto update = msg::decode_update(buffer);
      if (update.client_id != id || update.round != s_->report.round)
        throw DecodeError("update claims client " + std::to_string(update.client_id) + " round " +
                          std::to_string(update.round));
      check_compatible(s_->global, update.weights);
      auto& rec = s_->records[id];
      rec.event = "finished";
      rec.num_samples = update.num_samples;
      rec.train_loss = update.metrics.loss;
      rec.bytes_up = buffer.size();
      s_->report.bytes_up += buffer.size();
      s_->updates.emplace(id, std::move(update));
      settle();
    } catch (const std::exception& e) {
      on_failure(id, std::string("rejected update: ") + e.what());
    }
  }

  void on_failure(std::uint32_t id, const std::string& why) {
    auto& rec = s_->records[id];
    rec.event = "failed";
    rec.detail = why;
    settle();
  }

  void settle() {
    if (--s_->pending > 0) return;
    aggregate();
  }

  void aggregate() {
    auto& r = s_->report;
    std::vector<ClientUpdate> updates;
    for (auto& [id, u] : s_->updates) updates.push_back(std::move(u));
    r.num_updates = static_cast<std::uint32_t>(updates.size());
    double loss = 0.0, accuracy = 0.0;
    for (const auto& u : updates) {
      r.samples += u.num_samples;
      loss += u.metrics.loss * static_cast<double>(u.num_samples);
      accuracy += u.metrics.accuracy * static_cast<double>(u.num_samples);
    }
    if (r.samples > 0) {
      r.train_loss = loss / static_cast<double>(r.samples);
      r.train_accuracy = accuracy / static_cast<double>(r.samples);
    }
    if (!updates.empty()) {
      s_->algorithm->aggregate(s_->global, updates, r.round);
      ++s_->version;
    }
    r.model_version = s_->version;
    for (auto& [id, rec] : s_->records) r.clients.push_back(rec);
    r.wall_train_seconds = seconds_since(s_->phase_start);

    const auto every = static_cast<std::uint32_t>(s_->ctx.scenario->evaluation.every);
    if (r.round % every == 0 || r.round == s_->ctx.scenario->rounds) evaluate();
    else finish_round();
  }

  void evaluate() {
    s_->phase_start = Clock::now();
    const auto& test = *s_->ctx.data->data.test;
    const auto chunks = evaluation_chunks(static_cast<std::uint64_t>(test.size()),
                                          static_cast<std::uint64_t>(s_->ctx.scenario->evaluation.chunk_size));
    const Buffer weights = msg::encode_bundle(s_->global);
    s_->eval_parts.assign(chunks.size(), EvalResult{});
    s_->eval_pending = chunks.size();
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      auto driver = *this;
      const EvalJob job{s_->version, chunks[i].first, chunks[i].second};
      self_->request(s_->peers.pool, caf::infinite, eval_atom::value, msg::encode_eval_job(job), weights)
          .then(
              [driver, i](const Buffer& result) mutable {
                driver.s_->eval_parts[i] = msg::decode_eval_result(result);
                if (--driver.s_->eval_pending == 0) driver.evaluated();
              },
              [driver](caf::error& err) mutable { driver.abort("evaluation failed: " + error_text(err)); });
    }
  }

  void evaluated() {
    auto& r = s_->report;
    const auto e = combine_evaluations(s_->eval_parts, s_->ctx.data->data.test->num_classes);
    r.evaluated = true;
    r.test_accuracy = e.accuracy;
    r.test_loss = e.loss;
    r.per_class_accuracy = e.per_class_accuracy;
    r.wall_eval_seconds = seconds_since(s_->phase_start);
    finish_round();
  }

  void finish_round() {
    const auto& r = s_->report;
    self_->send(s_->peers.sink, report_atom::value, msg::encode_report(r));
    if (r.round < s_->ctx.scenario->rounds) {
      start_round(r.round + 1);
      return;
    }
    auto s = s_;
    self_->request(s_->peers.sink, caf::infinite, finish_atom::value)
        .then([s](double best) mutable { s->done.deliver(best); },
              [s](caf::error& err) mutable { s->done.deliver(std::move(err)); });
  }

  void abort(const std::string& why) {
    s_->done.deliver(caf::make_error(caf::sec::runtime_error, why));
  }

  caf::event_based_actor* self_;
  std::shared_ptr<ServerState> s_;
};

}  // namespace

caf::behavior server(caf::event_based_actor* self, SlotContext ctx, ServerPeers peers) {
  auto s = std::make_shared<ServerState>();
  s->ctx = ctx;
  s->peers = peers;
  const auto& scenario = *ctx.scenario;
  const auto& train = *ctx.data->data.train;
  s->algorithm = find_algorithm(scenario.algorithm)->make_server(scenario.algorithm_params);
  s->global = state_of(*make_model(scenario.model, train.input_shape(), train.num_classes, scenario.seed));
  return {
      [=](run_atom) {
        s->done = self->make_response_promise();
        RoundDriver(self, s).start_round(1);
      },
  };
}

}  // namespace drift::actors
