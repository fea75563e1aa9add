#include "engine/models/script_random_ops.hpp"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

namespace drift {
namespace {

using torch::jit::Node;
using torch::jit::Value;

}  // namespace

// Ops that draw whatever their arguments.
const std::set<std::string>& always_random() {
  static const std::set<std::string> ops = {
      "aten::bernoulli",   "aten::bernoulli_",  "aten::rand",         "aten::rand_like",  "aten::randn",
      "aten::randn_like",  "aten::randint",     "aten::randint_like", "aten::randperm",   "aten::normal",
      "aten::normal_",     "aten::uniform_",    "aten::exponential_", "aten::geometric_", "aten::cauchy_",
      "aten::log_normal_", "aten::multinomial", "aten::rrelu",        "aten::rrelu_",     "aten::rrelu_with_noise"};
  return ops;
}

// Ops that draw only with a probability above 0: the argument that holds it.
const std::map<std::string, std::string>& random_with_probability() {
  static const std::map<std::string, std::string> ops = {
      {"aten::dropout", "p"},
      {"aten::dropout_", "p"},
      {"aten::feature_dropout", "p"},
      {"aten::feature_dropout_", "p"},
      {"aten::alpha_dropout", "p"},
      {"aten::alpha_dropout_", "p"},
      {"aten::feature_alpha_dropout", "p"},
      {"aten::feature_alpha_dropout_", "p"},
      {"aten::native_dropout", "p"},
      {"aten::scaled_dot_product_attention", "dropout_p"},
  };
  return ops;
}

namespace {

// The number `v` always holds in `self`'s graph, where the graph fixes it: a constant, an
// attribute of the module or of a submodule (read from the module as loaded), or the output of
// an if whose branches all give the same fixed number (as `if not training: p = 0.0` gives when
// p is 0). Nothing where it is not fixed, or not a number.
std::optional<double> fixed_number(const Value* v, const torch::jit::Module& self, int depth = 0) {
  const auto number = [](const c10::optional<torch::IValue>& value) -> std::optional<double> {
    if (!value || !(value->isDouble() || value->isInt())) return std::nullopt;
    return value->toScalar().toDouble();
  };
  if (depth > 64) return std::nullopt;
  const Node* node = v->node();
  if (node->kind() == c10::prim::Constant) return number(torch::jit::toIValue(v));
  if (node->kind() == c10::prim::GetAttr) {
    std::vector<std::string> path;
    const Value* at = v;
    while (at->node()->kind() == c10::prim::GetAttr) {
      path.insert(path.begin(), at->node()->s(c10::attr::name));
      at = at->node()->input(0);
    }
    if (at->node()->kind() != c10::prim::Param || at->offset() != 0) return std::nullopt;  // not self
    torch::jit::Module module = self;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
      if (!module.hasattr(path[i])) return std::nullopt;
      const auto inner = module.attr(path[i]);
      if (!inner.isModule()) return std::nullopt;
      module = inner.toModule();
    }
    if (!module.hasattr(path.back())) return std::nullopt;
    return number(module.attr(path.back()));
  }
  if (node->kind() == c10::prim::If) {
    std::optional<double> common;
    for (const auto* block : node->blocks()) {
      const auto value = fixed_number(block->outputs()[v->offset()], self, depth + 1);
      if (!value || (common && *common != *value)) return std::nullopt;
      common = value;
    }
    return common;
  }
  return std::nullopt;
}

// Whether `node`, one of random_with_probability(), draws: unless its probability is fixed at 0.
bool draws(const Node* node, const std::string& argument, const torch::jit::Module& self) {
  const auto* schema = node->maybeSchema();
  if (schema == nullptr) return true;
  const auto index = schema->argumentIndexWithName(argument);
  if (!index || *index >= static_cast<int>(node->inputs().size())) return true;
  return fixed_number(node->input(static_cast<std::size_t>(*index)), self) != 0.0;
}

std::string random_op(const torch::jit::Block& block, const torch::jit::Module& self) {
  for (const auto* node : block.nodes()) {
    const std::string kind = node->kind().toQualString();
    if (always_random().count(kind) != 0) return kind;
    if (const auto it = random_with_probability().find(kind);
        it != random_with_probability().end() && draws(node, it->second, self))
      return kind;
    for (const auto* inner : node->blocks())
      if (auto found = random_op(*inner, self); !found.empty()) return found;
  }
  return "";
}

}  // namespace

std::string random_op_in(const torch::jit::Module& module, const std::string& method) {
  const auto found = module.find_method(method);
  if (!found) return "";
  auto graph = found->graph()->copy();
  torch::jit::Inline(*graph);  // the submodules' code too
  return random_op(*graph->block(), module);
}

}  // namespace drift
