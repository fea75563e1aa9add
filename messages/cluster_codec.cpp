#include "messages/cluster_codec.hpp"

#include "messages/cluster.capnp.h"
#include "messages/framing.hpp"

namespace drift::msg {
namespace {

using framing::build;

std::string text(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }

}  // namespace

Buffer encode_join_request(const JoinRequest& r) {
  return build<wire::JoinRequest>([&](wire::JoinRequest::Builder b) {
    b.setProtocol(r.protocol);
    b.setDriftVersion(r.drift_version);
    b.setTorchVersion(r.torch_version);
    b.setToken(r.token);
    b.setWorker(r.worker);
    b.setDevices(r.devices);
    b.setExpectedScenario(r.expected_scenario);
  });
}

JoinRequest decode_join_request(const Buffer& buffer, const DecodeLimits& limits) {
  return framing::parse<wire::JoinRequest>(buffer, limits, "join request", [](wire::JoinRequest::Reader r, auto&&) {
    JoinRequest out;
    out.protocol = r.getProtocol();
    out.drift_version = text(r.getDriftVersion());
    out.torch_version = text(r.getTorchVersion());
    out.token = text(r.getToken());
    out.worker = text(r.getWorker());
    out.devices = text(r.getDevices());
    out.expected_scenario = text(r.getExpectedScenario());
    return out;
  });
}

Buffer encode_join_reply(const JoinReply& r) {
  return build<wire::JoinReply>([&](wire::JoinReply::Builder b) {
    b.setAccepted(r.accepted);
    b.setReason(r.reason);
    b.setSession(r.session);
    b.setScenarioToml(r.scenario_toml);
    b.setScenarioHash(r.scenario_hash);
  });
}

JoinReply decode_join_reply(const Buffer& buffer, const DecodeLimits& limits) {
  return framing::parse<wire::JoinReply>(buffer, limits, "join reply", [](wire::JoinReply::Reader r, auto&&) {
    JoinReply out;
    out.accepted = r.getAccepted();
    out.reason = text(r.getReason());
    out.session = r.getSession();
    out.scenario_toml = text(r.getScenarioToml());
    out.scenario_hash = text(r.getScenarioHash());
    return out;
  });
}

Buffer encode_worker_ready(const WorkerReady& r) {
  return build<wire::WorkerReady>([&](wire::WorkerReady::Builder b) {
    b.setSession(r.session);
    b.setScenarioHash(r.scenario_hash);
    b.setDataFingerprint(r.data_fingerprint);
    b.setSlots(r.slots);
  });
}

WorkerReady decode_worker_ready(const Buffer& buffer, const DecodeLimits& limits) {
  return framing::parse<wire::WorkerReady>(buffer, limits, "worker ready", [](wire::WorkerReady::Reader r, auto&&) {
    WorkerReady out;
    out.session = r.getSession();
    out.scenario_hash = text(r.getScenarioHash());
    out.data_fingerprint = text(r.getDataFingerprint());
    out.slots = r.getSlots();
    return out;
  });
}

}  // namespace drift::msg
