#include "engine/sim/sync_replay.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <type_traits>

#include "engine/sim/round_rules.hpp"

namespace drift {

void record_drop(RoundReport& report, std::uint32_t client, double at, const TaskPlan& plan, const std::string& why) {
  ++report.dropped;
  report.wasted_compute_seconds += wasted_compute(plan, at);
  report.clients.push_back(dropped_record(client, at, why));
}

bool launch_decided(RoundRun& run, const TaskPlan& plan, double deadline_at, DriverParts& parts, RoundReport& report) {
  const auto c = plan.client;
  const double start = run.round.start;
  const auto decision = decide_launch(plan, start, parts.roster.offline_between(c, start, plan.earliest_finish),
                                      deadline_at, parts.scenario.simulation);
  if (decision.kind == LaunchDecision::train) return true;
  run.planned_events_end = std::max(run.planned_events_end, decision.at);
  if (decision.kind == LaunchDecision::drop) {
    record_drop(report, c, decision.at, plan, decision.why);
    return false;
  }
  ++report.late;
  report.wasted_compute_seconds += wasted_compute(plan);
  report.clients.push_back(untrained_late_record(c, decision.at, parts.population->num_samples[c], decision.why));
  parts.roster.work_until(c, decision.at);
  return false;
}

std::vector<Arrival> sort_out_jobs(RoundRun& run, DriverParts& parts, PersonalEvaluations* personal,
                                   RoundReport& report, double& last_event) {
  std::vector<Arrival> arrivals;
  for (auto& [id, p] : run.jobs) {
    const auto c = p.plan.client;
    parts.roster.set_busy(c, false);
    // The client's model changed when it trained, whether or not the server uses its upload.
    if (personal && p.outcome.ok && p.outcome.update.personal) personal->record(c, *p.outcome.update.personal);
    const auto fate = triage(p.plan, p.outcome, parts.roster);
    switch (fate.fate) {
      case Fate::lost:  // its device vanished (a worker died): to the federation, a dropout
        record_drop(report, c, fate.time, p.plan, fate.reason);
        break;
      case Fate::failed:
        ++report.failed;
        report.clients.push_back(failed_record(c, fate.time, fate.reason));
        break;
      case Fate::dropped:
        record_drop(report, c, fate.time, p.plan, fate.reason);
        report.discarded_samples += p.outcome.update.num_samples;
        break;
      case Fate::arrived:
        parts.losses.push_back({c, p.outcome.update.metrics.loss});
        arrivals.push_back({fate.time, c, &p});
        continue;
    }
    last_event = std::max(last_event, fate.time);
  }
  std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
    return a.time != b.time ? a.time < b.time : a.client < b.client;
  });
  return arrivals;
}

double accept_arrivals(RoundRun& run, std::vector<Arrival>& arrivals, double last_event, DriverParts& parts,
                       RoundReport& report, std::vector<ClientUpdate>& accepted, std::vector<StaleUpdate>& newly_late) {
  const double start = run.round.start;
  const double deadline = parts.timeline.deadline();
  const double deadline_at = deadline > 0 ? start + deadline : kNever;
  double end = start, trained = start;
  for (auto& a : arrivals) {
    auto& o = a.job->outcome;
    const auto& u = o.update;
    if (accepted.size() < run.needed && a.time <= deadline_at) {
      report.clients.push_back(arrival_record(ClientEvent::finished, a.client, a.time, u.num_samples, u.metrics.steps,
                                              u.metrics.loss, o.upload_bytes, 0, ""));
      report.bytes_up += o.upload_bytes;
      ++report.finished;
      end = std::max(end, a.time);
      trained = std::max(trained, a.job->plan.compute_end);
      accepted.push_back(std::move(o.update));
      continue;
    }
    ++report.late;
    report.bytes_up += o.upload_bytes;
    parts.roster.work_until(a.client, a.time);
    last_event = std::max(last_event, a.time);
    const bool keep = parts.scenario.simulation.late_updates == LateUpdates::stale;
    report.clients.push_back(arrival_record(ClientEvent::late, a.client, a.time, u.num_samples, u.metrics.steps,
                                            u.metrics.loss, o.upload_bytes, 0, keep ? "kept as stale" : "discarded"));
    if (keep) {
      newly_late.push_back({a.time, std::move(o.update), o.upload_bytes});
    } else {
      report.discarded_samples += u.num_samples;
      report.wasted_compute_seconds += wasted_compute(a.job->plan);
    }
  }
  if (accepted.size() < run.needed) end = deadline_at < kNever ? deadline_at : std::max(end, last_event);
  run.protocol_start = accepted.size() < run.needed ? end : trained;  // secure aggregation begins after training
  return end;
}

void archive_records(StateArchive& ar, std::vector<ClientRecord>& records) {
  ar.vector(records, [&](ClientRecord& r) {
    visit_client_fields(r, [&](const ReportField&, auto& field) {
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::string>)
        ar.text(field);
      else
        ar.value(field);
    });
  });
}

std::vector<ClientRecord> take_records_after(RoundReport& report, double end) {
  auto& records = report.clients;
  const auto later =
      std::stable_partition(records.begin(), records.end(), [&](const ClientRecord& r) { return r.time <= end; });
  std::vector<ClientRecord> out(std::make_move_iterator(later), std::make_move_iterator(records.end()));
  records.erase(later, records.end());
  return out;
}

}  // namespace drift
