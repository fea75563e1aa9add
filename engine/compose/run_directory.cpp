#include "engine/compose/run_directory.hpp"

#include <sys/resource.h>

#include <cstring>

#include <algorithm>
#include <array>
#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/compose/appended_file.hpp"
#include "engine/compose/atomic_file.hpp"
#include "engine/compose/privacy_summary.hpp"
#include "engine/core/error.hpp"
#include "engine/core/phase_times.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/data/partition.hpp"
#include "engine/metrics/clients_file.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/topology.hpp"
#include "engine/sim/drift_metrics.hpp"

namespace drift {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The CPU time and faults of the rounds timings.jsonl records (rounds written by an older drift
// count as zero).
ProcessUsage usage_in_timings(const fs::path& p) {
  ProcessUsage total;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    const auto row = json::parse(line, nullptr, false);
    if (!row.is_object()) continue;
    total.user_seconds += row.value("user_seconds", 0.0);
    total.system_seconds += row.value("system_seconds", 0.0);
    total.minor_faults += row.value("minor_faults", std::uint64_t{0});
    total.major_faults += row.value("major_faults", std::uint64_t{0});
  }
  return total;
}

}  // namespace

namespace {

// population.csv's availability columns: the keys of the models the run uses (the default's
// and the groups'), in catalogue order; a digest key stays in scenario.toml.
std::vector<std::string> availability_keys(const Scenario& s) {
  std::vector<std::string> keys;
  for (const auto& row : availability_catalog()) {
    const auto used = [&](const AvailabilityConfig& a) { return a.model == row.name; };
    if (!used(s.availability) &&
        std::none_of(s.groups.begin(), s.groups.end(), [&](const auto& g) { return used(g.availability); }))
      continue;
    const auto is_digest = [&](const std::string& key) {
      return std::any_of(row.params.begin(), row.params.end(), [&](const ParamSpec& p) { return p.digest_key == key; });
    };
    for (const auto& spec : row.params)
      if (!is_digest(spec.key) && std::find(keys.begin(), keys.end(), spec.key) == keys.end()) keys.push_back(spec.key);
  }
  return keys;
}

// A model's value of each of `keys`, empty where it takes no such key (only markov has
// mean_online, say).
std::string availability_columns(const AvailabilityConfig& a, const std::vector<std::string>& keys) {
  const auto& row = availability_model(a.model);
  std::string out;
  for (const auto& key : keys) {
    out += ',';
    const bool takes =
        std::any_of(row.params.begin(), row.params.end(), [&](const ParamSpec& p) { return p.key == key; });
    if (!takes || !a.params.has(key)) continue;
    const auto& v = a.params.values().at(key);
    if (const auto* text = std::get_if<std::string>(&v))
      out += text->find(',') == std::string::npos ? *text : "\"" + *text + "\"";
    else if (const auto* flag = std::get_if<bool>(&v))
      out += *flag ? "true" : "false";
    else if (const auto* list = std::get_if<std::vector<double>>(&v))
      out += "\"" + json(*list).dump() + "\"";
    else
      out += json(a.params.number(key)).dump();
  }
  return out;
}

// edges.csv ([hierarchy]): each edge's name, clients and samples, how far its label
// distribution is from the population's, and its link and availability.
void write_edges(const std::filesystem::path& path, const HierarchyConfig& h, const Population& p) {
  auto out = open_for_append(path);
  out << "edge,name,clients,num_samples,label_tv,label_js,latency,up_bandwidth,down_bandwidth,availability,period,"
         "online_fraction,phase,aggregation_seconds\n";
  for (std::uint32_t e = 0; e < p.edges(); ++e) {
    std::uint64_t samples = 0;
    for (auto c : p.edge_members[e]) samples += p.num_samples[c];
    const auto profile = edge_profile(h, e);
    out << e << ',' << profile.name << ',' << p.edge_members[e].size() << ',' << samples << ',';
    if (!p.histograms.empty()) {
      const auto labels = normalised(label_counts(p, p.edge_members[e]));
      out << json(total_variation(labels, p.label_distribution)).dump() << ','
          << json(jensen_shannon_distance(labels, p.label_distribution)).dump();
    } else {
      out << ',';
    }
    const bool diurnal = profile.availability == EdgeAvailability::diurnal;
    out << ',' << json(profile.latency).dump() << ',' << json(profile.up_bandwidth).dump() << ','
        << json(profile.down_bandwidth).dump() << ','
        << (profile.availability == EdgeAvailability::model ? h.availability_model.model
                                                            : name_of(profile.availability))
        << ',' << (diurnal ? json(profile.period).dump() : "") << ','
        << (diurnal ? json(profile.online_fraction).dump() : "") << ',' << (diurnal ? json(profile.phase).dump() : "")
        << ',' << json(profile.aggregation_seconds).dump() << '\n';
  }
  flush_checked(out, path);
}

}  // namespace

// population.csv: each client's group, system profile and availability model, as drawn.
void RunDirectory::write_population(const Scenario& scenario, const Population& p) {
  auto out = open_for_append(path_ / "population.csv");
  const auto keys = availability_keys(scenario);
  out << "client,group,num_samples,speed,up_bandwidth,down_bandwidth,latency,availability,";
  for (const auto& key : keys) out << key << ',';
  out << (p.edges() > 0 ? "edge," : "") << "participation_probability\n";
  // Per availability config (the groups', then the default): its columns, and the nominal p_i
  // of a model that has them (the participation processes).
  const std::size_t configs = scenario.groups.size() + 1;
  std::vector<std::vector<double>> probabilities(configs);
  std::vector<std::string> columns(configs);
  for (std::size_t g = 0; g < configs; ++g) {
    const bool own = g < scenario.groups.size();
    const auto& a = own ? scenario.groups[g].availability : scenario.availability;
    const auto& row = availability_model(a.model);
    if (row.probabilities)
      probabilities[g] = row.probabilities(a.params, p, scenario.seed, own ? static_cast<std::uint32_t>(g) : kNoGroup);
    columns[g] = a.model + availability_columns(a, keys);
  }
  for (std::uint32_t c = 0; c < p.size(); ++c) {
    const auto g = p.group[c];
    const auto k = g == kNoGroup ? scenario.groups.size() : g;
    const auto& s = p.system[c];
    out << c << ',' << (g == kNoGroup ? "" : p.group_names.at(g)) << ',' << p.num_samples[c] << ','
        << json(s.speed).dump() << ',' << json(s.up_bandwidth).dump() << ',' << json(s.down_bandwidth).dump() << ','
        << json(s.latency).dump() << ',' << columns[k] << ','
        << (p.edges() > 0 ? std::to_string(p.edge[c]) + "," : "")  // p_i stays last: readers take it from the end
        << (probabilities[k].empty() ? std::string() : json(probabilities[k][c]).dump()) << '\n';
  }
  flush_checked(out, path_ / "population.csv");
  if (p.edges() > 0) write_edges(path_ / "edges.csv", scenario.hierarchy, p);
}

void check_output_path(const std::string& path, const std::string& what) {
  constexpr std::size_t kMaxPath = 4095, kMaxComponent = 255;  // Linux's PATH_MAX - 1 and NAME_MAX
  for (unsigned char c : path)
    if (c < 0x20 || c == 0x7f) throw UserError(what + ": the path holds a control character (a newline, say)");
  if (path.size() > kMaxPath)
    throw UserError(what + ": the path is longer than " + std::to_string(kMaxPath) + " bytes");
  for (const auto& part : fs::path(path))
    if (part.native().size() > kMaxComponent)
      throw UserError(what + ": a directory name in the path is longer than " + std::to_string(kMaxComponent) +
                      " bytes");
}

fs::path choose_run_directory(const Scenario& scenario, const std::string& requested) {
  if (!requested.empty()) {
    check_output_path(requested, "--out");
    fs::path p(requested);
    if (fs::exists(p) && !(fs::is_directory(p) && is_empty_but_lock(p)))
      throw UserError("--out " + requested + " already exists and is not empty; choose another directory");
    return p;
  }
  const fs::path base = fs::path(scenario.runs_dir) / scenario.name;
  if (!fs::exists(base)) return base;
  for (int i = 2;; ++i) {
    fs::path candidate = base.string() + "-" + std::to_string(i);
    if (!fs::exists(candidate)) return candidate;
  }
}

RunDirectory::RunDirectory(fs::path path, const Scenario& scenario, const FederationData& data,
                           const std::string& holder)
    : path_(std::move(path)),
      participation_(data.partition.num_clients()),
      shadow_clients_(scenario.simulation.shadow_clients > 0),
      privacy_(run_epsilon(scenario)) {
  std::error_code ec;
  fs::create_directories(path_, ec);
  if (ec) throw WriteError(path_.string() + ": cannot create run directory: " + ec.message());
  lock_ = DirectoryLock(path_, holder);
  // Chosen empty, but another process may have written a run here before this one took the lock.
  if (!is_empty_but_lock(path_))
    throw UserError(path_.string() + " is not empty: another process wrote a run there meanwhile");
  write_file_atomically(path_ / "scenario.toml", scenario.resolved_toml);

  json partition;
  partition["scheme"] = scenario.partition.scheme;
  const bool by_writer = partition_scheme(scenario.partition.scheme).source == PartitionSource::writers;
  partition["num_clients"] = data.partition.num_clients();
  partition["num_classes"] = data.data.train->num_classes;
  partition["class_names"] = data.data.train->class_names;
  if (!data.data.test->domain_names.empty()) partition["domains"] = data.data.test->domain_names;
  json clients = json::array();
  for (std::size_t k = 0; k < data.partition.num_clients(); ++k) {
    json client = {
        {"client", k}, {"num_samples", data.partition.indices[k].size()}, {"class_histogram", data.histograms[k]}};
    if (k < data.client_test_sizes.size()) client["test_samples"] = data.client_test_sizes[k];
    if (const auto& train = *data.data.train; by_writer && !data.partition.indices[k].empty())
      client["writer"] =
          train.owner_names[static_cast<std::size_t>(train.owners[data.partition.indices[k][0]].item<std::int64_t>())];
    clients.push_back(std::move(client));
  }
  partition["clients"] = std::move(clients);
  write_file_atomically(path_ / "partition.json", partition.dump(1) + "\n");
  write_population(scenario, *data.population);

  for (auto* f : appended()) f->out = open_for_append(f->path);
  clients_.write(clients_csv_header());
}

void RunDirectory::Appended::write(const std::string& text) {
  out << text;
  flush_checked(out, path);
  written.add(text);
}

std::array<RunDirectory::Appended*, 3> RunDirectory::appended() { return {&metrics_, &clients_, &timings_}; }

void RunDirectory::append(const RoundReport& r) {
  const PhaseScope timed("run: write round");
  metrics_.write(metrics_line(r, shadow_clients_));

  for (auto c : r.aggregated)
    if (c < participation_.size()) ++participation_[c].aggregated;
  for (const auto& c : r.clients) {
    if (c.client_id >= participation_.size()) continue;
    auto& p = participation_[c.client_id];
    if (c.event == ClientEvent::selected)
      ++p.selected;
    else if (c.event == ClientEvent::late)
      ++p.late;
    else if (c.event == ClientEvent::dropped)
      ++p.dropped;
    else if (c.event == ClientEvent::failed)
      ++p.failed;
  }
  clients_.write(clients_csv_rows(r));

  // Since the last record (or since the directory was opened): the round's whole cost.
  const auto now = ProcessUsage::now();
  const auto used = now - usage_mark_;
  usage_mark_ = now;
  rounds_usage_ += used;
  const auto wall_now = std::chrono::steady_clock::now();
  const double round_seconds = std::chrono::duration<double>(wall_now - wall_mark_).count();
  wall_mark_ = wall_now;
  const auto timing = json{{"round", r.round},
                           {"round_seconds", round_seconds},
                           {"train_seconds", r.wall_train_seconds},
                           {"eval_seconds", r.wall_eval_seconds},
                           {"user_seconds", used.user_seconds},
                           {"system_seconds", used.system_seconds},
                           {"minor_faults", used.minor_faults},
                           {"major_faults", used.major_faults}}
                          .dump() +
                      "\n";
  timings_.write(timing);
}

std::string RunDirectory::marks() {
  auto ar = StateArchive::writer();
  archive_marks(ar);
  return ar.take();
}

// Each appended file's length at the checkpoint and the hash of those bytes: a checkpoint is
// bound to the run whose files it was taken with, so another run's is refused, not resumed.
void RunDirectory::archive_marks(StateArchive& ar) {
  ar.section("run directory 2");
  for (auto* f : appended()) {
    auto size = f->written.bytes();
    auto hash = f->written.hex();
    ar.value(size);
    ar.text(hash);
    if (ar.loading()) f->written = check_mark(f->path, size, hash);
  }
  const auto clients = participation_.size();
  ar.vector(participation_, [&](Counts& c) {
    for (auto* n : {&c.selected, &c.aggregated, &c.late, &c.dropped, &c.failed}) {
      auto small = static_cast<std::uint32_t>(*n);
      ar.value(small);
      *n = small;
    }
  });
  if (participation_.size() != clients)
    throw UserError((path_ / "checkpoint").string() + " is for a run of " + std::to_string(participation_.size()) +
                    " clients, not of this run's " + std::to_string(clients));
}

RunDirectory::RunDirectory(fs::path path, const Scenario& scenario, const std::string& marks, DirectoryLock lock)
    : path_(std::move(path)),
      lock_(std::move(lock)),
      shadow_clients_(scenario.simulation.shadow_clients > 0),
      privacy_(run_epsilon(scenario)) {
  participation_.resize(static_cast<std::size_t>(scenario.clients));
  // Everything is checked before anything is written: a refused resume leaves the run as it was.
  auto ar = StateArchive::reader(marks, (path_ / "checkpoint").string());
  archive_marks(ar);
  ar.expect_end();
  write_file_atomically(path_ / "scenario.toml", scenario.resolved_toml);
  for (auto* f : appended()) f->out = reopen_at(f->path, f->written.bytes());
  rounds_usage_ = usage_in_timings(timings_.path);
}

void RunDirectory::write_participation() {
  auto out = open_for_append(path_ / "participation.csv");
  out << "client,selected,aggregated,late,dropped,failed" << (privacy_ ? ",epsilon\n" : "\n");
  out.precision(17);
  for (std::size_t c = 0; c < participation_.size(); ++c) {
    const auto& p = participation_[c];
    out << c << ',' << p.selected << ',' << p.aggregated << ',' << p.late << ',' << p.dropped << ',' << p.failed;
    if (privacy_) out << ',' << privacy_->realised(p.aggregated);
    out << '\n';
  }
  flush_checked(out, path_ / "participation.csv");
}

void RunDirectory::write_summary(const RunSummary& s, RunStatus status, double wall_seconds, const std::string& reason,
                                 const std::string& resume, const std::vector<std::string>& workers_lost) {
  json summary = summary_fields_json(s);
  summary["status"] = std::string(name_of(status));
  summary["wall_seconds"] = wall_seconds;
  // Measured, like wall_seconds: the process's peak resident memory so far.
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) summary["peak_memory_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  // Measured too: what the rounds cost in CPU time and page faults, over every process.
  const auto& u = rounds_usage_;
  summary["rounds_usage"] = {{"user_seconds", u.user_seconds},
                             {"system_seconds", u.system_seconds},
                             {"system_share", u.user_seconds > 0.0 ? u.system_seconds / u.user_seconds : 0.0},
                             {"minor_faults", u.minor_faults},
                             {"major_faults", u.major_faults}};
  if (privacy_) {
    std::vector<std::uint64_t> aggregated;
    for (const auto& p : participation_) aggregated.push_back(p.aggregated);
    summary["privacy"] = privacy_summary(*privacy_, s, aggregated);
  }
  if (!reason.empty()) summary["reason"] = reason;
  if (!resume.empty()) summary["resume"] = resume;
  if (!workers_lost.empty()) summary["workers_lost"] = workers_lost;
  write_file_atomically(path_ / "summary.json", summary.dump(2) + "\n");
}

}  // namespace drift
