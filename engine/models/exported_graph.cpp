#include "engine/models/exported_graph.hpp"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <map>
#include <set>

#include "engine/core/error.hpp"
#include "engine/core/version.hpp"
#include "engine/models/exported_fields.hpp"
#include "engine/models/script_random_ops.hpp"

namespace drift {
namespace {

using Json = nlohmann::json;

// The schema versions whose layout drift reads: PyTorch 2.6 writes 8.2.
constexpr int kSchemaMajor = 8;
constexpr int kDeepestJson = 100;

// Builds the graph, refusing with one line that begins with the file's name.
class GraphReader : ProgramFields {
 public:
  GraphReader(const Json& program, std::string name) : ProgramFields(std::move(name)), program_(program) {}
  ExportedGraph read();

 private:
  void read_version();
  void read_inputs(const Json& graph, const Json& signature);
  void read_batch_shape(const Json& graph, const std::string& batch);
  void read_outputs(const Json& graph, const Json& signature);
  void read_node(const Json& node);
  void read_symbolic_node(const Json& node, const std::string& target);
  void bind_outputs(ExportedNode& node, const Json& outputs, const c10::FunctionSchema& schema);
  void refuse_random(const std::string& op, const c10::FunctionSchema& schema, const std::vector<Operand>& operands);
  [[noreturn]] void refuse_missing_op(const std::string& op, const std::string& overload) const;

  const Json& program_;
  ExportedGraph graph_;
  std::set<int> buffers_, parameters_, batch_aliases_;
};

void GraphReader::read_version() {
  const auto& version = at(program_, "schema_version");
  graph_.schema_major = static_cast<int>(integer(at(version, "major")));
  graph_.schema_minor = static_cast<int>(integer(at(version, "minor")));
  if (program_.contains("torch_version") && program_.at("torch_version").is_string())
    graph_.torch_version = program_.at("torch_version").get<std::string>();
  if (graph_.schema_major != kSchemaMajor)
    refuse("the program is written in torch.export's schema version " + std::to_string(graph_.schema_major) + "." +
           std::to_string(graph_.schema_minor) +
           (graph_.torch_version.empty() ? "" : " (by PyTorch " + graph_.torch_version + ")") +
           ", and drift reads version " + std::to_string(kSchemaMajor) +
           ".x (what PyTorch 2.6 writes): export it with PyTorch 2.6 (docs/models.md#versions)");
}

void GraphReader::read_inputs(const Json& graph, const Json& signature) {
  const auto& specs = at(signature, "input_specs");
  if (!specs.is_array()) refuse("the program's input_specs are not a list");
  std::string batch;
  for (const auto& spec : specs) {
    const auto [kind, value] = one_of(spec);
    GraphInput input;
    std::string placeholder;
    if (kind == "parameter" || kind == "buffer" || kind == "tensor_constant") {
      placeholder = text(at(at(*value, "arg"), "name"));
      input.kind = kind == "parameter" ? GraphInput::Kind::parameter
                   : kind == "buffer"  ? GraphInput::Kind::buffer
                                       : GraphInput::Kind::constant;
      input.name = text(at(*value, kind == "parameter" ? "parameter_name"
                                   : kind == "buffer"  ? "buffer_name"
                                                       : "tensor_constant_name"));
    } else if (kind == "user_input") {
      if (!batch.empty())
        refuse("the program takes more than one input; drift calls it with one batch x (docs/models.md)");
      placeholder = batch = tensor_name(at(*value, "arg"));
    } else {
      refuse("the program takes an input of kind '" + kind + "', which drift does not give (docs/models.md)");
    }
    input.slot = define(placeholder);
    if (input.kind == GraphInput::Kind::parameter) parameters_.insert(input.slot);
    if (input.kind == GraphInput::Kind::buffer) buffers_.insert(input.slot);
    if (input.kind == GraphInput::Kind::batch) batch_aliases_.insert(input.slot);
    graph_.inputs.push_back(std::move(input));
  }
  if (batch.empty()) refuse("the program takes no input tensor; drift calls it with one batch x");
  const auto& listed = at(graph, "inputs");
  if (!listed.is_array() || listed.size() != graph_.inputs.size())
    refuse("the program's graph and its signature list different inputs");
  read_batch_shape(graph, batch);
}

// The batch as exported: a float32 tensor whose first dimension is the batch, dynamic within a
// range (torch.export.Dim) or fixed at the example's size.
void GraphReader::read_batch_shape(const Json& graph, const std::string& batch) {
  const auto& meta = at(at(graph, "tensor_values"), batch.c_str());
  if (integer(at(meta, "dtype")) != 7)
    refuse("the program takes its input x as dtype " + std::to_string(integer(at(meta, "dtype"))) +
           " of torch.export's schema; drift's datasets give float32 (7)");
  const auto& sizes = at(meta, "sizes");
  if (!sizes.is_array() || sizes.empty() || sizes.size() > 8) refuse("the program's input x has no batch dimension");
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const auto [kind, value] = one_of(sizes[d]);
    std::int64_t lo = -1, hi = -1;
    if (kind == "as_int") {
      lo = hi = integer(*value);
    } else if (kind == "as_expr" && d == 0) {
      // "Symbol('s0', positive=True, integer=True)": its range is range_constraints["s0"].
      const auto expr = text(at(*value, "expr_str"));
      const auto open = expr.find("Symbol('"), close = expr.find('\'', open + 8);
      lo = 0;
      hi = std::numeric_limits<std::int64_t>::max();
      if (open != std::string::npos && close != std::string::npos && program_.contains("range_constraints")) {
        const auto& ranges = program_.at("range_constraints");
        const auto symbol = expr.substr(open + 8, close - open - 8);
        if (ranges.is_object() && ranges.contains(symbol)) {
          const auto& range = ranges.at(symbol);
          if (range.contains("min_val") && range.at("min_val").is_number_integer())
            lo = range.at("min_val").get<std::int64_t>();
          if (range.contains("max_val") && range.at("max_val").is_number_integer())
            hi = range.at("max_val").get<std::int64_t>();
        }
      }
    } else if (kind == "as_expr") {
      lo = hi = -1;  // a dynamic sample dimension: the probe batch tells
    } else {
      refuse("the program's input x has a size of kind '" + kind + "'");
    }
    if (d == 0) {
      graph_.batch_min = lo;
      graph_.batch_max = hi;
    } else {
      graph_.sample_shape.push_back(hi);
    }
  }
}

void GraphReader::read_outputs(const Json& graph, const Json& signature) {
  const auto& specs = at(signature, "output_specs");
  const auto& listed = at(graph, "outputs");
  if (!specs.is_array() || !listed.is_array() || listed.size() != specs.size())
    refuse("the program's graph and its signature list different outputs");
  for (const auto& spec : specs) {
    const auto [kind, value] = one_of(spec);
    if (kind == "user_output") {
      graph_.user_outputs.push_back(slot(tensor_name(at(*value, "arg"))));
    } else if (kind == "buffer_mutation") {
      graph_.buffer_updates.emplace_back(text(at(*value, "buffer_name")), slot(text(at(at(*value, "arg"), "name"))));
    } else {
      refuse("the program gives an output of kind '" + kind +
             "'; drift trains a forward that gives the logits (and the features) (docs/models.md)");
    }
  }
  if (graph_.user_outputs.empty() || graph_.user_outputs.size() > 2)
    refuse("the program's forward gives " + std::to_string(graph_.user_outputs.size()) +
           " outputs; drift reads the logits, or (logits, features) (docs/models.md)");
}

void GraphReader::refuse_missing_op(const std::string& op, const std::string& overload) const {
  refuse("this exported program calls " + op + (overload.empty() ? "" : "." + overload) + ", which LibTorch " +
         torch_version() + " (the one this drift was built with) does not have" +
         (graph_.torch_version.empty() ? "" : "; PyTorch " + graph_.torch_version + " wrote the file") +
         ". Export it with a PyTorch whose ops this LibTorch has, or use a drift built against a newer LibTorch "
         "(docs/install.md#your-own-libtorch)");
}

// Refuses an op that draws random numbers: LibTorch draws them from its process-wide generator,
// which slots share in whatever order they run, so runs would not repeat.
void GraphReader::refuse_random(const std::string& op, const c10::FunctionSchema& schema,
                                const std::vector<Operand>& operands) {
  bool draws = always_random().count(op) != 0;
  if (const auto it = random_with_probability().find(op); it != random_with_probability().end()) {
    const auto index = schema.argumentIndexWithName(it->second);
    const auto& probability = index ? operands[*index] : Operand{};
    draws = probability.source != Operand::Source::constant ||
            !(probability.constant.isDouble() || probability.constant.isInt()) ||
            probability.constant.toScalar().toDouble() != 0.0;
  }
  if (draws)
    refuse(
        "forward(x) draws random numbers (" + op +
        "); drift cannot give them its seeded streams, so runs would not repeat: remove it (docs/models.md#what-runs)");
}

void GraphReader::bind_outputs(ExportedNode& node, const Json& outputs, const c10::FunctionSchema& schema) {
  if (!outputs.is_array() || outputs.size() != schema.returns().size())
    refuse(node.target + " gives " + std::to_string(schema.returns().size()) +
           " results in this LibTorch, and the program reads " +
           std::to_string(outputs.is_array() ? outputs.size() : 0));
  for (const auto& output : outputs) {
    const auto [kind, value] = one_of(output);
    std::vector<int> slots;
    if (kind == "as_tensor" || kind == "as_sym_int") {
      const auto& named = kind == "as_tensor" ? at(*value, "name") : at(*value, "as_name");
      slots.push_back(define(text(named)));
    } else if (kind == "as_tensors") {
      for (const auto& item : *value) slots.push_back(define(text(at(item, "name"))));
    } else if (kind != "as_none") {
      refuse(node.target + " gives a result of kind '" + kind + "', which drift does not read");
    }
    node.outputs.push_back(std::move(slots));
  }
}

void GraphReader::read_symbolic_node(const Json& node, const std::string& target) {
  ExportedNode n;
  n.target = target;
  static const std::map<std::string, char> arithmetic = {
      {"_operator.add", '+'}, {"_operator.sub", '-'}, {"_operator.mul", '*'}, {"_operator.floordiv", '/'}};
  const auto& inputs = at(node, "inputs");
  if (!inputs.is_array()) refuse(target + " without its inputs");
  if (target == "torch.ops.aten.sym_size.int") {
    if (inputs.size() != 2) refuse(target + " needs a tensor and a dimension");
    n.kind = ExportedNode::Kind::sym_size;
    Operand self;
    self.source = Operand::Source::value;
    self.slots = {slot(tensor_name(at(inputs[0], "arg")))};
    n.operands = {self, symbolic_int(at(inputs[1], "arg"))};
  } else {
    n.kind = ExportedNode::Kind::sym_arith;
    n.arithmetic = arithmetic.at(target);
    if (inputs.size() != 2) refuse(target + " needs two operands");
    for (const auto& input : inputs) {
      const auto [kind, value] = one_of(at(input, "arg"));
      n.operands.push_back(kind == "as_sym_int" ? symbolic_int(*value) : symbolic_int(at(input, "arg")));
    }
  }
  const auto& outputs = at(node, "outputs");
  if (!outputs.is_array() || outputs.size() != 1) refuse(target + " gives one size");
  const auto [kind, value] = one_of(outputs[0]);
  if (kind != "as_sym_int") refuse(target + " gives a result of kind '" + kind + "'");
  n.outputs = {{define(text(at(*value, "as_name")))}};
  graph_.nodes.push_back(std::move(n));
}

void GraphReader::read_node(const Json& node) {
  const auto target = text(at(node, "target"));
  if (target == "torch.ops.aten.sym_size.int" || target.rfind("_operator.", 0) == 0) {
    static const std::set<std::string> known = {"torch.ops.aten.sym_size.int", "_operator.add", "_operator.sub",
                                                "_operator.mul", "_operator.floordiv"};
    if (known.count(target) == 0) refuse("the program computes sizes with " + target + ", which drift does not run");
    return read_symbolic_node(node, target);
  }
  // torch.ops.NAMESPACE.OP.OVERLOAD
  const std::string prefix = "torch.ops.aten.";
  if (target.rfind(prefix, 0) != 0)
    refuse("the program calls " + target +
           "; drift runs the ops of ATen (torch.ops.aten), not custom ops (docs/models.md#what-runs)");
  const auto dot = target.rfind('.');
  if (dot <= prefix.size()) refuse("the program calls " + target + ", an op without its overload");
  const auto op = "aten::" + target.substr(prefix.size(), dot - prefix.size());
  const auto overload = target.substr(dot + 1) == "default" ? std::string() : target.substr(dot + 1);
  const auto handle = c10::Dispatcher::singleton().findSchema({op, overload});
  if (!handle) refuse_missing_op(op, overload);
  ExportedNode n;
  n.target = op + (overload.empty() ? "" : "." + overload);
  n.op = *handle;
  const auto& schema = handle->schema();
  std::map<std::string, const Json*> given;
  const auto& inputs = at(node, "inputs");
  if (!inputs.is_array()) refuse(n.target + " without its inputs");
  for (const auto& input : inputs) given[text(at(input, "name"))] = &at(input, "arg");
  for (const auto& argument : schema.arguments()) {
    const auto it = given.find(argument.name());
    if (it != given.end()) {
      n.operands.push_back(operand(*it->second, argument, n.target));
      given.erase(it);
    } else if (argument.default_value()) {
      n.operands.push_back(constant_operand(*argument.default_value()));
    } else {
      refuse("the program calls " + n.target + " without its argument '" + argument.name() + "', which LibTorch " +
             torch_version() + " requires");
    }
    const auto& o = n.operands.back();
    const auto index = static_cast<int>(n.operands.size()) - 1;
    if ((argument.name() == "training" || argument.name() == "train") && o.source == Operand::Source::constant &&
        o.constant.isBool())
      n.training_operand = index;
    if (argument.alias_info() != nullptr && argument.alias_info()->isWrite() && o.source == Operand::Source::value) {
      const auto written = o.slots[0];
      if (parameters_.count(written) != 0)
        refuse("forward(x) writes into a parameter in place (" + n.target + "), which autograd cannot train");
      n.writes_buffer = n.writes_buffer || buffers_.count(written) != 0;
      graph_.writes_batch = graph_.writes_batch || batch_aliases_.count(written) != 0;
    }
  }
  if (!given.empty())
    refuse("the program gives " + n.target + " an argument '" + given.begin()->first + "' that LibTorch " +
           torch_version() + "'s " + n.target + " does not have");
  refuse_random(op, schema, n.operands);
  bind_outputs(n, at(node, "outputs"), schema);
  // A result that aliases an argument (a view, an in-place op) of the batch is the batch too.
  bool reads_batch = false;
  for (const auto& o : n.operands)
    for (const int s : o.slots) reads_batch = reads_batch || batch_aliases_.count(s) != 0;
  for (std::size_t r = 0; r < schema.returns().size(); ++r)
    if (reads_batch && schema.returns()[r].alias_info() != nullptr)
      for (const int s : n.outputs[r]) batch_aliases_.insert(s);
  graph_.nodes.push_back(std::move(n));
}

ExportedGraph GraphReader::read() {
  read_version();
  const auto& module = at(program_, "graph_module");
  const auto& graph = at(module, "graph");
  read_inputs(graph, at(module, "signature"));
  for (const auto& input : graph_.inputs)
    if (input.kind == GraphInput::Kind::batch) graph_.batch_slot = input.slot;
  const auto& nodes = at(graph, "nodes");
  if (!nodes.is_array()) refuse("the program's nodes are not a list");
  for (const auto& node : nodes) read_node(node);
  read_outputs(graph, at(module, "signature"));
  graph_.slots = slot_count();
  return std::move(graph_);
}

// The nesting depth of JSON text, strings skipped: nlohmann's parser keeps its own stack, but a
// value nested a million deep is no program, and is refused before it is parsed.
std::size_t json_depth(const std::string& json) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

ExportedGraph read_exported_graph(const std::string& json, const std::string& name) {
  if (json_depth(json) > kDeepestJson)
    throw UserError(name + ": the program's JSON nests deeper than " + std::to_string(kDeepestJson) +
                    " levels; torch.export writes a few");
  Json program;
  try {
    program = Json::parse(json);
  } catch (const std::exception& e) {
    throw UserError(name + ": serialized_exported_program.json is not JSON (" + e.what() + ")");
  }
  try {
    return GraphReader(program, name).read();
  } catch (const Json::exception& e) {
    throw UserError(name + ": the program holds a value of the wrong kind (" + e.what() + ")");
  }
}

}  // namespace drift
