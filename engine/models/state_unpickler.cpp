#include <cstring>

#include "engine/models/state_unpickler.hpp"

// The opcodes of a state dict's pickle: literals, values built from the stack and the memo.
namespace drift::pickle {

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
    case '(':
      push_scalar(Kind::mark, 0);
      return true;
    case 'N':
      push_scalar(Kind::none, 0);
      return true;
    case 0x88:
      push_scalar(Kind::boolean, 1);
      return true;
    case 0x89:
      push_scalar(Kind::boolean, 0);
      return true;
    case 'K':
      push_scalar(Kind::integer, static_cast<std::int64_t>(field(1)));
      return true;
    case 'M':
      push_scalar(Kind::integer, static_cast<std::int64_t>(field(2)));
      return true;
    case 'J':
      push_scalar(Kind::integer, static_cast<std::int32_t>(field(4)));
      return true;
    case 0x8a:
      push_scalar(Kind::integer, long1());
      return true;
    case 'G': {  // BINFLOAT, big-endian
      std::uint64_t u = 0;
      for (const char c : take(8)) u = u << 8 | static_cast<unsigned char>(c);
      PickleValue v;
      v.kind = Kind::real;
      std::memcpy(&v.real, &u, sizeof u);
      stack_.push_back(make(std::move(v)));
      return true;
    }
    case 'X':
      push_text(take(field(4)));
      return true;
    case 0x8c:
      push_text(take(field(1)));
      return true;
    case 0x8d:
      push_text(take(field(8)));
      return true;
    case '}':
      push_scalar(Kind::dict, 0);
      return true;
    case ')':
      push_tuple({});
      return true;
    default:
      return false;
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
    case 't':
      push_tuple(pop_to_mark());
      return true;
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
    case 'u':
      set_items(pop_to_mark());
      return true;
    case 'q':
      memo_put(field(1));
      return true;
    case 'r':
      memo_put(field(4));
      return true;
    case 0x94:
      memo_put(memo_.size());
      return true;
    case 'h':
      memo_get(field(1));
      return true;
    case 'j':
      memo_get(field(4));
      return true;
    case 'Q':
      persistent_load();
      return true;
    case 'R':
      reduce();
      return true;
    default:
      return false;
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
      field(8);              // FRAME: the opcodes inside check their own lengths
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

}  // namespace drift::pickle
