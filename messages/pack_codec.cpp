#include "messages/pack_codec.hpp"

#include <algorithm>

#include "messages/framing.hpp"
#include "messages/pack.capnp.h"

namespace drift::msg {

Buffer encode_pack_job(const std::vector<std::uint32_t>& clients) {
  return framing::build<wire::PackJob>([&](wire::PackJob::Builder b) {
    framing::write_list(b.initClients(static_cast<unsigned>(clients.size())), clients);
  });
}

std::vector<std::uint32_t> decode_pack_job(const Buffer& buffer, const DecodeLimits& limits) {
  return framing::parse<wire::PackJob>(buffer, limits, "pack job", [](wire::PackJob::Reader b, auto&&) {
    auto clients = framing::read_u32_list(b.getClients());
    if (clients.empty()) throw DecodeError("a pack without clients");
    auto sorted = clients;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw DecodeError("a client appears twice in one pack");
    return clients;
  });
}

Buffer encode_pack_result(const std::vector<PackedReply>& members) {
  return framing::build<wire::PackResult>([&](wire::PackResult::Builder b) {
    auto list = b.initMembers(static_cast<unsigned>(members.size()));
    for (unsigned i = 0; i < members.size(); ++i) {
      const auto& m = members[i];
      list[i].setClient(m.client);
      list[i].setUpdate(kj::arrayPtr(reinterpret_cast<const kj::byte*>(m.update.data()), m.update.size()));
      list[i].setError(m.error);
    }
  });
}

std::vector<PackedReply> decode_pack_result(const Buffer& buffer, const DecodeLimits& limits) {
  return framing::parse<wire::PackResult>(buffer, limits, "pack result", [](wire::PackResult::Reader b, auto&&) {
    std::vector<PackedReply> out;
    for (auto m : b.getMembers()) {
      PackedReply r;
      r.client = m.getClient();
      r.error = m.getError().cStr();
      const auto bytes = m.getUpdate();
      if ((bytes.size() > 0) == !r.error.empty())
        throw DecodeError("pack member " + std::to_string(r.client) + " has " +
                          (r.error.empty() ? "neither an update nor an error" : "both an update and an error"));
      // Its own copy: an Update's tensors are read in place, and must be word-aligned.
      r.update = Buffer(
          std::vector<char>(reinterpret_cast<const char*>(bytes.begin()), reinterpret_cast<const char*>(bytes.end())));
      out.push_back(std::move(r));
    }
    return out;
  });
}

std::vector<PackedReply> decode_pack_result(const Buffer& buffer, const std::vector<std::uint32_t>& clients,
                                            const DecodeLimits& limits) {
  auto replies = decode_pack_result(buffer, limits);
  if (replies.size() != clients.size())
    throw DecodeError(std::to_string(replies.size()) + " results for a pack of " + std::to_string(clients.size()));
  for (std::size_t i = 0; i < clients.size(); ++i)
    if (replies[i].client != clients[i])
      throw DecodeError("result " + std::to_string(i) + " comes from client " + std::to_string(replies[i].client));
  return replies;
}

}  // namespace drift::msg
