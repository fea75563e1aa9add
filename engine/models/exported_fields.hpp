#pragma once
// The fields of a serialized exported program (serialized_exported_program.json), read with
// every malformed one refused in one line, and the arguments of its nodes turned into the
// operands of this LibTorch's ops. Internal to engine/models' exported-program reader.
#include <ATen/core/function_schema.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>

#include "engine/models/exported_graph.hpp"

namespace drift {

// An operand that is the same value on every call.
Operand constant_operand(c10::IValue value);

class ProgramFields {
 public:
  using Json = nlohmann::json;
  explicit ProgramFields(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void refuse(const std::string& why) const;
  const Json& at(const Json& j, const char* key) const;
  // The one key of a serialized union ({"as_tensor": ...}), and its value.
  std::pair<std::string, const Json*> one_of(const Json& j) const;
  std::string text(const Json& j) const;
  std::int64_t integer(const Json& j) const;
  std::string tensor_name(const Json& argument) const;

  // The slot of a value the graph computed before; a new slot for a value it computes.
  int slot(const std::string& value) const;
  int define(const std::string& value);
  int slot_count() const { return slot_count_; }

  // Where the op `op` finds its argument `schema_arg`, given as `argument` in the file.
  Operand operand(const Json& argument, const c10::Argument& schema_arg, const std::string& op) const;
  // A size: a number, or the name of a size the graph computed.
  Operand symbolic_int(const Json& argument) const;

 private:
  std::string name_;
  std::map<std::string, int> slots_;
  int slot_count_ = 0;
};

}  // namespace drift
