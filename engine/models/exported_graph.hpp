#pragma once
// The graph of a program torch.export wrote (serialized_exported_program.json), bound to the
// ops of the LibTorch drift was built with, ready to run node by node through the dispatcher
// with autograd on: that is how an exported program trains in C++ (docs/models.md).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace drift {

// Where an operator's argument comes from, decided once when the graph is read.
struct Operand {
  enum class Source {
    constant,          // `constant` as it is
    value,             // the value in slot `slots[0]`
    tensors,           // a list of the tensors in `slots`
    optional_tensors,  // the same, slot -1 being none
    ints,              // `constant`'s ints, each slot >= 0 replacing its element (symbolic sizes)
    device,            // the device the batch is on
  };
  Source source = Source::constant;
  c10::IValue constant;
  std::vector<int> slots;
};

struct ExportedNode {
  enum class Kind { op, sym_size, sym_arith };
  Kind kind = Kind::op;
  std::string target;                     // as the file names it, for messages
  std::optional<c10::OperatorHandle> op;  // Kind::op
  std::vector<Operand> operands;          // one per schema argument, in order
  std::vector<std::vector<int>> outputs;  // per return: its slot, or the slots of a tensor list
  char arithmetic = 0;                    // sym_arith: + - * /
  int training_operand = -1;              // batch_norm: the operand holding `training`
  bool writes_buffer = false;             // mutates a buffer in place (BatchNorm's counter)
};

// One input of the graph: a parameter, a buffer or a constant by its dotted name, or the batch.
struct GraphInput {
  enum class Kind { parameter, buffer, constant, batch };
  Kind kind = Kind::batch;
  std::string name;  // the state dict's or the constants' name; "" for the batch
  int slot = 0;
};

struct ExportedGraph {
  std::vector<GraphInput> inputs;
  std::vector<ExportedNode> nodes;
  std::vector<int> user_outputs;                            // logits, then features when given
  std::vector<std::pair<std::string, int>> buffer_updates;  // buffer name, slot of its new value
  int slots = 0;
  int batch_slot = 0;
  bool writes_batch = false;  // an op writes in place into the batch or a view of it
  // The batch input's size as exported: dimension 0 from batch_min to batch_max (both the
  // export's static size when it is not dynamic), then one sample's shape (-1: dynamic).
  std::int64_t batch_min = 0, batch_max = 0;
  std::vector<std::int64_t> sample_shape;
  int schema_major = 0, schema_minor = 0;
  std::string torch_version;  // the PyTorch that wrote it
};

// Reads the JSON text of an exported program and binds every node to an op of this LibTorch.
// Throws UserError (one line, beginning with `name`) for a schema major version drift does not
// read, an op or argument kind it does not have, a custom op, an op that draws random numbers,
// and a graph that is not one input batch to one or two tensors.
ExportedGraph read_exported_graph(const std::string& json, const std::string& name);

// Runs `graph` on the values of its inputs (slots of graph.inputs filled in `env`, which has
// graph.slots entries); `training` false runs BatchNorm on its running statistics and skips the
// in-place updates of buffers, as a module in eval mode does. Returns the user outputs.
std::vector<at::Tensor> run_exported_graph(const ExportedGraph& graph, std::vector<c10::IValue>& env, bool training,
                                           const std::vector<bool>* needed = nullptr);

// The nodes that user output `output` depends on, with every node that updates a buffer (and
// what it reads): features(x) alone need not compute the file's own classifier.
std::vector<bool> nodes_needed_for(const ExportedGraph& graph, int output);

}  // namespace drift
