// One description per report field: report.capnp, the wire codec, metrics.jsonl and clients.csv
// all follow visit_report_fields, and these tests fail when one of them is left behind.
#include <capnp/schema.h>
#include "catch_torch.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/metrics/clients_file.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "messages/codec.hpp"
#include "messages/report.capnp.h"

using namespace drift;
namespace fs = std::filesystem;

namespace {

// Gives every field a value of its own, so that two fields crossed, or one dropped, show.
struct Fill {
  int next = 1;

  template <class T>
  void operator()(const ReportField&, T& value) {
    const int k = next++;
    if constexpr (std::is_same_v<T, bool>) {
      value = true;
    } else if constexpr (std::is_arithmetic_v<T>) {
      value = static_cast<T>(k);
      if constexpr (std::is_floating_point_v<T>) value += 0.5;
    } else if constexpr (std::is_same_v<T, std::string>) {
      value = "text " + std::to_string(k);
    } else if constexpr (std::is_same_v<T, ClientEvent>) {
      value = ClientEvent::late;
    } else if constexpr (std::is_same_v<T, std::vector<ClientRecord>>) {
      for (int i = 0; i < 2; ++i) visit_client_fields(value.emplace_back(), *this);
    } else if constexpr (std::is_same_v<T, AlgorithmMetrics>) {
      value.scalars["rho"] = k + 0.25;
      value.per_client["weight"] = {k + 0.5, k + 1.5};
    } else if constexpr (std::is_same_v<T, NamedSeries>) {
      value["table"] = {k + 0.75, k + 1.75};
    } else {
      using V = typename T::value_type;
      value = {static_cast<V>(k), static_cast<V>(k + 1)};
    }
  }
};

// Each field as (name, text), to compare two reports field by field; `in_metrics_only` leaves
// out what metrics.jsonl does not hold.
struct Describe {
  std::vector<std::pair<std::string, std::string>>& out;
  bool in_metrics_only = false;

  template <class T>
  void operator()(const ReportField& f, const T& value) const {
    if (in_metrics_only && f.written == Written::not_in_metrics) return;
    std::ostringstream text;
    text.precision(17);
    if constexpr (std::is_same_v<T, std::vector<ClientRecord>>) {
      std::vector<std::pair<std::string, std::string>> records;
      for (const auto& c : value) visit_client_fields(c, Describe{records});
      for (const auto& [name, v] : records) text << name << '=' << v << ';';
    } else if constexpr (std::is_same_v<T, AlgorithmMetrics>) {
      for (const auto& [name, v] : value.scalars) text << name << '=' << v << ';';
      for (const auto& [name, v] : value.per_client)
        for (double x : v) text << name << '=' << x << ';';
    } else if constexpr (std::is_same_v<T, NamedSeries>) {
      for (const auto& [name, v] : value)
        for (double x : v) text << name << '=' << x << ';';
    } else if constexpr (std::is_same_v<T, ClientEvent>) {
      text << name_of(value);
    } else if constexpr (std::is_same_v<T, std::string> || std::is_arithmetic_v<T>) {
      text << value;
    } else {
      for (const auto& v : value) text << v << ';';
    }
    out.emplace_back(std::string(f.name), text.str());
  }
};

std::vector<std::pair<std::string, std::string>> describe(const RoundReport& r, bool in_metrics_only = false) {
  std::vector<std::pair<std::string, std::string>> out;
  visit_report_fields(r, Describe{out, in_metrics_only});
  return out;
}

RoundReport filled_report() {
  RoundReport r;
  visit_report_fields(r, Fill{});
  return r;
}

void check_same_fields(const RoundReport& expected, const RoundReport& actual, bool in_metrics_only) {
  const auto a = describe(expected, in_metrics_only), b = describe(actual, in_metrics_only);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("field " << a[i].first);
    CHECK(a[i].second == b[i].second);
  }
}

template <class Wire>
std::set<std::string> schema_fields() {
  std::set<std::string> names;
  for (auto field : capnp::Schema::from<Wire>().getFields()) names.insert(field.getProto().getName().cStr());
  return names;
}

fs::path write_temp(const std::string& name, const std::string& text) {
  const auto path = fs::temp_directory_path() / ("drift-test-report-fields-" + name + ".jsonl");
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("report.capnp has exactly the fields that visit_report_fields names", "[report][codec]") {
  std::set<std::string> visited;
  const RoundReport empty;
  visit_report_fields(empty, [&](const ReportField& f, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, AlgorithmMetrics>) {
      visited.insert({"algorithmScalars", "algorithmPerClient"});  // the one field spanning two
    } else {
      CHECK(visited.insert(msg::wire_field_name(f.name)).second);
    }
  });
  CHECK(visited == schema_fields<wire::RoundReport>());

  std::set<std::string> client_fields;
  const ClientRecord no_client;
  visit_client_fields(no_client, [&](const ReportField& f, const auto&) {
    CHECK(client_fields.insert(msg::wire_field_name(f.name)).second);
  });
  CHECK(client_fields == schema_fields<wire::ClientRecord>());
}

TEST_CASE("every report field crosses the wire unchanged", "[report][codec]") {
  const auto report = filled_report();
  check_same_fields(report, msg::decode_report(msg::encode_report(report)), false);
}

TEST_CASE("every field metrics.jsonl holds reads back as it was written", "[report][metrics]") {
  const auto report = filled_report();
  const auto line = metrics_line(report, true);
  const auto read = read_metrics_reports(write_temp("all", line));
  REQUIRE(read.size() == 1);
  check_same_fields(report, read[0], true);
  CHECK(read[0].evaluated);  // implied by test_accuracy
  CHECK(read[0].clients.empty());
  CHECK(read[0].total_rounds == 0);
  CHECK(line.find("\"update_drift\":{\"cosine\":") != std::string::npos);
  CHECK(line.find("\"domain_mean_accuracy\":") != std::string::npos);
}

TEST_CASE("a metrics line leaves out what was not measured, and reads it back as such", "[report][metrics]") {
  RoundReport r;
  r.round = 3;
  r.cohort_js = std::nan("");
  const auto line = metrics_line(r, false);
  for (const char* absent : {"eligible", "online", "test_accuracy", "per_class_accuracy", "client_accuracy",
                             "domain_accuracy", "algorithm", "divergence", "update_drift", "total_rounds", "clients"})
    CHECK(line.find(std::string("\"") + absent + "\"") == std::string::npos);
  CHECK(line.find("\"cohort_js\":null") != std::string::npos);
  const auto read = read_metrics_reports(write_temp("unmeasured", line));
  REQUIRE(read.size() == 1);
  CHECK(read[0].eligible == -1);
  CHECK_FALSE(read[0].evaluated);
  CHECK(std::isnan(read[0].cohort_js));
  CHECK(std::isnan(read[0].update_drift));
  CHECK(read[0].round == 3);
}

TEST_CASE("clients.csv: the round, then the client fields in their order", "[report][metrics]") {
  CHECK(clients_csv_header() ==
        "round,client,event,time,num_samples,train_loss,steps,bytes_down,bytes_up,staleness,detail\n");
  RoundReport r;
  r.round = 7;
  r.clients = {arrival_record(ClientEvent::late, 4, 12.5, 40, 6, std::nan(""), 10, 2, "slow, \"very\"")};
  CHECK(clients_csv_rows(r) == "7,4,late,12.5,40,null,6,0,10,2,slow   very \n");
}

TEST_CASE("docs/outputs.md names every key that metrics.jsonl writes", "[report][docs]") {
  std::ifstream in(fs::path(DRIFT_SOURCE_DIR) / "docs" / "outputs.md");
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = text.str();
  REQUIRE_FALSE(doc.empty());
  const RoundReport report;
  visit_report_fields(report, [&](const ReportField& f, const auto&) {
    if (f.written == Written::not_in_metrics) return;
    INFO("metrics.jsonl key " << f.json_key());
    CHECK(doc.find("`" + std::string(f.json_key()) + "`") != std::string::npos);
  });
}
