#include "actors/server.hpp"

#include <chrono>
#include <csignal>
#include <map>
#include <optional>
#include <utility>

#include "actors/client.hpp"
#include "actors/edge_proxy.hpp"
#include "actors/wire.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/packing.hpp"
#include "engine/core/error.hpp"
#include "engine/core/phase_times.hpp"
#include "engine/metrics/report_sequence.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/round_rules.hpp"
#include "engine/tensors/update_check.hpp"
#include "engine/training/local_training.hpp"
#include "messages/codec.hpp"
#include "messages/pack_codec.hpp"
#include "messages/selection_codec.hpp"

namespace drift::actors {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class Host final : public JobRunner, public DriverListener {
 public:
  Host(caf::event_based_actor* self, SlotContext ctx, ServerPeers peers, ServerOptions options)
      : self_(self),
        ctx_(std::move(ctx)),
        peers_(std::move(peers)),
        reports_(TestSetShape{ctx_.data->data.test->num_classes, domain_starts(*ctx_.data->data.test),
                              client_test_starts(*ctx_.data), ctx_.data->population->held_out}) {
    const auto& s = *ctx_.scenario;
    const auto& algorithm = *find_algorithm(s.algorithm);
    private_models_ = algorithm.private_models;
    pack_ = effective_pack(s);
    DriverSetup setup;
    setup.scenario = ctx_.scenario.get();
    setup.population = ctx_.population;
    // Private models: no global model exists, and an update carrying weights is refused.
    if (!private_models_) setup.initial_weights = state_of(*make_scenario_model(s, *ctx_.data->data.train));
    auto shape = federation_shape(s, *ctx_.data, &setup.initial_weights);
    if (options.checkpoint.directory) shape.state_dir = options.checkpoint.directory->path().string();
    setup.algorithm = algorithm.make_server(s.algorithm_params, shape);
    setup.make_edge_algorithm = edge_server_maker(ctx_, shape);
    if (!peers_.edge_hosts.empty() && s.hierarchy.enabled()) {
      auto proxy = make_edge_proxy({self_, std::move(peers_.edge_hosts), ctx_,
                                    [this](const std::function<void()>& step) { drive(step); },
                                    [this](const std::string& why) { fail(why); }});
      edge_proxy_ = proxy.get();
      setup.edge_host = std::move(proxy);
    }
    setup.log_eligible = options.log_eligible;
    setup.private_models = private_models_;
    client_states_ = options.client_states ? options.client_states : std::make_shared<msg::MemoryStateStore>();
    observer_ = options.observer;
    reference_ = clone(setup.initial_weights);
    driver_ = make_driver(std::move(setup), *this, *this);
    checkpointer_ = std::make_unique<Checkpointer>(s, options.checkpoint, client_states_);
    if (const auto& from = options.checkpoint.resume_from) {
      auto ar = StateArchive::reader(from->checkpoint.driver, (from->directory / "state.bin").string());
      driver_->archive(ar);
      ar.expect_end();
    }
  }

  void run(caf::response_promise done) {
    done_ = std::move(done);
    phase_start_ = Clock::now();
    drive([&] {
      if (checkpointer_->options().resume_from)
        driver_->resume();
      else
        driver_->start();
    });
  }

  // A worker keeping edges went away (the server monitors only edge hosts).
  void on_down(const caf::down_msg& down) {
    if (edge_proxy_) edge_proxy_->on_down(down.source, down.reason);
  }

  // JobRunner
  std::uint64_t task_bytes(const std::shared_ptr<const TrainingTask>& task) override { return encoded(task).size(); }

  void launch(std::uint64_t job, std::uint32_t client_id, const std::shared_ptr<const TrainingTask>& task) override {
    launch_job(job, client_id, task, false);
  }

  void launch_counterfactual(std::uint64_t job, std::uint32_t client_id,
                             const std::shared_ptr<const TrainingTask>& task) override {
    launch_job(job, client_id, task, true);
  }

  void launch_job(std::uint64_t job, std::uint32_t client_id, const std::shared_ptr<const TrainingTask>& task,
                  bool shadow) {
    auto self = self_;
    auto request = shadow ? self->request(client_handle(client_id), caf::infinite, shadow_atom::value, encoded(task))
                          : self->request(client_handle(client_id), caf::infinite, task_atom::value, encoded(task));
    std::move(request).then([this, job, client_id](Buffer& update) { deliver(job, client_id, update); },
                            [this, job](caf::error& err) { job_failed(job, err); });
  }

  // Consecutive jobs of the round, devices.pack at a time, train as one pack; a lone last job
  // trains on its own, as it would unpacked.
  void launch_round(const std::vector<std::pair<std::uint64_t, std::uint32_t>>& jobs,
                    const std::shared_ptr<const TrainingTask>& task) override {
    for (const auto& [begin, end] : pack_ranges(jobs.size(), pack_)) {
      if (end - begin == 1)
        launch(jobs[begin].first, jobs[begin].second, task);
      else
        launch_pack(
            {jobs.begin() + static_cast<std::ptrdiff_t>(begin), jobs.begin() + static_cast<std::ptrdiff_t>(end)}, task);
    }
  }

  // Packable algorithms keep no client state, so a pack goes to the pool directly.
  void launch_pack(std::vector<std::pair<std::uint64_t, std::uint32_t>> members,
                   const std::shared_ptr<const TrainingTask>& task) {
    std::vector<std::uint32_t> clients;
    for (const auto& m : members) clients.push_back(m.second);
    self_->request(peers_.pool, caf::infinite, pack_atom::value, encoded(task), msg::encode_pack_job(clients))
        .then([this, members](Buffer& result) { deliver_pack(members, result); },
              [this, members](caf::error& err) {
                for (const auto& m : members) job_failed(m.first, err);
              });
  }

  void deliver_pack(const std::vector<std::pair<std::uint64_t, std::uint32_t>>& members, const Buffer& result) {
    std::vector<msg::PackedReply> replies;
    std::string broken;
    try {
      std::vector<std::uint32_t> clients;
      for (const auto& m : members) clients.push_back(m.second);
      replies = msg::decode_pack_result(result, clients);
    } catch (const std::exception& e) {
      broken = std::string("rejected pack result: ") + e.what();
    }
    for (std::size_t i = 0; i < members.size(); ++i) {
      // Named copies: a lambda below captures the job, and C++17 lambdas cannot capture a
      // structured binding.
      const std::uint64_t job = members[i].first;
      const std::uint32_t client = members[i].second;
      if (broken.empty() && replies[i].error.empty()) {
        deliver(job, client, replies[i].update);
        continue;
      }
      JobOutcome o;
      o.error = broken.empty() ? replies[i].error : broken;
      drive([&] { driver_->on_outcome(job, std::move(o)); });
    }
  }

  void job_failed(std::uint64_t job, const caf::error& err) {
    const auto loss = job_loss(err);
    if (training_loss_ends_run(loss)) return fail(error_text(err));
    JobOutcome o;
    o.error = error_text(err);
    o.lost = loss == JobLoss::worker_lost;
    drive([&] { driver_->on_outcome(job, std::move(o)); });
  }

  void request_selection(const SelectionRequest& request) override {
    self_->request(peers_.sampler, caf::infinite, select_atom::value, msg::encode_selection_request(request))
        .then(
            [this](Buffer& answer) {
              Selection selection;
              try {
                selection = msg::decode_selection(answer);
              } catch (const std::exception& e) {
                return fail(std::string("bad answer from the sampler: ") + e.what());
              }
              drive([&] { driver_->on_selection(std::move(selection)); });
            },
            [this](caf::error& err) { fail(error_text(err)); });
  }

  // DriverListener
  void on_aggregation(RoundReport report, const NamedTensors* evaluate) override {
    last_time_ = report.time_end;
    report.wall_train_seconds = seconds_since(phase_start_);
    phase_start_ = Clock::now();
    if (evaluate == nullptr) {
      reports_.add(std::move(report), 0);
      flush();
      return;
    }
    start_evaluation(std::move(report), *evaluate);
  }

  // Once the driver holds and every report before the hold is written (ReportSequence): the
  // sampler's state, then the checkpoint; then the run goes on, or stops if an interrupt asked.
  void try_checkpoint() {
    if (failing_) return;
    const auto round = reports_.start_checkpoint();
    if (!round) return;
    self_->request(peers_.sampler, caf::infinite, checkpoint_atom::value)
        .then([this, r = *round](Buffer& sampler) { save_checkpoint(r, std::string(sampler.data(), sampler.size())); },
              [this](caf::error& err) { fail("checkpoint: the sampler's state: " + error_text(err)); });
  }

  void save_checkpoint(std::uint32_t round, std::string sampler) {
    reports_.checkpoint_done();
    try {
      auto ar = StateArchive::writer();
      driver_->archive(ar);
      const auto line = checkpointer_->write(round, last_time_, ar.take(), std::move(sampler));
      if (observer_) observer_->on_checkpoint(line);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
    if (!checkpointer_->stopping()) return drive([&] { driver_->resume(); });
    const auto& interrupt = checkpointer_->options().interrupt;
    const int signal = interrupt ? interrupt->signal.load() : 0;
    if (interrupt) interrupt->stopped = true;
    on_finished({RunStatus::interrupted, "stopped at a checkpoint after aggregation " + std::to_string(round) +
                                             (signal == SIGINT    ? " (SIGINT)"
                                              : signal == SIGTERM ? " (SIGTERM)"
                                                                  : "")});
  }

  void on_progress(std::uint32_t round, std::uint32_t arrived, std::uint32_t needed) override {
    if (observer_) observer_->on_progress(round, arrived, needed);
  }

  bool wants_checkpoint(std::uint32_t round, bool last) override { return checkpointer_->due(round, last); }

  bool stop_asked() const override {
    const auto& interrupt = checkpointer_->options().interrupt;
    return interrupt && interrupt->signal.load() != 0;
  }

  void on_checkpoint_ready(std::uint32_t round) override {
    reports_.hold_for_checkpoint(round);
    try_checkpoint();
  }

  void on_finished(const RunEnd& end) override {
    reports_.driver_finished(end);
    flush();
  }

 private:
  const Buffer& encoded(const std::shared_ptr<const TrainingTask>& task) {
    if (task != last_task_) {
      const PhaseScope timed("server: encode task");
      last_buffer_ = msg::encode_task(*task);  // once per task, shared by every client that gets it
      last_task_ = task;
    }
    return last_buffer_;
  }

  client_actor client_handle(std::uint32_t id) {
    auto it = clients_.find(id);
    if (it == clients_.end())
      it = clients_.emplace(id, self_->spawn<caf::linked>(client, id, peers_.pool, client_states_)).first;
    return it->second;
  }

  void deliver(std::uint64_t job, std::uint32_t client_id, const Buffer& buffer) {
    JobOutcome o;
    try {
      const PhaseScope timed("server: decode update");
      o.update = msg::decode_update(buffer);
      check_update(o.update, client_id, reference_, personal_split(client_id));
      o.ok = true;
      o.upload_bytes = buffer.size();
    } catch (const std::exception& e) {
      o = JobOutcome{};
      o.error = std::string("rejected update: ") + e.what();
    }
    drive([&] { driver_->on_outcome(job, std::move(o)); });
  }

  // The held-out split a private-model client's evaluation must cover.
  std::optional<PersonalSplit> personal_split(std::uint32_t client_id) const {
    if (!private_models_) return std::nullopt;
    const auto [begin, end] = client_test_range(*ctx_.data, client_id);
    return PersonalSplit{begin, end, static_cast<std::size_t>(ctx_.data->data.test->num_classes)};
  }

  void start_evaluation(RoundReport report, const NamedTensors& weights) {
    const auto& test = *ctx_.data->data.test;
    const auto chunks = evaluation_chunks(static_cast<std::uint64_t>(test.size()),
                                          static_cast<std::uint64_t>(ctx_.scenario->evaluation.chunk_size),
                                          reports_.test_set().domain_starts);
    const auto version = report.model_version;
    const bool per_sample = !report.client_participations.empty();  // a per-client evaluation
    const auto id = reports_.add(std::move(report), chunks.size());
    const PhaseScope timed("server: start evaluation");
    const Buffer buffer = msg::encode_bundle(weights);
    for (std::size_t i = 0; i < chunks.size(); ++i)
      evaluate_chunk(id, i, EvalJob{version, chunks[i].first, chunks[i].second, per_sample}, buffer);
  }

  // A chunk whose worker was lost is evaluated again elsewhere: the result does not depend on
  // where it runs.
  void evaluate_chunk(std::uint64_t id, std::size_t i, const EvalJob& job, const Buffer& weights) {
    self_->request(peers_.pool, caf::infinite, eval_atom::value, msg::encode_eval_job(job), weights)
        .then(
            [this, id, i](Buffer& result) {
              const PhaseScope timed("server: evaluation result");
              reports_.add_evaluation(id, i, msg::decode_eval_result(result));
              flush();
            },
            [this, id, i, job, weights](caf::error& err) {
              const auto loss = job_loss(err);
              if (evaluation_runs_again(loss)) return evaluate_chunk(id, i, job, weights);
              fail(evaluation_failure(loss, error_text(err)));
            });
  }

  // Reports leave strictly in aggregation order, whatever order evaluations finish in.
  void flush() {
    for (const auto& report : reports_.take_sendable()) {
      self_->request(peers_.sink, caf::infinite, report_atom::value, msg::encode_report(report))
          .then(
              [this] {
                reports_.report_written();
                try_checkpoint();
              },
              [this](caf::error& err) { fail(error_text(err)); });
    }
    if (const auto end = reports_.finish()) {
      auto done = done_;
      self_->request(peers_.sink, caf::infinite, finish_atom::value, end->status, end->reason)
          .then([done](double best) mutable { done.deliver(best); },
                [done](caf::error& err) mutable { done.deliver(std::move(err)); });
    }
  }

  // The run cannot go on: summary.json says so (with what was reported so far), then the
  // runner hears why.
  // Runs a step of the round driver. An exception there (an algorithm refusing its input, say)
  // ends the run with its reason; escaping, it would end this actor and leave the run waiting
  // for a report that never comes, deaf to SIGINT and SIGTERM.
  template <class Step>
  void drive(Step&& step) {
    const PhaseScope timed("server: driver step");
    try {
      step();
    } catch (const std::exception& e) {
      fail(std::string("the server failed: ") + e.what());
    }
  }

  void fail(const std::string& why) {
    if (failing_ || !done_.pending()) return;
    failing_ = true;
    auto done = done_;
    auto stop = [done, why]() mutable { done.deliver(caf::make_error(caf::sec::runtime_error, why)); };
    self_->request(peers_.sink, std::chrono::seconds(30), stop_atom::value, why)
        .then([stop]() mutable { stop(); }, [stop](caf::error&) mutable { stop(); });
  }

  caf::event_based_actor* self_;
  SlotContext ctx_;
  ServerPeers peers_;
  NamedTensors reference_;  // the architecture every update must match (empty: private models)
  bool private_models_ = false;
  std::size_t pack_ = 1;  // clients per pack in sync rounds (compose/packing)
  std::shared_ptr<msg::StateStore> client_states_;
  std::shared_ptr<RunObserver> observer_;
  std::unique_ptr<Driver> driver_;
  EdgeProxy* edge_proxy_ = nullptr;  // the driver's edge host when edges live in workers
  std::unique_ptr<Checkpointer> checkpointer_;
  ReportSequence reports_;
  double last_time_ = 0.0;                         // virtual time at the end of the last aggregation
  std::map<std::uint32_t, client_actor> clients_;  // spawned lazily
  std::shared_ptr<const TrainingTask> last_task_;
  Buffer last_buffer_;
  bool failing_ = false;
  caf::response_promise done_;
  Clock::time_point phase_start_;
};

}  // namespace

caf::behavior server(caf::event_based_actor* self, SlotContext ctx, ServerPeers peers, ServerOptions options) {
  std::shared_ptr<Host> host;
  try {
    host = std::make_shared<Host>(self, std::move(ctx), std::move(peers), options);
  } catch (const std::exception& e) {
    // The server half could not start (a generator that fails its probe, say): the run
    // fails with the reason instead of an actor dying on an exception.
    const std::string why = e.what();
    return {[why](run_atom) -> caf::result<double> { return caf::make_error(caf::sec::runtime_error, why); }};
  }
  self->attach_functor([host] {});  // the host lives as long as the actor
  self->set_down_handler([host](const caf::down_msg& down) { host->on_down(down); });
  return {
      [=](run_atom) { host->run(self->make_response_promise()); },
  };
}

}  // namespace drift::actors
