#include "actors/gatekeeper.hpp"

#include <map>

#include "actors/wire.hpp"
#include "engine/core/error.hpp"
#include "messages/cluster_codec.hpp"

namespace drift::actors {
namespace {

struct Session {
  caf::node_id node;
  std::string worker;
  caf::actor_addr requester;  // the worker's actor that joined, watched until the worker is ready
};

struct GatekeeperState {
  GatekeeperSetup setup;
  std::map<std::uint64_t, Session> sessions;  // joined, not yet ready
  std::uint64_t next_session = 1;
};

Buffer refusal(const std::string& reason) {
  JoinReply r;
  r.reason = reason;
  return msg::encode_join_reply(r);
}

std::string peer_text(caf::event_based_actor* self) {
  const auto& sender = self->current_sender();
  return sender ? "node " + caf::to_string(sender->node()) : "an anonymous sender";
}

}  // namespace

caf::behavior gatekeeper(caf::event_based_actor* self, GatekeeperSetup setup) {
  auto state = std::make_shared<GatekeeperState>();
  state->setup = std::move(setup);
  auto refuse = [=](const std::string& who, const std::string& reason) {
    state->setup.observer->on_warning("refused " + who + ": " + reason);
    return refusal(reason);
  };
  // A worker that refuses the scenario or fails to rebuild the data says why in its own log and
  // leaves; the coordinator's log says that it left, so a missing worker is not a mystery.
  self->set_down_handler([=](const caf::down_msg& down) {
    for (auto it = state->sessions.begin(); it != state->sessions.end(); ++it)
      if (it->second.requester == down.source) {
        state->setup.observer->on_warning("worker '" + it->second.worker +
                                          "' left before it was ready: it could not set up the run (its own log says "
                                          "why)");
        state->sessions.erase(it);
        return;
      }
  });
  return {
      [=](join_atom, const Buffer& buffer) -> Buffer {
        JoinRequest request;
        try {
          request = msg::decode_join_request(buffer);
        } catch (const DecodeError& e) {
          return refuse("a join from " + peer_text(self), e.what());
        }
        const auto who = "worker '" + request.worker + "' (" + peer_text(self) + ")";
        if (const auto why = join_refusal(state->setup.policy, request)) return refuse(who, *why);
        const auto& sender = self->current_sender();
        if (!sender) return refuse(who, "anonymous join requests are not accepted");
        JoinReply reply;
        reply.accepted = true;
        reply.session = state->next_session++;
        reply.scenario_toml = state->setup.scenario_toml;
        reply.scenario_hash = state->setup.policy.scenario_hash;
        state->sessions[reply.session] = {sender->node(), request.worker, caf::actor_cast<caf::actor_addr>(sender)};
        self->monitor(sender);
        state->setup.observer->on_notice(who + " authenticated (devices " + request.devices +
                                         "); it is rebuilding the data");
        return msg::encode_join_reply(reply);
      },
      [=](ready_atom, const Buffer& buffer, const caf::actor& agent, const std::vector<slot_actor>& slots) -> Buffer {
        WorkerReady ready;
        try {
          ready = msg::decode_worker_ready(buffer);
        } catch (const DecodeError& e) {
          return refuse("a ready from " + peer_text(self), e.what());
        }
        const auto& sender = self->current_sender();
        auto it = state->sessions.find(ready.session);
        if (!sender || it == state->sessions.end() || it->second.node != sender->node())
          return refuse("a ready from " + peer_text(self), "no join was accepted for this session");
        const auto session = it->second;
        state->sessions.erase(it);
        const auto who = "worker '" + session.worker + "'";
        if (!agent || agent.node() != session.node) return refuse(who, "its agent does not live on its node");
        for (const auto& s : slots)
          if (!s || s.node() != session.node) return refuse(who, "a trainer slot does not live on its node");
        if (const auto why =
                ready_refusal(state->setup.policy.scenario_hash, state->setup.data_fingerprint, ready, slots.size()))
          return refuse(who, *why);
        self->send(state->setup.pool, worker_atom::value, session.worker, agent, slots);
        JoinReply reply;
        reply.accepted = true;
        reply.session = ready.session;
        return msg::encode_join_reply(reply);
      },
  };
}

}  // namespace drift::actors
