#include "engine/models/exported_fields.hpp"

#include <ATen/ATen.h>

#include "engine/core/error.hpp"

namespace drift {
namespace {

// torch.export's serialized enums (torch/_export/serde/schema.py), which are not c10's numbers.
c10::ScalarType scalar_type(std::int64_t code) {
  static const std::map<std::int64_t, c10::ScalarType> types = {
      {1, c10::kByte},          {2, c10::kChar},           {3, c10::kShort},
      {4, c10::kInt},           {5, c10::kLong},           {6, c10::kHalf},
      {7, c10::kFloat},         {8, c10::kDouble},         {9, c10::ScalarType::ComplexHalf},
      {10, c10::kComplexFloat}, {11, c10::kComplexDouble}, {12, c10::kBool},
      {13, c10::kBFloat16}};
  const auto it = types.find(code);
  return it == types.end() ? c10::ScalarType::Undefined : it->second;
}

bool is_tensor_type(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::TensorType) return true;
  const auto optional = type->cast<c10::OptionalType>();
  return optional && optional->getElementType()->kind() == c10::TypeKind::TensorType;
}

bool is_float_type(const c10::TypePtr& type) {
  const auto optional = type->cast<c10::OptionalType>();
  const auto& inner = optional ? optional->getElementType() : type;
  return inner->kind() == c10::TypeKind::FloatType;
}

// A Python number an op reads as a tensor: what PyTorch's argument parser makes of add_(t, 1).
at::Tensor wrapped_number(const at::Scalar& value) {
  auto t = at::scalar_to_tensor(value);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

}  // namespace

Operand constant_operand(c10::IValue value) {
  Operand o;
  o.constant = std::move(value);
  return o;
}

void ProgramFields::refuse(const std::string& why) const { throw UserError(name_ + ": " + why); }

const ProgramFields::Json& ProgramFields::at(const Json& j, const char* key) const {
  if (!j.is_object() || !j.contains(key)) refuse(std::string("the program has no '") + key + "' where drift reads one");
  return j.at(key);
}

std::pair<std::string, const ProgramFields::Json*> ProgramFields::one_of(const Json& j) const {
  if (!j.is_object() || j.size() != 1) refuse("the program holds an argument that is not one of its kinds");
  return {j.begin().key(), &j.begin().value()};
}

std::string ProgramFields::text(const Json& j) const {
  if (!j.is_string()) refuse("the program holds a name that is not text");
  return j.get<std::string>();
}

std::int64_t ProgramFields::integer(const Json& j) const {
  if (!j.is_number_integer()) refuse("the program holds a number where an integer belongs");
  return j.get<std::int64_t>();
}

std::string ProgramFields::tensor_name(const Json& argument) const {
  const auto [kind, value] = one_of(argument);
  if (kind != "as_tensor") refuse("an input or output of kind '" + kind + "', where drift reads a tensor");
  return text(at(*value, "name"));
}

int ProgramFields::slot(const std::string& value) const {
  const auto it = slots_.find(value);
  if (it == slots_.end()) refuse("the program reads '" + value + "' before anything computes it");
  return it->second;
}

int ProgramFields::define(const std::string& value) {
  if (slots_.count(value) != 0) refuse("the program computes '" + value + "' twice");
  return slots_[value] = slot_count_++;
}

Operand ProgramFields::symbolic_int(const Json& argument) const {
  const auto [kind, value] = one_of(argument);
  if (kind == "as_int") return constant_operand(integer(*value));
  if (kind != "as_name") refuse("a symbolic size of kind '" + kind + "'");
  Operand o;
  o.source = Operand::Source::value;
  o.slots = {slot(text(*value))};
  return o;
}

Operand ProgramFields::operand(const Json& argument, const c10::Argument& schema_arg, const std::string& op) const {
  const auto [kind, value] = one_of(argument);
  const auto& type = schema_arg.type();
  const auto& v = *value;
  Operand o;
  if (kind == "as_none") return constant_operand(c10::IValue());
  if (kind == "as_tensor") {
    o.source = Operand::Source::value;
    o.slots = {slot(text(at(v, "name")))};
    return o;
  }
  if (kind == "as_tensors" || kind == "as_optional_tensors") {
    o.source = kind == "as_tensors" ? Operand::Source::tensors : Operand::Source::optional_tensors;
    if (!v.is_array()) refuse("a list of tensors that is not a list");
    for (const auto& item : v) {
      if (kind == "as_tensors") {
        o.slots.push_back(slot(text(at(item, "name"))));
        continue;
      }
      const auto [inner, inner_value] = one_of(item);
      o.slots.push_back(inner == "as_none" ? -1 : slot(text(at(*inner_value, "name"))));
    }
    return o;
  }
  if (kind == "as_int" || kind == "as_float") {
    const at::Scalar number = kind == "as_int" ? at::Scalar(integer(v)) : at::Scalar(v.get<double>());
    if (!v.is_number()) refuse("a number argument that is not a number");
    if (is_tensor_type(type)) return constant_operand(wrapped_number(number));
    if (is_float_type(type)) return constant_operand(number.toDouble());
    return constant_operand(kind == "as_int" ? c10::IValue(number.toLong()) : c10::IValue(number.toDouble()));
  }
  if (kind == "as_bool") return constant_operand(v.get<bool>());
  if (kind == "as_string") return constant_operand(text(v));
  if (kind == "as_ints") return constant_operand(v.get<std::vector<std::int64_t>>());
  if (kind == "as_floats") return constant_operand(v.get<std::vector<double>>());
  if (kind == "as_bools") {
    c10::List<bool> bools;
    for (const bool b : v.get<std::vector<bool>>()) bools.push_back(b);
    return constant_operand(bools);
  }
  if (kind == "as_scalar_type") {
    const auto dtype = scalar_type(integer(v));
    if (dtype == c10::ScalarType::Undefined)
      refuse(op + " is given an unknown dtype (" + std::to_string(integer(v)) + ")");
    return constant_operand(dtype);
  }
  if (kind == "as_layout") {
    if (integer(v) != 7) refuse(op + " is given a layout other than strided; drift trains dense tensors");
    return constant_operand(c10::kStrided);
  }
  if (kind == "as_memory_format") {
    static const std::map<std::int64_t, c10::MemoryFormat> formats = {{1, c10::MemoryFormat::Contiguous},
                                                                      {2, c10::MemoryFormat::ChannelsLast},
                                                                      {3, c10::MemoryFormat::ChannelsLast3d},
                                                                      {4, c10::MemoryFormat::Preserve}};
    const auto it = formats.find(integer(v));
    if (it == formats.end()) refuse(op + " is given an unknown memory format");
    return constant_operand(it->second);
  }
  if (kind == "as_device") {
    o.source = Operand::Source::device;  // the slot's device, wherever the program was exported
    return o;
  }
  if (kind == "as_sym_int") return symbolic_int(v);
  if (kind == "as_sym_ints") {
    if (!v.is_array()) refuse("a list of sizes that is not a list");
    std::vector<std::int64_t> ints;
    o.source = Operand::Source::ints;
    for (const auto& item : v) {
      const auto size = symbolic_int(item);
      ints.push_back(size.slots.empty() ? size.constant.toInt() : 0);
      o.slots.push_back(size.slots.empty() ? -1 : size.slots[0]);
    }
    o.constant = ints;
    return o;
  }
  refuse(op + " is given an argument of kind '" + kind + "' (" + schema_arg.name() +
         "), which drift does not read (docs/models.md#what-runs)");
}
}  // namespace drift
