#include "engine/models/state_pickle.hpp"

#include <ATen/ATen.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>

namespace drift {
namespace {

using Size = std::uint64_t;

// What a pickle of a state dict builds: values shared by pointer, so that a pickle that fetches
// one memoised value many times costs no more than its own length.
struct PickleValue;
using Ref = std::shared_ptr<const PickleValue>;
struct PickleValue {
  enum class Kind { none, boolean, integer, real, text, tuple, dict, global, storage, tensor, mark };
  Kind kind = Kind::none;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;        // text; a global's "module name"
  std::vector<Ref> items;  // tuple; dict as key, value, key, value...
  at::Tensor tensor;       // storage (1-D, its dtype) or tensor
  bool parameter = false;
};

Ref make(PickleValue v) { return std::make_shared<const PickleValue>(std::move(v)); }

std::optional<at::ScalarType> storage_dtype(const std::string& global) {
  static const std::map<std::string, at::ScalarType> types = {
      {"torch FloatStorage", at::kFloat},   {"torch DoubleStorage", at::kDouble}, {"torch HalfStorage", at::kHalf},
      {"torch BFloat16Storage", at::kBFloat16}, {"torch LongStorage", at::kLong}, {"torch IntStorage", at::kInt},
      {"torch ShortStorage", at::kShort},   {"torch CharStorage", at::kChar},     {"torch ByteStorage", at::kByte},
      {"torch BoolStorage", at::kBool}};
  const auto it = types.find(global);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

bool callable(const std::string& global) {
  return global == "collections OrderedDict" || global == "torch._utils _rebuild_tensor_v2" ||
         global == "torch._utils _rebuild_parameter";
}

class StateUnpickler {
 public:
  StateUnpickler(const std::string& pickle, const std::string& archive, std::vector<ZipRecord> records,
                 std::string prefix, const ArchiveRefusal& refuse)
      : p_(pickle), archive_(archive), records_(std::move(records)), prefix_(std::move(prefix)), refuse_(refuse) {}

  Ref run();

 private:
  Size field(int width) {
    if (p_.size() - at_ < static_cast<Size>(width)) refuse_("a pickle field past the end of data.pkl");
    Size value = 0;
    for (int i = width - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(p_[at_ + i]);
    at_ += width;
    return value;
  }
  std::string take(Size n) {
    if (n > p_.size() - at_) refuse_("data.pkl declares " + std::to_string(n) + " bytes where fewer remain");
    auto s = p_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::string line() {
    const auto end = p_.find('\n', at_);
    if (end == std::string::npos) refuse_("an unterminated line in data.pkl");
    const auto length = end - at_;
    return take(length + 1).substr(0, length);
  }
  Ref pop() {
    if (stack_.empty() || stack_.back()->kind == PickleValue::Kind::mark) refuse_("data.pkl pops an empty stack");
    auto v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::vector<Ref> pop_to_mark() {
    std::vector<Ref> items;
    while (!stack_.empty() && stack_.back()->kind != PickleValue::Kind::mark) items.push_back(pop());
    if (stack_.empty()) refuse_("data.pkl has no mark where it needs one");
    stack_.pop_back();
    return {items.rbegin(), items.rend()};
  }
  void push_tuple(std::vector<Ref> items) {
    PickleValue v;
    v.kind = PickleValue::Kind::tuple;
    v.items = std::move(items);
    stack_.push_back(make(std::move(v)));
  }
  void push_scalar(PickleValue::Kind kind, std::int64_t integer);
  void push_text(std::string text);
  std::int64_t long1();
  bool push_literal(unsigned char op);
  bool build(unsigned char op);
  void memo_get(Size key);
  void memo_put(Size key);
  void set_items(std::vector<Ref> pairs);
  void global(std::string name);
  void persistent_load();
  void reduce();
  Ref rebuild_tensor(const std::vector<Ref>& args);
  Ref load_storage(const std::string& key, at::ScalarType dtype, std::int64_t numel);

  const std::string& p_;
  const std::string& archive_;
  std::vector<ZipRecord> records_;
  std::string prefix_;
  const ArchiveRefusal& refuse_;
  Size at_ = 0;
  std::vector<Ref> stack_;
  std::map<Size, Ref> memo_;
  std::map<std::string, Ref> storages_;
};

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
  if (numel < 0 || static_cast<Size>(numel) > record->size / element || static_cast<Size>(numel) * element != record->size)
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
  if (id->kind != PickleValue::Kind::tuple || f.size() != 5 || f[0]->kind != PickleValue::Kind::text || f[0]->text != "storage" ||
      f[1]->kind != PickleValue::Kind::global || f[2]->kind != PickleValue::Kind::text || f[4]->kind != PickleValue::Kind::integer)
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

void StateUnpickler::push_scalar(PickleValue::Kind kind, std::int64_t integer) {
  PickleValue v;
  v.kind = kind;
  v.integer = integer;
  stack_.push_back(make(std::move(v)));
}

void StateUnpickler::push_text(std::string text) {
  PickleValue v;
  v.kind = PickleValue::Kind::text;
  v.text = std::move(text);
  stack_.push_back(make(std::move(v)));
}

// LONG1: a little-endian two's complement integer of up to 8 bytes.
std::int64_t StateUnpickler::long1() {
  const auto n = field(1);
  if (n > 8) refuse_("data.pkl holds an integer wider than 64 bits");
  const auto bytes = take(n);
  std::uint64_t u = 0;
  for (Size i = 0; i < n; ++i) u |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~std::uint64_t{0} << (8 * n);
  return static_cast<std::int64_t>(u);
}

// The opcodes that push one value read from the pickle itself; false for any other.
bool StateUnpickler::push_literal(unsigned char op) {
  using Kind = PickleValue::Kind;
  switch (op) {
    case '(': push_scalar(Kind::mark, 0); return true;
    case 'N': push_scalar(Kind::none, 0); return true;
    case 0x88: push_scalar(Kind::boolean, 1); return true;
    case 0x89: push_scalar(Kind::boolean, 0); return true;
    case 'K': push_scalar(Kind::integer, static_cast<std::int64_t>(field(1))); return true;
    case 'M': push_scalar(Kind::integer, static_cast<std::int64_t>(field(2))); return true;
    case 'J': push_scalar(Kind::integer, static_cast<std::int32_t>(field(4))); return true;
    case 0x8a: push_scalar(Kind::integer, long1()); return true;
    case 'G': {  // BINFLOAT, big-endian
      std::uint64_t u = 0;
      for (const char c : take(8)) u = u << 8 | static_cast<unsigned char>(c);
      PickleValue v;
      v.kind = Kind::real;
      std::memcpy(&v.real, &u, sizeof u);
      stack_.push_back(make(std::move(v)));
      return true;
    }
    case 'X': push_text(take(field(4))); return true;
    case 0x8c: push_text(take(field(1))); return true;
    case 0x8d: push_text(take(field(8))); return true;
    case '}': push_scalar(Kind::dict, 0); return true;
    case ')': push_tuple({}); return true;
    default: return false;
  }
}

// The opcodes that build values from the stack or the memo; false for any other.
bool StateUnpickler::build(unsigned char op) {
  switch (op) {
    case 'c': {
      auto module = line();
      global(module + " " + line());
      return true;
    }
    case 0x93: {  // STACK_GLOBAL
      const auto name = pop(), module = pop();
      if (name->kind != PickleValue::Kind::text || module->kind != PickleValue::Kind::text)
        refuse_("a global without its name");
      global(module->text + " " + name->text);
      return true;
    }
    case 't': push_tuple(pop_to_mark()); return true;
    case 0x85:
    case 0x86:
    case 0x87: {
      std::vector<Ref> items(op - 0x84);
      for (auto i = items.size(); i > 0; --i) items[i - 1] = pop();
      push_tuple(std::move(items));
      return true;
    }
    case 's': {
      auto value = pop();
      auto key = pop();
      set_items({key, value});
      return true;
    }
    case 'u': set_items(pop_to_mark()); return true;
    case 'q': memo_put(field(1)); return true;
    case 'r': memo_put(field(4)); return true;
    case 0x94: memo_put(memo_.size()); return true;
    case 'h': memo_get(field(1)); return true;
    case 'j': memo_get(field(4)); return true;
    case 'Q': persistent_load(); return true;
    case 'R': reduce(); return true;
    default: return false;
  }
}

void StateUnpickler::memo_get(Size key) {
  const auto it = memo_.find(key);
  if (it == memo_.end()) refuse_("data.pkl fetches a value it never stored");
  stack_.push_back(it->second);
}

void StateUnpickler::memo_put(Size key) {
  if (stack_.empty()) refuse_("data.pkl stores a value from an empty stack");
  memo_[key] = stack_.back();
}

Ref StateUnpickler::run() {
  while (at_ < p_.size()) {
    const auto op = static_cast<unsigned char>(p_[at_++]);
    if (op == 0x80) {
      field(1);  // PROTO
    } else if (op == 0x95) {
      field(8);  // FRAME: the opcodes inside check their own lengths
    } else if (op == '.') {  // STOP
      auto result = pop();
      if (!stack_.empty()) refuse_("data.pkl ends with values left over");
      return result;
    } else if (!push_literal(op) && !build(op)) {
      refuse_("data.pkl holds pickle opcode " + std::to_string(op) + ", which a state dict does not need");
    }
    if (stack_.size() > p_.size()) refuse_("data.pkl grows its stack past its own length");
  }
  refuse_("data.pkl is a pickle without its end");
}

}  // namespace

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
