#include "engine/metrics/round_report.hpp"

#include <utility>

namespace drift {
namespace {

ClientRecord record(ClientEvent event, std::uint32_t client, double time) {
  ClientRecord r;
  r.client_id = client;
  r.event = event;
  r.time = time;
  return r;
}

}  // namespace

ClientRecord eligible_record(std::uint32_t client, double time) { return record(ClientEvent::eligible, client, time); }

ClientRecord selected_record(std::uint32_t client, double time, std::uint64_t bytes_down) {
  auto r = record(ClientEvent::selected, client, time);
  r.bytes_down = bytes_down;
  return r;
}

ClientRecord arrival_record(ClientEvent event, std::uint32_t client, double time, std::uint64_t samples,
                            std::uint32_t steps, double loss, std::uint64_t bytes_up, std::uint64_t staleness,
                            std::string detail) {
  auto r = record(event, client, time);
  r.num_samples = samples;
  r.steps = steps;
  r.train_loss = loss;
  r.bytes_up = bytes_up;
  r.staleness = staleness;
  r.detail = std::move(detail);
  return r;
}

ClientRecord untrained_late_record(std::uint32_t client, double time, std::uint64_t samples, std::string detail) {
  auto r = record(ClientEvent::late, client, time);
  r.num_samples = samples;
  r.detail = std::move(detail);
  return r;
}

ClientRecord dropped_record(std::uint32_t client, double time, std::string why) {
  auto r = record(ClientEvent::dropped, client, time);
  r.detail = std::move(why);
  return r;
}

ClientRecord failed_record(std::uint32_t client, double time, std::string why) {
  auto r = record(ClientEvent::failed, client, time);
  r.detail = std::move(why);
  return r;
}

}  // namespace drift
