// The round report: server -> metrics sink, one per aggregation. The fields are not spelt here:
// visit_report_fields (engine/metrics/round_report.hpp) names them, and each is set and read by
// name through Cap'n Proto's dynamic API (snake_case there, camelCase in report.capnp), so a
// field missing from report.capnp fails the codec test instead of being dropped silently.
#include <capnp/dynamic.h>

#include <string>
#include <type_traits>
#include <vector>

#include "engine/core/error.hpp"
#include "messages/codec.hpp"
#include "messages/framing.hpp"
#include "messages/named_values.hpp"
#include "messages/report.capnp.h"

namespace drift::msg {
namespace {

using framing::build;
using framing::parse;
using framing::write_list;

// The wire enum and the engine's spell the events in the same order.
static_assert(static_cast<int>(wire::ClientEvent::FAILED) == static_cast<int>(ClientEvent::failed) &&
              static_cast<int>(wire::ClientEvent::ELIGIBLE) == static_cast<int>(ClientEvent::eligible));

void write_algorithm_metrics(wire::RoundReport::Builder root, const AlgorithmMetrics& m) {
  write_scalars(root.initAlgorithmScalars(static_cast<unsigned>(m.scalars.size())), m.scalars);
  write_series(root.initAlgorithmPerClient(static_cast<unsigned>(m.per_client.size())), m.per_client);
}

AlgorithmMetrics read_algorithm_metrics(wire::RoundReport::Reader root) {
  AlgorithmMetrics m;
  read_scalars(root.getAlgorithmScalars(), m.scalars);
  read_series(root.getAlgorithmPerClient(), m.per_client);
  return m;
}

// Sets one field of a struct by name; `AlgorithmMetrics` is the one field that spans two wire
// fields and is written by write_algorithm_metrics.
struct WireWriter {
  capnp::DynamicStruct::Builder out;

  template <class T>
  void operator()(const ReportField& f, const T& value) {
    const auto wire = wire_field_name(f.name);
    const kj::StringPtr name = wire.c_str();
    if constexpr (std::is_arithmetic_v<T>) {
      out.set(name, value);
    } else if constexpr (std::is_same_v<T, std::string>) {
      out.set(name, capnp::Text::Reader(value.data(), value.size()));
    } else if constexpr (std::is_same_v<T, ClientEvent>) {
      out.set(name, capnp::DynamicEnum(static_cast<wire::ClientEvent>(value)));
    } else if constexpr (std::is_same_v<T, std::vector<ClientRecord>>) {
      auto list = out.init(name, static_cast<unsigned>(value.size())).template as<capnp::DynamicList>();
      for (unsigned i = 0; i < value.size(); ++i)
        visit_client_fields(value[i], WireWriter{list[i].template as<capnp::DynamicStruct>()});
    } else if constexpr (std::is_same_v<T, AlgorithmMetrics>) {
      write_algorithm_metrics(out.as<wire::RoundReport>(), value);
    } else if constexpr (std::is_same_v<T, NamedSeries>) {
      write_series(out.init(name, static_cast<unsigned>(value.size())).template as<capnp::List<wire::NamedSeries>>(),
                   value);
    } else {
      auto list = out.init(name, static_cast<unsigned>(value.size())).template as<capnp::DynamicList>();
      for (unsigned i = 0; i < value.size(); ++i) list.set(i, value[i]);
    }
  }
};

struct WireReader {
  capnp::DynamicStruct::Reader in;

  template <class T>
  void operator()(const ReportField& f, T& value) const {
    const auto wire = wire_field_name(f.name);
    const kj::StringPtr name = wire.c_str();
    if constexpr (std::is_arithmetic_v<T>) {
      value = in.get(name).template as<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      const auto text = in.get(name).template as<capnp::Text>();
      value.assign(text.begin(), text.size());
    } else if constexpr (std::is_same_v<T, ClientEvent>) {
      const auto raw = in.get(name).template as<capnp::DynamicEnum>().getRaw();
      if (raw >= ChoiceNames<ClientEvent>::names.size())
        throw DecodeError("unknown client event " + std::to_string(raw));
      value = static_cast<ClientEvent>(raw);
    } else if constexpr (std::is_same_v<T, std::vector<ClientRecord>>) {
      for (auto element : in.get(name).template as<capnp::DynamicList>())
        visit_client_fields(value.emplace_back(), WireReader{element.template as<capnp::DynamicStruct>()});
    } else if constexpr (std::is_same_v<T, AlgorithmMetrics>) {
      value = read_algorithm_metrics(in.as<wire::RoundReport>());
    } else if constexpr (std::is_same_v<T, NamedSeries>) {
      read_series(in.get(name).template as<capnp::List<wire::NamedSeries>>(), value);
    } else {
      for (auto element : in.get(name).template as<capnp::DynamicList>())
        value.push_back(element.template as<typename T::value_type>());
    }
  }
};

}  // namespace

std::string wire_field_name(std::string_view field) {
  std::string out;
  bool upper = false;
  for (char ch : field) {
    if (ch == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(ch - 'a' + 'A') : ch;
    upper = false;
  }
  return out;
}

Buffer encode_report(const RoundReport& report) {
  return build<wire::RoundReport>(
      [&](wire::RoundReport::Builder root) { visit_report_fields(report, WireWriter{capnp::toDynamic(root)}); });
}

RoundReport decode_report(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::RoundReport>(buffer, limits, "round report", [](wire::RoundReport::Reader root, const auto&) {
    RoundReport r;
    visit_report_fields(r, WireReader{capnp::toDynamic(root)});
    return r;
  });
}

}  // namespace drift::msg
