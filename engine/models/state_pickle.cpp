#include "engine/models/state_pickle.hpp"

#include <ATen/ATen.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "engine/models/state_unpickler.hpp"

namespace drift {
namespace pickle {

std::optional<at::ScalarType> storage_dtype(const std::string& global) {
  static const std::map<std::string, at::ScalarType> types = {
      {"torch FloatStorage", at::kFloat},       {"torch DoubleStorage", at::kDouble}, {"torch HalfStorage", at::kHalf},
      {"torch BFloat16Storage", at::kBFloat16}, {"torch LongStorage", at::kLong},     {"torch IntStorage", at::kInt},
      {"torch ShortStorage", at::kShort},       {"torch CharStorage", at::kChar},     {"torch ByteStorage", at::kByte},
      {"torch BoolStorage", at::kBool}};
  const auto it = types.find(global);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

bool callable(const std::string& global) {
  return global == "collections OrderedDict" || global == "torch._utils _rebuild_tensor_v2" ||
         global == "torch._utils _rebuild_parameter";
}

void StateUnpickler::set_items(std::vector<Ref> pairs) {
  if (pairs.size() % 2 != 0) refuse_("data.pkl sets a dict item without its value");
  auto dict = pop();
  if (dict->kind != PickleValue::Kind::dict) refuse_("data.pkl sets items of something not a dict");
  PickleValue v = *dict;
  for (auto& item : pairs) v.items.push_back(std::move(item));
  stack_.push_back(make(std::move(v)));
}

void StateUnpickler::global(std::string name) {
  if (!callable(name) && !storage_dtype(name))
    refuse_("data.pkl names the global '" + name + "', which a state dict does not need and drift does not call");
  PickleValue v;
  v.kind = PickleValue::Kind::global;
  v.text = std::move(name);
  stack_.push_back(make(std::move(v)));
}

Ref StateUnpickler::load_storage(const std::string& key, at::ScalarType dtype, std::int64_t numel) {
  if (const auto it = storages_.find(key); it != storages_.end()) {
    if (it->second->tensor.scalar_type() != dtype || it->second->tensor.numel() != numel)
      refuse_("storage " + key + " is read as two different storages");
    return it->second;
  }
  const auto name = prefix_ + "data/" + key;
  const ZipRecord* record = nullptr;
  for (const auto& r : records_)
    if (r.name == name) record = &r;
  if (record == nullptr) refuse_("the state dict names storage " + key + ", which the archive does not hold");
  const auto element = static_cast<Size>(c10::elementSize(dtype));
  if (numel < 0 || static_cast<Size>(numel) > record->size / element ||
      static_cast<Size>(numel) * element != record->size)
    refuse_("storage " + key + " declares " + std::to_string(numel) + " elements, and its record holds " +
            std::to_string(record->size) + " bytes");
  const auto bytes = record_bytes(archive_, *record, record->size, refuse_);
  auto storage = at::empty({numel}, at::TensorOptions().dtype(dtype));
  if (!bytes.empty()) std::memcpy(storage.data_ptr(), bytes.data(), bytes.size());
  PickleValue v;
  v.kind = PickleValue::Kind::storage;
  v.tensor = storage;
  return storages_[key] = make(std::move(v));
}

// ('storage', torch.FloatStorage, key, location, numel): a storage record of the archive.
void StateUnpickler::persistent_load() {
  const auto id = pop();
  const auto& f = id->items;
  if (id->kind != PickleValue::Kind::tuple || f.size() != 5 || f[0]->kind != PickleValue::Kind::text ||
      f[0]->text != "storage" || f[1]->kind != PickleValue::Kind::global || f[2]->kind != PickleValue::Kind::text ||
      f[4]->kind != PickleValue::Kind::integer)
    refuse_("data.pkl loads a persistent object that is not a storage");
  const auto dtype = storage_dtype(f[1]->text);
  if (!dtype) refuse_("data.pkl loads a storage of type '" + f[1]->text + "'");
  stack_.push_back(load_storage(f[2]->text, *dtype, f[4]->integer));
}

// _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]): a view of
// the storage, checked to lie within it, copied out.
Ref StateUnpickler::rebuild_tensor(const std::vector<Ref>& args) {
  const auto ints = [&](const Ref& v) {
    std::vector<std::int64_t> out;
    if (v->kind != PickleValue::Kind::tuple) refuse_("a tensor's size or stride is not a tuple");
    for (const auto& i : v->items) {
      if (i->kind != PickleValue::Kind::integer || i->integer < 0) refuse_("a tensor's size or stride is not a count");
      out.push_back(i->integer);
    }
    return out;
  };
  if (args.size() < 6 || args.size() > 7 || args[0]->kind != PickleValue::Kind::storage ||
      args[1]->kind != PickleValue::Kind::integer || args[4]->kind != PickleValue::Kind::boolean)
    refuse_("data.pkl rebuilds a tensor from arguments drift does not read");
  const auto sizes = ints(args[2]), strides = ints(args[3]);
  if (sizes.size() != strides.size() || sizes.size() > 16) refuse_("a tensor with a size and stride that disagree");
  const auto& storage = args[0]->tensor;
  const auto offset = args[1]->integer;
  // The largest element the view reaches, where every size is above 0.
  Size last = static_cast<Size>(offset), empty = 0;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) empty = 1;
    if (sizes[d] > (std::int64_t{1} << 40) || strides[d] > (std::int64_t{1} << 40))
      refuse_("a tensor of more than 2^40 elements along one dimension");
    last += static_cast<Size>(sizes[d] > 0 ? sizes[d] - 1 : 0) * static_cast<Size>(strides[d]);
  }
  if (offset < 0 || (empty == 0 && last >= static_cast<Size>(storage.numel())))
    refuse_("a tensor that reaches past the end of its storage");
  PickleValue v;
  v.kind = PickleValue::Kind::tensor;
  v.tensor = storage.as_strided(sizes, strides, offset).clone(at::MemoryFormat::Contiguous);
  v.tensor.set_requires_grad((args[4]->integer != 0) && v.tensor.is_floating_point());
  return make(std::move(v));
}

void StateUnpickler::reduce() {
  const auto args = pop();
  const auto callee = pop();
  if (callee->kind != PickleValue::Kind::global || !callable(callee->text) || args->kind != PickleValue::Kind::tuple)
    refuse_("data.pkl calls something that is not a global drift calls");
  if (callee->text == "collections OrderedDict") {
    if (!args->items.empty()) refuse_("data.pkl builds an OrderedDict from arguments");
    PickleValue v;
    v.kind = PickleValue::Kind::dict;
    stack_.push_back(make(std::move(v)));
  } else if (callee->text == "torch._utils _rebuild_tensor_v2") {
    stack_.push_back(rebuild_tensor(args->items));
  } else {  // _rebuild_parameter(tensor, requires_grad, hooks)
    const auto& a = args->items;
    if (a.size() != 3 || a[0]->kind != PickleValue::Kind::tensor || a[1]->kind != PickleValue::Kind::boolean)
      refuse_("data.pkl rebuilds a parameter from arguments drift does not read");
    PickleValue v = *a[0];
    v.tensor.set_requires_grad((a[1]->integer != 0) && v.tensor.is_floating_point());
    v.parameter = true;
    stack_.push_back(make(std::move(v)));
  }
}

}  // namespace pickle

using pickle::PickleValue;
using pickle::StateUnpickler;

std::vector<StateEntry> read_state_dict(const std::string& archive, const ArchiveRefusal& refuse) {
  auto records = zip_records(archive, refuse);
  const ZipRecord* data = nullptr;
  std::string prefix;
  for (const auto& r : records) {
    const auto slash = r.name.find('/');
    if (slash != std::string::npos && r.name.compare(slash + 1, std::string::npos, "data.pkl") == 0) {
      data = &r;
      prefix = r.name.substr(0, slash + 1);
    }
  }
  if (data == nullptr) refuse("the state dict's archive has no data.pkl");
  for (const auto& r : records)
    if (r.name == prefix + "byteorder" && record_bytes(archive, r, 16, refuse) != "little")
      refuse("the state dict was saved on a big-endian machine");
  const auto pickle = record_bytes(archive, *data, std::uint64_t{64} << 20, refuse);
  const auto records_copy = records;
  StateUnpickler unpickler(pickle, archive, records_copy, prefix, refuse);
  const auto dict = unpickler.run();
  if (dict->kind != PickleValue::Kind::dict) refuse("the state dict's pickle is not a dict");
  std::vector<StateEntry> entries;
  for (std::size_t i = 0; i + 1 < dict->items.size(); i += 2) {
    const auto& key = dict->items[i];
    const auto& value = dict->items[i + 1];
    if (key->kind != PickleValue::Kind::text || value->kind != PickleValue::Kind::tensor)
      refuse("the state dict maps something other than a name to a tensor");
    entries.push_back({key->text, value->tensor, value->parameter});
  }
  return entries;
}

}  // namespace drift
