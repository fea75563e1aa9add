#include "messages/selection_codec.hpp"

#include <algorithm>
#include <cmath>

#include "messages/control.capnp.h"
#include "messages/framing.hpp"

namespace drift::msg {
namespace {

using framing::build;
using framing::read_u32_list;
using framing::write_list;

double finite(double v, const char* what) {
  if (!std::isfinite(v)) throw DecodeError(std::string("selection request: ") + what + " is not finite");
  return v;
}

}  // namespace

Buffer encode_selection_request(const SelectionRequest& r) {
  return build<wire::SelectionRequest>([&](wire::SelectionRequest::Builder b) {
    b.setRound(r.round);
    b.setTime(r.time);
    b.setSlots(r.slots);
    b.setOverSelection(r.over_selection);
    b.setEdge(r.edge);
    write_list(b.initBusy(static_cast<unsigned>(r.busy.size())), r.busy);
    auto losses = b.initLosses(static_cast<unsigned>(r.losses.size()));
    for (unsigned i = 0; i < r.losses.size(); ++i) {
      losses[i].setClient(r.losses[i].client);
      losses[i].setLoss(r.losses[i].loss);
    }
    auto steps = b.initTimeline(static_cast<unsigned>(r.timeline.size()));
    for (unsigned i = 0; i < r.timeline.size(); ++i) {
      steps[i].setIndex(r.timeline[i].index);
      steps[i].setTime(r.timeline[i].time);
    }
  });
}

SelectionRequest decode_selection_request(const Buffer& buffer, const DecodeLimits& limits) {
  return framing::parse<wire::SelectionRequest>(
      buffer, limits, "selection request", [](wire::SelectionRequest::Reader b, auto&&) {
        SelectionRequest r;
        r.round = b.getRound();
        r.time = finite(b.getTime(), "time");
        r.slots = b.getSlots();
        r.over_selection = finite(b.getOverSelection(), "over-selection");
        r.edge = b.getEdge();
        r.busy = read_u32_list(b.getBusy());
        if (!std::is_sorted(r.busy.begin(), r.busy.end()))
          throw DecodeError("selection request: busy clients out of order");
        for (auto l : b.getLosses()) r.losses.push_back({l.getClient(), l.getLoss()});  // a NaN loss is a real report
        for (auto s : b.getTimeline()) r.timeline.push_back({s.getIndex(), finite(s.getTime(), "timeline time")});
        return r;
      });
}

Buffer encode_selection(const Selection& s) {
  return build<wire::Selection>([&](wire::Selection::Builder b) {
    b.setRound(s.round);
    write_list(b.initClients(static_cast<unsigned>(s.clients.size())), s.clients);
    b.setCohortSize(s.cohort_size);
    b.setEligible(s.eligible);
  });
}

Selection decode_selection(const Buffer& buffer, const DecodeLimits& limits) {
  return framing::parse<wire::Selection>(buffer, limits, "selection", [](wire::Selection::Reader b, auto&&) {
    Selection s;
    s.round = b.getRound();
    s.clients = read_u32_list(b.getClients());
    s.cohort_size = b.getCohortSize();
    s.eligible = b.getEligible();
    return s;
  });
}

}  // namespace drift::msg
