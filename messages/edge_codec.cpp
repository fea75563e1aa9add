#include "messages/edge_codec.hpp"

#include <stdexcept>

#include "messages/edge.capnp.h"
#include "messages/framing.hpp"
#include "messages/named_values.hpp"

namespace drift::msg {
namespace {

using framing::build;
using framing::parse;
using framing::read_u32_list;
using framing::write_list;

void check_ascending(const std::vector<std::uint32_t>& ids, const char* what) {
  for (std::size_t i = 1; i < ids.size(); ++i)
    if (ids[i] <= ids[i - 1]) throw DecodeError(std::string(what) + " out of order or repeated");
}

// Cap'n Proto keeps a blob's size in 29 bits.
kj::ArrayPtr<const kj::byte> blob(const std::string& bytes, std::uint32_t edge, const char* what) {
  constexpr std::size_t kMaxBlob = (std::size_t{1} << 29) - 1;
  if (bytes.size() > kMaxBlob)
    throw std::length_error("edge " + std::to_string(edge) + "'s " + what + " state is " +
                            std::to_string(bytes.size() >> 20) + " MiB, over the 512 MiB one message may carry");
  return kj::arrayPtr(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size());
}

std::string text_of(capnp::Data::Reader data) {
  return std::string(reinterpret_cast<const char*>(data.begin()), data.size());
}

}  // namespace

Buffer encode_edge_assignment(const std::vector<std::uint32_t>& edges) {
  return build<wire::EdgeAssignment>(
      [&](wire::EdgeAssignment::Builder b) { write_list(b.initEdges(static_cast<unsigned>(edges.size())), edges); });
}

std::vector<std::uint32_t> decode_edge_assignment(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::EdgeAssignment>(buffer, limits, "edge assignment", [](wire::EdgeAssignment::Reader b, auto&&) {
    auto edges = read_u32_list(b.getEdges());
    check_ascending(edges, "edges");
    return edges;
  });
}

Buffer encode_aggregation_input(const AggregationInput& input) {
  return build<wire::EdgeAggregationInput>([&](wire::EdgeAggregationInput::Builder b) {
    b.setRound(input.round);
    write_list(b.initStaleness(static_cast<unsigned>(input.staleness.size())), input.staleness);
    write_list(b.initPulledVersion(static_cast<unsigned>(input.pulled_version.size())), input.pulled_version);
  });
}

AggregationInput decode_aggregation_input(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::EdgeAggregationInput>(
      buffer, limits, "aggregation input", [](wire::EdgeAggregationInput::Reader b, auto&&) {
        AggregationInput input;
        input.round = b.getRound();
        input.staleness = framing::read_list<std::uint64_t>(b.getStaleness());
        input.pulled_version = framing::read_list<std::uint64_t>(b.getPulledVersion());
        if (!input.pulled_version.empty() && input.pulled_version.size() != input.staleness.size())
          throw DecodeError(std::to_string(input.pulled_version.size()) + " pulled versions for " +
                            std::to_string(input.staleness.size()) + " staleness values");
        return input;
      });
}

Buffer encode_edge_aggregated(const EdgeAggregated& a) {
  return build<wire::EdgeAggregated>([&](wire::EdgeAggregated::Builder b) {
    b.setMoved(a.moved);
    write_scalars(b.initScalars(static_cast<unsigned>(a.metrics.scalars.size())), a.metrics.scalars);
    write_series(b.initPerClient(static_cast<unsigned>(a.metrics.per_client.size())), a.metrics.per_client);
    auto clients = b.initShareClients(static_cast<unsigned>(a.shares.size()));
    auto values = b.initShareValues(static_cast<unsigned>(a.shares.size()));
    for (unsigned k = 0; k < a.shares.size(); ++k) {
      clients.set(k, a.shares[k].first);
      values.set(k, a.shares[k].second);
    }
  });
}

EdgeAggregated decode_edge_aggregated(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::EdgeAggregated>(buffer, limits, "edge aggregation", [](wire::EdgeAggregated::Reader b, auto&&) {
    EdgeAggregated a;
    a.moved = b.getMoved();
    read_scalars(b.getScalars(), a.metrics.scalars);
    read_series(b.getPerClient(), a.metrics.per_client);
    const auto clients = b.getShareClients();
    const auto values = b.getShareValues();
    if (clients.size() != values.size())
      throw DecodeError(std::to_string(values.size()) + " shares for " + std::to_string(clients.size()) + " clients");
    for (unsigned k = 0; k < clients.size(); ++k) a.shares.emplace_back(clients[k], values[k]);
    return a;
  });
}

Buffer encode_client_regroup(const ClientRegroup& regroup) {
  return build<wire::EdgeRegroup>([&](wire::EdgeRegroup::Builder b) {
    const auto n = static_cast<unsigned>(regroup.clients.size());
    if (regroup.previous.size() != n) throw std::invalid_argument("a regroup's lists differ in length");
    write_list(b.initClients(n), regroup.clients);
    auto previous = b.initPrevious(n);
    auto joined = b.initJoined(n);
    for (unsigned i = 0; i < n; ++i) {
      joined.set(i, !regroup.previous[i].has_value());
      previous.set(i, regroup.previous[i].value_or(0));
    }
  });
}

ClientRegroup decode_client_regroup(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::EdgeRegroup>(buffer, limits, "client regroup", [](wire::EdgeRegroup::Reader b, auto&&) {
    ClientRegroup r;
    r.clients = read_u32_list(b.getClients());
    check_ascending(r.clients, "regrouped clients");
    const auto previous = b.getPrevious();
    const auto joined = b.getJoined();
    if (previous.size() != r.clients.size() || joined.size() != r.clients.size())
      throw DecodeError("a regroup's lists differ in length");
    for (unsigned i = 0; i < previous.size(); ++i)
      r.previous.push_back(joined[i] ? std::nullopt : std::optional<std::uint32_t>(previous[i]));
    return r;
  });
}

Buffer encode_edge_states(const std::vector<EdgeStatePart>& parts) {
  return build<wire::EdgeStates>([&](wire::EdgeStates::Builder b) {
    auto list = b.initParts(static_cast<unsigned>(parts.size()));
    for (unsigned i = 0; i < parts.size(); ++i) {
      list[i].setEdge(parts[i].edge);
      list[i].setServer(blob(parts[i].server, parts[i].edge, "server half's"));
      list[i].setModel(blob(parts[i].model, parts[i].edge, "model's"));
    }
  });
}

std::vector<EdgeStatePart> decode_edge_states(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::EdgeStates>(buffer, limits, "edge states", [](wire::EdgeStates::Reader b, auto&&) {
    std::vector<EdgeStatePart> parts;
    std::vector<std::uint32_t> edges;
    for (auto p : b.getParts()) {
      parts.push_back({p.getEdge(), text_of(p.getServer()), text_of(p.getModel())});
      edges.push_back(p.getEdge());
    }
    check_ascending(edges, "edge states");
    return parts;
  });
}

}  // namespace drift::msg
