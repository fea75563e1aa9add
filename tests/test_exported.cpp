// Programs torch.export wrote, read and run by drift's own reader: the state dict's unpickler
// on archives built here, the graph on programs written here as JSON, and the committed
// exported small CNN and ResNet-8, each against drift's own architecture with the same weights.
#include <ATen/CPUGeneratorImpl.h>
#include <caffe2/serialize/inline_container.h>

#include <array>
#include <functional>

#include "catch_torch.hpp"
#include "engine/core/error.hpp"
#include "engine/models/exported_graph.hpp"
#include "engine/models/exported_model.hpp"
#include "engine/models/model.hpp"
#include "engine/models/state_pickle.hpp"
#include "engine/tensors/named_tensors.hpp"
#include "scenario_error.hpp"

using namespace drift;

namespace {

// Pickle opcodes, as torch.save writes them.
std::string text(const std::string& s) {
  std::string out = "X";
  for (int i = 0; i < 4; ++i) out += static_cast<char>((s.size() >> (8 * i)) & 0xff);
  return out + s;
}
std::string global(const std::string& module, const std::string& name) { return "c" + module + "\n" + name + "\n"; }
std::string small(int k) { return std::string("K") + static_cast<char>(k); }
std::string ordered_dict() { return global("collections", "OrderedDict") + ")R"; }

// {"w": Parameter(a [2, 2] view of storage "0", offset `offset`)}, the storage holding `numel` floats.
std::string parameter_pickle(int offset = 0, int numel = 4, const std::string& callee = "_rebuild_parameter") {
  return std::string("\x80\x02}(", 4) + text("w") + global("torch._utils", callee) +
         global("torch._utils", "_rebuild_tensor_v2") + "((" + text("storage") + global("torch", "FloatStorage") +
         text("0") + text("cpu") + small(numel) + "tQ" + small(offset) + "(" + small(2) + small(2) + "t(" + small(2) +
         small(1) + "t\x89" + ordered_dict() + "tR\x88" + ordered_dict() + "\x87Ru.";
}

// A torch.save archive holding `pickle` and storage "0" of four floats 1, 2, 3, 4.
std::string archive(const std::string& pickle) {
  std::string bytes;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
      bytes.append(static_cast<const char*>(data), size);
      return size;
    });
    const float storage[4] = {1, 2, 3, 4};
    writer.writeRecord("data.pkl", pickle.data(), pickle.size());
    writer.writeRecord("byteorder", "little", 6);
    writer.writeRecord("data/0", storage, sizeof storage);
    writer.writeEndOfFile();
  }
  return bytes;
}

const ArchiveRefusal kRefuse("state.pt", "an exported program", "torch.export.save");

}  // namespace

TEST_CASE("a state dict's parameters are read from the archive's storages, nothing else called") {
  const auto entries = read_state_dict(archive(parameter_pickle()), kRefuse);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].name == "w");
  CHECK(entries[0].parameter);
  CHECK(entries[0].tensor.requires_grad());
  CHECK(torch::equal(entries[0].tensor, torch::tensor({{1.0F, 2.0F}, {3.0F, 4.0F}})));
  // A view that reaches past its storage, a storage larger than its record, a global a state
  // dict does not need: each refused with what is wrong.
  CHECK_THAT(test::refusal_of([] { read_state_dict(archive(parameter_pickle(1)), kRefuse); }),
             Catch::Contains("a tensor that reaches past the end of its storage"));
  CHECK_THAT(test::refusal_of([] { read_state_dict(archive(parameter_pickle(0, 100)), kRefuse); }),
             Catch::Contains("storage 0 declares 100 elements, and its record holds 16 bytes"));
  CHECK_THAT(test::refusal_of([] { read_state_dict(archive(parameter_pickle(0, 4, "system")), kRefuse); }),
             Catch::Contains("names the global 'torch._utils system'"));
  CHECK_THAT(test::refusal_of([] { read_state_dict(archive(std::string("\x80\x02}(i", 6)), kRefuse); }),
             Catch::Contains("pickle opcode 105"));
  CHECK_THAT(test::refusal_of([] { read_state_dict(archive("h\x07."), kRefuse); }),
             Catch::Contains("fetches a value it never stored"));
  CHECK_THAT(test::refusal_of([] { read_state_dict(archive(parameter_pickle().substr(0, 40)), kRefuse); }),
             Catch::Contains("state.pt: not an exported program drift can read safely"));
  // A value fetched from the memo 60 times over doubles nothing: each fetch shares it (the
  // tuples left on the stack are then refused).
  std::string doubling("\x80\x02)q\x00", 5);
  for (int i = 0; i < 60; ++i) doubling += std::string("h\x00h\x00\x86q\x00", 7);
  CHECK_THAT(test::refusal_of([&] { read_state_dict(archive(doubling + "."), kRefuse); }),
             Catch::Contains("data.pkl ends with values left over"));
}

namespace {

const std::string kSymbol = "\"Symbol('s0', positive=True, integer=True)\"";

// A program of `nodes` (JSON) over inputs `specs` (name, kind, state name) with one output.
std::string program(const std::vector<std::array<std::string, 3>>& specs, const std::string& nodes,
                    const std::string& output, const std::string& schema = "8") {
  std::string inputs, signature;
  for (const auto& [name, kind, target] : specs) {
    inputs += std::string(inputs.empty() ? "" : ",") + R"({"as_tensor": {"name": ")" + name + R"("}})";
    signature += std::string(signature.empty() ? "" : ",");
    if (kind == "user_input")
      signature += R"({"user_input": {"arg": {"as_tensor": {"name": ")" + name + R"("}}}})";
    else
      signature +=
          R"({")" + kind + R"(": {"arg": {"name": ")" + name + R"("}, ")" + kind + R"(_name": ")" + target + R"("}})";
  }
  return R"({"schema_version": {"major": )" + schema + R"(, "minor": 2}, "torch_version": "2.6.0",
    "range_constraints": {"s0": {"min_val": 0, "max_val": 4096}},
    "graph_module": {"graph": {"inputs": [)" +
         inputs + R"(], "outputs": [{"as_tensor": {"name": ")" + output + R"("}}], "nodes": [)" + nodes + R"(],
      "tensor_values": {"x": {"dtype": 7, "sizes": [{"as_expr": {"expr_str": )" +
         kSymbol + R"(}}, {"as_int": 3}]}}},
     "signature": {"input_specs": [)" +
         signature + R"(], "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": ")" + output +
         R"("}}}}]}}})";
}

std::string node(const std::string& target, const std::string& inputs, const std::string& output) {
  return R"({"target": ")" + target + R"(", "inputs": [)" + inputs + R"(], "outputs": [{"as_tensor": {"name": ")" +
         output + R"("}}]})";
}
std::string tensor_arg(const std::string& name, const std::string& value) {
  return R"({"name": ")" + name + R"(", "arg": {"as_tensor": {"name": ")" + value + R"("}}})";
}
std::string arg(const std::string& name, const std::string& kind, const std::string& value) {
  return R"({"name": ")" + name + R"(", "arg": {")" + kind + R"(": )" + value + "}}";
}

std::vector<c10::IValue> environment(const ExportedGraph& graph, const std::vector<at::Tensor>& inputs) {
  std::vector<c10::IValue> env(static_cast<std::size_t>(graph.slots));
  for (std::size_t i = 0; i < inputs.size(); ++i) env[graph.inputs[i].slot] = inputs[i];
  return env;
}

const std::vector<std::array<std::string, 3>> kLinear = {{"w", "parameter", "fc.weight"}, {"x", "user_input", ""}};

}  // namespace

TEST_CASE("an exported graph runs its ATen ops through the dispatcher, with autograd") {
  const auto graph = read_exported_graph(
      program(kLinear,
              node("torch.ops.aten.linear.default", tensor_arg("input", "x") + "," + tensor_arg("weight", "w"), "y"),
              "y"),
      "linear.pt2");
  CHECK(graph.batch_min == 0);
  CHECK(graph.batch_max == 4096);
  CHECK(graph.sample_shape == std::vector<std::int64_t>{3});
  const auto w = torch::randn({2, 3}).requires_grad_(), x = torch::randn({5, 3});
  auto env = environment(graph, {w, x});
  const auto y = run_exported_graph(graph, env, true)[0];
  CHECK(torch::equal(y, torch::linear(x, w)));
  y.sum().backward();
  CHECK(torch::allclose(w.grad(), x.sum(0).expand({2, 3}), 1e-5, 1e-5));
}

TEST_CASE("in eval mode BatchNorm reads its running statistics and leaves its buffers alone") {
  const std::vector<std::array<std::string, 3>> specs = {{"mean", "buffer", "bn.running_mean"},
                                                         {"var", "buffer", "bn.running_var"},
                                                         {"count", "buffer", "bn.num_batches_tracked"},
                                                         {"x", "user_input", ""}};
  const auto nodes =
      node("torch.ops.aten.add_.Tensor", tensor_arg("self", "count") + "," + arg("other", "as_int", "1"), "added") +
      "," +
      node("torch.ops.aten.batch_norm.default",
           tensor_arg("input", "x") + "," + arg("weight", "as_none", "true") + "," + arg("bias", "as_none", "true") +
               "," + tensor_arg("running_mean", "mean") + "," + tensor_arg("running_var", "var") + "," +
               arg("training", "as_bool", "true") + "," + arg("momentum", "as_float", "0.1") + "," +
               arg("eps", "as_float", "1e-05") + "," + arg("cudnn_enabled", "as_bool", "true"),
           "y");
  const auto graph = read_exported_graph(program(specs, nodes, "y"), "bn.pt2");
  auto mean = torch::zeros({3}), var = torch::ones({3}), count = torch::zeros({}, torch::kLong);
  const auto x = torch::randn({8, 3}) * 2 + 1;
  auto env = environment(graph, {mean, var, count, x});
  const auto evaluated = run_exported_graph(graph, env, false)[0];
  CHECK(torch::equal(evaluated,
                     torch::batch_norm(x, {}, {}, torch::zeros({3}), torch::ones({3}), false, 0.1, 1e-5, true)));
  CHECK(count.item<std::int64_t>() == 0);
  CHECK(torch::equal(mean, torch::zeros({3})));
  env = environment(graph, {mean, var, count, x});
  auto expected_mean = torch::zeros({3}), expected_var = torch::ones({3});
  const auto expected = torch::batch_norm(x, {}, {}, expected_mean, expected_var, true, 0.1, 1e-5, true);
  CHECK(torch::equal(run_exported_graph(graph, env, true)[0], expected));
  CHECK(count.item<std::int64_t>() == 1);
  CHECK(torch::equal(mean, expected_mean));
  CHECK(torch::equal(var, expected_var));
}

TEST_CASE("symbolic sizes of an exported graph follow the batch") {
  const auto nodes =
      R"({"target": "torch.ops.aten.sym_size.int", "inputs": [)" + tensor_arg("self", "x") + "," +
      arg("dim", "as_int", "0") + R"(], "outputs": [{"as_sym_int": {"as_name": "n"}}]},)" +
      R"({"target": "_operator.mul", "inputs": [{"name": "a", "arg": {"as_sym_int": {"as_name": "n"}}}, )" +
      arg("b", "as_int", "3") + R"(], "outputs": [{"as_sym_int": {"as_name": "n3"}}]},)" +
      node("torch.ops.aten.view.default",
           tensor_arg("self", "x") + "," + arg("size", "as_sym_ints", R"([{"as_name": "n3"}, {"as_int": 1}])"), "y");
  const auto graph = read_exported_graph(program({{"x", "user_input", ""}}, nodes, "y"), "view.pt2");
  const auto x = torch::randn({5, 3});
  auto env = environment(graph, {x});
  CHECK(run_exported_graph(graph, env, true)[0].sizes() == torch::IntArrayRef({15, 1}));
}

TEST_CASE("an exported graph drift cannot run as promised is refused with the reason") {
  const auto refused = [](const std::string& nodes, const std::string& schema = "8") {
    return test::refusal_of([&] { read_exported_graph(program(kLinear, nodes, "y", schema), "bad.pt2"); });
  };
  const auto linear =
      node("torch.ops.aten.linear.default", tensor_arg("input", "x") + "," + tensor_arg("weight", "w"), "y");
  CHECK_THAT(refused(linear, "9"),
             Catch::Contains("schema version 9.2 (by PyTorch 2.6.0), and drift reads version 8.x"));
  CHECK_THAT(refused(node("torch.ops.aten.no_such_op.default", tensor_arg("self", "x"), "y")),
             Catch::Contains("calls aten::no_such_op, which LibTorch"));
  CHECK_THAT(refused(node("torch.ops.mylib.custom.default", tensor_arg("self", "x"), "y")),
             Catch::Contains("not custom ops"));
  CHECK_THAT(refused(node("torch.ops.aten.relu.default", arg("self", "as_graph", "{}"), "y")),
             Catch::Contains("an argument of kind 'as_graph'"));
  CHECK_THAT(refused(node("torch.ops.aten.relu.default", tensor_arg("self", "z"), "y")),
             Catch::Contains("reads 'z' before anything computes it"));
  CHECK_THAT(
      refused(node("torch.ops.aten.relu.default", tensor_arg("self", "x") + "," + tensor_arg("bogus", "x"), "y")),
      Catch::Contains("an argument 'bogus'"));
  CHECK_THAT(refused(node("torch.ops.aten.relu_.default", tensor_arg("self", "w"), "y")),
             Catch::Contains("writes into a parameter in place"));
  const auto dropout = [&](const char* p) {
    return refused(
        node("torch.ops.aten.dropout.default",
             tensor_arg("input", "x") + "," + arg("p", "as_float", p) + "," + arg("train", "as_bool", "true"), "y"));
  };
  CHECK_THAT(dropout("0.5"), Catch::Contains("draws random numbers (aten::dropout)"));
  CHECK(dropout("0.0") == "");
  CHECK_THAT(
      test::refusal_of([] { read_exported_graph(std::string(50000, '[') + std::string(50000, ']'), "deep.pt2"); }),
      Catch::Contains("nests deeper than 100 levels"));
  CHECK_THAT(test::refusal_of([] { read_exported_graph("{\"schema_version\": ", "cut.pt2"); }),
             Catch::Contains("cut.pt2: serialized_exported_program.json is not JSON"));
}

namespace {

const std::string kExamples = DRIFT_SOURCE_DIR "/docs/examples/exported/";

ModelOptions from_file(const std::string& file, bool file_weights = false) {
  ModelOptions o;
  o.script_file = kExamples + file;
  o.script_digest = inspect_exported_program(o.script_file).digest;
  o.script_weights = file_weights;
  return o;
}

// Same tensors, names and bits, in the same order.
void check_same_state(const NamedTensors& a, const NamedTensors& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].name);
    CHECK(a[i].name == b[i].name);
    CHECK(torch::equal(a[i].value, b[i].value));
  }
}

// One training step's forward and backward on both models, then evaluation: the same bits.
void check_same_model(Model& exported, Model& builtin) {
  check_same_state(state_of(exported), state_of(builtin));
  const auto x = torch::randn({6, 1, 28, 28}, at::make_generator<at::CPUGeneratorImpl>(5));
  exported.train();
  builtin.train();
  const auto a = exported.forward(x), b = builtin.forward(x);
  CHECK(torch::equal(a.logits, b.logits));
  CHECK(torch::equal(a.features, b.features));
  a.logits.square().sum().backward();
  b.logits.square().sum().backward();
  const auto pa = exported.named_parameters(), pb = builtin.named_parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(torch::equal(pa[i].value().grad(), pb[i].value().grad()));
  check_same_state(state_of(exported), state_of(builtin));  // the running statistics moved alike
  exported.eval();
  builtin.eval();
  CHECK(torch::equal(exported.forward(x).logits, builtin.forward(x).logits));
  check_same_state(state_of(exported), state_of(builtin));  // and stayed in evaluation
}

}  // namespace

TEST_CASE("the exported small CNN drawn from the seed is drift's small-cnn, bit for bit") {
  const auto exported = make_model("exported", {1, 28, 28}, 10, 7, from_file("small_cnn.pt2"));
  const auto builtin = make_model("small-cnn", {1, 28, 28}, 10, 7);
  check_same_model(*exported, *builtin);
  // Its own weights are the file's, whatever the seed.
  const auto a = make_model("exported", {1, 28, 28}, 10, 1, from_file("small_cnn.pt2", true));
  const auto b = make_model("exported", {1, 28, 28}, 10, 2, from_file("small_cnn.pt2", true));
  check_same_state(state_of(*a), state_of(*b));
}

TEST_CASE("the exported ResNet-8 trains its BatchNorm as drift's resnet8 does") {
  ModelOptions width;
  width.width = 16;
  const auto exported = make_model("exported", {1, 28, 28}, 10, 3, from_file("resnet8.pt2"));
  const auto builtin = make_model("resnet8", {1, 28, 28}, 10, 3, width);
  check_same_model(*exported, *builtin);
  CHECK(state_of(*exported).size() == 29 + 27);  // the parameters, and nine BatchNorms' three buffers
}

TEST_CASE("an exported program's features carry drift's head for the algorithms that read them") {
  auto options = from_file("small_cnn.pt2");
  options.script_backbone = true;
  options.projection_dim = 16;
  const auto exported = make_model("exported", {1, 28, 28}, 10, 4, options);
  ModelOptions builtin_options;
  builtin_options.projection_dim = 16;
  const auto builtin = make_model("small-cnn", {1, 28, 28}, 10, 4, builtin_options);
  // The file's own head is not drift's: it is neither trained nor sent, so the tensors are the
  // built-in model's, projection and head included.
  check_same_model(*exported, *builtin);
}
