// Writes the seed corpus of tools/fuzz/corpus/: one valid message of each kind the fuzz targets
// decode, so that mutations start from the real formats. Run it (it is built with the fuzz
// targets) after a schema change: build-sanitize/tools/fuzz/fuzz_seeds tools/fuzz/corpus
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "engine/cluster/join.hpp"
#include "engine/compose/checkpoint.hpp"
#include "messages/cluster_codec.hpp"
#include "messages/codec.hpp"
#include "messages/edge_codec.hpp"
#include "messages/pack_codec.hpp"
#include "messages/selection_codec.hpp"
#include "tools/script_modules/script_modules.hpp"

using namespace drift;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& dir, const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir / target);
  std::ofstream(dir / target / name, std::ios::binary) << bytes;
}

void write(const fs::path& dir, const std::string& target, const std::string& name, const msg::Buffer& b) {
  write(dir, target, name, std::string(b.data(), b.size()));
}

Payload sample_payload() {
  Payload p;
  p.tensors["c:fc.weight"] = torch::arange(6, torch::kFloat32).reshape({2, 3});
  p.class_vectors["knowledge"][0] = torch::ones({1, 3});
  p.class_vectors["knowledge"][4] = torch::full({2, 3}, 0.5);
  return p;
}

NamedTensors sample_weights() {
  return {{"fc.weight", torch::arange(6, torch::kFloat32).reshape({2, 3})},
          {"bn.num_batches_tracked", torch::tensor({std::int64_t{7}})},
          {"odd", torch::ones({3}, torch::kFloat64)}};
}

EvalResult sample_eval() { return {0, 10, 4.5, {3, 4}, {5, 5}}; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds CORPUS_DIR\n";
    return 2;
  }
  const fs::path dir = argv[1];
  TrainingTask task;
  task.round = 3;
  task.model_version = 2;
  task.weights = sample_weights();
  task.payload = sample_payload();
  write(dir, "fuzz_task", "task", msg::encode_task(task));

  ClientUpdate update;
  update.client_id = 5;
  update.num_samples = 40;
  update.weights = sample_weights();
  update.payload = sample_payload();
  update.metrics = {0.7, 0.5, 3, 40};
  write(dir, "fuzz_update", "update", msg::encode_update(update));
  update.weights.clear();
  update.personal = sample_eval();
  write(dir, "fuzz_update", "private-update", msg::encode_update(update));
  write(dir, "fuzz_update", "state", msg::encode_client_state({5, sample_payload()}));

  write(dir, "fuzz_evaluation", "job", msg::encode_eval_job({2, 0, 10}));
  write(dir, "fuzz_evaluation", "result", msg::encode_eval_result(sample_eval()));
  write(dir, "fuzz_evaluation", "bundle", msg::encode_bundle(sample_weights()));

  RoundReport report;
  report.round = 2;
  report.cohort = {1, 4};
  report.aggregated = {1};
  report.staleness = {0};
  report.per_class_accuracy = {0.5, 0.25};
  report.clients = {selected_record(1, 0.5, 100), failed_record(4, 2.0, "boom")};
  report.algorithm.scalars["gpr_rho"] = 0.5;
  report.algorithm.per_client["gda_weight"] = {1.0};
  report.edge_algorithm["table_clients"] = {2.0, 1.0};  // a hierarchy's edges' values
  write(dir, "fuzz_report", "report", msg::encode_report(report));

  SelectionRequest request;
  request.round = 4;
  request.time = 12.5;
  request.slots = 2;
  request.busy = {1, 3};
  request.losses = {{2, 0.5}};
  request.timeline = {{0, 10.0}};
  write(dir, "fuzz_selection", "request", msg::encode_selection_request(request));
  write(dir, "fuzz_selection", "selection", msg::encode_selection({4, {2, 5}, 2, 8}));
  write(dir, "fuzz_edge", "assignment", msg::encode_edge_assignment({0, 2, 4}));
  write(dir, "fuzz_edge", "input", msg::encode_aggregation_input({3, {0, 1}, {5, 4}}));
  write(dir, "fuzz_edge", "aggregated",
        msg::encode_edge_aggregated({true, {{{"rho", 0.5}}, {{"weight", {0.25, 0.75}}}}, {{1, 0.25}, {4, 0.75}}}));
  write(dir, "fuzz_edge", "regroup", msg::encode_client_regroup({{2, 5, 9}, {1, std::nullopt, 0}}));
  write(dir, "fuzz_edge", "states",
        msg::encode_edge_states({{0, std::string(24, 'a'), std::string(8, 'b')}, {3, {}, {}}}));
  write(dir, "fuzz_pack", "job", msg::encode_pack_job({3, 1, 4}));
  write(dir, "fuzz_pack", "result",
        msg::encode_pack_result({{3, msg::Buffer(std::vector<char>(16, 0)), ""}, {1, {}, "training loss became nan"}}));

  write(dir, "fuzz_handshake", "join",
        msg::encode_join_request(make_join_request("0123456789abcdef0123", "w1", "cpu:2", "")));
  write(dir, "fuzz_handshake", "ready", msg::encode_worker_ready({7, "hash", "fingerprint", 2}));
  write(dir, "fuzz_handshake", "reply", msg::encode_join_reply({true, "", 7, "seed = 1\n", "hash"}));

  // fuzz_traces: the first byte picks the reader.
  write(dir, "fuzz_traces", "availability", std::string(1, '\0') + "client,start,end\n0,0,10\n0,10,15\n3,2,8\n");
  write(dir, "fuzz_traces", "profile",
        std::string(1, '\1') + "client,speed,up_bandwidth,down_bandwidth,latency\n2,7.5,100,200,0.25\n");
  write(dir, "fuzz_traces", "partition", std::string(1, '\2') + "[[0, 1, 2], [3, 4], [5, 6, 7, 8], [9]]\n");
  write(dir, "fuzz_traces", "edge_map", std::string(1, '\3') + "client,edge\n0,a\n1,b\n2,c\n3,0\n4,1\n5,2\n6,a\n7,c\n");

  // fuzz_checkpoint: the first byte picks state.bin (0) or checkpoint.json (1).
  const auto run = fs::temp_directory_path() / "drift-seed-checkpoint";
  fs::remove_all(run);
  fs::create_directories(run);
  Checkpoint checkpoint;
  checkpoint.round = 3;
  checkpoint.virtual_time = 12.5;
  checkpoint.driver = "driver state";
  write_checkpoint(run, checkpoint, "[federation]\nclients = 4\n", [](const fs::path&) {});
  const auto whole = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  write(dir, "fuzz_checkpoint", "state", std::string(1, '\0') + whole(run / "checkpoint" / "state.bin"));
  write(dir, "fuzz_checkpoint", "json", std::string(1, '\1') + whole(run / "checkpoint" / "checkpoint.json"));
  fs::remove_all(run);

  // fuzz_torchscript: a module of a few kilobytes, for 1x2x2 inputs and 2 classes.
  const auto module_file = fs::temp_directory_path() / "drift-seed-module.pt";
  script_modules::tiny_linear(4, 2).save(module_file.string());
  write(dir, "fuzz_torchscript", "linear", whole(module_file));
  fs::remove(module_file);
  std::cout << "seeds written under " << dir << "\n";
  return 0;
}
