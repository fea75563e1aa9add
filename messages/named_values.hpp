#pragma once
// Named scalars and named series (report.capnp's NamedValue and NamedSeries) to and from Cap'n
// Proto lists: a server half's metrics in a round report and in an edge host's answer.
#include <map>
#include <string>

#include "engine/metrics/algorithm_metrics.hpp"
#include "messages/framing.hpp"
#include "messages/report.capnp.h"

namespace drift::msg {

inline void write_scalars(capnp::List<wire::NamedValue>::Builder list, const std::map<std::string, double>& scalars) {
  unsigned i = 0;
  for (const auto& [name, value] : scalars) {
    list[i].setName(name);
    list[i++].setValue(value);
  }
}

inline void read_scalars(capnp::List<wire::NamedValue>::Reader list, std::map<std::string, double>& scalars) {
  for (auto s : list) scalars[s.getName()] = s.getValue();
}

inline void write_series(capnp::List<wire::NamedSeries>::Builder list, const NamedSeries& series) {
  unsigned i = 0;
  for (const auto& [name, values] : series) {
    list[i].setName(name);
    framing::write_list(list[i++].initValues(static_cast<unsigned>(values.size())), values);
  }
}

inline void read_series(capnp::List<wire::NamedSeries>::Reader list, NamedSeries& series) {
  for (auto s : list) {
    auto& values = series[s.getName()];
    for (auto v : s.getValues()) values.push_back(v);
  }
}

}  // namespace drift::msg
