// The round report: server -> metrics sink, one per aggregation.
#include <string>

#include "engine/core/error.hpp"
#include "messages/codec.hpp"
#include "messages/framing.hpp"
#include "messages/report.capnp.h"

namespace drift::msg {
namespace {

using framing::build;
using framing::parse;
using framing::read_u32_list;
using framing::write_list;

void write_algorithm_metrics(wire::RoundReport::Builder root, const AlgorithmMetrics& m) {
  auto scalars = root.initAlgorithmScalars(static_cast<unsigned>(m.scalars.size()));
  unsigned i = 0;
  for (const auto& [name, value] : m.scalars) {
    scalars[i].setName(name);
    scalars[i++].setValue(value);
  }
  auto series = root.initAlgorithmPerClient(static_cast<unsigned>(m.per_client.size()));
  i = 0;
  for (const auto& [name, values] : m.per_client) {
    series[i].setName(name);
    write_list(series[i++].initValues(static_cast<unsigned>(values.size())), values);
  }
}

AlgorithmMetrics read_algorithm_metrics(wire::RoundReport::Reader root) {
  AlgorithmMetrics m;
  for (auto s : root.getAlgorithmScalars()) m.scalars[s.getName()] = s.getValue();
  for (auto s : root.getAlgorithmPerClient()) {
    auto& values = m.per_client[s.getName()];
    for (auto v : s.getValues()) values.push_back(v);
  }
  return m;
}

}  // namespace

// The wire enum and the engine's spell the events in the same order.
static_assert(static_cast<int>(wire::ClientEvent::FAILED) == static_cast<int>(ClientEvent::failed) &&
              static_cast<int>(wire::ClientEvent::ELIGIBLE) == static_cast<int>(ClientEvent::eligible));

Buffer encode_report(const RoundReport& report) {
  return build<wire::RoundReport>([&](wire::RoundReport::Builder root) {
    root.setRound(report.round);
    root.setTotalRounds(report.total_rounds);
    root.setModelVersion(report.model_version);
    write_list(root.initCohort(static_cast<unsigned>(report.cohort.size())), report.cohort);
    root.setNumUpdates(report.num_updates);
    root.setSamples(report.samples);
    root.setTrainLoss(report.train_loss);
    root.setTrainAccuracy(report.train_accuracy);
    root.setEvaluated(report.evaluated);
    root.setTestAccuracy(report.test_accuracy);
    root.setTestLoss(report.test_loss);
    write_list(root.initPerClassAccuracy(static_cast<unsigned>(report.per_class_accuracy.size())),
               report.per_class_accuracy);
    write_list(root.initClientAccuracy(static_cast<unsigned>(report.client_accuracy.size())), report.client_accuracy);
    root.setClientsEvaluated(report.clients_evaluated);
    write_list(root.initDomainAccuracy(static_cast<unsigned>(report.domain_accuracy.size())), report.domain_accuracy);
    root.setBytesDown(report.bytes_down);
    root.setBytesUp(report.bytes_up);
    auto clients = root.initClients(static_cast<unsigned>(report.clients.size()));
    for (unsigned i = 0; i < report.clients.size(); ++i) {
      const auto& c = report.clients[i];
      clients[i].setClientId(c.client_id);
      clients[i].setEvent(static_cast<wire::ClientEvent>(c.event));
      clients[i].setNumSamples(c.num_samples);
      clients[i].setTrainLoss(c.train_loss);
      clients[i].setBytesDown(c.bytes_down);
      clients[i].setBytesUp(c.bytes_up);
      clients[i].setDetail(c.detail);
      clients[i].setTime(c.time);
      clients[i].setStaleness(c.staleness);
    }
    root.setTimeStart(report.time_start);
    root.setTimeEnd(report.time_end);
    root.setEligible(report.eligible);
    write_list(root.initAggregated(static_cast<unsigned>(report.aggregated.size())), report.aggregated);
    root.setFinished(report.finished);
    root.setLate(report.late);
    root.setDropped(report.dropped);
    root.setFailed(report.failed);
    write_list(root.initStaleness(static_cast<unsigned>(report.staleness.size())), report.staleness);
    root.setDiscardedSamples(report.discarded_samples);
    root.setWastedComputeSeconds(report.wasted_compute_seconds);
    root.setCohortTv(report.cohort_tv);
    root.setCohortJs(report.cohort_js);
    root.setWindowTv(report.window_tv);
    root.setWindowJs(report.window_js);
    root.setOnline(report.online);
    root.setChangeTv(report.change_tv);
    root.setChangeJs(report.change_js);
    root.setDivergence(report.divergence);
    root.setUpdateDrift(report.update_drift);
    root.setUpdateCosine(report.update_cosine);
    root.setShadowClients(report.shadow_clients);
    root.setShadowSamples(report.shadow_samples);
    root.setCoverage(report.coverage);
    root.setWallTrainSeconds(report.wall_train_seconds);
    root.setWallEvalSeconds(report.wall_eval_seconds);
    write_algorithm_metrics(root, report.algorithm);
  });
}

RoundReport decode_report(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::RoundReport>(buffer, limits, "round report", [](wire::RoundReport::Reader root, const auto&) {
    RoundReport r;
    r.round = root.getRound();
    r.total_rounds = root.getTotalRounds();
    r.model_version = root.getModelVersion();
    r.cohort = read_u32_list(root.getCohort());
    r.num_updates = root.getNumUpdates();
    r.samples = root.getSamples();
    r.train_loss = root.getTrainLoss();
    r.train_accuracy = root.getTrainAccuracy();
    r.evaluated = root.getEvaluated();
    r.test_accuracy = root.getTestAccuracy();
    r.test_loss = root.getTestLoss();
    for (auto v : root.getPerClassAccuracy()) r.per_class_accuracy.push_back(v);
    for (auto v : root.getClientAccuracy()) r.client_accuracy.push_back(v);
    r.clients_evaluated = root.getClientsEvaluated();
    for (auto v : root.getDomainAccuracy()) r.domain_accuracy.push_back(v);
    r.bytes_down = root.getBytesDown();
    r.bytes_up = root.getBytesUp();
    for (auto c : root.getClients()) {
      const auto event = static_cast<std::size_t>(c.getEvent());
      if (event >= ChoiceNames<ClientEvent>::names.size())
        throw DecodeError("unknown client event " + std::to_string(event));
      ClientRecord record;
      record.client_id = c.getClientId();
      record.event = static_cast<ClientEvent>(event);
      record.time = c.getTime();
      record.num_samples = c.getNumSamples();
      record.train_loss = c.getTrainLoss();
      record.bytes_down = c.getBytesDown();
      record.bytes_up = c.getBytesUp();
      record.staleness = c.getStaleness();
      record.detail = c.getDetail();
      r.clients.push_back(std::move(record));
    }
    r.time_start = root.getTimeStart();
    r.time_end = root.getTimeEnd();
    r.eligible = root.getEligible();
    r.aggregated = read_u32_list(root.getAggregated());
    r.finished = root.getFinished();
    r.late = root.getLate();
    r.dropped = root.getDropped();
    r.failed = root.getFailed();
    for (auto v : root.getStaleness()) r.staleness.push_back(v);
    r.discarded_samples = root.getDiscardedSamples();
    r.wasted_compute_seconds = root.getWastedComputeSeconds();
    r.cohort_tv = root.getCohortTv();
    r.cohort_js = root.getCohortJs();
    r.window_tv = root.getWindowTv();
    r.window_js = root.getWindowJs();
    r.online = root.getOnline();
    r.change_tv = root.getChangeTv();
    r.change_js = root.getChangeJs();
    r.divergence = root.getDivergence().cStr();
    r.update_drift = root.getUpdateDrift();
    r.update_cosine = root.getUpdateCosine();
    r.shadow_clients = root.getShadowClients();
    r.shadow_samples = root.getShadowSamples();
    r.coverage = root.getCoverage();
    r.wall_train_seconds = root.getWallTrainSeconds();
    r.wall_eval_seconds = root.getWallEvalSeconds();
    r.algorithm = read_algorithm_metrics(root);
    return r;
  });
}

}  // namespace drift::msg
