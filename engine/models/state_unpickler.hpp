#pragma once
// The unpickler of engine/models/state_pickle.cpp: the values a state dict's pickle builds and
// the machine that runs its opcodes. Internal to that reader.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/models/zip_archive.hpp"

namespace drift::pickle {

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

inline Ref make(PickleValue v) { return std::make_shared<const PickleValue>(std::move(v)); }

// The dtype of a storage global ("torch FloatStorage"), or nothing.
std::optional<at::ScalarType> storage_dtype(const std::string& global);
// Whether REDUCE may call the global: OrderedDict, _rebuild_tensor_v2, _rebuild_parameter.
bool callable(const std::string& global);

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

}  // namespace drift::pickle
