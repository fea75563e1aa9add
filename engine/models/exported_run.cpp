#include <ATen/ATen.h>

#include "engine/core/error.hpp"
#include "engine/models/exported_graph.hpp"

namespace drift {
namespace {

c10::IValue operand_value(const Operand& o, const std::vector<c10::IValue>& env, int batch_slot) {
  switch (o.source) {
    case Operand::Source::constant:
      return o.constant;
    case Operand::Source::value:
      return env[o.slots[0]];
    case Operand::Source::tensors: {
      c10::List<at::Tensor> list;
      list.reserve(o.slots.size());
      for (const int s : o.slots) list.push_back(env[s].toTensor());
      return list;
    }
    case Operand::Source::optional_tensors: {
      c10::List<c10::optional<at::Tensor>> list;
      list.reserve(o.slots.size());
      for (const int s : o.slots)
        list.push_back(s < 0 ? c10::optional<at::Tensor>() : c10::optional<at::Tensor>(env[s].toTensor()));
      return list;
    }
    case Operand::Source::ints: {
      auto ints = o.constant.toIntVector();
      for (std::size_t i = 0; i < ints.size(); ++i)
        if (o.slots[i] >= 0) ints[i] = env[o.slots[i]].toInt();
      return ints;
    }
    case Operand::Source::device:
      return env[batch_slot].toTensor().device();
  }
  return {};
}

std::int64_t symbolic(const ExportedNode& node, const std::vector<c10::IValue>& env, int batch_slot) {
  const auto a = operand_value(node.operands[0], env, batch_slot);
  const auto b = operand_value(node.operands[1], env, batch_slot).toInt();
  if (node.kind == ExportedNode::Kind::sym_size) return a.toTensor().size(b);
  const auto x = a.toInt();
  switch (node.arithmetic) {
    case '+':
      return x + b;
    case '-':
      return x - b;
    case '*':
      return x * b;
    default: {
      if (b == 0) throw UserError("the program divides a size by zero");
      const auto q = x / b;  // Python's floor division
      return (x % b != 0 && ((x < 0) != (b < 0))) ? q - 1 : q;
    }
  }
}

}  // namespace

std::vector<at::Tensor> run_exported_graph(const ExportedGraph& graph, std::vector<c10::IValue>& env, bool training,
                                           const std::vector<bool>* needed) {
  if (graph.writes_batch) env[graph.batch_slot] = env[graph.batch_slot].toTensor().clone();
  std::vector<c10::IValue> stack;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (needed != nullptr && !(*needed)[i]) continue;
    const auto& node = graph.nodes[i];
    if (node.kind != ExportedNode::Kind::op) {
      env[node.outputs[0][0]] = symbolic(node, env, graph.batch_slot);
      continue;
    }
    // In eval mode a module leaves its buffers as they are (BatchNorm's step counter).
    if (!training && node.writes_buffer && node.outputs.size() == 1 && node.outputs[0].size() == 1) {
      env[node.outputs[0][0]] = operand_value(node.operands[0], env, graph.batch_slot);
      continue;
    }
    stack.clear();
    for (std::size_t k = 0; k < node.operands.size(); ++k)
      stack.push_back(!training && static_cast<int>(k) == node.training_operand
                          ? c10::IValue(false)
                          : operand_value(node.operands[k], env, graph.batch_slot));
    node.op->callBoxed(&stack);
    for (std::size_t r = 0; r < node.outputs.size() && r < stack.size(); ++r) {
      const auto& slots = node.outputs[r];
      if (slots.size() == 1 && !stack[r].isTensorList()) {
        env[slots[0]] = std::move(stack[r]);
      } else if (!slots.empty()) {
        const auto list = stack[r].toTensorList();
        for (std::size_t k = 0; k < slots.size() && k < list.size(); ++k) env[slots[k]] = list.get(k);
      }
    }
  }
  std::vector<at::Tensor> outputs;
  for (const int s : graph.user_outputs) outputs.push_back(env[s].isTensor() ? env[s].toTensor() : at::Tensor());
  return outputs;
}

std::vector<bool> nodes_needed_for(const ExportedGraph& graph, int output) {
  std::vector<int> producer(graph.slots, -1);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    for (const auto& slots : graph.nodes[i].outputs)
      for (const int s : slots) producer[s] = static_cast<int>(i);
  std::vector<bool> needed(graph.nodes.size(), false);
  std::vector<int> work;
  const auto need_slot = [&](int s) {
    if (s >= 0 && producer[s] >= 0 && !needed[producer[s]]) {
      needed[producer[s]] = true;
      work.push_back(producer[s]);
    }
  };
  need_slot(graph.user_outputs[output]);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].writes_buffer && !needed[i]) needed[i] = true, work.push_back(static_cast<int>(i));
  for (const auto& update : graph.buffer_updates) need_slot(update.second);
  while (!work.empty()) {
    const auto i = work.back();
    work.pop_back();
    for (const auto& o : graph.nodes[i].operands)
      for (const int s : o.slots) need_slot(s);
  }
  return needed;
}

}  // namespace drift
